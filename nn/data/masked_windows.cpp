#include "nn/data/masked_windows.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>

#include "nn/data/vocab.hpp"

namespace attnlab::nn::data {

namespace {
constexpr Index kIgnore = -100;

std::string str(long long v) { return std::to_string(v); }

void check_ids(const ClozeIds& ids, const char* where) {
  const auto inside = [&](Index v) { return v >= ids.first && v < ids.end; };
  if (ids.first >= ids.end || inside(ids.cls) || inside(ids.mask))
    throw std::invalid_argument(std::string(where) + ": the maskable ids [" + str(ids.first) + ", " + str(ids.end) +
                                ") must be a non-empty range holding neither [CLS] (" + str(ids.cls) + ") nor [MASK] (" +
                                str(ids.mask) + ")");
}
}  // namespace

MaskedWindows masked_windows(const ClozeIds& ids, const std::vector<Index>& stream, const std::vector<std::size_t>& starts,
                             std::size_t context, Generator& gen) {
  check_ids(ids, "masked_windows");
  if (context < 2)
    throw std::invalid_argument("masked_windows: context " + str(long(context)) + " leaves no room after [CLS] (need 2 or more)");
  const std::size_t B = starts.size(), L = context;
  MaskedWindows b;
  b.ids = xt::zeros<Index>({B, L});
  Mask real = xt::zeros<bool>({B, L});
  bool padded = false;
  std::vector<Index> positions, targets;
  for (std::size_t r = 0; r < B; ++r) {
    const std::size_t start = starts[r];
    if (start >= stream.size())
      throw std::invalid_argument("masked_windows: start " + str(long(start)) + " (window " + str(long(r)) +
                                  ") is past the stream's " + str(long(stream.size())) + " tokens");
    const std::size_t stop = std::min(stream.size(), start + L - 1);
    std::vector<Index> row = {ids.cls};
    row.insert(row.end(), stream.begin() + long(start), stream.begin() + long(stop));
    const MaskedTokens m = mask_tokens(row, ids.mask, ids.first, ids.end, gen, {}, kIgnore);
    padded = padded || row.size() < L;
    for (std::size_t l = 0; l < row.size(); ++l) {
      b.ids(r, l) = m.input[l];
      real(r, l) = true;
      if (m.target[l] == kIgnore) continue;
      positions.push_back(Index(r * L + l));
      targets.push_back(m.target[l]);
      b.choices.push_back(m.choice[l]);
      b.at.push_back(start + l - 1);
    }
  }
  if (padded) b.real = Allowed::where(real);
  b.positions = xt::adapt(positions, {positions.size()});
  b.targets = xt::adapt(targets, {targets.size()});
  return b;
}

std::vector<MaskedWindows> held_out_windows(const ClozeIds& ids, const std::vector<Index>& stream, std::size_t context,
                                            std::size_t limit, std::size_t batch, std::uint64_t mask_seed) {
  if (context < 2 || batch == 0)
    throw std::invalid_argument("held_out_windows: context " + str(long(context)) + " and batch " + str(long(batch)) +
                                " (need a context of 2 or more and a batch of 1 or more)");
  Generator gen(mask_seed);
  std::vector<std::size_t> starts;
  for (std::size_t s = 0; s < stream.size() && starts.size() < limit; s += context - 1) starts.push_back(s);
  std::vector<MaskedWindows> set;
  for (std::size_t lo = 0; lo < starts.size(); lo += batch)
    set.push_back(masked_windows(
        ids, stream, {starts.begin() + long(lo), starts.begin() + long(std::min(starts.size(), lo + batch))}, context, gen));
  return set;
}

MaskingShares measure_masking(const ClozeIds& ids, const std::vector<Index>& stream, std::size_t context,
                              std::size_t windows, Generator& gen) {
  if (windows == 0) throw std::invalid_argument("measure_masking: 0 windows (need 1 or more)");
  std::array<double, 4> n{};  // by MaskChoice
  double eligible = 0;
  for (std::size_t w = 0; w < windows; ++w) {
    const MaskedWindows b = masked_windows(ids, stream, random_starts(1, stream.size(), context, gen), context, gen);
    for (MaskChoice ch : b.choices) n[std::size_t(ch)] += 1;
    for (std::size_t l = 0; l < b.ids.shape()[1]; ++l) {
      const Index t = b.ids(0, l);
      eligible += t != ids.cls && t != Vocab::eos && t != Vocab::pad;
    }
  }
  const double chosen = n[1] + n[2] + n[3];
  if (chosen == 0) return {};
  return {chosen / eligible, n[1] / chosen, n[2] / chosen, n[3] / chosen};
}

std::vector<std::size_t> random_starts(std::size_t n, std::size_t stream_size, std::size_t context, Generator& gen) {
  if (stream_size <= context)
    throw std::invalid_argument("random_starts: a stream of " + str(long(stream_size)) + " tokens has no room for a window of " +
                                str(long(context)));
  std::vector<std::size_t> s(n);
  for (auto& v : s) v = gen.below(stream_size - context);
  return s;
}

std::size_t count_targets(const std::vector<MaskedWindows>& set) {
  std::size_t n = 0;
  for (const auto& b : set) n += b.size();
  return n;
}

IndexArray reading_windows(Index cls, const std::vector<Index>& stream, std::size_t n, std::size_t context) {
  if (stream.empty() || n == 0 || context < 2)
    throw std::invalid_argument("reading_windows: " + std::to_string(n) + " windows of context " + std::to_string(context) +
                                " over a stream of " + std::to_string(stream.size()) +
                                " tokens (need a stream, a window and a context of 2 or more)");
  IndexArray ids = xt::zeros<Index>({n, context});
  for (std::size_t w = 0; w < n; ++w) {
    const std::size_t start = w * (context - 1);
    ids(w, 0) = cls;
    for (std::size_t l = 0; l + 1 < context; ++l) ids(w, l + 1) = stream[(start + l) % stream.size()];
  }
  return ids;
}

void ClozeTally::add(double log_p, bool hit, MaskChoice choice) {
  nll_ -= log_p;
  ++n_;
  ++count_[std::size_t(choice)];
  hits_[std::size_t(choice)] += hit;
}

ClozeScores ClozeTally::scores() const {
  ClozeScores s;
  s.loss = nll_ / double(std::max<std::size_t>(n_, 1));
  std::size_t all = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    all += hits_[k];
    s.count_by_choice[k] = count_[k];
    s.accuracy_by_choice[k] = double(hits_[k]) / double(std::max<std::size_t>(count_[k], 1));
  }
  s.accuracy = double(all) / double(std::max<std::size_t>(n_, 1));
  return s;
}

CountedCloze::CountedCloze(const std::vector<Index>& train, Index first, Index end) : first_(first), end_(end) {
  if (first < 0 || first >= end)
    throw std::invalid_argument("CountedCloze: the counted ids [" + str(first) + ", " + str(end) + ") are empty or negative");
  for (std::size_t i = 0; i < train.size(); ++i)
    if (train[i] < 0 || train[i] >= end)
      throw std::invalid_argument("CountedCloze: training id " + str(train[i]) + " at " + str(long(i)) +
                                  " is outside [0, " + str(end) + ")");
  const auto eligible = [&](Index t) { return t >= first && t < end; };
  unigram_.assign(std::size_t(end), 1.0);  // one pseudo-count each: no token has probability 0
  for (Index t : train)
    if (eligible(t)) unigram_[std::size_t(t)] += 1;
  const double total = std::accumulate(unigram_.begin() + first, unigram_.end(), 0.0);
  for (std::size_t v = 0; v < unigram_.size(); ++v) unigram_[v] = v < std::size_t(first) ? 0.0 : unigram_[v] / total;
  best_ = Index(std::max_element(unigram_.begin(), unigram_.end()) - unigram_.begin());
  for (std::size_t i = 1; i + 1 < train.size(); ++i)
    if (eligible(train[i])) {
      ++triple_[key(train[i - 1], train[i + 1])][train[i]];
      ++pair_[key(train[i - 1], train[i + 1])];
    }
}

double CountedCloze::unigram(Index c) const { return c >= 0 && c < end_ ? unigram_[std::size_t(c)] : 0.0; }

double CountedCloze::neighbours(Index left, Index c, Index right, double alpha) const {
  const auto pit = pair_.find(key(left, right));
  const double n_pair = pit == pair_.end() ? 0.0 : double(pit->second);
  double n = 0;
  if (n_pair > 0) {
    const auto& row = triple_.at(key(left, right));
    const auto it = row.find(c);
    n = it == row.end() ? 0.0 : double(it->second);
  }
  return (n + alpha * unigram(c)) / (n_pair + alpha);
}

ClozeScores CountedCloze::score_unigram(const std::vector<MaskedWindows>& set) const {
  ClozeTally tally;
  for (const MaskedWindows& b : set)
    for (std::size_t k = 0; k < b.size(); ++k)
      tally.add(std::log(unigram(b.targets(k))), b.targets(k) == best_, b.choices[k]);
  return tally.scores();
}

ClozeScores CountedCloze::score_neighbours(const std::vector<MaskedWindows>& set, const std::vector<Index>& stream,
                                           double alpha) const {
  ClozeTally tally;
  for (const MaskedWindows& b : set)
    for (std::size_t k = 0; k < b.size(); ++k) {
      const std::size_t i = b.at[k];
      if (i >= stream.size())
        throw std::invalid_argument("CountedCloze::score_neighbours: a target at " + str(long(i)) +
                                    " lies past the stream's " + str(long(stream.size())) + " tokens (another stream?)");
      const Index left = i > 0 ? stream[i - 1] : Vocab::eos;
      const Index right = i + 1 < stream.size() ? stream[i + 1] : Vocab::eos;
      Index guess = first_;
      double best = -1;
      for (Index ch = first_; ch < end_; ++ch) {
        const double p = neighbours(left, ch, right, alpha);
        if (p > best) best = p, guess = ch;
      }
      tally.add(std::log(neighbours(left, b.targets(k), right, alpha)), guess == b.targets(k), b.choices[k]);
    }
  return tally.scores();
}

double CountedCloze::best_alpha(const std::vector<MaskedWindows>& set, const std::vector<Index>& stream,
                                const std::vector<double>& alphas) const {
  if (alphas.empty()) throw std::invalid_argument("CountedCloze::best_alpha: no alphas to choose from");
  double best = alphas.front(), best_loss = 1e300;
  for (double a : alphas) {
    const double loss = score_neighbours(set, stream, a).loss;
    if (loss < best_loss) best_loss = loss, best = a;
  }
  return best;
}

}  // namespace attnlab::nn::data
