#include "nn/data/offset_tuples.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "nn/data/tasks.hpp"

namespace attnlab::nn::data {

std::size_t offset_tuple_classes(std::size_t base, std::size_t offsets) {
  return std::size_t(std::llround(std::pow(double(base), double(offsets))));
}

Tagged offset_tuples(std::size_t n, std::size_t length, std::size_t base, const std::vector<std::size_t>& offsets,
                     Index no_tag, Generator& gen) {
  check(base >= 2 && base <= 10, "offset_tuples", "base must be 2..10 (digit tokens), got ", base);
  check(!offsets.empty(), "offset_tuples", "no offsets");
  const std::size_t first = *std::max_element(offsets.begin(), offsets.end());
  check(*std::min_element(offsets.begin(), offsets.end()) > 0 && first < length, "offset_tuples",
        "offsets must be 1..length-1 = ", length - 1, ", got one of ", offsets.size(), " up to ", first, " (and down to ",
        *std::min_element(offsets.begin(), offsets.end()), ")");
  SeqTaskConfig cfg;
  cfg.alphabet = std::string("0123456789").substr(0, base);
  cfg.min_len = cfg.max_len = length;
  const std::vector<Pair> strings = make_seq_task(cfg, n, gen);  // distinct; ShapeError when too few exist
  Tagged t{IndexArray::from_shape({n, length}), IndexArray::from_shape({n, length})};
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t i = 0; i < length; ++i) {
      t.inputs(s, i) = strings[s].source[i] - '0';
      Index y = 0;
      for (std::size_t o : offsets) y = y * Index(base) + (i >= o ? strings[s].source[i - o] - '0' : 0);
      t.targets(s, i) = i < first ? no_tag : y;
    }
  return t;
}

std::vector<double> tuple_digit_accuracy(const IndexArray& predictions, const IndexArray& targets, std::size_t base,
                                         std::size_t digits, Index no_tag) {
  check(predictions.shape() == targets.shape(), "tuple_digit_accuracy", "predictions ", shape_str(predictions.shape()),
        " and targets ", shape_str(targets.shape()), " differ in shape");
  std::vector<double> right(digits, 0.0);
  std::size_t n = 0;
  for (std::size_t k = 0; k < predictions.size(); ++k) {
    Index y = targets.data()[k], p = predictions.data()[k];
    if (y == no_tag) continue;
    ++n;
    for (std::size_t r = digits; r-- > 0; y /= Index(base), p /= Index(base)) right[r] += y % Index(base) == p % Index(base);
  }
  check(n > 0, "tuple_digit_accuracy", "no tagged position among ", predictions.size(), " (all are no_tag = ", no_tag, ")");
  for (double& r : right) r /= double(n);
  return right;
}

}  // namespace attnlab::nn::data
