// Evaluation a batch at a time: a whole set through a model without holding all its activations.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <vector>

#include "core/array.hpp"

namespace attnlab::lessons {

// Evaluation in order: body(rows) for rows 0..batch-1, batch..2 batch-1, ... of n examples (the
// last batch may be shorter).
template <class Body>
void in_batches(std::size_t n, std::size_t batch, Body&& body) {
  if (batch == 0) throw std::invalid_argument("in_batches: the batch size must be positive, got 0");
  for (std::size_t lo = 0; lo < n; lo += batch) {
    std::vector<std::size_t> rows(std::min(n, lo + batch) - lo);
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = lo + i;
    body(rows);
  }
}

// Rows 0..n-1 of an (n, ...) result computed `batch` rows at a time without the tape, for
// evaluating a model on a whole set without holding all its activations: block(rows) gives the
// (rows.size(), ...) block of those rows (consecutive, as in_batches makes them).
Array<float> rows_in_batches(std::size_t n, std::size_t batch,
                             const std::function<Array<float>(const std::vector<std::size_t>& rows)>& block);

}  // namespace attnlab::lessons
