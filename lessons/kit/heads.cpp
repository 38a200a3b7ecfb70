#include "lessons/kit/heads.hpp"

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

SideMass side_mass(const Array<float>& w, std::size_t from) {
  check(w.dimension() == 4 && w.shape()[2] == w.shape()[3], "side_mass", "weights must be (B, h, L, L), got ",
        shape_str(w.shape()));
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
