// Positional information for attention, which by itself is blind to order (permuting the keys
// permutes nothing in the output). Five ways to put position back:
//
//   sinusoidal   x + PE, PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(...): fixed, any length
//   learned      x + W[p], W (max_length, d) trained: cannot go past max_length
//   relative     a learned bias b(j - i) per head added to the scores (T5 buckets): any length
//   rotary       rotate pairs of q and k dimensions by p * theta_i, so q.k sees only i - j: any length
//   ALiBi        a fixed bias -slope_h * |i - j| added to the scores: any length
//
// The first two act on the embeddings; the last three act inside attention.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// Which positional method a model uses (the encoder-only model takes any of them).
enum class Positional { None, Sinusoidal, Learned, RelativeBias, Rotary, ALiBi };
std::string positional_name(Positional p);       // "none", "sinusoidal", ... "alibi"
Positional parse_positional(const std::string& name);  // the inverse; ShapeError on unknown names

// ---------------------------------------------------------------- sinusoidal

// The (length, d) table PE(p, 2i) = sin(p w_i), PE(p, 2i+1) = cos(p w_i), w_i = 10000^(-2i/d),
// for positions offset .. offset + length - 1. Computed in double, then cast.
template <class T>
Array<T> sinusoidal_table(std::size_t length, std::size_t d, std::size_t offset = 0,
                          double base = 10000.0);

// y = x + PE[offset : offset + L] for x (..., L, d). No parameters; any length.
template <class T>
class SinusoidalPositionalEncoding : public Module<T> {
 public:
  explicit SinusoidalPositionalEncoding(std::size_t d, double base = 10000.0);
  Tensor<T> forward(const Tensor<T>& x, std::size_t offset = 0) const;
  std::size_t dim() const { return d_; }

 private:
  std::size_t d_;
  double base_;
};

// ---------------------------------------------------------------- learned absolute

// y = x + W[offset : offset + L] for x (..., L, d), W (max_length, d) a parameter "weight".
// A sequence reaching past max_length is a ShapeError: the table has no row for it.
template <class T>
class LearnedPositionalEmbedding : public Module<T> {
 public:
  LearnedPositionalEmbedding(std::size_t max_length, std::size_t d, Generator& gen,
                             double std = 0.02);
  Tensor<T> forward(const Tensor<T>& x, std::size_t offset = 0) const;
  std::size_t max_length() const { return max_length_; }
  const Tensor<T>& weight() const { return weight_; }

 private:
  std::size_t max_length_, d_;
  Tensor<T> weight_;  // a handle to the registered parameter
};

// ---------------------------------------------------------------- relative position bias (T5)

// The T5 bucket of a relative distance r = j - i (key minus query). Half the buckets are exact
// small distances, the other half log-spaced up to max_distance; everything farther shares the
// last bucket, which is why the table works for any length. With bidirectional, keys before and
// after the query use separate halves of the buckets.
std::size_t relative_position_bucket(long relative, std::size_t num_buckets,
                                     std::size_t max_distance, bool bidirectional);

// A learned (num_buckets, heads) table "weight", turned into the additive score bias
// (1, heads, Lq, Lk): bias[0, h, i, j] = W[bucket(j - i), h]. Queries sit at positions
// q_offset .. q_offset + Lq - 1, keys at 0 .. Lk - 1. T5 shares one table across layers.
template <class T>
class RelativePositionBias : public Module<T> {
 public:
  RelativePositionBias(std::size_t heads, Generator& gen, std::size_t num_buckets = 32,
                       std::size_t max_distance = 128, bool bidirectional = true);
  Tensor<T> forward(std::size_t lq, std::size_t lk, std::size_t q_offset = 0) const;
  std::size_t heads() const { return heads_; }
  std::size_t num_buckets() const { return buckets_; }
  const Tensor<T>& weight() const { return weight_; }

 private:
  std::size_t heads_, buckets_, max_distance_;
  bool bidirectional_;
  Tensor<T> weight_;  // a handle to the registered parameter
};

// The gather behind RelativePositionBias, as one op: out[0, h, i, j] = table[bucket[i, j], h];
// d table[b, h] = sum over (i, j) with bucket[i, j] = b of d out[0, h, i, j].
template <class T>
Tensor<T> relative_bias_lookup(const Tensor<T>& table, const IndexArray& bucket);

// ---------------------------------------------------------------- rotary (RoPE)

// Rotate each pair (x[2i], x[2i+1]) of the last axis of x (..., L, d) by the angle p * theta_i,
// theta_i = base^(-2i/d), p = offset + l the position of row l. Since rotations compose,
// <R_p q, R_s k> = <q, R_(s-p) k>: the score depends only on the offset s - p.
// One op: y = R x, so dx = R^T dy (rotation by -p theta_i). d must be even.
template <class T>
Tensor<T> rotary(const Tensor<T>& x, std::size_t offset = 0, double base = 10000.0);

// The same as a (parameter-free) module, for the attention's q/k hook.
template <class T>
class RotaryEmbedding : public Module<T> {
 public:
  explicit RotaryEmbedding(std::size_t head_dim, double base = 10000.0);
  Tensor<T> forward(const Tensor<T>& x, std::size_t offset = 0) const;
  std::size_t head_dim() const { return head_dim_; }

 private:
  std::size_t head_dim_;
  double base_;
};

// ---------------------------------------------------------------- ALiBi

// The head slopes of ALiBi (Press et al.): for h a power of two, 2^(-8i/h), i = 1..h; otherwise
// the slopes of the nearest lower power of two followed by every other slope of the next one
// (the paper's recipe), so every head still gets a distinct slope.
std::vector<double> alibi_slopes(std::size_t heads);

// bias[0, h, i, j] = -slope_h * |p_i - j| with query positions p_i = q_offset + i: a constant
// (1, heads, Lq, Lk) tensor, no gradient. (With a causal mask only j <= p_i survive, where this is
// the paper's causal form -slope_h * (p_i - j).)
template <class T>
Tensor<T> alibi_bias(std::size_t heads, std::size_t lq, std::size_t lk, std::size_t q_offset = 0);

template <class T>
class ALiBi : public Module<T> {
 public:
  explicit ALiBi(std::size_t heads);
  Tensor<T> forward(std::size_t lq, std::size_t lk, std::size_t q_offset = 0) const;
  const std::vector<double>& slopes() const { return slopes_; }

 private:
  std::size_t heads_;
  std::vector<double> slopes_;
};

}  // namespace attnlab::nn
