#include "nn/data/date_task.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>

#include "nn/data/dates.hpp"

namespace attnlab::nn::data {

DateTask make_date_task(std::size_t n, std::uint64_t seed) {
  if (n < 10) throw std::invalid_argument("make_date_task: " + std::to_string(n) + " dates cannot fill three splits");
  Generator gen(seed);
  const std::vector<Pair> all = make_dates(n, gen);
  DateTask t;
  t.pairs = split_examples(all, {0.8, 0.1, 0.1}, seed + 1);
  static_cast<EncodedSplits&>(t) = encode_splits(t.pairs, Tokenizer::chars, Tokenizer::chars);
  return t;
}

std::size_t split_overlap(const Splits<Pair>& p) {
  std::set<std::string> train, val;
  for (const auto& e : p.train) train.insert(e.source);
  for (const auto& e : p.validation) val.insert(e.source);
  std::size_t n = 0;
  for (const auto& e : p.validation) n += train.count(e.source);
  for (const auto& e : p.test) n += train.count(e.source) + val.count(e.source);
  return n;
}

std::optional<std::size_t> year_digits_at(const Pair& pair) {
  const std::size_t at = pair.source.rfind(pair.target.substr(0, 4));
  if (at == std::string::npos) return std::nullopt;
  return at;
}

YearAttention year_attention(const std::vector<xt::xarray<double>>& attention, const std::vector<Pair>& pairs) {
  if (attention.size() != pairs.size())
    throw std::invalid_argument("year_attention: " + std::to_string(attention.size()) + " attention maps for " +
                                std::to_string(pairs.size()) + " examples");
  YearAttention y;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::optional<std::size_t> at = year_digits_at(pairs[i]);
    const xt::xarray<double>& a = attention[i];
    if (!at || a.dimension() != 2 || a.shape()[0] < 4 || a.shape()[1] < *at + 4) continue;
    double m = 0;
    for (std::size_t r = 0; r < 4; ++r)
      for (std::size_t j = *at; j < *at + 4; ++j) m += a(r, j);
    y.mass += m / 4.0;
    y.uniform += 4.0 / double(a.shape()[1]);
    ++y.examples;
  }
  if (y.examples) y.mass /= double(y.examples), y.uniform /= double(y.examples);
  return y;
}

std::vector<xt::xarray<double>> row_shares(std::vector<xt::xarray<double>> maps) {
  for (xt::xarray<double>& m : maps) {
    if (m.dimension() != 2) continue;
    for (std::size_t t = 0; t < m.shape()[0]; ++t) {
      double total = 0;
      for (std::size_t s = 0; s < m.shape()[1]; ++s) total += m(t, s);
      if (total > 0)
        for (std::size_t s = 0; s < m.shape()[1]; ++s) m(t, s) /= total;
    }
  }
  return maps;
}

YearWindow year_window(const std::vector<std::vector<double>>& centres, const std::vector<Pair>& pairs,
                       double half_window) {
  if (centres.size() != pairs.size())
    throw std::invalid_argument("year_window: " + std::to_string(centres.size()) + " rows of centres for " +
                                std::to_string(pairs.size()) + " examples");
  YearWindow w;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::optional<std::size_t> at = year_digits_at(pairs[i]);  // the year's digits, if spelled out
    if (!at || centres[i].size() < 4) continue;
    const double middle = double(pairs[i].source.size()) / 2.0;
    for (std::size_t t = 0; t < 4; ++t, ++w.steps) {
      const double distance = std::abs(centres[i][t] - double(*at + t));
      w.middle_within += std::abs(middle - double(*at + t)) <= half_window ? 1.0 : 0.0;
      w.mean_distance += distance;
      w.within += distance <= half_window ? 1.0 : 0.0;
    }
  }
  if (w.steps) w.within /= double(w.steps), w.mean_distance /= double(w.steps), w.middle_within /= double(w.steps);
  return w;
}

bool iso_shaped(const std::string& s) {
  if (s.size() != 10) return false;
  for (std::size_t i = 0; i < 10; ++i)
    if ((i == 4 || i == 7) ? s[i] != '-' : !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

DateFields date_fields(const std::vector<std::string>& predictions, const std::vector<Pair>& pairs) {
  if (predictions.size() != pairs.size() || pairs.empty())
    throw std::invalid_argument("date_fields: " + std::to_string(predictions.size()) + " predictions for " +
                                std::to_string(pairs.size()) + " examples");
  const std::size_t from[3] = {0, 5, 8}, len[3] = {4, 2, 2};
  double right[3] = {0, 0, 0}, shaped = 0;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::string& p = predictions[i];
    for (int f = 0; f < 3; ++f)
      right[f] += p.size() >= from[f] + len[f] && p.compare(from[f], len[f], pairs[i].target, from[f], len[f]) == 0;
    shaped += iso_shaped(p);
  }
  const double n = double(pairs.size());
  return {right[0] / n, right[1] / n, right[2] / n, shaped / n};
}

std::vector<std::size_t> lengths_apart(const std::vector<Pair>& pairs, std::size_t want, std::size_t band) {
  if (band == 0) throw std::invalid_argument("lengths_apart: the band of lengths must be at least 1 character, got 0");
  std::vector<std::size_t> picked;
  std::set<std::size_t> bands;
  for (std::size_t r = 0; r < pairs.size() && picked.size() < want; ++r)
    if (bands.insert(pairs[r].source.size() / band).second) picked.push_back(r);
  return picked;
}

bool long_written_form(const std::string& source) {
  return source.find(", ") != std::string::npos && source.size() > 20;
}

std::size_t first_long_form(const std::vector<Pair>& pairs) {
  if (pairs.empty()) throw std::invalid_argument("first_long_form: no pairs to choose from");
  std::size_t r = 0;
  while (r + 1 < pairs.size() && !long_written_form(pairs[r].source)) ++r;
  return r;
}

std::vector<std::size_t> varied_examples(const std::vector<Pair>& pairs, std::size_t want) {
  const auto alpha = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  const std::vector<std::function<bool(const std::string&)>> forms = {
      [](const std::string& s) { return s.find(" of ") != std::string::npos; },
      [&](const std::string& s) { return s.find('/') != std::string::npos && !s.empty() && alpha(s[0]); },
      long_written_form,
      [](const std::string& s) { return s.find('-') != std::string::npos; },
      [](const std::string& s) { return s.find('.') != std::string::npos; },
      [&](const std::string& s) { return !s.empty() && std::all_of(s.begin(), s.end(), digit); },
  };
  std::vector<std::size_t> picked;
  const auto fresh = [&](std::size_t i) { return std::find(picked.begin(), picked.end(), i) == picked.end(); };
  for (const auto& form : forms)
    for (std::size_t i = 0; i < pairs.size() && picked.size() < want; ++i)
      if (form(pairs[i].source) && fresh(i)) {
        picked.push_back(i);
        break;
      }
  for (std::size_t i = 0; i < pairs.size() && picked.size() < want; ++i)
    if (fresh(i)) picked.push_back(i);
  return picked;
}

}  // namespace attnlab::nn::data
