// The most frequent confusions of a classifier: which (true class, predicted class) pairs its
// mistakes fall into, most frequent first, with the examples of each; and one right answer per class.
#pragma once

#include <cstddef>
#include <vector>

#include "core/array.hpp"

namespace attnlab::nn {

struct Confusion {
  std::size_t truth = 0, predicted = 0;
  std::vector<std::size_t> examples;  // the rows with this mistake, in order
};

// At most `top` pairs with at least one mistake, by count (ties: the smaller truth, then the
// smaller predicted class first). ShapeError naming the function for targets and predictions of
// different shapes or not 1-D, or a class id outside 0..classes-1.
std::vector<Confusion> most_confused(const IndexArray& targets, const IndexArray& predictions, std::size_t classes,
                                     std::size_t top);

// For each class 0..classes-1 in order, the first row whose target is that class and whose
// prediction is right; a class with no such row gives none (examples of what a classifier gets
// right, one per class). The same ShapeError as most_confused, naming first_correct_per_class.
std::vector<std::size_t> first_correct_per_class(const IndexArray& targets, const IndexArray& predictions,
                                                 std::size_t classes);

}  // namespace attnlab::nn
