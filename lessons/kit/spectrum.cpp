// xtensor-blas here only: its bundled CBLAS declarations clash with <cblas.h> in one translation
// unit (DESIGN.md), and nothing else in attnlab calls LAPACK.
#include "lessons/kit/spectrum.hpp"

#include <algorithm>
#include <functional>
#include <numeric>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xview.hpp>

#include "core/array.hpp"
#include "core/error.hpp"

namespace attnlab::lessons {

std::vector<xt::xarray<double>> leading_matrices(const Array<float>& batch, std::size_t count) {
  check(batch.dimension() == 3, "leading_matrices", "needs a batch of matrices (B, n, m), got ", shape_str(batch.shape()));
  std::vector<xt::xarray<double>> out;
  for (std::size_t s = 0; s < std::min(count, batch.shape()[0]); ++s)
    out.push_back(xt::cast<double>(xt::view(batch, s)));
  return out;
}

std::vector<double> singular_values(const xt::xarray<double>& matrix) {
  check(matrix.dimension() == 2 && matrix.size() > 0, "singular_values", "needs a non-empty 2-D matrix, got ",
        shape_str(matrix.shape()));
  const auto s = std::get<1>(xt::linalg::svd(matrix, /*full_matrices=*/false, /*compute_uv=*/false));
  std::vector<double> sigma(s.begin(), s.end());
  std::sort(sigma.begin(), sigma.end(), std::greater<double>());
  return sigma;
}

std::size_t rank_for_energy(const std::vector<double>& sigma, double share) {
  check(share > 0.0 && share <= 1.0, "rank_for_energy", "share must be in (0, 1], got ", share);
  double total = 0.0;
  for (double s : sigma) total += s * s;
  double kept = 0.0;
  for (std::size_t r = 0; r < sigma.size(); ++r) {
    kept += sigma[r] * sigma[r];
    if (kept >= share * total * (1.0 - 1e-12)) return r + 1;
  }
  return sigma.size();
}

std::vector<double> cumulative_energy_share(const std::vector<double>& sigma) {
  double total = 0;
  for (double s : sigma) total += s * s;
  check(total > 0, "cumulative_energy_share", "needs singular values that are not all zero, got ", sigma.size(),
        " values");
  std::vector<double> share;
  double kept = 0;
  for (double s : sigma) kept += s * s, share.push_back(kept / total);
  return share;
}

SpectrumSummary summarize_spectra(const std::vector<xt::xarray<double>>& matrices, std::size_t rank, double share) {
  check(!matrices.empty() && rank > 0, "summarize_spectra", "needs matrices and a rank > 0, got ", matrices.size(),
        " matrices and rank ", rank);
  SpectrumSummary out;
  const double count = double(matrices.size());
  for (const auto& m : matrices) {
    check(m.shape() == matrices[0].shape(), "summarize_spectra", "matrices of different shapes: ",
          shape_str(matrices[0].shape()), " and ", shape_str(m.shape()));
    const std::vector<double> s = singular_values(m);
    check(s[0] > 0, "summarize_spectra", "a matrix of zeros has no spectrum to normalize");
    if (out.sigma.empty()) out.sigma.assign(s.size(), 0.0);
    double total = 0, top = 0;
    for (std::size_t r = 0; r < s.size(); ++r)
      out.sigma[r] += s[r] / s[0] / count, total += s[r] * s[r], top += r < rank ? s[r] * s[r] : 0.0;
    out.rank_for_share += double(rank_for_energy(s, share)) / count;
    out.share_in_rank += top / total / count;
  }
  return out;
}

}  // namespace attnlab::lessons
