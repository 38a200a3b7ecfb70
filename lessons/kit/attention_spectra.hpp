// The spectra of attention matrices, named, for lesson 18's question behind Linformer: is an
// attention matrix close to one of low rank, and does a projection fixed in advance keep it?
// Summaries (lessons/kit/spectrum.hpp) with the energy segment means keep
// (nn/attention/structure.hpp), the matrices of a band of known width, and the figure of them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "core/random.hpp"
#include "lessons/kit/spectrum.hpp"
#include "plots/plots.hpp"

namespace attnlab::lessons {

struct NamedSpectrum {
  std::string name;
  SpectrumSummary summary;   // sigma_r / sigma_1, the rank for 90 % of the energy, the share in rank `band`
  double segment_share = 0;  // the mean energy share kept by `band` segment means
};

// summarize_spectra(matrices, band) and the mean of nn::segment_mean_share(P, band) over the
// matrices. ShapeError as those raise it (no matrices, a band of 0 or more segments than keys).
NamedSpectrum named_spectrum(const std::string& name, const std::vector<xt::xarray<double>>& matrices, std::size_t band);

// The exact attention weights (n x n, in double) of queries and keys from
// nn::banded_queries_keys(n, d, sharpness, gen): one matrix for a band (sharpness > 0, the same
// every time), `count` for iid normal queries and keys (sharpness 0), each drawn afresh from gen.
std::vector<xt::xarray<double>> banded_attention_matrices(std::size_t n, std::size_t d, double sharpness,
                                                          std::size_t count, Generator& gen);

// Two panels: sigma_r / sigma_1 of each spectrum on a log scale (below 1e-4 not drawn: rounding),
// and the cumulative share of the energy in the r largest against r (log scale) with a dashed line
// at r = band. PlotError for no spectra.
plots::Figure singular_value_figure(const std::vector<NamedSpectrum>& spectra, std::size_t n, std::size_t band);

}  // namespace attnlab::lessons
