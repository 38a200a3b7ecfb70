#include "nn/data/date_task.hpp"

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

YearAttention year_attention(const std::vector<xt::xarray<double>>& attention, const std::vector<Pair>& pairs) {
  if (attention.size() != pairs.size())
    throw std::invalid_argument("year_attention: " + std::to_string(attention.size()) + " attention maps for " +
                                std::to_string(pairs.size()) + " examples");
  YearAttention y;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::size_t at = pairs[i].source.rfind(pairs[i].target.substr(0, 4));
    const xt::xarray<double>& a = attention[i];
    if (at == std::string::npos || a.dimension() != 2 || a.shape()[0] < 4 || a.shape()[1] < at + 4) continue;
    double m = 0;
    for (std::size_t r = 0; r < 4; ++r)
      for (std::size_t j = at; j < at + 4; ++j) m += a(r, j);
    y.mass += m / 4.0;
    y.uniform += 4.0 / double(a.shape()[1]);
    ++y.examples;
  }
  if (y.examples) y.mass /= double(y.examples), y.uniform /= double(y.examples);
  return y;
}

}  // namespace attnlab::nn::data
