#include "nn/confusions.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace attnlab::nn {

namespace {
// Targets and predictions of one shape (N) with every class id in 0..classes-1.
void check_labels(const char* name, const IndexArray& targets, const IndexArray& predictions, std::size_t classes) {
  check(targets.dimension() == 1 && targets.shape() == predictions.shape(), name,
        "needs targets and predictions of one shape (N), got ", shape_str(targets.shape()), " and ",
        shape_str(predictions.shape()));
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const Index t = targets(i), p = predictions(i);
    check(t >= 0 && p >= 0 && std::size_t(t) < classes && std::size_t(p) < classes, name, "row ", i,
          " has target ", t, " and prediction ", p, ", outside 0..", classes - 1);
  }
}
}  // namespace

std::vector<Confusion> most_confused(const IndexArray& targets, const IndexArray& predictions, std::size_t classes,
                                     std::size_t top) {
  check_labels("most_confused", targets, predictions, classes);
  std::vector<Confusion> pairs(classes * classes);
  for (std::size_t t = 0; t < classes; ++t)
    for (std::size_t p = 0; p < classes; ++p) pairs[t * classes + p] = {t, p, {}};
  for (std::size_t i = 0; i < targets.size(); ++i)
    if (targets(i) != predictions(i)) pairs[std::size_t(targets(i)) * classes + std::size_t(predictions(i))].examples.push_back(i);
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const Confusion& a, const Confusion& b) { return a.examples.size() > b.examples.size(); });
  while (!pairs.empty() && pairs.back().examples.empty()) pairs.pop_back();
  if (pairs.size() > top) pairs.resize(top);
  return pairs;
}

std::vector<std::size_t> first_correct_per_class(const IndexArray& targets, const IndexArray& predictions,
                                                 std::size_t classes) {
  check_labels("first_correct_per_class", targets, predictions, classes);
  std::vector<std::size_t> rows;
  for (std::size_t c = 0; c < classes; ++c)
    for (std::size_t i = 0; i < targets.size(); ++i)
      if (std::size_t(targets(i)) == c && predictions(i) == targets(i)) { rows.push_back(i); break; }
  return rows;
}

}  // namespace attnlab::nn
