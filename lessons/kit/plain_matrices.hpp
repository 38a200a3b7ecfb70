// Plain xtensor matrices in double precision, no tape: the references a lesson holds the math it
// derives by hand against (lesson 06 writes attention's backward with these and checks it).
#pragma once

#include <functional>

#include "core/array.hpp"

namespace attnlab::lessons {

// a (m x k) times b (k x n): the sum over k of a(i, k) b(k, j), as one broadcast expression (no
// BLAS: the formula itself). ShapeError naming mm for inner sizes that differ or another rank.
Array<double> mm(const Array<double>& a, const Array<double>& b);
// The transpose of a 2-D matrix.
Array<double> tr(const Array<double>& a);
// Row sums kept as a column (m x 1), so they broadcast against the rows.
Array<double> rowsum(const Array<double>& a);
// sum(a * b): the inner product of two matrices of one shape.
double inner(const Array<double>& a, const Array<double>& b);

// Softmax of each row of a 2-D matrix over its allowed entries; a hidden entry gets exactly 0 and
// a row with nothing allowed is all 0 (no exp(-inf - (-inf)) = NaN). allowed: the default (0-D), or the shape
// of s. ShapeError naming softmax_rows for another rank or a mask of another shape.
Array<double> softmax_rows(const Array<double>& s, const Mask& allowed = {});

// Central differences of a scalar function of one array, entry by entry:
//   dF/dx_i ~ (F(x + h e_i) - F(x - h e_i)) / 2h.
// h = 1e-5 by default: the truncation error (h^2 / 6 F''') and the rounding error (eps F / h) both
// stay near 1e-11 in double. ShapeError for h <= 0.
Array<double> central_differences(const std::function<double(const Array<double>&)>& F, Array<double> x,
                                  double h = 1e-5);

// The largest error relative to the largest entry of the reference: max |a - b| / max |b| (a
// reference of zeros divides by 1e-300). ShapeError naming the shapes when they differ.
double max_relative_error(const Array<double>& a, const Array<double>& reference);

}  // namespace attnlab::lessons
