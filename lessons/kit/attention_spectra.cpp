#include "lessons/kit/attention_spectra.hpp"

#include <cmath>

#include "core/ops/attention.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/story/text.hpp"
#include "nn/attention/structure.hpp"

namespace attnlab::lessons {

NamedSpectrum named_spectrum(const std::string& name, const std::vector<xt::xarray<double>>& matrices, std::size_t band) {
  NamedSpectrum s{name, summarize_spectra(matrices, band), 0};
  for (const auto& P : matrices) s.segment_share += nn::segment_mean_share(P, band) / double(matrices.size());
  return s;
}

std::vector<xt::xarray<double>> banded_attention_matrices(std::size_t n, std::size_t d, double sharpness,
                                                          std::size_t count, Generator& gen) {
  std::vector<xt::xarray<double>> out;
  for (std::size_t s = 0; s < (sharpness > 0 ? 1 : count); ++s) {  // a band is the same every time
    const auto [q, k] = nn::banded_queries_keys(n, d, sharpness, gen);
    const Tensor<float> K(k);  // the weights do not depend on the values: K serves as both
    out.push_back(leading_matrices(scaled_dot_product_attention(Tensor<float>(q), K, K).weights.value(), 1)[0]);
  }
  return out;
}

plots::Figure singular_value_figure(const std::vector<NamedSpectrum>& spectra, std::size_t n, std::size_t band) {
  if (spectra.empty()) throw plots::PlotError("singular_value_figure: no spectra to draw");
  plots::Figure fig(2400, 1000, 1, 2);
  fig.title(text("Singular values of attention matrices, n = ", n));
  plots::LineOptions lo;
  lo.log_y = true;
  std::vector<plots::Series> sv, cum;
  for (const NamedSpectrum& sp : spectra) {
    std::vector<double> idx, s;
    for (double sigma : sp.summary.sigma) {
      idx.push_back(double(idx.size() + 1));
      s.push_back(sigma >= 1e-4 ? sigma : NAN);  // below 1e-4: rounding, not drawn
    }
    sv.push_back(curve(sp.name, idx, s));
    cum.push_back(curve(sp.name, idx, cumulative_energy_share(sp.summary.sigma)));
  }
  plots::line_plot(fig.panel(0).title("σ_r / σ_1 (mean over matrices; below 10⁻⁴ not drawn)").xlabel("r")
                       .ylabel("σ_r / σ_1 (log scale)"),
                   sv, lo);
  cum.push_back(reference(text("r = ", band), {double(band), double(band)}, {0.0, 1.0}));
  plots::LineOptions lc;
  lc.log_x = true;
  lc.legend = false;  // the colours of the left panel
  lc.ymin = 0.0, lc.ymax = 1.02;
  plots::line_plot(fig.panel(1).title(text("Share of the energy in the r largest (dashed: r = ", band, ")"))
                       .xlabel("r (log scale)").ylabel("share of Σ σ²"),
                   cum, lc);
  return fig;
}

}  // namespace attnlab::lessons
