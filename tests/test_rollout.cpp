// The class token's attention and its rollout (nn/attention/rollout.hpp) on maps whose answers
// are known by hand: attention to oneself passes nothing on, uniform attention spreads (1 - 2^-L)
// over the tokens, the rollout agrees with the matrix product written out, and bad shapes are refused.
#include <doctest/doctest.h>

#include <xtensor/xview.hpp>

#include "nn/attention/rollout.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::nn;
using doctest::Contains;

namespace {
Array<float> uniform_maps(std::size_t B, std::size_t H, std::size_t T) { return Array<float>(xt::ones<float>({B, H, T, T}) / float(T)); }
}  // namespace

TEST_CASE("class_token_attention: attention to oneself keeps everything on the class token") {
  Array<float> self = xt::zeros<float>({2, 3, 5, 5});
  for (std::size_t i = 0; i < 5; ++i) xt::view(self, xt::all(), xt::all(), i, i) = 1.0f;
  const ClassTokenAttention a = class_token_attention({self, self});
  CHECK(a.layers.shape() == std::vector<std::size_t>{2, 2, 4});
  CHECK(a.rollout.shape() == std::vector<std::size_t>{2, 4});
  CHECK(xt::amax(xt::abs(a.rollout))() == 0.0);
  CHECK(xt::amax(xt::abs(a.layers))() == 0.0);
}

TEST_CASE("class_token_attention: uniform attention over L layers puts (1 - 2^-L) / T on every token") {
  const std::size_t T = 6;
  for (std::size_t L : {1, 2, 3}) {
    const ClassTokenAttention a = class_token_attention(std::vector<Array<float>>(L, uniform_maps(1, 2, T)));
    for (std::size_t j = 0; j < T - 1; ++j) {
      CHECK(a.rollout(0, j) == doctest::Approx((1.0 - std::pow(0.5, double(L))) / double(T)));
      CHECK(a.layers(0, L - 1, j) == doctest::Approx(1.0 / double(T)));
    }
  }
}

TEST_CASE("class_token_attention: the mean over heads, and the rollout as the product written out") {
  Generator gen(4);
  const std::size_t B = 2, H = 3, T = 4, L = 3;
  std::vector<Array<float>> maps;
  for (std::size_t l = 0; l < L; ++l) {
    Array<float> m = random_uniform<float>({B, H, T, T}, gen, 0.1, 1.0);
    m /= xt::eval(xt::sum(m, {3}, xt::keep_dims));  // rows are distributions
    maps.push_back(m);
  }
  const ClassTokenAttention a = class_token_attention(maps);
  for (std::size_t b = 0; b < B; ++b) {
    xt::xarray<double> product = xt::eye<double>(T);  // A^_L ... A^_1, built from the first layer up
    for (std::size_t l = 0; l < L; ++l) {
      const xt::xarray<double> mean = xt::mean(xt::cast<double>(xt::view(maps[l], b)), {0});
      for (std::size_t j = 1; j < T; ++j) CHECK(a.layers(b, l, j - 1) == doctest::Approx(mean(0, j)));
      const xt::xarray<double> step = 0.5 * mean + 0.5 * xt::eye<double>(T);
      xt::xarray<double> next = xt::zeros<double>({T, T});
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t k = 0; k < T; ++k)
          for (std::size_t j = 0; j < T; ++j) next(i, j) += step(i, k) * product(k, j);
      product = next;
    }
    double total = product(0, 0);
    for (std::size_t j = 1; j < T; ++j) {
      CHECK(a.rollout(b, j - 1) == doctest::Approx(product(0, j)));
      total += a.rollout(b, j - 1);
    }
    CHECK(total == doctest::Approx(1.0));
  }
}

TEST_CASE("class_token_attention refuses no layers, maps that are not (B, h, T, T) and layers that differ") {
  CHECK_THROWS_WITH_AS(class_token_attention({}), Contains("class_token_attention: needs the attention of at least one layer"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(class_token_attention({Array<float>(xt::zeros<float>({1, 2, 3, 4}))}),
                       Contains("needs (B, heads, T, T) maps with T > 1, got (1,2,3,4)"), ShapeError);
  CHECK_THROWS_WITH_AS(class_token_attention({uniform_maps(1, 2, 3), uniform_maps(1, 2, 4)}),
                       Contains("layer 2 has shape (1,2,4,4), layer 1 (1,2,3,3)"), ShapeError);
}

TEST_CASE("patch_mean_attention: the mean of the patch rows, through the layers") {
  // Attention to oneself: each patch keeps its own share, 1 / (T - 1), in every layer and the rollout.
  const std::size_t T = 5;
  Array<float> self = xt::zeros<float>(std::vector<std::size_t>{1, 2, T, T});
  for (std::size_t i = 0; i < T; ++i) xt::view(self, xt::all(), xt::all(), i, i) = 1.0f;
  const ClassTokenAttention s = patch_mean_attention({self, self});
  for (std::size_t j = 0; j < T - 1; ++j) {
    CHECK(s.rollout(0, j) == doctest::Approx(1.0 / double(T - 1)));
    CHECK(s.layers(0, 1, j) == doctest::Approx(1.0 / double(T - 1)));
  }
  // Uniform attention over L layers: 2^-L of the start, 1 / (T - 1), kept, the rest spread as 1 / T.
  for (std::size_t L : {1, 2, 3}) {
    const ClassTokenAttention u = patch_mean_attention(std::vector<Array<float>>(L, uniform_maps(2, 3, T)));
    const double keep = std::pow(0.5, double(L));
    for (std::size_t j = 0; j < T - 1; ++j) {
      CHECK(u.rollout(1, j) == doctest::Approx(keep / double(T - 1) + (1.0 - keep) / double(T)));
      CHECK(u.layers(1, L - 1, j) == doctest::Approx(1.0 / double(T)));
    }
  }
  // One layer whose patch rows all look at patch 1 alone: the patches' mean reads patch 1 only.
  Array<float> one = xt::zeros<float>(std::vector<std::size_t>{1, 1, T, T});
  xt::view(one, 0, 0, 0, 0) = 1.0f;
  for (std::size_t i = 1; i < T; ++i) one(0, 0, i, 1) = 1.0f;
  const ClassTokenAttention o = patch_mean_attention({one});
  CHECK(o.layers(0, 0, 0) == doctest::Approx(1.0));
  CHECK(o.rollout(0, 0) == doctest::Approx(0.5 + 0.5 / double(T - 1)));
  CHECK(o.rollout(0, 1) == doctest::Approx(0.5 / double(T - 1)));
  CHECK_THROWS_WITH_AS(patch_mean_attention({}), Contains("patch_mean_attention: needs the attention of at least one layer"),
                       ShapeError);
}
