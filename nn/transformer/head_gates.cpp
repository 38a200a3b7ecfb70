#include "nn/transformer/head_gates.hpp"

#include <algorithm>

#include <xtensor/xbuilder.hpp>

#include "core/error.hpp"

namespace attnlab::nn {

HeadGates all_heads_on(Encoder<float>& encoder) {
  HeadGates gates;
  for (std::size_t l = 0; l < encoder.size(); ++l) gates.emplace_back(encoder.layer(l).self_attn.heads(), 1.0f);
  return gates;
}

void with_head_gates(Encoder<float>& encoder, const HeadGates& gates, const std::function<void()>& body) {
  check(gates.size() == encoder.size(), "with_head_gates", "gates for ", gates.size(), " layers, the encoder has ",
        encoder.size());
  for (std::size_t l = 0; l < gates.size(); ++l)
    check(gates[l].size() == encoder.layer(l).self_attn.heads(), "with_head_gates", "layer ", l, " has ",
          encoder.layer(l).self_attn.heads(), " heads, got ", gates[l].size(), " gates");
  struct Clear {  // removes the gates however body ends
    Encoder<float>& e;
    ~Clear() { for (std::size_t l = 0; l < e.size(); ++l) e.layer(l).self_attn.set_head_gate(Tensor<float>()); }
  } clear{encoder};
  for (std::size_t l = 0; l < gates.size(); ++l) {
    Array<float> g = xt::zeros<float>({gates[l].size()});
    std::copy(gates[l].begin(), gates[l].end(), g.begin());
    encoder.layer(l).self_attn.set_head_gate(Tensor<float>(g));
  }
  body();
}

HeadAblation ablate_heads(const HeadGates& all_on, const HeadScore& score) {
  check(!all_on.empty() && !all_on[0].empty(), "ablate_heads", "needs at least one layer of heads, got ",
        all_on.size(), " layers");
  for (std::size_t l = 0; l < all_on.size(); ++l)
    check(all_on[l].size() == all_on[0].size(), "ablate_heads", "layer ", l, " has ", all_on[l].size(),
          " heads, layer 0 has ", all_on[0].size());
  const double base = score(all_on);
  HeadAblation a{xt::zeros<double>({all_on.size(), all_on[0].size()}), {}};
  for (std::size_t l = 0; l < all_on.size(); ++l)
    for (std::size_t h = 0; h < all_on[l].size(); ++h) {
      HeadGates g = all_on;
      g[l][h] = 0.0f;
      a.importance(l, h) = base - score(g);
      a.least_important_first.push_back({l, h});
    }
  const auto worth = [&](const HeadId& id) { return a.importance(id.first, id.second); };
  std::stable_sort(a.least_important_first.begin(), a.least_important_first.end(),
                   [&](const HeadId& x, const HeadId& y) { return worth(x) < worth(y); });
  return a;
}

std::vector<double> prune_heads(const HeadGates& all_on, const std::vector<HeadId>& order, const HeadScore& score) {
  check(!order.empty(), "prune_heads", "no heads to prune");
  for (const HeadId& id : order)
    check(id.first < all_on.size() && id.second < all_on[id.first].size(), "prune_heads", "no head ", id.second,
          " in layer ", id.first, " (", all_on.size(), " layers)");
  HeadGates g = all_on;
  std::vector<double> scores = {score(g)};
  for (std::size_t k = 0; k + 1 < order.size(); ++k) {
    g[order[k].first][order[k].second] = 0.0f;
    scores.push_back(score(g));
  }
  return scores;
}

}  // namespace attnlab::nn
