// The KV cache of CausalLM (and of MultiHeadAttention underneath): generating through the cache
// gives the logits of the full forward, for every positional method, pre- and post-norm, float
// and double, whether the new positions come one at a time or in chunks; the cache grows by the
// new positions; misuse is refused by name.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "nn/transformer/transformer.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::nn;

namespace {

template <class T>
std::unique_ptr<CausalLM<T>> small_lm(Positional p, bool norm_first, std::uint64_t seed = 5) {
  CausalLMConfig c;
  c.vocab = 13;
  c.num_layers = 2;
  c.max_length = 16;
  c.layer = {16, 4, 32, /*dropout=*/0.1, norm_first, Activation::GELU, 1e-5};
  c.positional = p;
  Generator gen(seed);
  auto lm = std::make_unique<CausalLM<T>>(c, gen);
  lm->eval();
  return lm;
}

const IndexArray kTokens = {{1, 4, 7, 2, 9, 3, 3, 12, 5, 6, 0}, {1, 11, 10, 5, 4, 8, 2, 2, 7, 1, 9}};

// The logits of kTokens through the cache, fed in pieces of the given lengths, stacked along L.
template <class T>
Array<T> through_cache(CausalLM<T>& lm, const std::vector<std::size_t>& pieces, CausalLMCache<T>& cache) {
  std::vector<Tensor<T>> out;
  std::size_t at = 0;
  for (std::size_t n : pieces) {
    const IndexArray ids = xt::view(kTokens, xt::all(), xt::range(at, at + n));
    out.push_back(lm.forward_cached(ids, cache));
    at += n;
    CHECK(cache.length() == at);
  }
  return concat(out, 1).value();
}

IndexArray column_of_ones(std::size_t rows) { return xt::ones<Index>({rows, std::size_t(1)}); }

template <class T>
double max_diff(const Array<T>& a, const Array<T>& b) {
  REQUIRE(shape_of(a) == shape_of(b));
  return double(xt::amax(xt::abs(a - b))());
}

}  // namespace

TEST_CASE_TEMPLATE("CausalLM: the KV cache gives the full forward's logits", T, float, double) {
  const double tol = std::is_same_v<T, double> ? 1e-12 : 2e-5;
  for (Positional p : {Positional::None, Positional::Learned, Positional::Sinusoidal, Positional::RelativeBias,
                       Positional::Rotary, Positional::ALiBi, Positional::ShawRelative})
    for (bool norm_first : {true, false}) {
      CAPTURE(positional_name(p));
      CAPTURE(norm_first);
      auto model = small_lm<T>(p, norm_first);
      CausalLM<T>& lm = *model;
      Array<T> full;
      {
        NoGrad no_grad;
        full = lm.forward(kTokens).value();  // (2, 11, 13)
      }
      // The prompt in one piece, then one token at a time; then chunks after a cached prefix
      // (the band mask: new row i sees the cached keys and the new ones up to itself).
      for (const std::vector<std::size_t>& pieces :
           {std::vector<std::size_t>{4, 1, 1, 1, 1, 1, 1, 1}, {1, 3, 2, 5}, {11}}) {
        CausalLMCache<T> cache;
        const Array<T> cached = through_cache(lm, pieces, cache);
        CHECK(max_diff(cached, full) < tol);
        CHECK(cache.layers.size() == 2);
        CHECK(cache.layers[0].keys.shape() == Shape{2, 11, 16});
      }
    }
}

TEST_CASE("CausalLM: the cached keys are the rotated keys, each rotated at its own position") {
  auto model = small_lm<double>(Positional::Rotary, true);
  CausalLM<double>& lm = *model;
  CausalLMCache<double> one_go, in_steps;
  lm.forward_cached(IndexArray(xt::view(kTokens, xt::all(), xt::range(0, 6))), one_go);
  for (std::size_t t = 0; t < 6; ++t)
    lm.forward_cached(IndexArray(xt::view(kTokens, xt::all(), xt::range(t, t + 1))), in_steps);
  for (std::size_t l = 0; l < 2; ++l) {
    CHECK(max_diff(one_go.layers[l].keys, in_steps.layers[l].keys) < 1e-13);
    CHECK(max_diff(one_go.layers[l].values, in_steps.layers[l].values) < 1e-13);
  }
}

TEST_CASE("CausalLM: the KV cache refuses misuse by name") {
  using attnlab::testing::contains;
  using attnlab::testing::error_of;
  auto model = small_lm<double>(Positional::Learned, true);
  CausalLM<double>& lm = *model;
  CausalLMCache<double> cache;
  lm.train();
  CHECK(contains(error_of([&] { lm.forward_cached(IndexArray{{1, 2}}, cache); }), "call eval() first"));
  lm.eval();
  lm.forward_cached(IndexArray{{1, 2}}, cache);
  // A batch of another size does not fit the cache.
  CHECK(contains(error_of([&] { lm.forward_cached(column_of_ones(2), cache); }),
                 "MultiHeadAttention (cached): the cache holds keys (1,2,16)"));
  // Past the learned table's last row.
  CausalLMCache<double> full;
  lm.forward_cached(IndexArray(xt::ones<Index>({1, 16})), full);
  CHECK(contains(error_of([&] { lm.forward_cached(column_of_ones(1), full); }), "LearnedPositionalEmbedding"));
  CausalLMCache<double> wrong;
  wrong.layers.resize(3);
  CHECK(contains(error_of([&] { lm.forward_cached(column_of_ones(1), wrong); }), "the cache holds 3 layers, the model 2"));
  // Masks cannot be combined with the cache.
  MultiHeadAttention<double>& attn = lm.blocks.layer(0).self_attn;
  MultiHeadOptions<double> masked;
  masked.allowed_keys = Allowed::where(Mask{{true, true}});
  KVCache<double> kv;
  CHECK(contains(error_of([&] { attn.forward_cached(Tensor<double>::zeros({1, 2, 16}), kv, masked); }),
                 "masks are not supported with a cache"));
}
