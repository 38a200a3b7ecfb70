// Interpolated Kneser-Ney: counting (the constructor) and scoring (token_nats, probability).
//
// Counting, order by order. Pad every sequence as <bos> s <eos> and lay them end to end. The
// k-gram ending at position p exists when it fits inside its sequence; its key is
// (id of the (k-1)-gram ending at p - 1) * V + token[p], so sorting the keys of order k groups
// the grams of one context together and a gram's id is its rank among the sorted distinct keys.
// Then, at order k:
//   raw c(g)        occurrences of g as a prediction (never the unigram <bos>)
//   adjusted a(g)   c(g) if g begins with <bos>, else N1+(. g): the number of distinct (k+1)-grams
//                   x g, counted from the (k+1)-grams ending at the same positions
//   A(h), T(h)      summed over the grams of context h, which are contiguous in key order.
#include "nn/lm/kneser_ney.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace attnlab::nn::lm {

namespace {
constexpr const char* kWho = "KneserNey";

// Each sequence as <bos> s <eos>, laid end to end, with the start position of each.
struct Padded {
  std::vector<Index> tokens;
  std::vector<std::size_t> start;  // start[p]: where the sequence holding position p begins
};
}  // namespace

void KneserNey::check_token(Index t, const char* what) const {
  check(t >= 0 && std::size_t(t) < vocab_, kWho, what, " token ", t, " is outside the vocabulary [0, ", vocab_, ")");
  check(t != bos_, kWho, what, " holds <bos> (id ", bos_, ") after its start: a sequence is read as <bos> s <eos>, with "
        "one <bos> in front");
}

KneserNey::KneserNey(const std::vector<std::vector<Index>>& sequences, std::size_t vocab, std::size_t max_order,
                     Index bos, Index eos, double discount)
    : vocab_(vocab), bos_(bos), eos_(eos), discount_(discount) {
  check(vocab >= 2, kWho, "vocabulary must hold at least <bos> and <eos>, got ", vocab, " ids");
  check(max_order >= 1 && max_order <= 64, kWho, "max_order must be in [1, 64], got ", max_order);
  check(discount > 0.0 && discount <= 1.0, kWho, "discount must be in (0, 1], got ", discount);
  check(bos >= 0 && std::size_t(bos) < vocab && eos >= 0 && std::size_t(eos) < vocab && bos != eos, kWho,
        "<bos> ", bos, " and <eos> ", eos, " must be two different ids in [0, ", vocab, ")");
  check(!sequences.empty(), kWho, "no sequences to count");
  // Keys are prefix id * V + token: ids stay below 2^32, so V below 2^31 keeps them within 64 bits.
  check(vocab < (std::size_t(1) << 31), kWho, "vocabulary of ", vocab, " ids is too large");

  Padded text;
  for (const auto& s : sequences) {
    const std::size_t begin = text.tokens.size();
    text.tokens.push_back(bos);
    for (Index t : s) {
      check_token(t, "a training sequence");
      text.tokens.push_back(t);
    }
    text.tokens.push_back(eos);
    text.start.resize(text.tokens.size(), begin);
  }
  const std::size_t n = text.tokens.size();

  std::vector<std::uint32_t> below(n, 0), here(n, none);  // gram ids at order k - 1 and k
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed;  // (key, position), sorted by key
  for (std::size_t k = 1; k <= max_order; ++k) {
    keyed.clear();
    for (std::size_t p = 0; p < n; ++p)
      if (p - text.start[p] + 1 >= k)
        keyed.emplace_back((k == 1 ? 0 : below[p - 1]) * std::uint64_t(vocab) + std::uint64_t(text.tokens[p]),
                           std::uint32_t(p));
    if (keyed.empty()) break;  // no sequence is long enough for this order
    std::sort(keyed.begin(), keyed.end());
    Level level;
    std::fill(here.begin(), here.end(), none);
    for (const auto& [key, p] : keyed) {
      if (level.keys.empty() || level.keys.back() != key) {
        level.keys.push_back(key);
        level.raw.push_back(0);
      }
      here[p] = std::uint32_t(level.keys.size() - 1);
      if (p != text.start[p]) level.raw.back() += 1;  // <bos> is never predicted
    }
    // The continuation counts of the order below: each distinct k-gram x g adds one to g.
    if (k >= 2) {
      Level& lower = levels_.back();
      std::vector<bool> seen(level.keys.size(), false);
      for (std::size_t p = 0; p < n; ++p)
        if (here[p] != none && !seen[here[p]]) {
          seen[here[p]] = true;
          lower.adjusted[below[p]] += 1;
        }
    }
    // Grams that begin with <bos> have nothing before them: their adjusted count is the raw one.
    // The rest are filled in when the next order is counted (left 0 at the top order, unused).
    level.adjusted.assign(level.keys.size(), 0);
    for (std::size_t p = 0; p < n; ++p)
      if (here[p] != none && p - text.start[p] + 1 == k) level.adjusted[here[p]] = level.raw[here[p]];
    levels_.push_back(std::move(level));
    std::swap(below, here);
  }
  // A(h) and T(h) per context, for the raw and the adjusted counts.
  for (std::size_t k = 1; k <= levels_.size(); ++k) {
    Level& level = levels_[k - 1];
    const std::size_t contexts = k == 1 ? 1 : levels_[k - 2].keys.size();
    level.raw_total.assign(contexts, 0);
    level.adjusted_total.assign(contexts, 0);
    level.raw_types.assign(contexts, 0);
    level.adjusted_types.assign(contexts, 0);
    for (std::size_t i = 0; i < level.keys.size(); ++i) {
      const std::size_t h = std::size_t(level.keys[i] / vocab);
      level.raw_total[h] += level.raw[i];
      level.raw_types[h] += level.raw[i] > 0;
      level.adjusted_total[h] += level.adjusted[i];
      level.adjusted_types[h] += level.adjusted[i] > 0;
    }
  }
}

std::size_t KneserNey::distinct(std::size_t order) const {
  check(order >= 1 && order <= max_order(), kWho, "order must be in [1, ", max_order(), "], got ", order);
  return levels_[order - 1].keys.size();
}

std::uint32_t KneserNey::find(std::size_t order, std::uint32_t prefix, Index token) const {
  if (prefix == none) return none;
  const auto& keys = levels_[order - 1].keys;
  const std::uint64_t key = prefix * std::uint64_t(vocab_) + std::uint64_t(token);
  const auto it = std::lower_bound(keys.begin(), keys.end(), key);
  return it != keys.end() && *it == key ? std::uint32_t(it - keys.begin()) : none;
}

// P_k(w | h) = max(a(hw) - D, 0) / A(h) + D T(h) / A(h) * P_{k-1}(w | h'), or P_{k-1} when A(h) = 0.
// The gram hw is the k-gram ending at w's position, whose id the caller already has.
double KneserNey::step(std::size_t order, std::uint32_t context, std::uint32_t gram, double lower, bool top) const {
  if (context == none) return lower;
  const Level& level = levels_[order - 1];
  const double total = double(top ? level.raw_total[context] : level.adjusted_total[context]);
  if (total == 0.0) return lower;
  const double types = double(top ? level.raw_types[context] : level.adjusted_types[context]);
  const double a = gram == none ? 0.0 : double(top ? level.raw[gram] : level.adjusted[gram]);
  return std::max(a - discount_, 0.0) / total + discount_ * types / total * lower;
}

std::vector<std::vector<std::uint32_t>> KneserNey::gram_ids(const std::vector<Index>& x) const {
  std::vector<std::vector<std::uint32_t>> ids(max_order(), std::vector<std::uint32_t>(x.size(), none));
  for (std::size_t k = 1; k <= max_order(); ++k)
    for (std::size_t p = k - 1; p < x.size(); ++p)
      ids[k - 1][p] = find(k, k == 1 ? 0 : ids[k - 2][p - 1], x[p]);
  return ids;
}

// The context of the order-k prediction at p: the (k-1)-gram ending at p - 1 (order 1: the empty
// context, id 0; none when it does not fit or was never seen).
std::uint32_t KneserNey::context_id(const std::vector<std::vector<std::uint32_t>>& ids, std::size_t k, std::size_t p) {
  if (k == 1) return 0;
  return p >= 1 ? ids[k - 2][p - 1] : none;
}

std::vector<std::vector<double>> KneserNey::token_nats(const std::vector<std::vector<Index>>& sequences) const {
  const std::size_t top = max_order();
  std::vector<std::vector<double>> nats(top);
  std::vector<double> chain(top + 1);  // chain[k]: P_k of the adjusted counts (the lower orders' view)
  for (const auto& s : sequences) {
    const std::vector<Index> x = padded(s);
    const auto ids = gram_ids(x);
    for (std::size_t p = 1; p < x.size(); ++p) {
      chain[0] = uniform();
      for (std::size_t k = 1; k <= top; ++k) {
        const std::uint32_t h = context_id(ids, k, p);
        const std::uint32_t g = ids[k - 1][p];
        nats[k - 1].push_back(-std::log(step(k, h, g, chain[k - 1], /*top=*/true)));
        if (k < top) chain[k] = step(k, h, g, chain[k - 1], /*top=*/false);
      }
    }
  }
  return nats;
}

std::vector<Index> KneserNey::padded(const std::vector<Index>& s) const {
  std::vector<Index> x{bos_};
  for (Index t : s) {
    check_token(t, "a scored sequence");
    x.push_back(t);
  }
  x.push_back(eos_);
  return x;
}

std::vector<double> KneserNey::context_coverage(const std::vector<std::vector<Index>>& sequences) const {
  std::vector<double> seen(max_order(), 0.0);
  std::size_t predicted = 0;
  for (const auto& s : sequences) {
    const std::vector<Index> x = padded(s);
    const auto ids = gram_ids(x);
    for (std::size_t p = 1; p < x.size(); ++p, ++predicted)
      for (std::size_t k = 1; k <= max_order(); ++k) {
        const std::size_t here = std::min(k, p + 1);  // at a sequence's start, the shorter context there is
        const std::uint32_t h = context_id(ids, here, p);
        seen[k - 1] += h != none && levels_[here - 1].raw_total[h] > 0;
      }
  }
  for (double& v : seen) v /= double(std::max<std::size_t>(predicted, 1));
  return seen;
}

std::vector<double> KneserNey::mean_nats(const std::vector<std::vector<Index>>& sequences) const {
  std::vector<double> means;
  for (const auto& per_token : token_nats(sequences)) {
    double sum = 0.0;
    for (double x : per_token) sum += x;
    means.push_back(per_token.empty() ? 0.0 : sum / double(per_token.size()));
  }
  return means;
}

double KneserNey::probability(const std::vector<Index>& context, Index next, std::size_t order) const {
  check(order >= 1 && order <= max_order(), kWho, "order must be in [1, ", max_order(), "], got ", order);
  check(next >= 0 && std::size_t(next) < vocab_, kWho, "next token ", next, " is outside the vocabulary [0, ", vocab_, ")");
  check(next != bos_, kWho, "<bos> is never predicted");
  // The last order - 1 tokens of the context, then next; <bos> may only be the context's first.
  const std::size_t keep = std::min(context.size(), order - 1);
  std::vector<Index> window(context.end() - long(keep), context.end());
  for (std::size_t i = 0; i < window.size(); ++i)
    if (!(i == 0 && window[i] == bos_ && keep == context.size())) check_token(window[i], "the context");
  window.push_back(next);
  const auto ids = gram_ids(window);
  const std::size_t p = window.size() - 1;
  double chain = uniform();
  for (std::size_t k = 1; k <= order; ++k) {
    const std::uint32_t h = context_id(ids, k, p);
    chain = step(k, h, ids[k - 1][p], chain, /*top=*/k == order);
  }
  return chain;
}

std::vector<double> KneserNey::distribution(const std::vector<Index>& context, std::size_t order) const {
  std::vector<double> p(vocab_, 0.0);
  for (std::size_t w = 0; w < vocab_; ++w)
    if (Index(w) != bos_) p[w] = probability(context, Index(w), order);
  return p;
}

}  // namespace attnlab::nn::lm
