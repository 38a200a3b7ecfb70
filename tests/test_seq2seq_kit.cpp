// The recurrent encoder-decoder of the lesson kit (lessons/kit/seq2seq): the decoder without
// attention reads the encoder's one summary vector and nothing else.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include <xtensor/xview.hpp>

#include "lessons/kit/seq2seq.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

s2s::ModelConfig tiny(const std::string& score) {
  s2s::ModelConfig c;
  c.score = score;
  c.embed = 4;
  c.encoder_hidden = 3;
  c.decoder_hidden = 5;
  c.attention_hidden = 6;
  return c;
}

data::EncodedPairs pairs() {
  data::EncodedPairs p;
  p.source = {{4, 5, 6, 7}, {5, 4}};
  p.target = {{6, 4, 5}, {7}};
  return p;
}

}  // namespace

TEST_CASE("score \"none\": no attention parameters, the context is the encoder's summary") {
  Generator g1(3), g2(3);
  s2s::Seq2Seq plain(tiny("none"), 8, 9, g1), additive(tiny("additive"), 8, 9, g2);
  CHECK_FALSE(plain.decoder->has_attention());
  CHECK(additive.decoder->has_attention());
  CHECK(plain.attention_parameters() == 0);
  // additive attention: W_q (Hd -> A), W_k (2He -> A), v (A): 5*6 + 6*6 + 6 = 72, no biases.
  CHECK(additive.attention_parameters() == 72);
  CHECK(plain.parameter_count() + 72 == additive.parameter_count());
  for (const auto& [name, p] : plain.named_parameters()) CHECK(name.find("attention") == std::string::npos);
  CHECK_THROWS_AS(plain.decoder->attention(), std::logic_error);

  const data::Seq2SeqBatch b = data::make_seq2seq_batch(pairs(), {0, 1});
  NoGrad ng;
  s2s::Encoded e = plain.encoder.forward(b.source);
  CHECK(e.summary.shape() == Shape{2, 6});  // [fwd_last; bwd_first], 2He wide
  const IndexArray prev = xt::view(b.decoder_input.ids, xt::all(), 0);
  const s2s::Step before = plain.decoder->step(e, prev, e.init);
  CHECK_FALSE(before.weights.defined());
  // The annotations are never read: zeroing them changes nothing. The summary is: changing it does.
  s2s::Encoded blank = e;
  blank.annotations = Tensor<float>::zeros(e.annotations.shape());
  CHECK(plain.decoder->step(blank, prev, e.init).logits.value() == before.logits.value());
  s2s::Encoded other = e;
  other.summary = Tensor<float>::zeros(e.summary.shape());
  CHECK(plain.decoder->step(other, prev, e.init).logits.value() != before.logits.value());
  // With attention, the annotations are what it reads.
  s2s::Encoded ea = additive.encoder.forward(b.source), ea_blank = ea;
  ea_blank.annotations = Tensor<float>::zeros(ea.annotations.shape());
  CHECK(additive.decoder->step(ea_blank, prev, ea.init).logits.value() !=
        additive.decoder->step(ea, prev, ea.init).logits.value());

  // Teacher forcing and greedy decoding work without attention maps.
  Tensor<float> w;
  CHECK(plain.forward(b, &w).shape() == Shape{2, 4, 9});
  CHECK_FALSE(w.defined());
  const s2s::Decoded d = plain.greedy(b.source, 3);
  CHECK(d.ids.size() == 2);
  CHECK(d.attention.empty());
  CHECK(additive.greedy(b.source, 3).attention.size() == 2);
}

TEST_CASE("score \"none\" is for the Bahdanau decoder only") {
  Generator gen(1);
  s2s::ModelConfig c = tiny("none");
  c.style = s2s::DecoderStyle::Luong;
  CHECK_THROWS_AS(s2s::Seq2Seq(c, 8, 9, gen), std::invalid_argument);
}

TEST_CASE("in_batches: consecutive rows, the last batch shorter") {
  std::vector<std::vector<std::size_t>> seen;
  in_batches(7, 3, [&](const std::vector<std::size_t>& rows) { seen.push_back(rows); });
  CHECK(seen == std::vector<std::vector<std::size_t>>{{0, 1, 2}, {3, 4, 5}, {6}});
  seen.clear();
  in_batches(0, 3, [&](const std::vector<std::size_t>& rows) { seen.push_back(rows); });
  CHECK(seen.empty());
  CHECK_THROWS_WITH_AS(in_batches(3, 0, [](const std::vector<std::size_t>&) {}),
                       "in_batches: the batch size must be positive, got 0", std::invalid_argument);
}

TEST_CASE("rows_in_batches: the blocks in row order, without the tape, and bad blocks named") {
  const Tensor<float> w(Array<float>{2.0f, 3.0f}, true);
  const Array<float> got = rows_in_batches(5, 2, [&](const std::vector<std::size_t>& rows) {
    CHECK_FALSE(grad_enabled());
    Array<float> x = Array<float>::from_shape({rows.size(), 2});
    for (std::size_t i = 0; i < rows.size(); ++i) x(i, 0) = x(i, 1) = float(rows[i]);
    const Tensor<float> y = mul(Tensor<float>(x), w);  // (B, 2): row r is (2r, 3r)
    CHECK_FALSE(y.requires_grad());
    return y.value();
  });
  REQUIRE(got.shape() == std::vector<std::size_t>{5, 2});
  for (std::size_t r = 0; r < 5; ++r) {
    CHECK(got(r, 0) == 2.0f * float(r));
    CHECK(got(r, 1) == 3.0f * float(r));
  }
  CHECK_THROWS_WITH_AS(rows_in_batches(5, 2, [](const std::vector<std::size_t>&) { return Array<float>(xt::zeros<float>({3})); }),
                       doctest::Contains("rows_in_batches: a block for 2 rows has shape (3)"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(rows_in_batches(5, 2, [](const std::vector<std::size_t>& rows) {
                         return Array<float>(xt::zeros<float>({rows.size(), rows.front() == 0 ? std::size_t(2) : 3}));
                       }),
                       doctest::Contains("unlike the first block's rows"), std::invalid_argument);
  CHECK_THROWS_AS(rows_in_batches(0, 2, [](const std::vector<std::size_t>&) { return Array<float>(); }),
                  std::invalid_argument);
}

TEST_CASE("class_scores: accuracy and the mean cross-entropy of the probabilities") {
  const Array<float> p = {{0.7f, 0.2f, 0.1f}, {0.1f, 0.1f, 0.8f}, {0.5f, 0.25f, 0.25f}};
  const Scores s = class_scores(p, IndexArray{0, 2, 1});
  REQUIRE(s.size() == 2);
  CHECK(s[0].first == "accuracy");
  CHECK(s[0].second == doctest::Approx(2.0 / 3));
  CHECK(s[1].first == "loss");
  CHECK(s[1].second == doctest::Approx(-(std::log(0.7) + std::log(0.8) + std::log(0.25)) / 3).epsilon(1e-6));
}
