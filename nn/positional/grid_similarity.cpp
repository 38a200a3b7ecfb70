#include "nn/positional/grid_similarity.hpp"

#include <cmath>
#include <cstdlib>

#include <xtensor/xview.hpp>

#include "core/error.hpp"

namespace attnlab::nn {

GridSimilarity grid_similarity(const Array<float>& vectors, std::size_t rows, std::size_t cols, std::size_t far) {
  const std::size_t n = rows * cols;
  check(vectors.dimension() == 2 && vectors.shape()[0] == n && n > 0, "grid_similarity", "needs ", rows, " x ", cols,
        " = ", n, " vectors (N, d), got ", shape_str(vectors.shape()));
  check(far > 1 && far <= rows + cols - 2, "grid_similarity", "no two positions of a ", rows, " x ", cols,
        " grid are ", far, " steps apart");
  const xt::xarray<double> v = xt::cast<double>(vectors);
  const xt::xarray<double> norm = xt::sqrt(xt::sum(v * v, {1}));
  for (std::size_t a = 0; a < n; ++a) check(norm(a) > 0, "grid_similarity", "vector ", a, " has norm 0");
  GridSimilarity g{xt::zeros<double>({n, n})};
  std::size_t n_near = 0, n_far = 0;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) {
      const double cos = xt::sum(xt::view(v, a) * xt::view(v, b))() / (norm(a) * norm(b));
      g.cosine(a, b) = cos;
      const std::size_t dist = std::size_t(std::labs(long(a / cols) - long(b / cols)) + std::labs(long(a % cols) - long(b % cols)));
      if (dist == 1) g.neighbours += cos, ++n_near;
      if (dist >= far) g.far += cos, ++n_far;
    }
  g.neighbours /= double(n_near), g.far /= double(n_far);
  return g;
}

}  // namespace attnlab::nn
