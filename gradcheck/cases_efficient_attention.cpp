// Gradient checks of lessons 17 and 18's attention: tiled_attention (tiny tiles, so that a row spans
// several tiles and the online softmax rescales), local_attention, sparse_attention, linear_attention
// and the Linformer module.
#include "gradcheck/cases.hpp"
#include "nn/attention/linformer.hpp"

namespace attnlab::cases {

namespace {
using Opts = TiledAttentionOptions<double>;

// Tiles of 2 queries and 3 keys: every row crosses tiles, the last ones are short.
Opts small_tiles() {
  Opts o;
  o.block_q = 2;
  o.block_k = 3;
  return o;
}

GradcheckResult check_tiled(const Shape& qs, const Shape& ks, const Shape& vs, const Opts& o) {
  return gradcheck([o](const Inputs& x) { return tiled_attention(x[0], x[1], x[2], o); },
                   {rnd(qs, 31, -2, 2), rnd(ks, 32, -2, 2), rnd(vs, 33)});
}

GradcheckResult check_local(const Shape& s, std::size_t window, const Opts& o) {
  return gradcheck([o, window](const Inputs& x) { return local_attention(x[0], x[1], x[2], window, o); },
                   {rnd(s, 34, -2, 2), rnd(s, 35, -2, 2), rnd(s, 36)});
}

GradcheckResult check_linear(const Shape& qs, const Shape& ks, const Shape& vs, bool causal) {
  return gradcheck([causal](const Inputs& x) { return linear_attention(x[0], x[1], x[2], {causal}); },
                   {rnd(qs, 37, -2, 2), rnd(ks, 38, -2, 2), rnd(vs, 39)});
}
}  // namespace

GRADCHECK_CASE("tiled_attention plain", "Q (2,7,4), K (2,8,4), V (2,8,3), tiles 2 x 3",
               [] { return check_tiled({2, 7, 4}, {2, 8, 4}, {2, 8, 3}, small_tiles()); });
GRADCHECK_CASE("tiled_attention causal", "(2,7,3), tiles 2 x 3", [] {
  Opts o = small_tiles();
  o.causal = true;
  return check_tiled({2, 7, 3}, {2, 7, 3}, {2, 7, 3}, o);
});
GRADCHECK_CASE("tiled_attention padding mask + hidden row", "(2,5,3), mask (2,5,7), tiles 2 x 3", [] {
  Opts o = small_tiles();
  Mask m = xt::ones<bool>({2, 5, 7});
  for (std::size_t j = 4; j < 7; ++j)
    for (std::size_t i = 0; i < 5; ++i) m(1, i, j) = false;  // batch 1: keys 4.. are padding
  for (std::size_t j = 0; j < 7; ++j) m(0, 3, j) = false;    // batch 0, query 3 sees nothing
  o.allowed = Allowed::where(m);
  return check_tiled({2, 5, 3}, {2, 7, 3}, {2, 7, 2}, o);
});
GRADCHECK_CASE("tiled_attention default tiles, custom scale", "(1,6,4), scale 0.7", [] {
  Opts o;
  o.scale = 0.7;
  return check_tiled({1, 6, 4}, {1, 6, 4}, {1, 6, 4}, o);
});
GRADCHECK_CASE("local_attention window 2", "(2,8,3), tiles 2 x 3", [] { return check_local({2, 8, 3}, 2, small_tiles()); });
GRADCHECK_CASE("local_attention causal window 1", "(2,8,3), tiles 2 x 3", [] {
  Opts o = small_tiles();
  o.causal = true;
  return check_local({2, 8, 3}, 1, o);
});
// sparse_attention: a window, global tokens and a stride decided tile by tile from the description.
GRADCHECK_CASE("sparse_attention window 1 + global {0, 6} + stride 3", "(2,9,3), tiles 2 x 3", [] {
  const Opts o = small_tiles();
  return gradcheck([o](const Inputs& x) { return sparse_attention(x[0], x[1], x[2], SparsePattern{1, {0, 6}, {}, 3}, o); },
                   {rnd({2, 9, 3}, 41, -2, 2), rnd({2, 9, 3}, 42, -2, 2), rnd({2, 9, 3}, 43)});
});
GRADCHECK_CASE("sparse_attention causal, global by block, rows beyond the keys", "Q (2,9,3), K (2,6,3), tiles 2 x 3", [] {
  Opts o = small_tiles();
  o.causal = true;
  const SparsePattern p{0, {}, {{}, {2, 4}}, 0};  // block 0's queries 6 to 8 see no key: zero rows
  return gradcheck([o, p](const Inputs& x) { return sparse_attention(x[0], x[1], x[2], p, o); },
                   {rnd({2, 9, 3}, 44, -2, 2), rnd({2, 6, 3}, 45, -2, 2), rnd({2, 6, 2}, 46)});
});
GRADCHECK_CASE("linear_attention", "Q (2,5,3), K (2,6,3), V (2,6,2)",
               [] { return check_linear({2, 5, 3}, {2, 6, 3}, {2, 6, 2}, false); });
GRADCHECK_CASE("linear_attention causal", "(2,6,3)", [] { return check_linear({2, 6, 3}, {2, 6, 3}, {2, 6, 2}, true); });
GRADCHECK_CASE("Linformer", "q, k, v (2,6,3), max_length 8, rank 3", [] {
  nn::Linformer<D> lin(8, 3);
  Generator gen(40);
  {
    NoGrad ng;  // off the segment means, so that every entry of E and F matters
    lin.E.mutable_value() += random_uniform<D>({3, 8}, gen, -0.3, 0.3);
    lin.F.mutable_value() += random_uniform<D>({3, 8}, gen, -0.3, 0.3);
  }
  return gradcheck([&](const Inputs& x) { return lin.forward(x[0], x[1], x[2]); },
                   {rnd({2, 6, 3}, 41), rnd({2, 6, 3}, 42), rnd({2, 6, 2}, 43), lin.E, lin.F});
});

}  // namespace attnlab::cases
