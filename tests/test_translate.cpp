// nn/translate: whole-split translation (batched greedy, the beam sweep) and teacher-forced scoring.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "nn/decode.hpp"
#include "nn/translate.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::nn;
using attnlab::testing::contains;
using attnlab::testing::error_of;

namespace {

constexpr Index kEos = data::Vocab::eos, kBos = data::Vocab::bos, kPad = data::Vocab::pad;

Seq2SeqConfig tiny() {
  Seq2SeqConfig c;
  c.src_vocab = 9;
  c.tgt_vocab = 8;
  c.encoder_layers = c.decoder_layers = 1;
  c.layer.d_model = 8;
  c.layer.heads = 2;
  c.layer.d_ff = 16;
  c.pad_id = kPad;
  return c;
}

// Three pairs of different lengths, ids past the specials (0..3).
data::EncodedPairs pairs() {
  data::EncodedPairs p;
  p.source = {{4, 5, 6, 7, 8}, {5, 6}, {8, 7, 4}};
  p.target = {{4, 5, 6, 7, 4}, {6, 7}, {7, 7, 5}};
  return p;
}

}  // namespace

TEST_CASE("before_end keeps the ids before the first end id, all of them without one") {
  CHECK(before_end({4, 5, 2, 6, 2}, 2) == std::vector<Index>{4, 5});
  CHECK(before_end({4, 5}, 2) == std::vector<Index>{4, 5});
  CHECK(before_end({2}, 2).empty());
}

TEST_CASE("translate: batched greedy translations equal greedy_decode one sentence at a time, cut before <eos>") {
  Generator gen(3);
  Seq2SeqTransformer<float> model(tiny(), gen);
  const data::EncodedPairs split = pairs();
  for (std::size_t batch : {1, 2, 256}) {
    const auto out = translate(model, split, 5, batch);
    REQUIRE(out.size() == split.size());
    for (std::size_t i = 0; i < split.size(); ++i) {
      IndexArray src = IndexArray::from_shape({split.source[i].size()});
      std::copy(split.source[i].begin(), split.source[i].end(), src.begin());
      // max_len is the longest source (5) + 5 for every sentence of the split
      const auto one = before_end(greedy_decode(seq2seq_step(model, src), kBos, kEos, 10), kEos);
      CHECK(out[i] == one);
      CHECK(out[i].size() <= 10);
      CHECK(std::find(out[i].begin(), out[i].end(), kEos) == out[i].end());
    }
  }
  const std::string empty = error_of<std::invalid_argument>([&] { translate(model, data::EncodedPairs{}); });
  CHECK(contains(empty, "translate"));
  CHECK(contains(empty, "no sentences"));
  CHECK(contains(error_of<std::invalid_argument>([&] { translate(model, split, 5, 0); }), "got 0"));
}

TEST_CASE("translate: the recurrent model's translations have no <eos> and follow its greedy decoding") {
  Generator gen(4);
  rnn::Seq2SeqConfig c;
  c.embed = c.encoder_hidden = c.decoder_hidden = c.attention_hidden = 8;
  rnn::Seq2Seq model(c, 9, 8, gen);
  const data::EncodedPairs split = pairs();
  const auto out = translate(model, split, 2, 2);
  REQUIRE(out.size() == 3);
  NoGrad no_grad;
  const auto direct = model.greedy(data::make_seq2seq_batch(split, {0, 1, 2}).source, 7).ids;
  for (std::size_t i = 0; i < 3; ++i) CHECK(out[i] == before_end(direct[i], kEos));
}

TEST_CASE("beam_sweep: width 1 with alpha 0 is greedy; every (width, alpha) has one translation per sentence") {
  Generator gen(5);
  Seq2SeqTransformer<float> model(tiny(), gen);
  const data::EncodedPairs split = pairs();
  const BeamSweep d = beam_sweep(model, split, 3, {0.0, 1.0});
  REQUIRE(d.greedy.size() == 3);
  CHECK(d.beam.size() == 6);
  CHECK(d.at(1, 0.0) == d.greedy);
  for (const auto& [key, seqs] : d.beam) CHECK(seqs.size() == 3);
  const std::string missing = error_of<std::out_of_range>([&] { d.at(4, 0.0); });
  CHECK(contains(missing, "width 4"));
  CHECK(contains(error_of<std::invalid_argument>([&] { beam_sweep(model, split, 0, {0.0}); }), "beam_sweep"));
  CHECK(contains(error_of<std::invalid_argument>([&] { beam_sweep(model, split, 2, {}); }), "alpha"));
}

TEST_CASE("teacher_forced_scores: the nll is the mean cross-entropy per real token, batch size does not matter") {
  Generator gen(6);
  Seq2SeqTransformer<float> model(tiny(), gen);
  const data::EncodedPairs split = pairs();
  const TokenScores a = teacher_forced_scores(model, split, 0.0, 256), b = teacher_forced_scores(model, split, 0.1, 1);
  CHECK(a.tokens == 5 + 1 + 2 + 1 + 3 + 1);  // every target and its <eos>
  CHECK(b.tokens == a.tokens);
  CHECK(a.loss == doctest::Approx(a.nll));
  CHECK(b.nll == doctest::Approx(a.nll).epsilon(1e-5));
  CHECK(b.loss != doctest::Approx(b.nll));
  CHECK(a.accuracy >= 0.0);
  CHECK(a.accuracy <= 1.0);
  CHECK(a.confidence > 1.0 / 8 - 1e-6);  // the argmax's probability is at least uniform's
  // The same number computed directly over the whole split.
  NoGrad no_grad;
  const data::Seq2SeqBatch all = data::make_seq2seq_batch(split, {0, 1, 2}, false);
  CrossEntropyOptions ce;
  ce.ignore_index = kPad;
  const double direct = cross_entropy(model.forward(all.source.ids, all.decoder_input.ids, all.source.allowed(),
                                                    all.decoder_input.allowed()),
                                      all.decoder_target.ids, ce)
                            .item();
  CHECK(a.nll == doctest::Approx(direct).epsilon(1e-5));
  CHECK(contains(error_of<std::invalid_argument>([&] { teacher_forced_scores(model, data::EncodedPairs{}); }), "teacher_forced_scores"));
}
