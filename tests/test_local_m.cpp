// Luong's local-m attention: the window centred at the decoder's own step, the limit of a window
// wider than the input (global attention times the Gaussian), the refusals, and the step index
// threaded through the Luong decoder's teacher forcing, its single steps and greedy decoding.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "nn/attention/attention.hpp"
#include "nn/attention/local_m.hpp"
#include "nn/data/batch.hpp"
#include "nn/decode.hpp"
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

double gaussian(double s, double p, double sigma) { return std::exp(-(s - p) * (s - p) / (2 * sigma * sigma)); }
}  // namespace

TEST_CASE("monotonic_centres: p = min(first_step + i, S_b - 1), a row without keys refused") {
  const Array<double> p = monotonic_centres<double>(Allowed::where(padded()), 4, 1);
  REQUIRE(shape_of(p) == Shape{2, 4});
  CHECK(p == Array<double>{{1, 2, 3, 4}, {1, 2, 2, 2}});
  const std::string msg = error_of([] { monotonic_centres<double>(Allowed::where(Mask{{true, false}, {false, false}}), 2, 0); });
  CHECK(contains(msg, "monotonic_centres"));
  CHECK(contains(msg, "row 1"));
}

TEST_CASE("local_m_attention: the score's softmax inside [p_t - D, p_t + D] times the Gaussian, p_t = the step") {
  Generator gen(4);
  const auto score = make_score<double>("general", 4, 4, gen, 3);
  const TD q(random_normal<double>({2, 3, 4}, gen)), k(random_normal<double>({2, 5, 4}, gen));
  const TD v(random_normal<double>({2, 5, 2}, gen));
  const Allowed real = Allowed::where(padded());
  const std::size_t first = 1, D = 1;
  const LocalAttentionResult<double> r = local_m_attention(*score, q, k, v, real, D, first);
  REQUIRE(r.weights.shape() == Shape{2, 3, 5});
  const Array<double> s = score->compare(q, score->read_keys(k)).value();
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 3; ++i) {
      const double p = std::min(double(first + i), b == 0 ? 4.0 : 2.0);
      CHECK(r.positions.value()(b, i) == p);
      double total = 0;
      for (std::size_t j = 0; j < 5; ++j)
        if (padded()(b, j) && std::abs(j - p) <= double(D)) total += std::exp(s(b, i, j));
      for (std::size_t j = 0; j < 5; ++j) {
        const bool inside = padded()(b, j) && std::abs(j - p) <= double(D);
        const double expected = inside ? std::exp(s(b, i, j)) / total * gaussian(j, p, D / 2.0) : 0.0;
        CHECK(r.weights.value()(b, i, j) == doctest::Approx(expected).epsilon(1e-12));
      }
    }
  // One decoder step at step t is row t - first of the teacher-forced form: the same window.
  const TD q_step(Array<double>(xt::view(q.value(), xt::all(), 2, xt::all())));
  const LocalAttentionResult<double> one = local_m_attention(*score, q_step, k, v, real, D, first + 2);
  REQUIRE(one.output.shape() == Shape{2, 2});
  CHECK(xt::allclose(one.weights.value(), xt::view(r.weights.value(), xt::all(), 2, xt::all()), 1e-14, 1e-14));
  CHECK(xt::allclose(one.output.value(), xt::view(r.output.value(), xt::all(), 2, xt::all()), 1e-14, 1e-14));
  // And a different step is a different window.
  const LocalAttentionResult<double> other = local_m_attention(*score, q_step, k, v, real, D, 0);
  CHECK_FALSE(xt::allclose(other.weights.value(), one.weights.value()));
}

TEST_CASE("local_m_attention with a window covering the whole input is global attention weighted by the Gaussian") {
  Generator gen(5);
  Attention<double> global(make_score<double>("general", 4, 4, gen, 3));
  const TD q(random_normal<double>({2, 3, 4}, gen)), k(random_normal<double>({2, 5, 4}, gen));
  const TD v(random_normal<double>({2, 5, 2}, gen));
  const Allowed real = Allowed::where(padded());
  const std::size_t D = 5;  // every key is within 5 of every centre: the window is the whole input
  const LocalAttentionResult<double> local = local_m_attention(global.score(), q, k, v, real, D, 0);
  const Array<double> a = global(q, k, v, real).weights.value();
  Array<double> expected = Array<double>::from_shape({2, 3, 5});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 5; ++j)
        expected(b, i, j) = a(b, i, j) * gaussian(j, std::min(double(i), b == 0 ? 4.0 : 2.0), D / 2.0);
  CHECK(xt::allclose(local.weights.value(), expected, 1e-13, 1e-15));
  CHECK(xt::allclose(local.output.value(), matmul(TD(expected), v).value(), 1e-13, 1e-15));
}

TEST_CASE("local_m_attention refuses bad shapes and D = 0, naming itself and the shapes") {
  Generator gen(6);
  const auto score = make_score<double>("dot", 4, 4, gen, 3);
  const TD q(random_normal<double>({2, 3, 4}, gen)), k(random_normal<double>({2, 5, 4}, gen));
  const TD v(random_normal<double>({2, 5, 2}, gen));
  const Allowed real = Allowed::where(padded());
  const std::string wrong_real = error_of([&] { local_m_attention(*score, q, k, v, Allowed::where(Mask{{true, true}}), 1, 0); });
  CHECK(contains(wrong_real, "local_m_attention"));
  CHECK(contains(wrong_real, "(2,5)"));
  const std::string flat_keys = error_of([&] { local_m_attention(*score, q, TD(random_normal<double>({2, 5}, gen)), v, real, 1, 0); });
  CHECK(contains(flat_keys, "local_m_attention"));
  CHECK(contains(flat_keys, "(2,5)"));
  const std::string values = error_of([&] { local_m_attention(*score, q, k, TD(random_normal<double>({2, 4, 2}, gen)), real, 1, 0); });
  CHECK(contains(values, "(2,4,2)"));
  CHECK(contains(error_of([&] { local_m_attention(*score, q, k, v, real, 0, 0); }), "local_m_attention"));
}

TEST_CASE("Seq2Seq with local-m: the step index reaches teacher forcing, single steps and greedy decoding") {
  rnn::Seq2SeqConfig c;
  c.style = rnn::DecoderStyle::Luong, c.score = "general", c.embed = 4, c.encoder_hidden = 3, c.decoder_hidden = 6;
  c.attention_hidden = 5, c.local_window = 1, c.local_alignment = rnn::LocalAlignment::monotonic;
  Generator gen(7), same(7);
  rnn::Seq2Seq model(c, 8, 9, gen);
  rnn::Seq2SeqConfig g = c;
  g.local_window = 0;
  rnn::Seq2Seq global(g, 8, 9, same);
  CHECK(model.parameter_count() == global.parameter_count());  // local-m learns nothing about where to look
  data::EncodedPairs p;
  p.source = {{4, 5, 6, 7, 4, 5}, {5, 4}};
  p.target = {{6, 4, 5}, {7}};
  const data::Seq2SeqBatch b = data::make_seq2seq_batch(p, {0, 1});
  NoGrad no_grad;
  Tensor<float> weights;
  const Array<float> logits = model.forward(b, &weights).value();  // (2, 4, 9): T = 4 steps
  const rnn::Encoded e = model.encoder.forward(b.source);
  auto& luong = dynamic_cast<rnn::LuongDecoder&>(*model.decoder);
  CHECK(luong.needs_position());
  const Array<float> centres = luong.local_positions(e, b.decoder_input.ids).value();
  CHECK(centres == Array<float>{{0, 1, 2, 3}, {0, 1, 2, 2}});  // row 1: 2 characters and <eos>, S - 1 = 2
  // Step by step with the step index, the decoder gives the teacher-forced logits; with the index
  // off by one it does not.
  Tensor<float> state = e.init;
  for (std::size_t t = 0; t < 4; ++t) {
    const IndexArray prev = xt::view(b.decoder_input.ids, xt::all(), t);
    const rnn::Step s = model.decoder->step(e, prev, state, t);
    CHECK(xt::allclose(s.logits.value(), xt::view(logits, xt::all(), t, xt::all()), 1e-5, 1e-6));
    if (t > 0) CHECK_FALSE(xt::allclose(model.decoder->step(e, prev, state, t + 1).logits.value(), s.logits.value()));
    state = s.state;
  }
  CHECK_THROWS_WITH_AS(model.decoder->step(e, xt::view(b.decoder_input.ids, xt::all(), 0), e.init),
                       doctest::Contains("step(e, prev, state, t)"), std::logic_error);
  // Greedy decoding puts weight only within D of min(t, S - 1) at its step t.
  const rnn::Decoded d = model.greedy(b.source, 5);
  for (std::size_t row = 0; row < 2; ++row)
    for (std::size_t t = 0; t < d.attention[row].shape()[0]; ++t)
      for (std::size_t j = 0; j < d.attention[row].shape()[1]; ++j) {
        const double centre = std::min<double>(t, d.attention[row].shape()[1] - 1);
        if (std::abs(double(j) - centre) > 1.0) CHECK(d.attention[row](t, j) == 0.0);
        else CHECK(d.attention[row](t, j) > 0.0);
      }
  // window_centres: each example's centres over its own output steps (target and <eos>).
  const std::vector<std::vector<double>> all = rnn::window_centres(model, p, 1);
  CHECK(all == std::vector<std::vector<double>>{{0, 1, 2, 3}, {0, 1}});
  CHECK_THROWS_AS(rnn::window_centres(global, p), std::logic_error);
  CHECK_THROWS_WITH_AS(rnn::window_centres(model, p, 0), doctest::Contains("window_centres"), std::invalid_argument);
  c.style = rnn::DecoderStyle::Bahdanau;
  CHECK_THROWS_WITH_AS(rnn::Seq2Seq(c, 8, 9, gen), doctest::Contains("local_window"), std::invalid_argument);
}

TEST_CASE("rnn_seq2seq_step: greedy_decode and beam search of width 1 find what Seq2Seq::greedy finds, local-m or global") {
  for (const std::size_t window : {std::size_t(0), std::size_t(1)}) {
    rnn::Seq2SeqConfig c;
    c.style = rnn::DecoderStyle::Luong, c.score = "general", c.embed = 4, c.encoder_hidden = 3, c.decoder_hidden = 6;
    c.attention_hidden = 5, c.local_window = window, c.local_alignment = rnn::LocalAlignment::monotonic;
    Generator gen(8);
    rnn::Seq2Seq model(c, 8, 9, gen);
    data::EncodedPairs p;
    p.source = {{4, 5, 6, 7, 4, 5, 6, 7}, {5, 4}};
    p.target = {{6}, {7}};
    const data::Seq2SeqBatch b = data::make_seq2seq_batch(p, {0, 1});
    const rnn::Decoded greedy = model.greedy(b.source, 6);
    for (std::size_t row = 0; row < 2; ++row) {
      data::Sequence with_eos = p.source[row];
      with_eos.push_back(data::Vocab::eos);  // as the batches append it
      const IndexArray src = xt::adapt(with_eos);
      const StepFn step = rnn_seq2seq_step(model, src);
      CHECK(greedy_decode(step, data::Vocab::bos, data::Vocab::eos, 6) == greedy.ids[row]);
      BeamOptions one;
      one.width = 1, one.max_len = 6;
      CHECK(beam_search(step, data::Vocab::bos, data::Vocab::eos, one).front().tokens == greedy.ids[row]);
    }
  }
  Generator gen(9);
  rnn::Seq2SeqConfig c;
  c.style = rnn::DecoderStyle::Luong, c.score = "dot", c.embed = 4, c.encoder_hidden = 3, c.decoder_hidden = 6;
  rnn::Seq2Seq model(c, 8, 9, gen);
  CHECK(contains(error_of([&] { rnn_seq2seq_step(model, IndexArray::from_shape({0})); }), "rnn_seq2seq_step"));
}
