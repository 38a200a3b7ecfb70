// lessons/kit/translation_setup: the plan lessons 08 and 09 share (full and --quick, recorded in
// the config), the task's options seeded from the run's seed, the Transformer's configuration,
// recipe and first draw, the GRU trained on the same batches, and the errors that name the function.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <stdexcept>

#include "lessons/kit/translation_setup.hpp"
#include "lessons/story/lesson.hpp"
#include "nn/translation_scores.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;
using attnlab::testing::contains;
using attnlab::testing::error_of;

namespace {

// A plan far smaller than a lesson's, for a test that trains.
TranslationPlan tiny_plan() {
  TranslationPlan p;
  p.sentences = 400, p.per_long_length = 4, p.words_per_class = 6;
  p.d_model = 16, p.heads = 2, p.d_ff = 32, p.layers = 1, p.gru_hidden = 16;
  p.epochs = 2, p.batch = 32, p.warmup = 20;
  return p;
}

}  // namespace

TEST_CASE("translation_plan: the quick plan, written into the config; options seeded from the run's seed") {
  attnlab::testing::TempDir d;
  LessonArgs args;
  args.out = d / "lesson", args.quick = true, args.seed = 11;
  Lesson lesson({"99_test", "A test lesson", "Plans a translation.", ""}, args);
  const TranslationPlan p = translation_plan();
  CHECK(p.sentences == 4000);
  CHECK(p.words_per_class == 10);
  CHECK(p.epochs == 8);
  CHECK(p.batch == 32);
  CHECK(p.warmup == 300);
  const data::TranslationTaskOptions o = translation_task_options(p);
  CHECK(o.sentences == 4000);
  CHECK(o.max_train_words == kMaxTrainWords);
  CHECK(o.sample_seed == 12);
  CHECK(o.split_seed == 13);
  TranslationPlan none = p;
  none.sentences = 0;
  CHECK(contains(error_of<std::invalid_argument>([&] { translation_task_options(none); }),
                 "translation_task_options: the plan generates no sentences"));

  // The Transformer: the plan's sizes and the task's vocabularies, positions as asked.
  const data::TranslationTask task = data::make_translation_task(translation_task_options(tiny_plan()));
  const nn::Seq2SeqConfig c = translation_transformer_config(p, task, nn::Positional::ALiBi);
  CHECK(c.src_vocab == task.source_vocab.size());
  CHECK(c.tgt_vocab == task.target_vocab.size());
  CHECK(c.encoder_layers == 2);
  CHECK(c.layer.d_model == 64);
  CHECK(c.positional == nn::Positional::ALiBi);
  CHECK(translation_transformer_config(p, task).positional == nn::Positional::Sinusoidal);

  // The Noam recipe: its peak d^-1/2 warmup^-1/2, decaying as 1/sqrt(step).
  const Recipe r = translation_transformer_recipe(p);
  CHECK(r.lr == doctest::Approx(1.0 / std::sqrt(64.0 * 300.0)));
  CHECK(r.decay == Decay::inverse_sqrt);
  CHECK(r.warmup == 300.0);
  CHECK(r.seed == 15);

  // Every Transformer starts from the same first draw: two of one plan are the same model.
  const auto a = translation_transformer(tiny_plan(), task), b = translation_transformer(tiny_plan(), task);
  CHECK(a->src_embed.weight.value() == b->src_embed.weight.value());
  lesson.finish();
}

TEST_CASE("train_translation_transformer and train_translation_gru: held-out scores, the same batches, errors") {
  attnlab::testing::TempDir d;
  LessonArgs args;
  args.out = d / "lesson", args.seed = 3;
  Lesson lesson({"99_test", "A test lesson", "Trains translators.", ""}, args);
  const TranslationPlan p = tiny_plan();
  const data::TranslationTask task = data::make_translation_task(translation_task_options(p));
  const auto m = translation_transformer(p, task, nn::Positional::RelativeBias);
  Recipe r = translation_transformer_recipe(p);
  r.checkpoint = "";
  const History h = train_translation_transformer(*m, task, r);
  // After every epoch: the smoothed loss, the plain cross-entropy, and greedy BLEU of the longer split.
  CHECK(h.validation_of("bleu_longer").size() == 2);
  CHECK(h.validation_of("bleu_longer").back() == doctest::Approx(nn::bleu_of(nn::translate(*m, task.longer_ids),
                                                                             task.longer_ids)));
  CHECK(h.validation_of("loss").back() > h.validation_of("nll").back());  // the smoothing's entropy

  std::unique_ptr<nn::rnn::Seq2Seq> gru;
  History gh;
  const Translator t = train_translation_gru(p, task, "additive", "GRU + attention", "gru_attention", gru, gh);
  CHECK(t.history == &gh);
  CHECK(t.parameters == gru->parameter_count());
  CHECK(gh.steps == h.steps);  // the Transformer's batches, the same number of them
  CHECK(t.longer == nn::translate(*gru, task.longer_ids));

  data::TranslationTask empty = task;
  empty.train = {};
  CHECK(contains(error_of<std::invalid_argument>(
                     [&] { train_translation_gru(p, empty, "none", "GRU", "gru", gru, gh); }),
                 "train_translation_gru 'GRU': the training split is empty"));

  save_translation_bleu_by_length({bleu_by_length(t, task, kLongestBucket)}, "BLEU by length", "by_length", "BLEU.");
  CHECK(std::ifstream(lesson.path("by_length.png")).good());
  lesson.finish();
}
