// Shared by the models of nn/transformer: token-embedding init and input checks.
#pragma once

#include <cmath>
#include <optional>

#include <xtensor/xview.hpp>

#include "nn/init.hpp"
#include "nn/layers.hpp"

namespace attnlab::nn::detail {

// N(0, 1/d), padding row zero: multiplied by sqrt(d) in the forward, token vectors have unit
// scale per entry, like the sinusoidal table they are added to (fairseq's choice).
template <class T>
void init_token_embedding(Embedding<T>& e, Generator& gen) {
  NoGrad no_grad;
  normal(e.weight, gen, 0.0, 1.0 / std::sqrt(static_cast<double>(e.dim())));
  if (e.padding_idx()) xt::view(e.weight.mutable_value(), *e.padding_idx(), xt::all()) = T(0);
}

inline void check_ids(const char* who, const IndexArray& ids, const char* what = "token ids") {
  check(ids.dimension() == 2, who, "expected ", what, " (B, L), got ", shape_str(ids.shape()));
}

// embedding(ids) * sqrt(d)
template <class T>
Tensor<T> scaled_embedding(const Embedding<T>& e, const IndexArray& ids) {
  return mul(e.forward(ids), static_cast<T>(std::sqrt(static_cast<double>(e.dim()))));
}

}  // namespace attnlab::nn::detail
