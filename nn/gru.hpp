// GRU, exactly PyTorch's equations, parameter names and layouts (gates ordered r, z, n):
//   r  = sigmoid(W_ir x + b_ir + W_hr h + b_hr)
//   z  = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
//   n  = tanh(W_in x + b_in + r * (W_hn h + b_hn))
//   h' = (1 - z) * n + z * h
// Every parameter ~ U(-1/sqrt(H), 1/sqrt(H)), as PyTorch.
#pragma once

#include <vector>

#include "core/ops.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// One step. weight_ih (3H, in), weight_hh (3H, H), bias_ih (3H), bias_hh (3H).
template <class T>
class GRUCell : public Module<T> {
 public:
  GRUCell(std::size_t input_size, std::size_t hidden_size, Generator& gen, bool bias = true);
  // x (B, in), h (B, H) (undefined: zeros) -> h' (B, H)
  Tensor<T> forward(const Tensor<T>& x, const Tensor<T>& h = Tensor<T>()) const;
  std::size_t input_size() const { return in_; }
  std::size_t hidden_size() const { return hidden_; }

  Tensor<T> weight_ih, weight_hh, bias_ih, bias_hh;

 private:
  std::size_t in_, hidden_;
};

struct GRUOptions {
  std::size_t num_layers = 1;
  bool bidirectional = false;
  bool bias = true;
  double dropout = 0.0;  // on each layer's output except the last, in training (as PyTorch)
  std::uint64_t dropout_seed = 0;
};

template <class T>
struct GRUOutput {
  Tensor<T> output;  // (B, L, dirs * H): the last layer's states, [forward, backward] on the last axis
  Tensor<T> state;   // (layers * dirs, B, H): the final state of each layer and direction
};

// Multi-layer, optionally bidirectional, batch-first GRU. Parameters per layer l and direction:
// weight_ih_l{l}[_reverse] (3H, in_l), weight_hh_l{l}[_reverse] (3H, H), bias_ih_l{l}[_reverse],
// bias_hh_l{l}[_reverse]; in_0 = input_size, in_l = dirs * H.
template <class T>
class GRU : public Module<T> {
 public:
  GRU(std::size_t input_size, std::size_t hidden_size, Generator& gen, GRUOptions options = {});
  // x (B, L, in); h0 (layers * dirs, B, H) or undefined (zeros); lengths (B) with 1 <= len <= L,
  // or empty (all L). Steps at or beyond a sequence's length leave its state unchanged and output
  // zeros; the backward direction starts at each sequence's own last real step (as PyTorch's
  // packed sequences), so the final state is the state at the length.
  GRUOutput<T> forward(const Tensor<T>& x, const Tensor<T>& h0 = Tensor<T>(),
                       const std::vector<std::size_t>& lengths = {});
  std::size_t input_size() const { return in_; }
  std::size_t hidden_size() const { return hidden_; }
  std::size_t num_layers() const { return opt_.num_layers; }
  std::size_t num_directions() const { return opt_.bidirectional ? 2 : 1; }

  // The parameters of layer l, direction d (0 forward, 1 backward).
  struct Weights {
    Tensor<T> weight_ih, weight_hh, bias_ih, bias_hh;
  };
  const Weights& weights(std::size_t layer, std::size_t direction) const;

 private:
  // One direction of one layer over the whole sequence: returns outputs (B, L, H) and the final
  // state (B, 1, H).
  std::pair<Tensor<T>, Tensor<T>> run_direction(const Weights& w, const Tensor<T>& x,
                                                Tensor<T> h, bool reverse,
                                                const std::vector<std::size_t>& lengths) const;
  std::size_t in_, hidden_;
  GRUOptions opt_;
  std::vector<Weights> weights_;  // layer * dirs + direction
  Generator gen_;                 // for the dropout between layers
};

}  // namespace attnlab::nn
