#include "lessons/kit/approximations.hpp"

#include <algorithm>
#include <memory>

#include <xtensor/xview.hpp>

#include "core/error.hpp"
#include "core/ops.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/story/text.hpp"
#include "nn/attention/linformer.hpp"
#include "nn/attention/structure.hpp"
#include "nn/recall_model.hpp"

namespace attnlab::lessons {

AttentionFn local_fn(std::size_t window) {
  return [window](auto& q, auto& k, auto& v) { return local_attention(q, k, v, window); };
}

AttentionFn linear_fn(bool causal) {
  return [causal](auto& q, auto& k, auto& v) { return linear_attention(q, k, v, {causal}); };
}

AttentionFn linformer_fn(std::size_t n, std::size_t rank) {
  auto lin = std::make_shared<nn::Linformer<float>>(n, std::min(rank, n));  // E and F at their segment means
  return [lin](auto& q, auto& k, auto& v) { return lin->forward(q, k, v); };
}

AttentionFn sparse_pattern_fn(std::size_t n, std::size_t band, std::size_t global_tokens, bool strided) {
  SparsePattern p;
  p.window = long(band);
  p.stride = strided ? long(band) : 0;
  for (std::size_t i = 0; i < std::min(n, global_tokens); ++i) p.global.push_back(long(i));
  return [p](auto& q, auto& k, auto& v) { return sparse_attention(q, k, v, p); };
}

ApproximationErrors approximation_errors(const Array<float>& q, const Array<float>& k, const Array<float>& v,
                                         std::size_t band) {
  const bool one = q.dimension() == 3 && q.shape()[0] == 1 && k.shape() == q.shape() && v.dimension() == 3 &&
                   v.shape()[0] == 1 && v.shape()[1] == q.shape()[1];
  check(one, "approximation_errors", "needs q, k, v of one sequence (1, n, d), got ", shape_str(q.shape()), ", ",
        shape_str(k.shape()), ", ", shape_str(v.shape()));
  const std::size_t n = q.shape()[1];
  const Tensor<float> Q(q), K(k), V(v);
  const AttentionResult<float> exact = scaled_dot_product_attention(Q, K, V);
  const auto as_double = [](const Array<float>& a) { return xt::xarray<double>(xt::cast<double>(xt::view(a, 0))); };
  const xt::xarray<double> want = as_double(exact.output.value()), P = as_double(exact.weights.value());
  const auto error = [&](const AttentionFn& f) { return nn::relative_error(as_double(f(Q, K, V).value()), want); };
  return {error(local_fn(band)), error(linear_fn()), error(linformer_fn(n, band)), nn::weight_in_band(P, band),
          nn::segment_mean_share(P, band)};
}

plots::Figure error_sweep_figure(const std::vector<double>& sharpness, const std::vector<ApproximationErrors>& errors,
                                 std::size_t n, std::size_t band) {
  if (sharpness.empty() || sharpness.size() != errors.size())
    throw plots::PlotError(text("error_sweep_figure: ", sharpness.size(), " sharpness values and ", errors.size(),
                                " sets of errors; needs the same number, at least one"));
  std::vector<double> err[5];
  for (const ApproximationErrors& e : errors)
    for (int i = 0; i < 5; ++i)
      err[i].push_back(i == 0 ? e.local : i == 1 ? e.linear : i == 2 ? e.linformer : i == 3 ? e.weight_in_band
                                                                                              : e.segment_share);
  plots::Figure fig(2400, 1000, 1, 2);
  fig.title(text("A band q = k = a PE from broad to narrow, n = ", n));
  plots::LineOptions lo;
  lo.markers = true;
  lo.log_y = true;
  const std::string names[] = {text("local, window ", band), "linear", text("Linformer, rank ", band)};
  std::vector<plots::Series> lines;
  for (std::size_t i = 0; i < 3; ++i) lines.push_back(curve(names[i], sharpness, err[i]));
  plots::line_plot(fig.panel(0).title("Output error against exact attention").xlabel("sharpness a (broad → narrow)")
                       .ylabel("‖O − O_exact‖ / ‖O_exact‖ (log scale)"),
                   lines, lo);
  plots::LineOptions ls;
  ls.markers = true;
  ls.ymin = 0.0, ls.ymax = 1.3;  // room above the curves for the legend
  plots::line_plot(fig.panel(1).title("What the exact attention looks like").xlabel("sharpness a (broad → narrow)")
                       .ylabel("share"),
                   {curve(text("weight within ", band, " positions"), sharpness, err[3]),
                    curve(text("energy in ", band, " segment means"), sharpness, err[4])},
                   ls);
  return fig;
}

}  // namespace attnlab::lessons
