// How noisy a gradient estimator is (lesson 20's REINFORCE against the soft gradient): the
// gradients of D independent draws, each flattened to one vector g_d, summarised as
//
//   mean      m_i = (1/D) sum_d g_di                           what the draws estimate
//   variance  V = sum_i 1/(D-1) sum_d (g_di - m_i)^2           the covariance's trace: sqrt(V) is
//                                                              the length of one draw's typical error
//
// beside the plain vector measures a comparison needs: length and cosine.
#pragma once

#include <vector>

#include "core/tensor.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

struct DrawSpread {
  std::vector<double> mean;
  double variance = 0;
};

// std::invalid_argument naming the function for fewer than two draws or draws of unequal lengths.
DrawSpread spread_of(const std::vector<std::vector<double>>& draws);

// The gradient of `loss` with respect to `params` (parameters of `model`), flattened in order:
// the model's gradients are dropped first, then loss.backward().
std::vector<double> flat_gradient(Module<float>& model, const std::vector<Tensor<float>>& params,
                                  const Tensor<float>& loss);

// sqrt(sum_i a_i^2), and a.b / (|a| |b|) (0 when either is 0). std::invalid_argument naming
// vector_cosine for vectors of unequal lengths.
double vector_length(const std::vector<double>& a);
double vector_cosine(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace attnlab::nn
