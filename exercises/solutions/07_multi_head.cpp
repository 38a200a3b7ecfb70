// Solutions to exercises/07_multi_head.cpp, and the mistakes the grader must catch.
#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// The column of head j's feature c: j d + c (heads side by side), or c h + j (interleaved: wrong).
std::size_t column(std::size_t j, std::size_t c, std::size_t d, std::size_t h, bool side_by_side) {
  return side_by_side ? j * d + c : c * h + j;
}

Array<double> split(const Array<double>& x, std::size_t h, bool side_by_side) {
  const std::size_t B = x.shape()[0], L = x.shape()[1], d = x.shape()[2] / h;
  Array<double> out = xt::zeros<double>({B, h, L, d});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t j = 0; j < h; ++j)
      for (std::size_t l = 0; l < L; ++l)
        for (std::size_t c = 0; c < d; ++c) out(b, j, l, c) = x(b, l, column(j, c, d, h, side_by_side));
  return out;
}

Array<double> merge(const Array<double>& y, bool side_by_side) {
  const std::size_t B = y.shape()[0], h = y.shape()[1], L = y.shape()[2], d = y.shape()[3];
  Array<double> out = xt::zeros<double>({B, L, h * d});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t j = 0; j < h; ++j)
      for (std::size_t l = 0; l < L; ++l)
        for (std::size_t c = 0; c < d; ++c) out(b, l, column(j, c, d, h, side_by_side)) = y(b, j, l, c);
  return out;
}

Array<double> split_heads(const Array<double>& x, std::size_t heads) { return split(x, heads, true); }
SOLUTION(split_heads);

Array<double> split_heads_interleaved(const Array<double>& x, std::size_t heads) { return split(x, heads, false); }
WRONG_ANSWER(split_heads, split_heads_interleaved, "head j takes columns j, j + h, j + 2h ...: interleaved, not side by side");

Array<double> merge_heads(const Array<double>& y) { return merge(y, true); }
SOLUTION(merge_heads);

Array<double> merge_heads_interleaved(const Array<double>& y) { return merge(y, false); }
WRONG_ANSWER(merge_heads, merge_heads_interleaved, "writes head j's features to columns j, j + h, ...");

std::size_t attention_parameters(std::size_t d_model, std::size_t heads, bool bias) {
  return 4 * d_model * d_model + (bias ? 4 * d_model : 0);
}
SOLUTION(attention_parameters);

std::size_t attention_parameters_per_head(std::size_t d_model, std::size_t heads, bool bias) {
  return heads * attention_parameters(d_model, heads, bias);
}
WRONG_ANSWER(attention_parameters, attention_parameters_per_head, "a full set of d_model x d_model projections per head");

std::size_t attention_parameters_no_output(std::size_t d_model, std::size_t heads, bool bias) {
  return 3 * d_model * d_model + (bias ? 3 * d_model : 0);
}
WRONG_ANSWER(attention_parameters, attention_parameters_no_output, "forgets the output projection W_o");

// 07.4: offsets 2 and 5 only, with unequal weights (0.73 and 0.27), so that the mean keeps the order.
Array<double> bias_on(double at_two, double at_five) {
  Array<double> b = xt::full_like(xt::zeros<double>({16}), -30.0);
  b(2) = at_two, b(5) = at_five;
  return b;
}

Array<double> one_head_bias() { return bias_on(2.0, 1.0); }
SOLUTION(one_head_bias);

Array<double> one_head_bias_equal() { return bias_on(1.0, 1.0); }
WRONG_ANSWER(one_head_bias, one_head_bias_equal, "equal weight on both tokens: (3, 5) and (5, 3) give the same mean");

Array<double> one_head_bias_none() { return xt::zeros<double>({16}); }
WRONG_ANSWER(one_head_bias, one_head_bias_none, "no bias: the head must find the offsets by content alone");

}  // namespace
