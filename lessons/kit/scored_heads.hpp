// Single-head attentions side by side in the attention explorer (lessons/kit/explorer.hpp): each
// one a layer of one head, with its queries, keys and its own scale for the neuron view. Lesson 04
// puts its model trained with 1/sqrt(d_k) beside the one trained without, on the same input.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "core/array.hpp"
#include "lessons/kit/explorer.hpp"
#include "lessons/kit/figures.hpp"
#include "nn/data/tagged.hpp"

namespace attnlab::lessons {

struct ScoredHead {
  std::string name;            // the layer's name in the page: "with 1/sqrt(d_k)"
  xt::xarray<double> weights;  // (queries, keys): softmax(q . k * scale), masked keys 0
  xt::xarray<double> q, k;     // (queries, d_k) and (keys, d_k), as they were scored
  double scale = 0.0;          // 0: 1 / sqrt(d_k)
  bool causal = false;         // query i sees keys 0 ... i only: bias -inf beyond
  Mask allowed{};              // (queries, keys), false: a key the query may not see (bias -inf); {}: all
  // Optional ({}: none), for the gradient view: a loss's gradient in the weights, dA, and in the scores, dS.
  xt::xarray<double> weight_grad{}, score_grad{};
};

// The heads as one explorer input, a layer each, in order, with per-layer scales (layer_scale).
// std::invalid_argument naming scored_heads_input for no heads, a head whose weights or mask are
// not (queries, keys), or gradients for some heads and not others; explorer_html checks the rest
// (q and k against the weights, dS against dA).
AttentionInput scored_heads_input(const std::string& name, const std::vector<std::string>& queries,
                                  const std::vector<std::string>& keys, const std::vector<ScoredHead>& heads);

// One attention problem, queries q (n, d_k) scored against keys k (m, d_k) at 1/sqrt(d_k), run
// under several masks, each run with its weights and a loss's gradients in them: lesson 06 puts
// its hand-written backward in the explorer's gradient view this way.
struct GradientRun {
  std::string name;                                     // the input's name in the page
  xt::xarray<double> weights, weight_grad, score_grad;  // A, dA and dS, each (n, m)
  Mask allowed{};                                       // (n, m), false: hidden; {}: every key visible
};

// An explorer input per run, in order: one layer "softmax(QKᵀ/√d)", queries q1 ... qn, keys
// k1 ... km. std::invalid_argument naming gradient_run_inputs for no runs, for q or k not 2-D or
// of different widths; scored_heads_input names the rest.
std::vector<AttentionInput> gradient_run_inputs(const xt::xarray<double>& q, const xt::xarray<double>& k,
                                                const std::vector<GradientRun>& runs);

// Sequence 0 of a batch as a head: weights (B, n, m), q (B, n, d_k) and k (B, m, d_k) in float,
// kept in double. std::invalid_argument naming first_sequence_head for arrays that are not 3-D.
ScoredHead first_sequence_head(const std::string& name, const Array<float>& weights, const Array<float>& q,
                               const Array<float>& k, double scale, bool causal);

// Heads of models on chosen rows of a tagged set, an input per row named "<name> 1", "<name> 2",
// ...: keys the row's tokens as numbers, queries "token → target", the heads heads_of(the row as a
// (1, L) batch) returns. Lesson 04 shows its two models on held-out sequences this way.
// std::invalid_argument naming tagged_inputs for no rows; a row outside the set is nn's ShapeError.
std::vector<AttentionInput> tagged_inputs(const nn::data::Tagged& set, const std::vector<std::size_t>& rows,
                                          const std::string& name,
                                          const std::function<std::vector<ScoredHead>(const IndexArray&)>& heads_of);

// The first head of every layer on the first `count` inputs, as figure panels layer by layer,
// titled "<layer>, <what> <i>". std::invalid_argument naming first_head_maps for fewer inputs than
// count or inputs whose layers differ.
std::vector<AttentionMap> first_head_maps(const std::vector<AttentionInput>& inputs, std::size_t count,
                                          const std::string& what);

}  // namespace attnlab::lessons
