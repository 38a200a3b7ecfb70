// nn/translate: whole-split translation (batched greedy, the beam sweep) and teacher-forced scoring.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include <xtensor/xview.hpp>
#include "nn/decode.hpp"
#include "nn/data/translation_task.hpp"
#include "nn/positional/positional.hpp"
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

TEST_CASE("beam_translate: beam_sweep's translation of each sentence, scored; width 1 with alpha 0 is greedy") {
  Generator gen(5);
  Seq2SeqTransformer<float> model(tiny(), gen);
  const data::EncodedPairs split = pairs();
  const BeamSweep d = beam_sweep(model, split, 3, {0.0, 1.0});
  for (std::size_t i = 0; i < split.size(); ++i) {
    CHECK(beam_translate(model, split.source[i], 1, 0.0).tokens == d.greedy[i]);
    for (std::size_t w = 1; w <= 3; ++w)
      for (double a : {0.0, 1.0}) CHECK(beam_translate(model, split.source[i], w, a).tokens == d.at(w, a)[i]);
    // The score is beam_search's own, <eos> counted in the length.
    IndexArray src = IndexArray::from_shape({split.source[i].size()});
    std::copy(split.source[i].begin(), split.source[i].end(), src.begin());
    BeamOptions o;
    o.width = 3, o.length_penalty = 1.0, o.max_len = split.source[i].size() + 6;
    const Hypothesis direct = beam_search(seq2seq_step(model, src), kBos, kEos, o).front();
    const Hypothesis h = beam_translate(model, split.source[i], 3, 1.0);
    CHECK(h.score == direct.score);
    CHECK(h.log_prob == direct.log_prob);
    CHECK(h.tokens == before_end(direct.tokens, kEos));
  }
  CHECK(contains(error_of<std::invalid_argument>([&] { beam_translate(model, {}, 2, 1.0); }), "beam_translate: the source"));
  CHECK(contains(error_of<std::invalid_argument>([&] { beam_translate(model, {4, 5}, 0, 1.0); }), "width must be at least 1"));
  CHECK(contains(error_of<std::invalid_argument>([&] { beam_translate(model, {4, 5}, 2, -1.0); }), "alpha must be 0 or more"));
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

TEST_CASE("make_translation_task: splits by distinct source, the length cut, the longer split capped per length") {
  data::TranslationTaskOptions o;
  o.sentences = 600, o.max_train_words = 8, o.per_long_length = 5, o.words_per_class = 10;
  const data::TranslationTask t = data::make_translation_task(o);
  const std::size_t kept = t.pairs.train.size() + t.pairs.validation.size() + t.pairs.test.size();
  CHECK(kept + t.longer.size() <= 600);
  CHECK(t.train.size() == t.pairs.train.size());
  CHECK(t.test.size() == t.pairs.test.size());
  CHECK(t.longer_ids.size() == t.longer.size());
  std::set<std::string> train_sources;
  for (const auto& p : t.pairs.train) {
    train_sources.insert(p.source);
    CHECK(data::word_count(p) <= 8);
  }
  for (const auto* split : {&t.pairs.validation, &t.pairs.test})
    for (const auto& p : *split) CHECK(train_sources.count(p.source) == 0);
  std::map<std::size_t, std::size_t> per_length;
  for (const auto& p : t.longer) {
    CHECK(data::word_count(p) > 8);
    ++per_length[data::word_count(p)];
  }
  for (const auto& [len, n] : per_length) CHECK(n <= 5);
  CHECK(!t.longer.empty());
  // The same options make the same task.
  CHECK(data::make_translation_task(o).pairs.test.front().source == t.pairs.test.front().source);
  o.max_train_words = 0;
  CHECK(contains(error_of<std::invalid_argument>([&] { data::make_translation_task(o); }), "max_train_words"));
  o.max_train_words = 1;
  CHECK(contains(error_of<std::invalid_argument>([&] { data::make_translation_task(o); }), "at most max_train_words = 1"));
}

TEST_CASE("gloss writes each target word with the source word it translates") {
  data::TranslationPair p;
  p.source = "the dog sleeps";
  p.target = "ka vo ru";
  p.alignment = {1, 0, 2};
  CHECK(data::gloss(p) == "ka=dog vo=the ru=sleeps");
  p.alignment = {1, 0, 3};
  CHECK(contains(error_of<std::invalid_argument>([&] { data::gloss(p); }), "aligns to source word 3 of 3"));
}

TEST_CASE("score_heads_as_aligners: each head links every target word at most once; counts follow the weights") {
  Generator gen(8);
  Seq2SeqTransformer<float> model(tiny(), gen);
  const data::EncodedPairs split = pairs();
  std::vector<Mask> truths;
  std::size_t words = 0;
  for (std::size_t i = 0; i < split.size(); ++i) {
    const std::size_t n = split.source[i].size();
    Mask m = Mask::from_shape({split.target[i].size(), n});
    m.fill(false);
    for (std::size_t j = 0; j < split.target[i].size(); ++j) m(j, (j + 1) % n) = true;
    truths.push_back(m);
    words += split.target[i].size();
  }
  const HeadAlignment a = score_heads_as_aligners(model, split, truths, 2);
  REQUIRE(a.at_output.size() == 1);
  REQUIRE(a.at_output[0].size() == 2);
  // By hand for head 0, sentence by sentence, from the weights themselves.
  AlignmentCounts by_hand;
  for (std::size_t i = 0; i < split.size(); ++i) {
    const auto w = cross_attention_weights(model, data::make_seq2seq_batch(split, {i}, false));
    const std::size_t T = split.target[i].size(), S = split.source[i].size();
    Array<float> map = Array<float>::from_shape({T, S});
    for (std::size_t j = 0; j < T; ++j)
      for (std::size_t k = 0; k < S; ++k) map(j, k) = w[0](0, 0, j, k);
    by_hand += count_links(peak_links(map, S), truths[i], truths[i]);
  }
  CHECK(a.at_output[0][0].sure == words);
  CHECK(a.at_output[0][0].hypothesis == words);  // every row peaks on a real source word
  CHECK(a.at_output[0][0].hit_sure == by_hand.hit_sure);
  CHECK(a.at_output[0][0].error_rate() == doctest::Approx(by_hand.error_rate()));
  // best_in_layer: the head of lowest AER, and its AER.
  const auto [best, aer] = a.best_in_layer(0);
  CHECK(aer == doctest::Approx(std::min(a.at_output[0][0].error_rate(), a.at_output[0][1].error_rate())));
  CHECK(a.at_output[0][best].error_rate() == aer);
  CHECK(contains(error_of<std::out_of_range>([&] { a.best_in_layer(1); }), "layer 1 of 1"));
  truths.pop_back();
  CHECK(contains(error_of<std::invalid_argument>([&] { score_heads_as_aligners(model, split, truths); }), "2 truths for 3"));
  truths.push_back(Mask::from_shape({2, 2}));
  CHECK(contains(error_of<std::invalid_argument>([&] { score_heads_as_aligners(model, split, truths); }), "truth 2"));
}

TEST_CASE("score_by_length: BLEU per source length, capped, and the share cut short") {
  const data::EncodedPairs p = pairs();  // sources of 5, 2 and 3 words
  // Right, right, and one word short.
  const std::vector<data::Sequence> hyps = {p.target[0], p.target[1], {7, 7}};
  const LengthScores s = score_by_length(hyps, p, 3);
  REQUIRE(s.by_length.size() == 2);  // 2 words; 3 and 5 share the capped group 3
  CHECK(s.by_length[0].group == 2);
  CHECK(s.by_length[0].sentences == 1);
  CHECK(s.by_length[1].group == 3);
  CHECK(s.by_length[1].sentences == 2);
  CHECK(s.by_length[1].bleu.score > 0.3);  // one of the two right, the other one word short
  CHECK(s.by_length[1].bleu.score < 1.0);
  CHECK(s.cut_short == doctest::Approx(1.0 / 3));
  CHECK(s.mean_words == doctest::Approx(3.0));
  const LengthScores right = score_by_length(p.target, p, 10);
  CHECK(right.cut_short == 0.0);
  CHECK(right.by_length.size() == 3);
  const std::string msg = error_of<std::invalid_argument>([&] { score_by_length({p.target[0]}, p, 3); });
  CHECK(contains(msg, "score_by_length"));
  CHECK(contains(msg, "1 translations for 3 sentences"));
}

TEST_CASE("spread_evenly takes rows i * size / n, all of them when the split has no more") {
  const data::EncodedPairs p = pairs();
  std::vector<std::size_t> rows;
  const data::EncodedPairs two = spread_evenly(p, 2, &rows);
  CHECK(rows == std::vector<std::size_t>{0, 1});  // 0 * 3 / 2, 1 * 3 / 2
  CHECK(two.source == std::vector<data::Sequence>{p.source[0], p.source[1]});
  CHECK(two.target == std::vector<data::Sequence>{p.target[0], p.target[1]});
  const data::EncodedPairs all = spread_evenly(p, 10);
  CHECK(all.source == p.source);
  CHECK(all.target == p.target);
  CHECK(spread_evenly(p, 0).size() == 0);
}

TEST_CASE("sentence_cross_attention: the chosen heads' rows of the target words over the source words") {
  Generator gen(9);
  Seq2SeqTransformer<float> model(tiny(), gen);
  const data::EncodedPairs split = pairs();
  const xt::xarray<double> maps = sentence_cross_attention(model, split, 2, {{0, 1}, {0, 0}});
  CHECK(maps.shape() == std::vector<std::size_t>{2, 3, 3});  // sentence 2: 3 target and 3 source words
  const auto w = cross_attention_weights(model, data::make_seq2seq_batch(split, {2}, false));
  for (std::size_t j = 0; j < 3; ++j)
    for (std::size_t k = 0; k < 3; ++k) {
      CHECK(maps(0, j, k) == double(w[0](0, 1, j, k)));
      CHECK(maps(1, j, k) == double(w[0](0, 0, j, k)));
    }
  CHECK(contains(error_of<std::invalid_argument>([&] { sentence_cross_attention(model, split, 3, {{0, 0}}); }),
                 "row 3 of a split of 3"));
  CHECK(contains(error_of<std::invalid_argument>([&] { sentence_cross_attention(model, split, 0, {{1, 0}}); }),
                 "layer 1, head 0"));
  CHECK(contains(error_of<std::invalid_argument>([&] { sentence_cross_attention(model, split, 0, {{0, 2}}); }),
                 "head 2"));
}

// Every weight of `weights` (B, H, Lq, Lk) is the softmax over the keys of q . k * scale + bias
// made from `p`, head by head (a -inf bias: no weight); returns the scores checked.
static std::size_t check_score_parts(const Array<float>& weights, const ScoreParts<float>& p) {
  const std::size_t B = weights.shape()[0], H = weights.shape()[1], T = weights.shape()[2], S = weights.shape()[3];
  const std::size_t dk = p.queries.shape()[2] / H;
  REQUIRE(p.queries.shape()[1] == T);
  REQUIRE(p.keys.shape()[1] == S);
  std::size_t checked = 0;
  for (std::size_t e = 0; e < B; ++e)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t t = 0; t < T; ++t) {
        std::vector<double> score(S);
        double top = -1e300, total = 0;
        for (std::size_t s_ = 0; s_ < S; ++s_) {
          double qk = 0;
          for (std::size_t c = 0; c < dk; ++c) qk += double(p.queries(e, t, h * dk + c)) * double(p.keys(e, s_, h * dk + c));
          score[s_] = qk * p.scale + double(p.bias(e, h, t, s_));
          top = std::max(top, score[s_]);
        }
        for (double& x : score) total += (x = std::exp(x - top));
        for (std::size_t s_ = 0; s_ < S; ++s_, ++checked)
          CHECK(score[s_] / total == doctest::Approx(double(weights(e, h, t, s_))).epsilon(1e-4));
      }
  return checked;
}

TEST_CASE("cross_attention_with_parts: the weights are the softmax of q.k times the scale plus the bias, head by head") {
  Generator gen(9);
  Seq2SeqTransformer<float> model(tiny(), gen);
  const data::EncodedPairs split = pairs();
  const data::Seq2SeqBatch b = data::make_seq2seq_batch(split, {0, 1, 2}, false);
  const CrossAttention a = cross_attention_with_parts(model, b);
  const auto plain = cross_attention_weights(model, b);
  REQUIRE(a.parts.size() == plain.size());
  for (std::size_t l = 0; l < plain.size(); ++l) {
    CHECK(xt::allclose(a.weights[l], plain[l]));
    CHECK(check_score_parts(plain[l], a.parts[l]) > 0);
  }
}

TEST_CASE("attention_with_parts: encoder, decoder and cross-attention, with each positional method's bias or rotation") {
  const data::EncodedPairs split = pairs();
  const data::Seq2SeqBatch b = data::make_seq2seq_batch(split, {0, 1, 2}, false);
  for (Positional method : {Positional::Sinusoidal, Positional::RelativeBias, Positional::Rotary, Positional::ALiBi}) {
    CAPTURE(positional_name(method));
    Seq2SeqConfig c = tiny();
    c.encoder_layers = c.decoder_layers = 2;
    c.positional = method;
    Generator gen(9);
    Seq2SeqTransformer<float> model(c, gen);
    const TransformerAttention a = attention_with_parts(model, b);
    REQUIRE(a.encoder.size() == 2);
    REQUIRE(a.decoder.size() == 2);
    REQUIRE(a.cross.size() == 2);
    REQUIRE(a.encoder_parts.size() == 2);
    REQUIRE(a.decoder_parts.size() == 2);
    REQUIRE(a.cross_parts.size() == 2);
    const auto cross = cross_attention_weights(model, b);
    for (std::size_t l = 0; l < 2; ++l) {
      CHECK(a.encoder[l].value().shape() == std::vector<std::size_t>{3, 2, 5, 5});  // the longest source: 5 words
      CHECK(a.decoder[l].value().shape() == std::vector<std::size_t>{3, 2, 6, 6});  // <bos> and the 5 target words
      CHECK(xt::allclose(a.cross[l].value(), cross[l]));
      check_score_parts(a.encoder[l].value(), a.encoder_parts[l]);
      check_score_parts(a.decoder[l].value(), a.decoder_parts[l]);
      check_score_parts(a.cross[l].value(), a.cross_parts[l]);
      // The decoder reads only its past: -inf above the diagonal, whatever the method.
      CHECK(std::isinf(a.decoder_parts[l].bias(0, 1, 0, 1)));
      CHECK(std::isfinite(a.decoder_parts[l].bias(0, 1, 1, 0)));
      // T5 and ALiBi put distances in the self-attention's bias; the cross-attention has none.
      const bool biased = method == Positional::RelativeBias || method == Positional::ALiBi;
      CHECK((double(xt::amax(xt::abs(xt::view(a.encoder_parts[l].bias, 0, xt::all(), xt::range(0, 3), xt::range(0, 3))))()) > 0) == biased);
      CHECK(double(xt::amax(xt::abs(xt::view(a.cross_parts[l].bias, 0)))()) == 0.0);
    }
    // Nothing kept after: the next forward copies no queries and keys.
    CHECK(model.encoder.layer(0).self_attn.score_parts().queries.dimension() == 0);
    CHECK(model.decoder.layer(1).self_attn.score_parts().queries.dimension() == 0);
    CHECK(model.decoder.layer(1).multihead_attn.score_parts().queries.dimension() == 0);
  }
}

TEST_CASE("word_range, held_out_in_training, unknown_held_out_words: what the task's table and claim count") {
  data::TranslationTaskOptions o;
  o.sentences = 600, o.max_train_words = 8, o.per_long_length = 5;
  data::TranslationTask t = data::make_translation_task(o);
  const auto [fewest, most] = data::word_range(t.pairs.train);
  CHECK(fewest >= 1);
  CHECK(most <= 8);
  CHECK(data::word_range(t.longer).first > 8);
  CHECK(data::word_range({}) == std::pair<std::size_t, std::size_t>{0, 0});
  CHECK(data::held_out_in_training(t) == 0);
  t.pairs.test.push_back(t.pairs.train[3]);  // a training sentence leaks into the test split
  t.longer.push_back(t.pairs.train[5]);
  CHECK(data::held_out_in_training(t) == 2);
  const std::size_t unknown = data::unknown_held_out_words(t);
  t.test.source.push_back({4, data::Vocab::unk, 5, data::Vocab::unk});
  CHECK(data::unknown_held_out_words(t) == unknown + 2);
}
