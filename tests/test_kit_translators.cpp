// lessons/kit/translators: the translation Transformer trained by a recipe (its held-out scores
// after every epoch), translators' translations of both held-out splits, BLEU by length, the
// beam sweep's table and figures, and a sentence beside its translations.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "lessons/kit/translators.hpp"
#include "lessons/story/lesson.hpp"
#include "nn/translation_scores.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;
using attnlab::testing::contains;
using attnlab::testing::error_of;

namespace {

data::TranslationTask small_task() {
  data::TranslationTaskOptions o;
  o.sentences = 400, o.max_train_words = 7, o.per_long_length = 4, o.words_per_class = 6;
  return data::make_translation_task(o);
}

nn::Seq2SeqConfig tiny(const data::TranslationTask& t) {
  nn::Seq2SeqConfig c;
  c.src_vocab = t.source_vocab.size(), c.tgt_vocab = t.target_vocab.size();
  c.encoder_layers = c.decoder_layers = 1;
  c.layer.d_model = 16, c.layer.heads = 2, c.layer.d_ff = 32;
  c.pad_id = data::Vocab::pad;
  return c;
}

Recipe recipe() {
  Recipe r;
  r.label = "tiny", r.epochs = 3, r.batch = 32, r.lr = 3e-3, r.seed = 4, r.decay = Decay::constant;
  return r;
}

}  // namespace

TEST_CASE("train_translation: held-out loss and nll after every epoch, then the recipe's own scores; it learns") {
  attnlab::testing::TempDir d;
  LessonArgs args;
  args.out = d / "lesson";
  Lesson lesson({"99_test", "A test lesson", "Trains a translator.", ""}, args);  // train() writes into a lesson
  const data::TranslationTask task = small_task();
  Generator gen(3);
  nn::Seq2SeqTransformer<float> model(tiny(task), gen);
  const double before = nn::teacher_forced_scores(model, task.validation).nll;
  Recipe r = recipe();
  int extra_calls = 0;
  r.validate = [&] { return Scores{{"calls", double(++extra_calls)}}; };
  const History h = train_translation(model, task, r, 0.1);
  REQUIRE(h.validation.size() == 3);
  CHECK(h.validation[0].first == "loss");
  CHECK(h.validation[1].first == "nll");
  CHECK(h.validation[2].first == "calls");
  CHECK(h.validation_of("calls") == std::vector<double>{1, 2, 3});
  const nn::TokenScores now = nn::teacher_forced_scores(model, task.validation, 0.1);
  CHECK(h.validation_of("nll").back() == doctest::Approx(now.nll));
  CHECK(h.validation_of("loss").back() == doctest::Approx(now.loss));
  CHECK(now.loss > now.nll);  // smoothed: the loss carries the smoothing's entropy
  CHECK(now.nll < before);

  // The same recipe, the same first draw: the same run.
  Generator gen2(3);
  nn::Seq2SeqTransformer<float> again(tiny(task), gen2);
  r.validate = nullptr;
  const History h2 = train_translation(again, task, r, 0.1);
  CHECK(h2.loss == h.loss);
  CHECK(h2.validation.size() == 2);

  data::EncodedSplits empty = task;
  empty.validation = {};
  CHECK(contains(error_of<std::invalid_argument>([&] { train_translation(again, empty, r, 0.1); }),
                 "train_translation 'tiny': the validation split is empty"));
  CHECK(contains(error_of<std::invalid_argument>([&] { train_translation(again, task, r, 1.0); }),
                 "label smoothing must be in [0, 1), got 1"));

  // The translator of the trained model: greedy translations of both held-out splits.
  const Translator tr = translator("Transformer", "transformer", model, h, task);
  CHECK(tr.parameters == model.parameter_count());
  CHECK(tr.history == &h);
  CHECK(tr.test == nn::translate(model, task.test));
  CHECK(tr.longer == nn::translate(model, task.longer_ids));

  // BLEU by length: the test split's lengths, then the longer split's, capped at the longest group.
  const plots::Series s = bleu_by_length(tr, task, 9);
  const auto on_test = nn::score_by_length(tr.test, task.test, 9).by_length;
  const auto on_longer = nn::score_by_length(tr.longer, task.longer_ids, 9).by_length;
  REQUIRE(s.x.size() == on_test.size() + on_longer.size());
  CHECK(s.name == "Transformer");
  CHECK(s.x(0) == double(on_test.front().group));
  CHECK(s.y(0) == on_test.front().bleu.score);
  CHECK(s.x(s.x.size() - 1) == 9.0);
  CHECK(s.y(s.y.size() - 1) == on_longer.back().bleu.score);

  // The beam sweep's table: greedy, then a row per width; a column per (split, alpha).
  const data::EncodedPairs few = nn::spread_evenly(task.test, 4);
  const nn::BeamSweep sweep = nn::beam_sweep(model, few, 2, {0.0, 1.0});
  const std::vector<SweptSplit> swept = {{"test", &sweep, &few}};
  const auto rows = beam_sweep_rows(swept, 2, {0.0, 1.0});
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == std::vector<std::string>{"greedy", fixed(nn::bleu_of(sweep.greedy, few), 4),
                                            fixed(nn::bleu_of(sweep.greedy, few), 4)});
  CHECK(rows[2][0] == "beam 2");
  CHECK(rows[2][2] == fixed(nn::bleu_of(sweep.at(2, 1.0), few), 4));
  save_beam_sweep_figures(swept, 2, {0.0, 1.0}, "BLEU by width.", "Length by width.");
  save_bleu_by_length({s}, 7.5, {"BLEU by length", "source words", "corpus BLEU"}, "by_length", "BLEU by length.");
  for (const char* f : {"beam_width.png", "beam_length.png", "by_length.png"})
    CHECK(std::ifstream(lesson.path(f)).good());
  CHECK_THROWS_AS(save_beam_sweep_figures(swept, 3, {0.0}, "", ""), std::out_of_range);  // width 3 was not swept
  lesson.finish();
}

TEST_CASE("compared_translations: labels padded to 11 columns, (right) where the output is the reference") {
  data::TranslationPair p;
  p.source = "the dog runs", p.target = "dag ru";
  CHECK(compared_translations(p, {{"greedy", "dag ru"}, {"beam 4", "dag"}}) ==
        "source     the dog runs\nreference  dag ru\ngreedy     dag ru   (right)\nbeam 4     dag\n");
  CHECK(compared_translations(p, {{"a label of 12", "x"}}) ==
        "source     the dog runs\nreference  dag ru\na label of 12 x\n");
}
