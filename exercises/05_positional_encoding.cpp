// Exercises for lesson 05, positional encoding. Grade them with build/bin/grade 05.
//
// Write each function in plain xtensor (loops, std::sin, std::pow ...), not with the engine's ops.
#include <cmath>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "nn/positional/rotary.hpp"
#include "nn/positional/sinusoidal.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 05.1 The sinusoidal table ------------------------------------------------------------------
// Return the (n, d) table, d even, of positions p = 0 .. n-1:
//     PE(p, 2i) = sin(p w_i),  PE(p, 2i+1) = cos(p w_i),  w_i = 10000^(-2i/d).
Array<double> sinusoidal_encoding(std::size_t n, std::size_t d) {
  not_attempted();  // delete this line and write your answer
}

// ---- 05.2 The rotation that shifts every position by k --------------------------------------------
// For each offset k there is one (d, d) matrix M_k with PE(p + k) = M_k PE(p) for every p. Return
// it. Each pair (sin, cos) of frequency w_i is a point on a circle at angle p w_i; moving to
// p + k turns it by k w_i: sin(a + b) = sin a cos b + cos a sin b, cos(a + b) = cos a cos b -
// sin a sin b. So M_k is block diagonal, one 2 x 2 block per pair.
Array<double> shift_rotation(std::size_t k, std::size_t d) {
  not_attempted();  // delete this line and write your answer
}

// ---- 05.3 Rotary position embedding (RoPE) ----------------------------------------------------
// x (L, d), d even: row l is a query or key at position p = offset + l. Rotate each pair
// (x[2i], x[2i+1]) by the angle p theta_i, theta_i = 10000^(-2i/d):
//     y[2i] = x[2i] cos a - x[2i+1] sin a,   y[2i+1] = x[2i] sin a + x[2i+1] cos a.
// Then <rope(q at p), rope(k at s)> depends on s - p only: attention sees offsets.
Array<double> rope(const Array<double>& x, std::size_t offset) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against nn/positional.
namespace {

void grade_sinusoidal_encoding(const std::function<Array<double>(std::size_t, std::size_t)>& answer, Grader& g) {
  g.close("n = 10, d = 8 against nn::sinusoidal_table", answer(10, 8), nn::sinusoidal_table<double>(10, 8), 1e-12,
          "pair i uses one frequency w_i = 10000^(-2i/d) for both its sin (column 2i) and its cos (column 2i + 1)");
  g.close("n = 50, d = 32", answer(50, 32), nn::sinusoidal_table<double>(50, 32), 1e-12,
          "pair i uses one frequency w_i = 10000^(-2i/d) for both its sin (column 2i) and its cos (column 2i + 1)");
}

void grade_shift_rotation(const std::function<Array<double>(std::size_t, std::size_t)>& answer, Grader& g) {
  for (std::size_t k : {1, 5}) {
    const std::size_t d = 16, n = 40;
    const Array<double> M = answer(k, d);
    if (!g.check(shape_of(M) == Shape{d, d}, "k = " + std::to_string(k) + ": M_k is (d, d)",
                 "shape " + shape_str(shape_of(M))))
      continue;
    // PE(p + k) for p = 0 .. n-1 is the table from offset k; M_k PE(p) for every p is PE M_k^T.
    const Array<double> table = nn::sinusoidal_table<double>(n, d);
    const Array<double> moved = matmul(Tensor<double>(table), Tensor<double>(M), false, true).value();
    g.close("k = " + std::to_string(k) + ": M_k PE(p) = PE(p + k) for p = 0 .. 39", moved,
            nn::sinusoidal_table<double>(n, d, k), 1e-10,
            "block i is [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]] acting on (sin, cos): check the signs");
    const Array<double> MtM = matmul(Tensor<double>(M), Tensor<double>(M), true, false).value();
    g.close("k = " + std::to_string(k) + ": M_k is a rotation, M_k^T M_k = I", MtM, xt::eye<double>(d), 1e-10);
  }
}

void grade_rope(const std::function<Array<double>(const Array<double>&, std::size_t)>& answer, Grader& g) {
  const Array<double> x = random_array({6, 8}, 61);
  for (std::size_t offset : {0, 9})
    g.close("L = 6, d = 8, offset " + std::to_string(offset) + " against nn::rotary", answer(x, offset),
            nn::rotary(Tensor<double>(x), offset).value(), 1e-12,
            "row l is at position offset + l; pair i turns by (offset + l) theta_i");
  // Scores depend on the offset alone: shifting both the queries and the keys changes nothing.
  const Array<double> q = random_array({5, 8}, 62), k = random_array({5, 8}, 63);
  const auto scores = [&](std::size_t shift) {
    return matmul(Tensor<double>(answer(q, shift)), Tensor<double>(answer(k, shift)), false, true).value();
  };
  g.close("<rope(q), rope(k)> unchanged when every position moves by 7", scores(7), scores(0), 1e-10,
          "a rotation by p theta_i for the query and s theta_i for the key leaves (s - p) theta_i in their dot product");
}

}  // namespace

EXERCISE(sinusoidal_encoding, "The sinusoidal table", grade_sinusoidal_encoding);
EXERCISE(shift_rotation, "The rotation M_k with PE(p + k) = M_k PE(p)", grade_shift_rotation);
EXERCISE(rope, "Rotary position embedding", grade_rope);
