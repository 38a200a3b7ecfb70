// Gradient checks of the attention modules: every parameter and every input (queries, keys,
// values, score bias), with and without masks (double, tiny sizes, dropout off).
#include "gradcheck/cases.hpp"
#include "nn/attention/attention.hpp"
#include "nn/attention/local_m.hpp"
#include "nn/attention/local_p.hpp"
#include "nn/attention/multi_head.hpp"

namespace attnlab::cases {

namespace {
Inputs with_params(const nn::Module<D>& m, Inputs inputs) {
  for (const TD& p : m.parameters()) inputs.push_back(p);
  return inputs;
}

// Batch 0: all 4 keys real; batch 1: the last two padded.
const Mask& keys4() {
  static const Mask m = {{true, true, true, true}, {true, true, false, false}};
  return m;
}

// Attention with one score, q (2, 3, 4) (or one decoder step (2, 4)), keys (2, 4, dk), values
// (2, 4, 2), padded keys.
GradcheckResult attention(const std::string& score, std::size_t dk, bool step = false) {
  Generator gen(10);
  nn::Attention<D> att(nn::make_score<D>(score, 4, dk, gen, 3));
  return gradcheck(
      [&](const Inputs& x) { return att(x[0], x[1], x[2], Allowed::where(keys4())).output; },
      with_params(att, {step ? rnd({2, 4}, 1) : rnd({2, 3, 4}, 1), rnd({2, 4, dk}, 2), rnd({2, 4, 2}, 3)}));
}

GradcheckResult mha(std::size_t lq, std::size_t lk, bool self, bool padding, bool causal) {
  Generator gen(12);
  nn::MultiHeadAttention<D> att(8, 2, gen);
  nn::MultiHeadOptions<D> o;
  if (padding) o.allowed_keys = Allowed::where(keys4());
  o.causal = causal;
  if (self)
    return gradcheck([&](const Inputs& x) { return att.forward(x[0], o).output; },
                     with_params(att, {rnd({2, lq, 8}, 1)}));
  return gradcheck([&](const Inputs& x) { return att.forward(x[0], x[1], x[2], o).output; },
                   with_params(att, {rnd({2, lq, 8}, 1), rnd({2, lk, 8}, 2), rnd({2, lk, 8}, 3)}));
}
}  // namespace

GRADCHECK_CASE("Attention additive", "q (2,3,4), k (2,4,5), v (2,4,2), H 3, padded keys",
               [] { return attention("additive", 5); });
GRADCHECK_CASE("Attention additive decoder step", "q (2,4), k (2,4,5), v (2,4,2), padded keys",
               [] { return attention("additive", 5, true); });
GRADCHECK_CASE("Attention dot", "q (2,3,4), k (2,4,4), v (2,4,2), padded keys",
               [] { return attention("dot", 4); });
GRADCHECK_CASE("Attention scaled dot", "q (2,3,4), k (2,4,4), v (2,4,2), padded keys",
               [] { return attention("scaled dot", 4); });
GRADCHECK_CASE("Attention general", "q (2,3,4), k (2,4,5), v (2,4,2), padded keys",
               [] { return attention("general", 5); });
GRADCHECK_CASE("Attention concat", "q (2,3,4), k (2,4,5), v (2,4,2), H 3, padded keys",
               [] { return attention("concat", 5); });
GRADCHECK_CASE("Attention additive dropout", "q (2,3,4), k (2,4,5), p = 0.3, padded keys", [] {
  Generator gen(10);
  nn::Attention<D> att(nn::make_score<D>("additive", 4, 5, gen, 3), 0.3);
  return gradcheck(
      [&](const Inputs& x) {
        att.generator().reseed(7);  // every evaluation drops the same weights
        return att(x[0], x[1], x[2], Allowed::where(keys4())).output;
      },
      with_params(att, {rnd({2, 3, 4}, 1), rnd({2, 4, 5}, 2), rnd({2, 4, 2}, 3)}));
});

GRADCHECK_CASE("MultiHeadAttention self", "(2,3,8), 2 heads", [] { return mha(3, 3, true, false, false); });
GRADCHECK_CASE("MultiHeadAttention cross Lq!=Lk", "q (2,3,8), k v (2,4,8)",
               [] { return mha(3, 4, false, false, false); });
GRADCHECK_CASE("MultiHeadAttention padding mask", "q (2,3,8), k v (2,4,8), mask (2,4)",
               [] { return mha(3, 4, false, true, false); });
GRADCHECK_CASE("MultiHeadAttention causal", "self (2,4,8)", [] { return mha(4, 4, true, false, true); });
GRADCHECK_CASE("MultiHeadAttention padding+causal", "self (2,4,8), mask (2,4)",
               [] { return mha(4, 4, true, true, true); });

GRADCHECK_CASE("MultiHeadAttention score bias + qk_transform", "self (2,3,8), bias (h,Lq,Lk) = (2,3,3), q,k * c", [] {
  Generator gen(13);
  nn::MultiHeadAttention<D> att(8, 2, gen);
  TD c = rnd({3, 8}, 9);  // a fixed per-position scaling of q and k, standing in for RoPE
  c.set_requires_grad(false);
  return gradcheck(
      [&](const Inputs& x) {
        nn::MultiHeadOptions<D> o;
        o.bias = x[1];
        o.qk_transform = [&](const TD& t) { return mul(t, c); };
        return att.forward(x[0], o).output;
      },
      with_params(att, {rnd({2, 3, 8}, 1), rnd({2, 3, 3}, 2)}));
});

// Cross-attention with a qk_transform: the q and k row blocks pass through it before the scores.
GRADCHECK_CASE("MultiHeadAttention cross + qk_transform", "q (2,3,8), k v (2,4,8), q,k * c (8)", [] {
  Generator gen(17);
  nn::MultiHeadAttention<D> att(8, 2, gen);
  TD c = rnd({8}, 9);
  c.set_requires_grad(false);
  return gradcheck(
      [&](const Inputs& x) {
        nn::MultiHeadOptions<D> o;
        o.qk_transform = [&](const TD& t) { return mul(t, c); };
        return att.forward(x[0], x[1], x[2], o).output;
      },
      with_params(att, {rnd({2, 3, 8}, 1), rnd({2, 4, 8}, 2), rnd({2, 4, 8}, 3)}));
});

// The per-head gate: its own gradient dL/dgate_h (the head importance of Michel et al. 2019) and
// every other one through it, on the packed path and on the three-projection path.
GRADCHECK_CASE("MultiHeadAttention head gate", "self (2,3,8), 2 heads, gate (2), packed and three-projection paths", [] {
  Generator gen(15);
  nn::MultiHeadAttention<D> att(8, 2, gen);
  TD c = rnd({3, 8}, 9);
  c.set_requires_grad(false);
  return gradcheck(
      [&](const Inputs& x) {
        att.set_head_gate(x[1]);
        nn::MultiHeadOptions<D> split;
        split.qk_transform = [&](const TD& t) { return mul(t, c); };
        return add(att.forward(x[0]).output, att.forward(x[0], split).output);
      },
      with_params(att, {rnd({2, 3, 8}, 5), rnd({2}, 6, 0.2, 1.0)}));
});

// Without biases: in_proj_bias and out_proj.bias absent, on the packed path (self) and on the
// sliced row blocks (cross).
GRADCHECK_CASE("MultiHeadAttention no bias", "self (2,3,8) + cross q (2,3,8), k v (2,4,8), 2 heads", [] {
  Generator gen(16);
  nn::MultiHeadAttention<D> att(8, 2, gen, 0.0, /*bias=*/false);
  return gradcheck(
      [&](const Inputs& x) {
        return add(att.forward(x[0]).output, att.forward(x[0], x[1], x[2]).output);
      },
      with_params(att, {rnd({2, 3, 8}, 1), rnd({2, 4, 8}, 2), rnd({2, 4, 8}, 3)}));
});

// Without a qk_transform, self-attention runs on one packed [W_q; W_k; W_v] projection.
GRADCHECK_CASE("MultiHeadAttention self + score bias", "(2,3,8), 2 heads, bias (2,3,3), packed QKV", [] {
  Generator gen(14);
  nn::MultiHeadAttention<D> att(8, 2, gen);
  return gradcheck(
      [&](const Inputs& x) {
        nn::MultiHeadOptions<D> o;
        o.bias = x[1];
        return att.forward(x[0], o).output;
      },
      with_params(att, {rnd({2, 3, 8}, 3), rnd({2, 3, 3}, 4)}));
});

}  // namespace attnlab::cases

// Luong's local-p: the Gaussian op alone (p near, between and beyond the keys), then the whole
// attention with the general score, through the predicted centre, the window and the Gaussian.
namespace attnlab::cases {

GRADCHECK_CASE("gaussian_window", "p (2,3) -> (2,3,5), sigma 1.5", [] {
  return gradcheck([](const Inputs& x) { return nn::gaussian_window(x[0], 5, 1.5); },
                   {TD(Array<D>{{0.2, 2.5, 4.9}, {-0.7, 1.1, 6.0}}, true)});
});

GRADCHECK_CASE("LocalPAttention general", "q (2,3,4), keys (2,4,4), values (2,4,2), D 1, padded", [] {
  Generator gen(12);
  const std::unique_ptr<nn::Score<D>> score = nn::make_score<D>("general", 4, 4, gen, 3);
  nn::LocalPAttention<D> local(4, 3, 1, gen);
  Inputs in = with_params(local, {rnd({2, 3, 4}, 1), rnd({2, 4, 4}, 2), rnd({2, 4, 2}, 3)});
  for (const TD& p : score->parameters()) in.push_back(p);
  return gradcheck(
      [&](const Inputs& x) { return local.forward(*score, x[0], x[1], x[2], Allowed::where(keys4())).output; }, in);
});

GRADCHECK_CASE("LocalPAttention decoder step", "q (2,4), keys (2,4,4), D 2", [] {
  Generator gen(13);
  const std::unique_ptr<nn::Score<D>> score = nn::make_score<D>("dot", 4, 4, gen, 3);
  nn::LocalPAttention<D> local(4, 3, 2, gen);
  return gradcheck(
      [&](const Inputs& x) { return local.forward(*score, x[0], x[1], x[2], Allowed::where(keys4())).output; },
      with_params(local, {rnd({2, 4}, 1), rnd({2, 4, 4}, 2), rnd({2, 4, 2}, 3)}));
});

// Luong's local-m: the window at the decoder's step (a constant centre, clipped to the input's
// last key in the padded row), the score's softmax inside it times the Gaussian.
GRADCHECK_CASE("local_m_attention general", "q (2,3,4) from step 1, keys (2,4,4), values (2,4,2), D 1, padded", [] {
  Generator gen(14);
  const std::unique_ptr<nn::Score<D>> score = nn::make_score<D>("general", 4, 4, gen, 3);
  Inputs in = {rnd({2, 3, 4}, 1), rnd({2, 4, 4}, 2), rnd({2, 4, 2}, 3)};
  for (const TD& p : score->parameters()) in.push_back(p);
  return gradcheck(
      [&](const Inputs& x) { return nn::local_m_attention(*score, x[0], x[1], x[2], Allowed::where(keys4()), 1, 1).output; },
      in);
});

GRADCHECK_CASE("local_m_attention decoder step", "q (2,4) at step 2, keys (2,4,4), D 1", [] {
  Generator gen(15);
  const std::unique_ptr<nn::Score<D>> score = nn::make_score<D>("dot", 4, 4, gen, 3);
  return gradcheck(
      [&](const Inputs& x) { return nn::local_m_attention(*score, x[0], x[1], x[2], Allowed::where(keys4()), 1, 2).output; },
      {rnd({2, 4}, 1), rnd({2, 4, 4}, 2), rnd({2, 4, 2}, 3)});
});

}  // namespace attnlab::cases
