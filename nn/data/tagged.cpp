#include "nn/data/tagged.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <unordered_set>

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

Tagged running_max_digits(std::size_t n, std::size_t length, Generator& gen) {
  check(n > 0 && length > 0, "running_max_digits", "need at least one string of at least one digit, got n = ", n,
        ", length = ", length);
  check(length >= 20 || std::pow(10.0, double(length)) >= double(n), "running_max_digits", "asked for ", n,
        " distinct strings but only 10^", length, " strings of ", length, " digits exist");
  Tagged t{IndexArray::from_shape({n, length}), IndexArray::from_shape({n, length})};
  std::unordered_set<std::string> taken;
  for (std::size_t s = 0; s < n;) {
    std::string key(length, '0');
    for (char& c : key) c = char('0' + gen.below(10));
    if (!taken.insert(key).second) continue;  // drawn before: draw again
    Index largest = 0;
    for (std::size_t i = 0; i < length; ++i) {
      t.inputs(s, i) = key[i] - '0';
      t.targets(s, i) = largest = std::max(largest, t.inputs(s, i));
    }
    ++s;
  }
  return t;
}

IndexArray most_frequent_other_tags(const IndexArray& inputs, std::size_t vocab_size) {
  check(inputs.dimension() == 2 && inputs.shape()[1] >= 2, "most_frequent_other_tags",
        "inputs must be (N, L) with L >= 2, got ", shape_str(inputs.shape()));
  const std::size_t n = inputs.shape()[0], length = inputs.shape()[1];
  IndexArray tags = IndexArray::from_shape({n, length});
  std::vector<std::size_t> bag(vocab_size);
  for (std::size_t r = 0; r < n; ++r) {
    std::fill(bag.begin(), bag.end(), 0);
    for (std::size_t c = 0; c < length; ++c) {
      const Index token = inputs(r, c);
      check(token >= 0 && std::size_t(token) < vocab_size, "most_frequent_other_tags", "token ", token, " at (", r,
            ", ", c, ") is outside the vocabulary [0, ", vocab_size, ")");
      ++bag[std::size_t(token)];
    }
    for (std::size_t c = 0; c < length; ++c) {
      --bag[std::size_t(inputs(r, c))];  // the others only
      tags(r, c) = Index(std::max_element(bag.begin(), bag.end()) - bag.begin());
      ++bag[std::size_t(inputs(r, c))];
    }
  }
  return tags;
}

}  // namespace attnlab::nn::data
