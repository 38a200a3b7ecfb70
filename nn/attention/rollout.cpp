#include "nn/attention/rollout.hpp"

#include <xtensor/xview.hpp>

#include "core/error.hpp"

namespace attnlab::nn {

namespace {
// The readout's rows: `from` (T) weighs the query rows the head reads (e_0 for the class token,
// 1/(T-1) on tokens 1..T-1 for the patches' mean). `name` is the caller's, for its errors.
ClassTokenAttention readout_attention(const std::vector<Array<float>>& attention, bool patch_mean, const char* name) {
  check(!attention.empty(), name, "needs the attention of at least one layer, got none");
  const auto shape = attention[0].shape();
  check(attention[0].dimension() == 4 && shape[2] == shape[3] && shape[2] > 1, name,
        "needs (B, heads, T, T) maps with T > 1, got ", shape_str(shape), " in layer 1");
  for (std::size_t l = 1; l < attention.size(); ++l)
    check(attention[l].shape() == shape, name, "layer ", l + 1, " has shape ",
          shape_str(attention[l].shape()), ", layer 1 ", shape_str(shape));
  const std::size_t B = shape[0], H = shape[1], T = shape[2], L = attention.size();
  ClassTokenAttention out{xt::zeros<double>({B, L, T - 1}), xt::zeros<double>({B, T - 1})};
  std::vector<xt::xarray<double>> mean(L);  // (T, T) per layer, of one image
  xt::xarray<double> from = xt::zeros<double>({T});
  if (patch_mean) xt::view(from, xt::range(1, T)) = 1.0 / double(T - 1);
  else from(0) = 1.0;
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t l = 0; l < L; ++l) {
      mean[l] = xt::zeros<double>({T, T});
      for (std::size_t h = 0; h < H; ++h) mean[l] += xt::cast<double>(xt::view(attention[l], b, h));
      mean[l] /= double(H);
      const xt::xarray<double> row = xt::sum(xt::view(from, xt::all(), xt::newaxis()) * mean[l], {0});  // from^T A_l
      xt::view(out.layers, b, l) = xt::view(row, xt::range(1, T));
    }
    // from^T A^_L ... A^_1, from the left: v <- v A^_l for l = L down to 1.
    xt::xarray<double> v = from;
    for (std::size_t l = L; l-- > 0;) {
      xt::xarray<double> next = 0.5 * v;  // the identity's half
      for (std::size_t i = 0; i < T; ++i)
        if (v(i) != 0.0) next += 0.5 * v(i) * xt::view(mean[l], i);
      v = next;
    }
    xt::view(out.rollout, b) = xt::view(v, xt::range(1, T));
  }
  return out;
}
}  // namespace

ClassTokenAttention class_token_attention(const std::vector<Array<float>>& attention) {
  return readout_attention(attention, false, "class_token_attention");
}

ClassTokenAttention patch_mean_attention(const std::vector<Array<float>>& attention) {
  return readout_attention(attention, true, "patch_mean_attention");
}

}  // namespace attnlab::nn
