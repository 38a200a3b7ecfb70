#include "nn/data/recall.hpp"

#include <numeric>

#include "core/error.hpp"
#include "nn/data/batch.hpp"

namespace attnlab::nn::data {

Recall Recall::rows(const std::vector<std::size_t>& which) const {
  return {take_rows(keys, which), take_rows(values, which), take_rows(targets, which)};
}

namespace {
// `count` distinct numbers of [0, n), in random order.
std::vector<std::size_t> draw_distinct(std::size_t n, std::size_t count, Generator& gen) {
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  shuffle(all, gen);
  all.resize(count);
  return all;
}
}  // namespace

Recall make_recall(const RecallConfig& c, std::size_t n, Generator& gen) {
  check(c.length > 1 && c.keys > 0 && c.values > 0 && c.pairs > 0, "make_recall",
        "sizes must be positive (length >= 2), got length ", c.length, ", keys ", c.keys, ", values ", c.values,
        ", pairs ", c.pairs);
  const std::size_t half = c.length / 2;
  check(c.pairs <= c.keys && c.pairs <= half, "make_recall", c.pairs, " pairs need ", c.pairs,
        " distinct keys and as many places in each half: keys ", c.keys, ", length ", c.length);
  Recall r{IndexArray::from_shape({n, c.length}), IndexArray::from_shape({n, c.length}),
           IndexArray::from_shape({n, c.length})};
  r.keys.fill(Index(c.keys));
  r.values.fill(Index(c.values));
  r.targets.fill(kNotAsked);
  for (std::size_t s = 0; s < n; ++s) {
    const std::vector<std::size_t> keys = draw_distinct(c.keys, c.pairs, gen);
    const std::vector<std::size_t> facts = draw_distinct(half, c.pairs, gen);
    const std::vector<std::size_t> asks = draw_distinct(c.length - half, c.pairs, gen);
    for (std::size_t p = 0; p < c.pairs; ++p) {
      const Index value = Index(gen.below(c.values));
      r.keys(s, facts[p]) = Index(keys[p]);
      r.values(s, facts[p]) = value;
      // asks[] is a random order of random places: pair p is asked at half + asks[p].
      r.keys(s, half + asks[p]) = Index(keys[p]);
      r.targets(s, half + asks[p]) = value;
    }
  }
  return r;
}

}  // namespace attnlab::nn::data
