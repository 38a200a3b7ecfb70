#include "lessons/kit/self_attention_input.hpp"

#include <algorithm>
#include <stdexcept>

#include <xtensor/xsort.hpp>

#include <xtensor/xview.hpp>

#include "lessons/kit/figures.hpp"
#include "plots/heatmap.hpp"

namespace attnlab::lessons {

AttentionInput self_attention_input(const std::string& name, const std::vector<std::string>& tokens,
                                    const std::vector<Tensor<float>>& layers, std::size_t example) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument("self_attention_input: '" + name + "': " + what); };
  if (layers.empty()) fail("no layers");
  AttentionInput in{name, tokens, tokens, {}, {}};
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const auto& w = layers[l].value();
    const auto& s = w.shape();
    if (s.size() != 4 || s[2] != tokens.size() || s[3] != tokens.size() || example >= s[0])
      fail("layer " + std::to_string(l + 1) + " has weights of shape " + shape_str(s) + " for example " +
           std::to_string(example) + " of " + std::to_string(tokens.size()) + " tokens");
    in.layers.push_back("layer " + std::to_string(l + 1));
    std::vector<xt::xarray<double>> heads;
    for (std::size_t h = 0; h < s[1]; ++h) heads.push_back(xt::cast<double>(xt::view(w, example, h)));
    in.heads.push_back(std::move(heads));
  }
  return in;
}

AttentionInput with_score_parts(AttentionInput in, const std::vector<nn::ScoreParts<float>>& layers, std::size_t example) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument("with_score_parts: '" + in.name + "': " + what); };
  if (layers.size() != in.heads.size())
    fail(std::to_string(layers.size()) + " layers of queries and keys for " + std::to_string(in.heads.size()) + " layers");
  in.q.assign(layers.size(), {}), in.k.assign(layers.size(), {}), in.bias.assign(layers.size(), {});
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const nn::ScoreParts<float>& p = layers[l];
    const std::size_t H = in.heads[l].size(), n = in.queries.size(), m = in.keys.size();
    const auto &qs = p.queries.shape(), &ks = p.keys.shape(), &bs = p.bias.shape();
    if (qs.size() != 3 || ks.size() != 3 || bs.size() != 4 || example >= qs[0] || qs[1] != n || ks[1] != m ||
        qs[2] % H != 0 || ks[2] != qs[2] || bs[1] != H || bs[2] != n || bs[3] != m)
      fail("layer " + std::to_string(l + 1) + ": queries " + shape_str(qs) + ", keys " + shape_str(ks) + " and bias " +
           shape_str(bs) + " for example " + std::to_string(example) + ", " + std::to_string(H) + " heads, " +
           std::to_string(n) + " queries and " + std::to_string(m) + " keys");
    const std::size_t dk = qs[2] / H;
    for (std::size_t h = 0; h < H; ++h) {
      const long from = long(h * dk), to = long((h + 1) * dk);
      in.q[l].push_back(xt::cast<double>(xt::view(p.queries, example, xt::all(), xt::range(from, to))));
      in.k[l].push_back(xt::cast<double>(xt::view(p.keys, example, xt::all(), xt::range(from, to))));
      in.bias[l].push_back(xt::cast<double>(xt::view(p.bias, example, h)));
    }
    // The page holds one scale an input: every layer of these models has the same d_k.
    if (l > 0 && p.scale != in.scale)
      fail("layer " + std::to_string(l + 1) + " scales by " + std::to_string(p.scale) + ", layer 1 by " + std::to_string(in.scale));
    in.scale = p.scale;
  }
  return in;
}

AttentionInput self_attention_span(const AttentionInput& in, std::size_t begin, std::size_t count) {
  if (count == 0 || begin + count > in.queries.size() || in.queries.size() != in.keys.size())
    throw std::invalid_argument("self_attention_span: '" + in.name + "': tokens [" + std::to_string(begin) + ", " +
                                std::to_string(begin + count) + ") of " + std::to_string(in.queries.size()) + " queries and " +
                                std::to_string(in.keys.size()) + " keys");
  const auto b = in.queries.begin() + long(begin);
  AttentionInput out{in.name, {b, b + long(count)}, {b, b + long(count)}, in.layers, {}};
  for (const auto& layer : in.heads) {
    std::vector<xt::xarray<double>> heads;
    for (const auto& w : layer) heads.push_back(xt::view(w, xt::range(begin, begin + count), xt::range(begin, begin + count)));
    out.heads.push_back(std::move(heads));
  }
  return out;
}

std::vector<plots::Figure> layer_head_grids(const AttentionInput& in, const std::string& title) {
  // One colour scale for every layer, topped at the largest weight drawn: a head that spreads its
  // weight (BERT's do, over both sides) would otherwise be one dark square on a scale to 1.
  double top = 0.0;
  for (const auto& layer : in.heads)
    for (const auto& w : layer) top = std::max(top, double(xt::amax(w)()));
  std::vector<plots::Figure> out;
  for (std::size_t l = 0; l < in.heads.size(); ++l) {
    const std::size_t H = in.heads[l].size(), n = in.queries.size(), m = in.keys.size();
    xt::xarray<double> all = xt::zeros<double>({H, n, m});
    for (std::size_t h = 0; h < H; ++h) xt::view(all, h) = in.heads[l][h];
    plots::HeatmapGridOptions o;
    o.heatmap = attention_style(in.keys, in.queries);
    o.heatmap.vmax = top > 0.0 ? top : 1.0;
    o.heatmap.colorbar_label = "attention weight (top: the largest, every layer)";
    o.cols = H == 1 ? 1 : 2;
    o.title = title + ", " + in.layers[l];
    // 800 pixels a panel: at two panels a row the labels still read when the page is ~900 px wide.
    o.width_px = 800 * o.cols + 150, o.height_px = 760 * int((H + 1) / 2) + 150;
    out.push_back(plots::heatmap_grid(all, o));
  }
  return out;
}

}  // namespace attnlab::lessons
