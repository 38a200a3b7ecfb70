// Solutions to exercises/18_approximate_attention.cpp, and the mistakes the grader must catch.
#include <cmath>

#include "exercises/grading/exercise.hpp"
#include "nn/recall_model.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

Array<double> linear_attention_with(const Array<double>& Q, const Array<double>& K, const Array<double>& V,
                                    bool causal) {
  const std::size_t n = Q.shape()[0], d = Q.shape()[1], dv = V.shape()[1];
  auto phi = [](double x) { return x > 0 ? x + 1 : std::exp(x); };
  Array<double> S = xt::zeros<double>({d, dv}), z = xt::zeros<double>({d}), O = xt::zeros<double>({n, dv});
  auto add_key = [&](std::size_t j) {
    for (std::size_t a = 0; a < d; ++a) {
      const double g = phi(K(j, a));
      z(a) += g;
      for (std::size_t c = 0; c < dv; ++c) S(a, c) += g * V(j, c);
    }
  };
  if (!causal)
    for (std::size_t j = 0; j < n; ++j) add_key(j);
  for (std::size_t i = 0; i < n; ++i) {
    if (causal) add_key(i);
    double den = 1e-6;
    for (std::size_t a = 0; a < d; ++a) {
      const double f = phi(Q(i, a));
      den += f * z(a);
      for (std::size_t c = 0; c < dv; ++c) O(i, c) += f * S(a, c);
    }
    for (std::size_t c = 0; c < dv; ++c) O(i, c) /= den;
  }
  return O;
}

Array<double> causal_linear_attention(const Array<double>& Q, const Array<double>& K, const Array<double>& V) {
  return linear_attention_with(Q, K, V, true);
}
SOLUTION(causal_linear_attention);

Array<double> causal_linear_attention_sees_ahead(const Array<double>& Q, const Array<double>& K, const Array<double>& V) {
  return linear_attention_with(Q, K, V, false);
}
WRONG_ANSWER(causal_linear_attention, causal_linear_attention_sees_ahead,
             "sums every key into the state first: query i sees the keys after it");

Array<double> causal_linear_attention_relu(const Array<double>& Q, const Array<double>& K, const Array<double>& V) {
  // phi = relu + 1 instead of elu + 1: right for positive inputs, wrong below 0.
  Array<double> q = Q, k = K;
  for (auto& x : q) x = x > 0 ? x : 0.0;  // phi(0) = 1
  for (auto& x : k) x = x > 0 ? x : 0.0;
  return linear_attention_with(q, k, V, true);
}
WRONG_ANSWER(causal_linear_attention, causal_linear_attention_relu, "uses relu(x) + 1 instead of elu(x) + 1");

// A band a few tokens wide fits local attention's window; a broad smooth one is low-rank, which
// Linformer's segment means keep.
nn::AttentionKind approximation_for(double sharpness) {
  return sharpness >= 1.25 ? nn::AttentionKind::local : nn::AttentionKind::linformer;
}
SOLUTION(approximation_for);

nn::AttentionKind always_local(double) { return nn::AttentionKind::local; }
WRONG_ANSWER(approximation_for, always_local, "local everywhere: a broad band reaches far beyond the window");

nn::AttentionKind always_linear(double) { return nn::AttentionKind::linear; }
WRONG_ANSWER(approximation_for, always_linear, "linear everywhere: its smooth kernel cannot concentrate on a narrow band");

nn::AttentionKind backwards(double sharpness) {
  return sharpness >= 1.25 ? nn::AttentionKind::linformer : nn::AttentionKind::local;
}
WRONG_ANSWER(approximation_for, backwards, "local for the broad band and Linformer for the narrow one");

}  // namespace
