// The attention explorer: one self-contained HTML page (its data inline, no network) in which a
// learner looks at a trained model's attention on chosen inputs, the way BertViz's views do:
//
//   * head view: the queries on the right, the keys on the left, a line from each query to each
//     key as dark as its weight; choose the layer and the head (or every head of the layer,
//     overlaid in their own colours); hover a query to keep only its lines and read its weights;
//   * model view: every layer by every head as a small heatmap; click one to open it in the head view;
//   * neuron view (for query-key attention, when the input carries its queries and keys): one
//     query's score for every key split into its terms, the products q_c k_c of each dimension c
//     of the head, their sum q . k, the scaled score with its bias, and the softmax weight;
//   * gradient view (when the input carries a backward's dA and dS: lesson 06): the same query's
//     row of the softmax backward, each key's A, dA, dA - D and dS = A (dA - D), D = sum_j A_j dA_j.
//
// A lesson writes one for its test inputs (the course book embeds it), and `inspect` writes one
// for the learner's own input.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <xtensor/xarray.hpp>

namespace attnlab::lessons {

// One input's attention: per layer, per head, a (queries, keys) matrix whose rows are the weights
// each query gives the keys (each row sums to 1, or to 0 for a query that sees no key).
struct AttentionInput {
  std::string name;                     // "3rd of March, 1997 -> 1997-03-03": the input's entry in the page's list
  std::vector<std::string> queries, keys;
  std::vector<std::string> layers;      // "cross-attention", "layer 1", ...
  std::vector<std::vector<xt::xarray<double>>> heads;  // [layer][head], each (queries, keys)
  // Optional, for the neuron view: [layer][head] the queries (queries, d_k) and the keys (keys, d_k)
  // as they were scored (after the projections and any rotation, before the scaling), and the
  // additive bias (queries, keys) the scores had (a positional bias; -inf for a key the query may
  // not see, a mask): score = q . k * scale + bias, and the weights are the softmax of the scores.
  // Empty q and k: no neuron view for this input; empty bias: no bias and no mask.
  std::vector<std::vector<xt::xarray<double>>> q{}, k{}, bias{};  // ({}: an input written {name, queries, keys, layers, heads} leaves them empty)
  double scale = 0.0;  // 0: 1 / sqrt(d_k)
  // Optional: one scale per layer, for layers that score at different scales (lesson 04's model with
  // 1/sqrt(d_k) beside the one without); when given, it is used instead of `scale`.
  std::vector<double> layer_scale{};
  // Optional, for the gradient view (lesson 06): [layer][head] the gradient of a loss in the weights,
  // dA, and in the scores, dS, each (queries, keys), as a backward computed them. The page shows one
  // query's row: each key's A, dA, the row's D = sum_j A_j dA_j and dS = A (dA - D), recomputed beside
  // the given dS. Empty: no gradient view.
  std::vector<std::vector<xt::xarray<double>>> weight_grad{}, score_grad{};
  // Optional, for grouped-query attention (lesson 12): per layer, the key/value heads g its H query
  // heads share, g dividing H: query head h reads key/value head h / (H / g). The page groups the
  // heads by the key/value head they read (the head selector, the readout, the model view) and says
  // so. Empty: every head its own keys and values.
  std::vector<std::size_t> kv_heads{};
  // Optional: per layer, why the layer has no neuron view ("" for one that has): a layer whose score
  // is not q . k (Luong's concat, Bahdanau's additive) may leave its q[l] and k[l] empty when it
  // says why here, and the neuron view shows this in place of the products.
  std::vector<std::string> no_neuron_view{};
};

struct ExplorerPage {
  std::string title;                    // the page's heading
  std::string query_side = "queries", key_side = "keys";  // what the two columns are
  std::string note;                     // one paragraph under the heading (plain text)
  std::vector<AttentionInput> inputs;
};

// Several models' attention on one input as one input: the layers of each in turn, named
// "<model>: <layer>", so the head view switches between models like between layers. Their queries,
// keys and scale must agree, and either all carry the neuron view's queries and keys or none (and
// either all their layer_scale or none); kv_heads and no_neuron_view are kept for the models that
// give them (the others' layers: every head its own keys, a neuron view);
// std::invalid_argument naming side_by_side otherwise, or for no models.
AttentionInput side_by_side(const std::string& name, const std::vector<std::pair<std::string, AttentionInput>>& models);

// The page as HTML. std::invalid_argument naming "explorer" and the input, layer and head at fault
// when a matrix's shape does not match its tokens, a layer's head count differs from its
// name count, a weight is not finite or outside [0, 1], or there is no input at all; and, for an
// input with queries and keys, when they are not given for every layer and head, their shapes do
// not fit the tokens, a value is not finite (a bias may be -inf), a layer_scale is given but not one
// positive finite number per layer, or the softmax of the scores they make differs from the weights
// by more than 1e-3 (a layer left without them must say why in no_neuron_view). The page rounds them
// to four significant digits. For grouped heads: kv_heads not one divisor of the head count per
// layer, or, with queries and keys, heads of one group whose keys differ (they read one key head). For an input with gradients:
// when dA and dS are not given for every layer and head, not (queries, keys) or not finite, or
// A (dA - D) differs from dS by more than 1e-6 of the row's largest |dA|, plus 1e-9.
std::string explorer_html(const ExplorerPage& page);

// explorer_html written to `path` atomically (a temporary name, then renamed).
void write_explorer(const std::string& path, const ExplorerPage& page);

// In a lesson: the explorer written as <stem>.html in the output folder, linked from the report
// and embedded in the course book with its caption.
void show_explorer(const ExplorerPage& page, const std::string& stem, const std::string& caption);

}  // namespace attnlab::lessons
