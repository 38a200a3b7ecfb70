#include "nn/gru.hpp"

#include <cmath>

#include "core/ops/gru_cell.hpp"
#include "nn/init.hpp"

namespace attnlab::nn {

namespace {

template <class T>
void init_uniform(const Tensor<T>& t, Generator& gen, std::size_t hidden) {
  const double a = 1.0 / std::sqrt(static_cast<double>(hidden));
  uniform(t, gen, -a, a);
}

// The gate arithmetic shared by GRUCell and GRU is core/ops/gru_cell.hpp: from the two
// projections gi = W_ih x + b_ih and gh = W_hh h + b_hh, each (..., 3H) ordered [r, z, n],
//   [r, z] = sigmoid(gi_rz + gh_rz);  n = tanh(gi_n + r * gh_n);  h' = n + z * (h - n),
// one node with a hand-derived backward instead of about ten (one GRU step records three nodes:
// the input slice, the hidden projection and the cell).

}  // namespace

// ---- GRUCell

template <class T>
GRUCell<T>::GRUCell(std::size_t input_size, std::size_t hidden_size, Generator& gen, bool bias)
    : in_(input_size), hidden_(hidden_size) {
  check(in_ > 0 && hidden_ > 0, "GRUCell", "sizes must be positive, got input ", in_, ", hidden ",
        hidden_);
  weight_ih = this->register_parameter("weight_ih", Tensor<T>::zeros({3 * hidden_, in_}));
  weight_hh = this->register_parameter("weight_hh", Tensor<T>::zeros({3 * hidden_, hidden_}));
  init_uniform(weight_ih, gen, hidden_);
  init_uniform(weight_hh, gen, hidden_);
  if (bias) {
    bias_ih = this->register_parameter("bias_ih", Tensor<T>::zeros({3 * hidden_}));
    bias_hh = this->register_parameter("bias_hh", Tensor<T>::zeros({3 * hidden_}));
    init_uniform(bias_ih, gen, hidden_);
    init_uniform(bias_hh, gen, hidden_);
  }
}

template <class T>
Tensor<T> GRUCell<T>::forward(const Tensor<T>& x, const Tensor<T>& h_in) const {
  need("GRUCell", x);
  const Shape xs = x.shape();
  check(xs.size() == 2 && xs[1] == in_, "GRUCell", "input must be (B, ", in_, "), got ",
        shape_str(xs));
  Tensor<T> h = h_in.defined() ? h_in : Tensor<T>::zeros({xs[0], hidden_});
  check(h.shape() == Shape{xs[0], hidden_}, "GRUCell", "state must be (B, H) = ",
        shape_str(Shape{xs[0], hidden_}), ", got ", shape_str(h.shape()));
  return gru_cell(linear(x, weight_ih, bias_ih), linear(h, weight_hh, bias_hh), h);
}

// ---- GRU

template <class T>
GRU<T>::GRU(std::size_t input_size, std::size_t hidden_size, Generator& gen, GRUOptions options)
    : in_(input_size), hidden_(hidden_size), opt_(options), gen_(options.dropout_seed) {
  check(in_ > 0 && hidden_ > 0 && opt_.num_layers > 0, "GRU",
        "sizes must be positive, got input ", in_, ", hidden ", hidden_, ", layers ",
        opt_.num_layers);
  check(opt_.dropout >= 0.0 && opt_.dropout < 1.0, "GRU", "dropout must be in [0, 1), got ",
        opt_.dropout);
  const std::size_t dirs = num_directions(), H = hidden_;
  for (std::size_t l = 0; l < opt_.num_layers; ++l) {
    const std::size_t in_l = l == 0 ? in_ : dirs * H;
    for (std::size_t d = 0; d < dirs; ++d) {
      const std::string sfx = "_l" + std::to_string(l) + (d == 1 ? "_reverse" : "");
      Weights w;
      w.weight_ih = this->register_parameter("weight_ih" + sfx, Tensor<T>::zeros({3 * H, in_l}));
      w.weight_hh = this->register_parameter("weight_hh" + sfx, Tensor<T>::zeros({3 * H, H}));
      init_uniform(w.weight_ih, gen, H);
      init_uniform(w.weight_hh, gen, H);
      if (opt_.bias) {
        w.bias_ih = this->register_parameter("bias_ih" + sfx, Tensor<T>::zeros({3 * H}));
        w.bias_hh = this->register_parameter("bias_hh" + sfx, Tensor<T>::zeros({3 * H}));
        init_uniform(w.bias_ih, gen, H);
        init_uniform(w.bias_hh, gen, H);
      }
      weights_.push_back(std::move(w));
    }
  }
}

template <class T>
const typename GRU<T>::Weights& GRU<T>::weights(std::size_t layer, std::size_t direction) const {
  check(layer < opt_.num_layers && direction < num_directions(), "GRU", "no layer ", layer,
        " direction ", direction, " in a GRU of ", opt_.num_layers, " layers and ",
        num_directions(), " directions");
  return weights_[layer * num_directions() + direction];
}

// The state is kept as (B, 1, H) so that each step's output is already a time slice of the
// (B, L, H) result and the per-step input slices need no reshape.
template <class T>
std::pair<Tensor<T>, Tensor<T>> GRU<T>::run_direction(const Weights& w, const Tensor<T>& x,
                                                      Tensor<T> h, bool reverse,
                                                      const std::vector<std::size_t>& lengths) const {
  const std::size_t B = x.dim(0), L = x.dim(1);
  // All input projections at once: one GEMM of (B*L, in) x (in, 3H) instead of L small ones.
  // Step t reads its (B, 1, 3H) slice; slice's backward adds into that range only.
  const Tensor<T> gi = linear(x, w.weight_ih, w.bias_ih);
  std::vector<Tensor<T>> outs(L);
  for (std::size_t s = 0; s < L; ++s) {
    const std::size_t t = reverse ? L - 1 - s : s;
    const long tl = static_cast<long>(t);
    Tensor<T> h_new = gru_cell(slice(gi, 1, tl, tl + 1), linear(h, w.weight_hh, w.bias_hh), h);
    // Packed-sequence semantics: step t is real for sequence b iff t < len_b. Elsewhere the state
    // passes through (so the backward direction effectively starts at len_b - 1, from h0) and the
    // output is 0. where() sends no gradient down the branch it did not pick.
    bool all_real = true;
    Mask real = Mask::from_shape({B, std::size_t(1), std::size_t(1)});
    for (std::size_t b = 0; b < B; ++b) {
      real(b, 0, 0) = lengths.empty() || t < lengths[b];
      all_real = all_real && real(b, 0, 0);
    }
    if (all_real) {
      h = h_new;
      outs[t] = h_new;
    } else {
      h = attnlab::where(real, h_new, h);
      outs[t] = attnlab::where(real, h_new, Tensor<T>::zeros({1, 1, 1}));
    }
  }
  return {concat(outs, 1), h};
}

template <class T>
GRUOutput<T> GRU<T>::forward(const Tensor<T>& x, const Tensor<T>& h0,
                             const std::vector<std::size_t>& lengths) {
  need("GRU", x);
  const Shape xs = x.shape();
  check(xs.size() == 3 && xs[2] == in_, "GRU", "input must be (B, L, ", in_, "), got ",
        shape_str(xs));
  const std::size_t B = xs[0], L = xs[1], H = hidden_, dirs = num_directions();
  const std::size_t S = opt_.num_layers * dirs;
  check(L > 0, "GRU", "empty sequence: input ", shape_str(xs));
  if (!lengths.empty()) {
    check(lengths.size() == B, "GRU", lengths.size(), " lengths for a batch of ", B);
    for (std::size_t len : lengths)
      check(len >= 1 && len <= L, "GRU", "length ", len, " out of range [1, ", L, "]");
  }
  if (h0.defined())
    check(h0.shape() == Shape{S, B, H}, "GRU", "initial state must be (layers * dirs, B, H) = ",
          shape_str(Shape{S, B, H}), ", got ", shape_str(h0.shape()));
  // (S, B, H) -> (B, S, H), so that slice s along axis 1 is a (B, 1, H) state.
  Tensor<T> h0b = h0.defined() ? transpose(h0, 0, 1) : Tensor<T>::zeros({B, 1, H});

  Tensor<T> input = x;
  std::vector<Tensor<T>> finals;
  for (std::size_t l = 0; l < opt_.num_layers; ++l) {
    std::vector<Tensor<T>> layer_outs;
    for (std::size_t d = 0; d < dirs; ++d) {
      const long s = static_cast<long>(l * dirs + d);
      Tensor<T> h = h0.defined() ? slice(h0b, 1, s, s + 1) : h0b;
      auto [out, hn] = run_direction(weights_[l * dirs + d], input, h, d == 1, lengths);
      layer_outs.push_back(out);
      finals.push_back(hn);
    }
    input = dirs == 1 ? layer_outs[0] : concat(layer_outs, -1);
    if (opt_.dropout > 0.0 && l + 1 < opt_.num_layers)
      input = dropout(input, opt_.dropout, this->training(), gen_);
  }
  // (B, S, H) -> (S, B, H), PyTorch's h_n layout.
  return {input, transpose(concat(finals, 1), 0, 1)};
}

#define ATTNLAB_INSTANTIATE(T) \
  template class GRUCell<T>;   \
  template class GRU<T>;
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab::nn
