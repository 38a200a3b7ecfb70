#include "nn/transformer/head_gates.hpp"

#include <algorithm>

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

}  // namespace attnlab::nn
