// Luong's local-p attention: the Gaussian op, the window, the predicted centre, the limit of a
// window wider than the input (global attention), and the decoder that uses it.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include <xtensor/xmath.hpp>

#include "nn/attention/attention.hpp"
#include "nn/attention/local_p.hpp"
#include "nn/data/batch.hpp"
#include "nn/rnn/seq2seq.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::nn;
using namespace attnlab::testing;
using TD = Tensor<double>;

namespace {
const Mask& padded() {  // row 0: 5 real keys; row 1: 3 real keys, then padding
  static const Mask m = {{true, true, true, true, true}, {true, true, true, false, false}};
  return m;
}
}  // namespace

TEST_CASE("gaussian_window: exp(-(s - p)^2 / (2 sigma^2)), 1 at the centre") {
  const TD p(Array<double>{{2.0, 0.5}});
  const Array<double> g = gaussian_window(p, 4, 1.5).value();
  REQUIRE(shape_of(g) == Shape{1, 2, 4});
  for (std::size_t s = 0; s < 4; ++s) {
    CHECK(g(0, 0, s) == doctest::Approx(std::exp(-(s - 2.0) * (s - 2.0) / 4.5)).epsilon(1e-15));
    CHECK(g(0, 1, s) == doctest::Approx(std::exp(-(s - 0.5) * (s - 0.5) / 4.5)).epsilon(1e-15));
  }
  CHECK(g(0, 0, 2) == 1.0);
  CHECK(error_of([&] { gaussian_window(p, 4, 0.0); }).find("gaussian_window") != std::string::npos);
  CHECK(error_of([&] { gaussian_window(TD(Array<double>{1.0, 2.0}), 4, 1.0); }).find("(2)") != std::string::npos);
}

TEST_CASE("LocalPAttention: weights only inside [p_t - D, p_t + D] and on real keys, softmax there times the Gaussian") {
  Generator gen(4);
  const auto score = make_score<double>("general", 4, 4, gen, 3);
  LocalPAttention<double> local(4, 3, 1, gen);
  const TD q(random_normal<double>({2, 3, 4}, gen)), k(random_normal<double>({2, 5, 4}, gen));
  const TD v(random_normal<double>({2, 5, 2}, gen));
  const LocalAttentionResult<double> r = local.forward(*score, q, k, v, Allowed::where(padded()));
  REQUIRE(r.weights.shape() == Shape{2, 3, 5});
  REQUIRE(r.positions.shape() == Shape{2, 3});
  const Array<double> s = score->compare(q, score->read_keys(k)).value();
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 3; ++i) {
      const double p = r.positions.value()(b, i), last = b == 0 ? 4.0 : 2.0;  // p_t in [0, S_b - 1]
      CHECK(p >= 0.0);
      CHECK(p <= last);
      double total = 0;
      for (std::size_t j = 0; j < 5; ++j)
        if (padded()(b, j) && std::abs(j - p) <= 1.0) total += std::exp(s(b, i, j));
      for (std::size_t j = 0; j < 5; ++j) {
        const bool inside = padded()(b, j) && std::abs(j - p) <= 1.0;
        const double expected = inside ? std::exp(s(b, i, j)) / total * std::exp(-(j - p) * (j - p) / 0.5) : 0.0;
        CHECK(r.weights.value()(b, i, j) == doctest::Approx(expected).epsilon(1e-12));
      }
    }
  CHECK(error_of([&] { local.forward(*score, q, k, v, Allowed::where(Mask{{true, true}})); }).find("LocalPAttention") !=
        std::string::npos);
  CHECK_THROWS_AS(LocalPAttention<double>(4, 3, 0, gen), ShapeError);
}

TEST_CASE("LocalPAttention with a window far wider than the input is global attention, to the Gaussian's tilt") {
  Generator gen(5);
  const auto score = make_score<double>("dot", 4, 4, gen, 3);
  Attention<double> global(make_score<double>("dot", 4, 4, gen, 3));
  LocalPAttention<double> local(4, 3, 1000, gen);  // sigma 500: the Gaussian is within 1e-5 of 1 over 5 keys
  const TD q(random_normal<double>({2, 3, 4}, gen)), k(random_normal<double>({2, 5, 4}, gen));
  const TD v(random_normal<double>({2, 5, 2}, gen));
  const Allowed real = Allowed::where(padded());
  const double diff = xt::amax(xt::abs(local.forward(*score, q, k, v, real).output.value() - global(q, k, v, real).output.value()))();
  CHECK(diff < 1e-4);
  CHECK(diff > 0.0);
}

TEST_CASE("Seq2Seq with local-p: the Luong decoder only; centres within each input, no weight on padding") {
  rnn::Seq2SeqConfig c;
  c.style = rnn::DecoderStyle::Luong, c.score = "general", c.embed = 4, c.encoder_hidden = 3, c.decoder_hidden = 6;
  c.attention_hidden = 5, c.local_window = 2;
  Generator gen(6);
  rnn::Seq2Seq model(c, 8, 9, gen);
  data::EncodedPairs p;
  p.source = {{4, 5, 6, 7, 4, 5}, {5, 4}};
  p.target = {{6, 4, 5}, {7}};
  const data::Seq2SeqBatch b = data::make_seq2seq_batch(p, {0, 1});
  Tensor<float> weights;
  const Tensor<float> logits = model.forward(b, &weights);
  CHECK(logits.shape() == Shape{2, 4, 9});
  auto& luong = dynamic_cast<rnn::LuongDecoder&>(*model.decoder);
  const rnn::Encoded e = model.encoder.forward(b.source);
  const Array<float> centres = luong.local_positions(e, b.decoder_input.ids).value();
  const std::size_t S = b.source.ids.shape()[1];
  for (std::size_t t = 0; t < 4; ++t) {
    CHECK(centres(0, t) <= float(S - 1));
    CHECK(centres(1, t) <= float(b.source.lengths[1] - 1));
    CHECK(centres(1, t) >= 0.0f);
  }
  // Padding gets no weight.
  for (std::size_t t = 0; t < 4; ++t)
    for (std::size_t j = b.source.lengths[1]; j < S; ++j) CHECK(weights.value()(1, t, j) == 0.0f);
  c.style = rnn::DecoderStyle::Bahdanau;
  CHECK_THROWS_WITH_AS(rnn::Seq2Seq(c, 8, 9, gen), doctest::Contains("local_window"), std::invalid_argument);
  rnn::Seq2SeqConfig global = c;
  global.style = rnn::DecoderStyle::Luong, global.local_window = 0;
  rnn::Seq2Seq plain(global, 8, 9, gen);
  CHECK_THROWS_AS(dynamic_cast<rnn::LuongDecoder&>(*plain.decoder).local_positions(e, b.decoder_input.ids),
                  std::logic_error);
}
