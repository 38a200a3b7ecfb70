#include "nn/attention/induction.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace attnlab::nn {

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

}  // namespace attnlab::nn
