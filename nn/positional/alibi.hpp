// ALiBi (Press et al. 2022): a fixed linear distance penalty per head, added to the scores.
#pragma once

#include <cstddef>
#include <vector>

#include "core/tensor.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

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
