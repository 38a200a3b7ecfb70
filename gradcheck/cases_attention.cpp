// Gradient checks of the fused attention ops (scaled_dot_product_attention and its multi-head
// forms): shapes, masks, bias, scale, dropout.
#include "gradcheck/cases.hpp"

namespace attnlab::cases {

namespace {
using Opts = AttentionOptions<double>;

// An attention op's output as a function of its operands, followed by `extra` inputs (a bias,
// which make_opts places in the options, reading it from x).
using AttentionCall = std::function<TD(const Inputs&, const Opts&)>;
GradcheckResult check_call(Inputs in, AttentionCall call,
                           std::function<Opts(const Inputs&)> make_opts, std::vector<TD> extra) {
  for (auto& t : extra) in.push_back(t);
  return gradcheck(
      [call, make_opts](const Inputs& x) { return call(x, make_opts ? make_opts(x) : Opts{}); },
      in);
}

// scaled_dot_product_attention of Q, K, V (x[0..2]).
GradcheckResult check_attention(const Shape& qs, const Shape& ks, const Shape& vs,
                                std::function<Opts(const Inputs&)> make_opts = {},
                                std::vector<TD> extra = {}) {
  return check_call(
      {rnd(qs, 11), rnd(ks, 12), rnd(vs, 13)},
      [](const Inputs& x, const Opts& o) {
        return scaled_dot_product_attention(x[0], x[1], x[2], o).output;
      },
      make_opts, extra);
}

// The multi-head entry points, which read heads in place from (B, L, h*d) projections:
// multi_head_attention of Q, K, V (x[0..2]) ...
GradcheckResult check_heads(const Shape& qs, const Shape& ks, const Shape& vs, std::size_t heads,
                            std::function<Opts(const Inputs&)> make_opts = {},
                            std::vector<TD> extra = {}) {
  return check_call(
      {rnd(qs, 21), rnd(ks, 22), rnd(vs, 23)},
      [heads](const Inputs& x, const Opts& o) {
        return multi_head_attention(x[0], x[1], x[2], heads, o).output;
      },
      make_opts, extra);
}

// ... and multi_head_self_attention of one packed qkv (B, L, 3 * heads * d) (x[0]).
GradcheckResult check_packed(std::size_t B, std::size_t L, std::size_t heads, std::size_t d,
                             std::function<Opts(const Inputs&)> make_opts = {},
                             std::vector<TD> extra = {}) {
  return check_call(
      {rnd({B, L, 3 * heads * d}, 24)},
      [heads](const Inputs& x, const Opts& o) {
        return multi_head_self_attention(x[0], heads, o).output;
      },
      make_opts, extra);
}

// Key j of batch b is padding when j >= lengths[b]: the real keys, (B, 1, 1, Lk).
Allowed real_keys(const std::vector<std::size_t>& lengths, std::size_t Lk) {
  Mask m = Mask::from_shape({lengths.size(), 1, 1, Lk});
  for (std::size_t b = 0; b < lengths.size(); ++b)
    for (std::size_t j = 0; j < Lk; ++j) m(b, 0, 0, j) = j < lengths[b];
  return Allowed::where(m);
}
}  // namespace

GRADCHECK_CASE("scaled_dot_product_attention plain 2-D", "Q (4,3), K (4,3), V (4,2)", [] {
  return check_attention({4, 3}, {4, 3}, {4, 2});
});
GRADCHECK_CASE("scaled_dot_product_attention batched 4-D", "(B,h,L,d) = (2,2,3,4)", [] {
  return check_attention({2, 2, 3, 4}, {2, 2, 3, 4}, {2, 2, 3, 4});
});
GRADCHECK_CASE("scaled_dot_product_attention Lq != Lk", "Q (2,3,4), K (2,5,4), V (2,5,3)", [] {
  return check_attention({2, 3, 4}, {2, 5, 4}, {2, 5, 3});
});
GRADCHECK_CASE("scaled_dot_product_attention padding mask", "(2,2,3,4), mask (2,1,1,5)", [] {
  return check_attention({2, 2, 3, 4}, {2, 2, 5, 4}, {2, 2, 5, 3}, [](const Inputs&) {
    Opts o;
    o.allowed = real_keys({3, 5}, 5);
    return o;
  });
});
GRADCHECK_CASE("scaled_dot_product_attention causal", "(2,4,3)", [] {
  return check_attention({2, 4, 3}, {2, 4, 3}, {2, 4, 3}, [](const Inputs&) {
    Opts o;
    o.causal = true;
    return o;
  });
});
GRADCHECK_CASE("scaled_dot_product_attention causal + padding", "(2,1,4,3), mask (2,1,1,4)", [] {
  return check_attention({2, 1, 4, 3}, {2, 1, 4, 3}, {2, 1, 4, 3}, [](const Inputs&) {
    Opts o;
    o.causal = true;
    o.allowed = real_keys({2, 4}, 4);
    return o;
  });
});
GRADCHECK_CASE("scaled_dot_product_attention fully masked row", "(3,4), row 1 masked", [] {
  return check_attention({3, 4}, {4, 4}, {4, 2}, [](const Inputs&) {
    Opts o;
    Mask hidden = Mask::from_shape({3, 4});
    hidden.fill(false);
    for (std::size_t j = 0; j < 4; ++j) hidden(1, j) = true;
    hidden(2, 0) = true;
    o.allowed = Allowed::except(hidden);
    return o;
  });
});
GRADCHECK_CASE("scaled_dot_product_attention bias", "(2,2,3,4), bias (2,3,5)", [] {
  return check_attention(
      {2, 2, 3, 4}, {2, 2, 5, 4}, {2, 2, 5, 3},
      [](const Inputs& x) {
        Opts o;
        o.bias = x[3];
        return o;
      },
      {rnd({2, 3, 5}, 14)});
});
GRADCHECK_CASE("scaled_dot_product_attention custom scale", "(2,3,4), scale 0.7", [] {
  return check_attention({2, 3, 4}, {2, 3, 4}, {2, 3, 2}, [](const Inputs&) {
    Opts o;
    o.scale = 0.7;
    return o;
  });
});
GRADCHECK_CASE("scaled_dot_product_attention dropout", "(2,4,3), p = 0.3", [] {
  // The generator is reseeded on every call, so every evaluation drops the same weights.
  auto gen = std::make_shared<Generator>();
  return check_attention({2, 4, 3}, {2, 4, 3}, {2, 4, 3}, [gen](const Inputs&) {
    gen->reseed(7);
    Opts o;
    o.dropout = 0.3;
    o.generator = gen.get();
    return o;
  });
});

GRADCHECK_CASE("multi_head_attention Lq != Lk, dv != dk", "Q (2,3,6), K (2,4,6), V (2,4,4), 2 heads",
               [] { return check_heads({2, 3, 6}, {2, 4, 6}, {2, 4, 4}, 2); });
GRADCHECK_CASE("multi_head_attention padding mask + bias", "(2,3,6), mask (2,1,1,4), bias (2,3,4)", [] {
  return check_heads(
      {2, 3, 6}, {2, 4, 6}, {2, 4, 6}, 2,
      [](const Inputs& x) {
        Opts o;
        o.allowed = real_keys({2, 4}, 4);
        o.bias = x[3];
        return o;
      },
      {rnd({2, 3, 4}, 25)});
});
GRADCHECK_CASE("multi_head_attention dropout", "(2,4,6), 3 heads, p = 0.3", [] {
  auto gen = std::make_shared<Generator>();
  return check_heads({2, 4, 6}, {2, 4, 6}, {2, 4, 6}, 3, [gen](const Inputs&) {
    gen->reseed(7);
    Opts o;
    o.dropout = 0.3;
    o.generator = gen.get();
    return o;
  });
});
GRADCHECK_CASE("multi_head_self_attention causal", "qkv (2,4,12), 2 heads of 2",
               [] { return check_packed(2, 4, 2, 2, [](const Inputs&) {
                 Opts o;
                 o.causal = true;
                 return o;
               }); });
GRADCHECK_CASE("multi_head_self_attention padding mask + bias", "qkv (2,4,12), bias (2,4,4)", [] {
  return check_packed(
      2, 4, 2, 2,
      [](const Inputs& x) {
        Opts o;
        o.allowed = real_keys({3, 4}, 4);
        o.bias = x[1];
        return o;
      },
      {rnd({2, 4, 4}, 26)});
});
GRADCHECK_CASE("multi_head_self_attention dropout", "qkv (2,3,18), 3 heads, p = 0.3", [] {
  auto gen = std::make_shared<Generator>();
  return check_packed(2, 3, 3, 2, [gen](const Inputs&) {
    gen->reseed(11);
    Opts o;
    o.dropout = 0.3;
    o.generator = gen.get();
    return o;
  });
});

}  // namespace attnlab::cases
