// Gradient checks of grouped-query attention: the op that lets a group of query heads share one
// key/value head (repeat_heads: its backward sums over the group), and the attention module with
// 2 and with 1 key/value heads for 4 query heads (GQA and MQA), self-attention causal and with a
// qk_transform (RoPE's path), and cross-attention; every parameter and input (double, dropout off).
#include "gradcheck/cases.hpp"
#include "nn/attention/multi_head.hpp"

namespace attnlab::cases {

namespace {
Inputs with_params(const nn::Module<D>& m, Inputs inputs) {
  for (const TD& p : m.parameters()) inputs.push_back(p);
  return inputs;
}

// 4 query heads of d_k = 2 (d = 8) on `kv` key/value heads.
GradcheckResult grouped(std::size_t kv, bool self, bool transform) {
  Generator gen(21);
  nn::MultiHeadAttention<D> att(8, 4, gen, 0.0, true, kv);
  TD c = rnd({3, 8}, 9);  // a fixed per-position scaling of q and k, standing in for RoPE
  c.set_requires_grad(false);
  nn::MultiHeadOptions<D> o;
  o.causal = self;
  if (transform) o.qk_transform = [&](const TD& t) { return mul(t, slice(c, 1, 0, long(t.shape()[2]))); };
  if (self)
    return gradcheck([&](const Inputs& x) { return att.forward(x[0], o).output; }, with_params(att, {rnd({2, 3, 8}, 1)}));
  return gradcheck([&](const Inputs& x) { return att.forward(x[0], x[1], x[2], o).output; },
                   with_params(att, {rnd({2, 3, 8}, 1), rnd({2, 4, 8}, 2), rnd({2, 4, 8}, 3)}));
}
}  // namespace

GRADCHECK_CASE("repeat_heads", "(2,3,6): 3 heads of 2, each 2 times -> (2,3,12)", [] {
  return gradcheck([](const Inputs& x) { return repeat_heads(x[0], 3, 2); }, {rnd({2, 3, 6}, 1)});
});
GRADCHECK_CASE("repeat_heads one head", "(4,3): 1 head of 3, 4 times -> (4,12)", [] {
  return gradcheck([](const Inputs& x) { return repeat_heads(x[0], 1, 4); }, {rnd({4, 3}, 2)});
});
GRADCHECK_CASE("MultiHeadAttention grouped-query", "self causal (2,3,8), 4 heads, 2 kv heads",
               [] { return grouped(2, true, false); });
GRADCHECK_CASE("MultiHeadAttention grouped-query qk_transform", "self causal (2,3,8), 4 heads, 2 kv heads, q,k * c",
               [] { return grouped(2, true, true); });
GRADCHECK_CASE("MultiHeadAttention grouped-query cross", "q (2,3,8), k v (2,4,8), 4 heads, 2 kv heads",
               [] { return grouped(2, false, false); });
GRADCHECK_CASE("MultiHeadAttention multi-query", "self causal (2,3,8), 4 heads, 1 kv head",
               [] { return grouped(1, true, false); });

}  // namespace attnlab::cases
