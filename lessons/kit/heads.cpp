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

std::vector<double> induction_mass(const Array<float>& w, const IndexArray& ids, std::size_t first_query) {
  check(w.dimension() == 4, "induction_mass", "weights must be (B, h, L, L), got ", shape_str(w.shape()));
  const std::size_t B = w.shape()[0], H = w.shape()[1], L = w.shape()[2];
  check(w.shape()[3] == L && ids.dimension() == 2 && ids.shape()[0] == B && ids.shape()[1] == L, "induction_mass",
        "weights ", shape_str(w.shape()), " and ids ", shape_str(ids.shape()), " do not match as (B, h, L, L) and (B, L)");
  std::vector<double> mass(H, 0.0);
  std::size_t queries = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = std::max<std::size_t>(first_query, 1); t < L; ++t) {
      long s = long(t) - 1;  // the most recent earlier occurrence of ids(b, t), or -1
      while (s >= 0 && ids(b, std::size_t(s)) != ids(b, t)) --s;
      if (s < 0) continue;
      ++queries;
      for (std::size_t h = 0; h < H; ++h) mass[h] += w(b, h, t, std::size_t(s) + 1);
    }
  for (double& m : mass) m /= double(std::max<std::size_t>(queries, 1));
  return mass;
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

HeadPick head_for_induction(const std::vector<Tensor<float>>& layers, const IndexArray& ids, std::size_t example,
                            std::size_t first_query) {
  return best_head(layers, example, [&](const Array<float>& w) { return induction_mass(w, ids, first_query); });
}

}  // namespace attnlab::lessons
