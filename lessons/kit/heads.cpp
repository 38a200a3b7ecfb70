#include "lessons/kit/heads.hpp"

#include <algorithm>

#include <xtensor/xview.hpp>

#include "core/error.hpp"

namespace attnlab::lessons {

std::vector<double> offset_mass(const Array<float>& w, long offset) {
  check(w.dimension() == 4, "offset_mass", "weights must be (B, h, Lq, Lk), got ", shape_str(w.shape()));
  const std::size_t B = w.shape()[0], H = w.shape()[1], Lq = w.shape()[2], Lk = w.shape()[3];
  std::vector<double> mass(H, 0.0);
  std::size_t queries = 0;
  for (std::size_t i = 0; i < Lq; ++i) {
    const long j = long(i) - offset;
    if (j < 0 || j >= long(Lk)) continue;
    ++queries;
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t h = 0; h < H; ++h) mass[h] += w(b, h, i, std::size_t(j));
  }
  for (double& m : mass) m /= double(std::max<std::size_t>(queries * B, 1));
  return mass;
}

namespace {
void check_self_attention(const Array<float>& w, const char* who) {
  check(w.dimension() == 4 && w.shape()[2] == w.shape()[3], who, "weights must be (B, h, L, L), got ",
        shape_str(w.shape()));
}
}  // namespace

std::vector<double> far_mass(const Array<float>& w, std::size_t distance) {
  check_self_attention(w, "far_mass");
  check(w.shape()[0] > 0 && w.shape()[2] > 0, "far_mass", "weights must hold an example and a position, got ",
        shape_str(w.shape()));
  const std::size_t B = w.shape()[0], H = w.shape()[1], L = w.shape()[2];
  std::vector<double> mass(H, 0.0);
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t i = 0; i < L; ++i)
        for (std::size_t j = 0; j < L; ++j)
          if (std::max(i, j) - std::min(i, j) >= distance) mass[h] += w(b, h, i, j);
    mass[h] /= double(B * L);
  }
  return mass;
}

std::vector<double> mean_distance_back(const Array<float>& w) {
  check_self_attention(w, "mean_distance_back");
  const std::size_t B = w.shape()[0], H = w.shape()[1], L = w.shape()[2];
  std::vector<double> d(H, 0.0);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < L; ++i)
        for (std::size_t j = 0; j <= i; ++j) d[h] += double(w(b, h, i, j)) * double(i - j);
  for (double& x : d) x /= double(std::max<std::size_t>(B * L, 1));
  return d;
}

double max_weight_above_diagonal(const std::vector<Tensor<float>>& layers) {
  double above = 0.0;
  for (const Tensor<float>& layer : layers) {
    const Array<float>& w = layer.value();
    check_self_attention(w, "max_weight_above_diagonal");
    for (std::size_t b = 0; b < w.shape()[0]; ++b)
      for (std::size_t h = 0; h < w.shape()[1]; ++h)
        for (std::size_t i = 0; i < w.shape()[2]; ++i)
          for (std::size_t j = i + 1; j < w.shape()[3]; ++j) above = std::max(above, double(w(b, h, i, j)));
  }
  return above;
}

SideMass side_mass(const Array<float>& w, std::size_t from) {
  check_self_attention(w, "side_mass");
  const std::size_t B = w.shape()[0], H = w.shape()[1], L = w.shape()[2];
  SideMass m{std::vector<double>(H, 0.0), std::vector<double>(H, 0.0)};
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = from; i < L; ++i)
        for (std::size_t j = from; j < L; ++j) {
          if (j < i) m.left[h] += w(b, h, i, j);
          if (j > i) m.right[h] += w(b, h, i, j);
        }
  return m;
}

namespace {
// The head of the largest score over the layers, with its weights on one example.
template <class Score>
HeadPick best_head(const std::vector<Tensor<float>>& layers, std::size_t example, const Score& score) {
  HeadPick best;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const Array<float>& w = layers[l].value();
    const std::vector<double> mass = score(w);
    for (std::size_t h = 0; h < mass.size(); ++h)
      if (mass[h] > best.mass)
        best = {l, h, mass[h], xt::xarray<double>(xt::cast<double>(xt::view(w, example, h, xt::all(), xt::all())))};
  }
  return best;
}
}  // namespace

HeadPick head_for_offset(const std::vector<Tensor<float>>& layers, long offset, std::size_t example) {
  return best_head(layers, example, [&](const Array<float>& w) { return offset_mass(w, offset); });
}

}  // namespace attnlab::lessons
