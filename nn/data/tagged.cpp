#include "nn/data/tagged.hpp"

#include <numeric>

#include "core/error.hpp"
#include "nn/data/batch.hpp"

namespace attnlab::nn::data {

Tagged Tagged::rows(const std::vector<std::size_t>& which) const {
  return {take_rows(inputs, which), take_rows(targets, which)};
}

Tagged Tagged::slice(std::size_t from, std::size_t to) const {
  check(from <= to && to <= size(), "Tagged::slice", "rows [", from, ", ", to, ") of ", size());
  std::vector<std::size_t> which(to - from);
  std::iota(which.begin(), which.end(), from);
  return rows(which);
}

Tagged tag_pairs(const std::vector<Pair>& pairs, const Vocab& vocab) {
  check(!pairs.empty(), "tag_pairs", "no pairs");
  const std::size_t n = pairs.size(), length = pairs.front().source.size();
  Tagged t{IndexArray::from_shape({n, length}), IndexArray::from_shape({n, length})};
  for (std::size_t r = 0; r < n; ++r) {
    const auto source = vocab.encode(pairs[r].source, Tokenizer::chars), target = vocab.encode(pairs[r].target, Tokenizer::chars);
    check(source.size() == length && target.size() == length, "tag_pairs", "pair ", r, " (\"", pairs[r].source,
          "\" -> \"", pairs[r].target, "\") is not ", length, " characters on both sides");
    std::copy(source.begin(), source.end(), t.inputs.data() + r * length);
    std::copy(target.begin(), target.end(), t.targets.data() + r * length);
  }
  return t;
}

}  // namespace attnlab::nn::data
