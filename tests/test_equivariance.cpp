// nn::permutation_error (nn/transformer/equivariance): an encoder without positions reads its input
// as a bag, f(pi x) = pi f(x), for any weights; a positional method breaks the symmetry; bad input named.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "nn/transformer/encoder_model.hpp"
#include "nn/transformer/equivariance.hpp"

using namespace attnlab;
using namespace attnlab::nn;

namespace {
EncoderModel<float> tagger(Positional positional, Pooling pooling = Pooling::None) {
  EncoderModelConfig c;
  c.vocab = 6, c.num_classes = 6, c.num_layers = 2, c.max_length = 8, c.pooling = pooling, c.positional = positional;
  c.layer = LayerConfig{16, 2, 32, 0.0, true, Activation::ReLU, 1e-5};
  Generator gen(4);
  return EncoderModel<float>(c, gen);
}
}  // namespace

TEST_CASE("permutation_error: zero without positions, clearly not with them") {
  const IndexArray one = {{1, 2, 3, 4, 5, 1, 2, 3}};
  const std::vector<std::size_t> perm = {7, 2, 5, 0, 1, 6, 3, 4};
  EncoderModel<float> bag = tagger(Positional::None);
  CHECK(permutation_error(bag, one, perm) < 1e-5);
  CHECK(permutation_error(bag, one, {0, 1, 2, 3, 4, 5, 6, 7}) == 0.0);  // the identity permutes nothing
  for (Positional p : {Positional::Sinusoidal, Positional::Learned, Positional::Rotary, Positional::ALiBi}) {
    EncoderModel<float> m = tagger(p);
    CHECK(permutation_error(m, one, perm) > 1e-3);
  }
  // Reversal: ALiBi's bias -m |i - j| is symmetric, so an encoder with it commutes with reversing.
  EncoderModel<float> alibi = tagger(Positional::ALiBi);
  CHECK(permutation_error(alibi, one, {7, 6, 5, 4, 3, 2, 1, 0}) < 1e-5);
}

TEST_CASE("permutation_error: a pooled model, a batch or a wrong permutation named") {
  const IndexArray one = {{1, 2, 3, 4}};
  EncoderModel<float> m = tagger(Positional::None);
  EncoderModel<float> pooled = tagger(Positional::None, Pooling::Mean);
  CHECK_THROWS_WITH_AS(permutation_error(pooled, one, {0, 1, 2, 3}), doctest::Contains("permutation_error"), ShapeError);
  CHECK_THROWS_WITH_AS(permutation_error(m, IndexArray{{1, 2}, {3, 4}}, {0, 1}), doctest::Contains("(1, L)"), ShapeError);
  CHECK_THROWS_WITH_AS(permutation_error(m, one, {0, 1, 2}), doctest::Contains("not a permutation of 0..4-1"), ShapeError);
  CHECK_THROWS_AS(permutation_error(m, one, {0, 1, 1, 3}), ShapeError);
}

TEST_CASE("random_permutation and reversal: every index once; the shuffle is the generator's, the mirror exact") {
  Generator a(3), b(3);
  const std::vector<std::size_t> p = random_permutation(16, a);
  std::vector<std::size_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < 16; ++i) CHECK(sorted[i] == i);
  CHECK(p == random_permutation(16, b));  // the same draws, the same order
  CHECK(p != random_permutation(16, b));  // the next draws, another order
  std::vector<std::size_t> by_hand(16);
  for (std::size_t i = 0; i < 16; ++i) by_hand[i] = i;
  Generator c(3);
  shuffle(by_hand, c);
  CHECK(p == by_hand);
  CHECK(reversal(4) == std::vector<std::size_t>{3, 2, 1, 0});
  CHECK(reversal(0).empty());
  CHECK(random_permutation(0, a).empty());
}
