// Exercises for lesson 07, multi-head attention. Grade them with build/bin/grade 07.
//
// Write each function in plain xtensor (loops, xt::zeros ...), not with the engine's ops.
#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "nn/attention/multi_head.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 07.1 Splitting into heads --------------------------------------------------------------------
// x (B, L, h d): each token's d_model = h d features are h heads of d, side by side (head 0 in
// columns 0 .. d-1, head 1 in d .. 2d-1, ...). Return (B, h, L, d): out(b, j, l, c) = x(b, l, j d + c),
// so that each head is an (L, d) matrix that attention can use on its own.
Array<double> split_heads(const Array<double>& x, std::size_t heads) {
  not_attempted();  // delete this line and write your answer
}

// ---- 07.2 Merging them back ---------------------------------------------------------------------
// The inverse: y (B, h, L, d) -> (B, L, h d), each head's output back in its own columns.
Array<double> merge_heads(const Array<double>& y) {
  not_attempted();  // delete this line and write your answer
}

// ---- 07.3 What heads cost in parameters ------------------------------------------------------------
// How many parameters has a multi-head attention layer over d_model features with `heads` heads:
// the projections W_q, W_k, W_v, W_o, each (d_model, d_model), with a bias each when `bias`?
// (Think about what changes with the number of heads.)
std::size_t attention_parameters(std::size_t d_model, std::size_t heads, bool bias) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against the engine's reshape and permute, its
// fused multi-head attention and nn::MultiHeadAttention.
namespace {

Array<double> engine_split(const Array<double>& x, std::size_t h) {
  const long B = long(x.shape()[0]), L = long(x.shape()[1]), d = long(x.shape()[2] / h);
  return permute(reshape(Tensor<double>(x), {B, L, long(h), d}), {0, 2, 1, 3}).value();
}

void grade_split_heads(const std::function<Array<double>(const Array<double>&, std::size_t)>& answer, Grader& g) {
  const Array<double> x = random_array({2, 5, 12}, 71);
  for (std::size_t h : {3, 4, 1})
    g.close("(2, 5, 12) into " + std::to_string(h) + " heads", answer(x, h), engine_split(x, h), 0.0,
            "out(b, j, l, c) = x(b, l, j d + c) with d = 12 / h: the head is the slower index of the columns");
}

void grade_merge_heads(const std::function<Array<double>(const Array<double>&)>& answer, Grader& g) {
  const Array<double> y = random_array({2, 4, 5, 3}, 72);
  const Array<double> merged = reshape(permute(Tensor<double>(y), {0, 2, 1, 3}), {2, 5, 12}).value();
  g.close("(2, 4, 5, 3) to (2, 5, 12)", answer(y), merged, 0.0, "the inverse of split_heads: y(b, j, l, c) goes to (b, l, j d + c)");
  // Split, attention per head, merge: what the engine's fused multi-head op computes in place.
  const Array<double> q = random_array({2, 5, 12}, 73), k = random_array({2, 6, 12}, 74), v = random_array({2, 6, 12}, 75);
  const Array<double> heads = scaled_dot_product_attention(Tensor<double>(engine_split(q, 4)), Tensor<double>(engine_split(k, 4)),
                                                           Tensor<double>(engine_split(v, 4)))
                                  .output.value();
  g.close("merged heads equal the engine's multi_head_attention", answer(heads),
          multi_head_attention(Tensor<double>(q), Tensor<double>(k), Tensor<double>(v), 4).output.value(), 1e-12,
          "head j's output belongs in columns j d .. (j + 1) d - 1 of its token's row");
}

void grade_attention_parameters(const std::function<std::size_t(std::size_t, std::size_t, bool)>& answer, Grader& g) {
  for (const bool bias : {true, false})
    for (const std::size_t h : {1, 8}) {
      Generator gen(76);
      const std::size_t expected = nn::MultiHeadAttention<double>(64, h, gen, 0.0, bias).parameter_count();
      const std::size_t yours = answer(64, h, bias);
      g.check(yours == expected,
              "d_model 64, " + std::to_string(h) + (h == 1 ? " head, " : " heads, ") + (bias ? "with" : "without") +
                  " biases, against nn::MultiHeadAttention",
              "yours " + std::to_string(yours) + ", the module's " + std::to_string(expected),
              "heads split d_model among them: the four projections stay (d_model, d_model) whatever the count");
    }
}

}  // namespace

EXERCISE(split_heads, "Splitting into heads", grade_split_heads);
EXERCISE(merge_heads, "Merging heads back", grade_merge_heads);
EXERCISE(attention_parameters, "What heads cost in parameters", grade_attention_parameters);
