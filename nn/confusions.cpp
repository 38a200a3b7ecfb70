#include "nn/confusions.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace attnlab::nn {

std::vector<Confusion> most_confused(const IndexArray& targets, const IndexArray& predictions, std::size_t classes,
                                     std::size_t top) {
  check(targets.dimension() == 1 && targets.shape() == predictions.shape(), "most_confused",
        "needs targets and predictions of one shape (N), got ", shape_str(targets.shape()), " and ",
        shape_str(predictions.shape()));
  std::vector<Confusion> pairs(classes * classes);
  for (std::size_t t = 0; t < classes; ++t)
    for (std::size_t p = 0; p < classes; ++p) pairs[t * classes + p] = {t, p, {}};
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const Index t = targets(i), p = predictions(i);
    check(t >= 0 && p >= 0 && std::size_t(t) < classes && std::size_t(p) < classes, "most_confused", "row ", i,
          " has target ", t, " and prediction ", p, ", outside 0..", classes - 1);
    if (t != p) pairs[std::size_t(t) * classes + std::size_t(p)].examples.push_back(i);
  }
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const Confusion& a, const Confusion& b) { return a.examples.size() > b.examples.size(); });
  while (!pairs.empty() && pairs.back().examples.empty()) pairs.pop_back();
  if (pairs.size() > top) pairs.resize(top);
  return pairs;
}

}  // namespace attnlab::nn
