// lessons/kit/bert: what lessons 14 and 15 share about their BERT, on a tiny corpus and model:
// the pretraining recipe and one phase of it, a sequence's attention, the topic probabilities and
// frozen features, the likeliest characters, the figures, and bad input named.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <xtensor/xmath.hpp>
#include <xtensor/xreducer.hpp>
#include <xtensor/xview.hpp>

#include "lessons/kit/bert.hpp"
#include "lessons/story/lesson.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {
data::ClozeCorpus tiny_corpus() {
  data::FortuneSplits s;
  for (int i = 0; i < 12; ++i) {
    s.train.push_back({"the cat sat on the mat", "x"});
    s.train.push_back({"a dog ran to a log", "y"});
  }
  s.validation = {{"the cat ran", "x"}, {"a dog sat", "y"}};
  s.test = {{"the mat", "x"}, {"a log", "y"}};
  return data::cloze_corpus(s);
}

bert::ModelSettings tiny_settings() {
  // d_model, heads, layers, d_ff, short windows, long windows, peak lr, held-out windows
  return {16, 2, 2, 32, {8, 8, 32, 2}, {16, 8, 16, 1}, 5e-3, 4};
}

nn::MaskedLM<float> tiny_model(const data::ClozeCorpus& c) {
  Generator gen(3);
  return nn::MaskedLM<float>(bert::config(c, tiny_settings()), gen);
}
}  // namespace

TEST_CASE("pretraining_recipe and phase_steps: the phase's epochs, batch and label; AdamW as the lessons say") {
  attnlab::testing::TempDir d;
  LessonArgs args;
  args.out = d / "lesson";
  args.seed = 9;
  Lesson lesson({"99_test", "A test lesson", "Recipes.", ""}, args);  // the recipe's batch order is the run's seed
  const bert::ModelSettings r = tiny_settings();
  const Recipe p = bert::pretraining_recipe(r, r.short_windows);
  CHECK(p.epochs == 2);
  CHECK(p.batch == 8);
  CHECK(p.label == "pretraining, 7 characters");
  CHECK(p.lr == doctest::Approx(5e-3));
  CHECK(p.weight_decay == doctest::Approx(0.01));
  CHECK(p.beta2 == doctest::Approx(0.98));
  CHECK(p.decay == Decay::cosine);
  CHECK(p.seed == 9);
  CHECK(bert::phase_steps(r.short_windows) == 8);  // 32 windows in batches of 8, twice
  CHECK(bert::phase_steps({16, 5, 11, 3}) == 9);   // ceil(11 / 5) = 3 a epoch
}

TEST_CASE("fine_tune_recipe and topic_splits: the settings' recipe, more epochs for a small set; nested labelled sets") {
  attnlab::testing::TempDir d;
  LessonArgs args;
  args.out = d / "lesson";
  args.seed = 9;
  Lesson lesson({"99_test", "A test lesson", "Recipes.", ""}, args);
  bert::FineTuneSettings r{tiny_settings(), 3, 4, 1e-3, 2, {1}, 10};
  const Recipe big = bert::fine_tune_recipe(r, 40);  // 10 steps an epoch: the settings' 3 epochs
  CHECK(big.epochs == 3);
  CHECK(big.batch == 4);
  CHECK(big.lr == doctest::Approx(1e-3));
  CHECK(big.weight_decay == doctest::Approx(0.01));
  CHECK(big.warmup == doctest::Approx(0.1));
  CHECK(big.seed == 9 + 31);
  CHECK(bert::fine_tune_recipe(r, 6).epochs == 5);  // 2 steps an epoch: 5 epochs for 10 steps
  CHECK_THROWS_WITH_AS(bert::fine_tune_recipe(r, 0), doctest::Contains("fine_tune_recipe: 0 labelled entries"),
                       std::invalid_argument);
  const data::ClozeCorpus c = tiny_corpus();
  const bert::TopicSplits one = bert::topic_splits(c, {"x", "y"}, 1, 5), three = bert::topic_splits(c, {"x", "y"}, 3, 5);
  CHECK(one.all_train.size() == 24);  // 12 entries of each topic
  CHECK(one.train.size() == 2);
  CHECK(three.train.size() == 6);
  CHECK(one.validation.size() == 2);
  CHECK(one.test.size() == 2);
  CHECK(std::count(three.train.labels.begin(), three.train.labels.end(), Index(0)) == 3);  // 3 of each topic
  CHECK(std::count(three.train.labels.begin(), three.train.labels.end(), Index(1)) == 3);
  CHECK_THROWS_AS(bert::topic_splits(c, {"x", "y"}, 13, 5), std::invalid_argument);  // more than a topic has
}

TEST_CASE("head_first_recipe: a constant rate for the classifier alone, enough epochs for its steps; new_model's pooling") {
  attnlab::testing::TempDir d;
  LessonArgs args;
  args.out = d / "lesson";
  args.seed = 9;
  Lesson lesson({"99_test", "A test lesson", "Recipes.", ""}, args);
  bert::FineTuneSettings r{tiny_settings(), 3, 4, 1e-3, 2, {1}, 10, 25, 2e-2};
  const Recipe h = bert::head_first_recipe(r, 40);  // 10 steps an epoch: 3 epochs for 25 steps
  CHECK(h.epochs == 3);
  CHECK(h.batch == 4);
  CHECK(h.lr == doctest::Approx(2e-2));
  CHECK(h.decay == Decay::constant);
  CHECK(h.warmup == 0.0);
  CHECK(h.seed == 9 + 31);  // the fine-tuning's batch order
  CHECK(bert::head_first_recipe(r, 400).epochs == 1);
  CHECK_THROWS_WITH_AS(bert::head_first_recipe(r, 0), doctest::Contains("head_first_recipe: 0 labelled entries"),
                       std::invalid_argument);
  r.head_first_steps = 0;
  CHECK_THROWS_WITH_AS(bert::head_first_recipe(r, 40), doctest::Contains("for 0 steps"), std::invalid_argument);
  // The same draw whatever the classifier reads: a checkpoint of one loads into the other.
  const data::ClozeCorpus c = tiny_corpus();
  const auto first = bert::new_model(c, tiny_settings()), mean = bert::new_model(c, tiny_settings(), nn::Pooling::Mean);
  CHECK(first->model.config().pooling == nn::Pooling::First);
  CHECK(mean->model.config().pooling == nn::Pooling::Mean);
  const auto a = first->named_parameters(), b = mean->named_parameters();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].first == b[i].first);
    CHECK(xt::amax(xt::abs(a[i].second.value() - b[i].second.value()))() == 0.0f);
  }
}

TEST_CASE("compare_sweeps: counts ahead, beyond chance and over either recipe's scratch; mean gap and changes; mismatches named") {
  const auto point = [](std::size_t n, double pretrained, double scratch, double noise) {
    bert::LabelPoint p;
    p.per_topic = n, p.pretrained = pretrained, p.scratch = scratch;
    p.pair.gap = pretrained - scratch, p.pair.noise = noise;
    return p;
  };
  const std::vector<bert::LabelPoint> plain = {point(5, 0.30, 0.40, 0.02), point(50, 0.50, 0.50, 0.02)};
  const std::vector<bert::LabelPoint> changed = {point(5, 0.38, 0.32, 0.02), point(50, 0.56, 0.54, 0.02)};
  const bert::SweepComparison k = bert::compare_sweeps(changed, plain);
  CHECK(k.ahead == 2);
  CHECK(k.beyond_chance == 1);      // 6 points against twice 2; 2 points is not
  CHECK(k.over_best_scratch == 1);  // 0.38 is below plain's 0.40; 0.56 is above both 0.50 and 0.54
  CHECK(k.mean_gap == doctest::Approx(0.04));
  CHECK(k.pretrained_change == doctest::Approx(0.07));
  CHECK(k.scratch_change == doctest::Approx(-0.02));
  CHECK_THROWS_WITH_AS(bert::compare_sweeps(changed, {plain[0]}), doctest::Contains("compare_sweeps: 2 and 1 label counts"),
                       std::invalid_argument);
  CHECK_THROWS_AS(bert::compare_sweeps({changed[1], changed[0]}, plain), std::invalid_argument);  // counts in another order
  CHECK_THROWS_AS(bert::compare_sweeps({}, {}), std::invalid_argument);
}

TEST_CASE("example_entry: the first entry of 24 to 40 tokens predicted right, cut to the context; else the first") {
  data::TopicSet s;
  s.entries = {std::vector<Index>(10, 3), std::vector<Index>(30, 4), std::vector<Index>(30, 5)};
  s.labels = IndexArray{0, 1, 2};
  const IndexArray all_right = {0, 1, 2}, second_wrong = {0, 0, 2}, all_wrong = {1, 0, 0};
  CHECK(bert::example_entry(s, all_right, 64).row == 1);
  CHECK(bert::example_entry(s, second_wrong, 64).row == 2);
  const bert::ExampleEntry none = bert::example_entry(s, all_wrong, 8);
  CHECK(none.row == 0);
  CHECK(none.ids.size() == 8);  // cut to the context
  CHECK_THROWS_WITH_AS(bert::example_entry(s, IndexArray{0, 1}, 64), doctest::Contains("example_entry: 3 entries and 2 predictions"),
                       std::invalid_argument);
}

TEST_CASE("pretrain_phase: the phase's steps, a falling masked-character loss; a bad phase named") {
  attnlab::testing::TempDir d;
  LessonArgs args;
  args.out = d / "lesson";
  Lesson lesson({"99_test", "A test lesson", "Pretrains a tiny BERT.", ""}, args);  // train() writes into a lesson
  const data::ClozeCorpus c = tiny_corpus();
  nn::MaskedLM<float> m = tiny_model(c);
  const bert::ModelSettings r = tiny_settings();
  bert::Phase ph = r.short_windows;
  ph.epochs = 6;
  Generator windows(1), masks(2);
  const History h = bert::pretrain_phase(m, c, ph, bert::pretraining_recipe(r, ph), windows, masks);
  CHECK(h.steps == std::size_t(bert::phase_steps(ph)));
  REQUIRE(h.epoch_loss.size() == 6);
  CHECK(h.epoch_loss.back() < h.epoch_loss.front() - 0.3);  // two sentences over and over: it learns them
  bert::Phase bad = ph;
  bad.context = 1;
  CHECK_THROWS_WITH_AS(bert::pretrain_phase(m, c, bad, bert::pretraining_recipe(r, ph), windows, masks),
                       doctest::Contains("pretrain_phase: a phase of 32 windows in batches of 8 with context 1"),
                       std::invalid_argument);
}

TEST_CASE("attention_on and attention_input: every layer's heads, rows summing to 1, tokens as shown") {
  const data::ClozeCorpus c = tiny_corpus();
  nn::MaskedLM<float> m = tiny_model(c);
  const std::vector<Index> ids = data::entry_ids(c, "the cat");
  const auto layers = bert::attention_on(m.model, ids);
  REQUIRE(layers.size() == 2);
  CHECK(layers[0].shape() == std::vector<std::size_t>{2, ids.size(), ids.size()});
  for (std::size_t i = 0; i < ids.size(); ++i) CHECK(xt::sum(xt::view(layers[1], 1, i))() == doctest::Approx(1.0));
  const AttentionInput in = bert::attention_input(m.model, c.vocab, ids, "\"the cat\"");
  CHECK(in.layers == std::vector<std::string>{"layer 1", "layer 2"});
  REQUIRE(in.queries.size() == ids.size());
  CHECK(in.queries.front() == "CLS");
  CHECK(in.queries.back() == "EOS");
  CHECK(xt::allclose(in.heads[1][0], xt::view(layers[1], 0)));
  CHECK_THROWS_WITH_AS(bert::attention_on(m.model, {}), doctest::Contains("attention_on: an empty sequence"),
                       std::invalid_argument);
  CHECK_NOTHROW(bert::head_grid_figure(in, "A tiny BERT"));
  CHECK_THROWS_WITH_AS(bert::head_grid_figure(AttentionInput{"empty", {}, {}, {}, {}}, "none"),
                       doctest::Contains("head_grid_figure: 'empty' has no head"), std::invalid_argument);
}

TEST_CASE("topic_probabilities and encoder_features: one row an entry; [CLS]'s vector or the mean of the tokens'") {
  const data::ClozeCorpus c = tiny_corpus();
  nn::MaskedLM<float> m = tiny_model(c);
  const data::TopicSet s = data::topic_set(c, c.split.train, {"x", "y"}, 3);
  const Array<float> p = bert::topic_probabilities(m.model, s, 16);
  REQUIRE(p.shape() == std::vector<std::size_t>{6, 5});  // five classes: the lessons' topics
  for (std::size_t i = 0; i < 6; ++i) CHECK(xt::sum(xt::view(p, i))() == doctest::Approx(1.0));
  const Array<float> cls = bert::encoder_features(m.model, s, 16, false), mean = bert::encoder_features(m.model, s, 16, true);
  REQUIRE(cls.shape() == std::vector<std::size_t>{6, 16});
  REQUIRE(mean.shape() == cls.shape());
  // By hand for entry 1: [CLS]'s final vector, and the mean over its real tokens.
  const data::TopicBatch b = data::topic_batch(s, {1}, 16, nullptr);
  const Array<float> h = m.model.features(b.ids, b.real).value();
  CHECK(xt::allclose(xt::view(cls, 1), xt::view(h, 0, 0), 1e-4, 1e-5));
  CHECK(xt::allclose(xt::view(mean, 1), xt::mean(xt::view(h, 0), {0}), 1e-4, 1e-5));  // one entry: no padding
  CHECK_FALSE(xt::allclose(xt::view(cls, 1), xt::view(mean, 1)));
}

TEST_CASE("likeliest: the characters by log-probability, never a special; bad rows and counts named") {
  const data::ClozeIds ids{/*cls=*/7, /*mask=*/6, /*first=*/2, /*end=*/6};
  Array<float> logp = {{-0.1f, -0.2f, -3.0f, -1.0f, -2.0f, -0.5f, -0.01f, -0.01f}};
  CHECK(bert::likeliest(logp, 0, ids, 3) == std::vector<Index>{5, 3, 4});  // ids 0, 1, 6, 7 are not characters
  CHECK(bert::likeliest(logp, 0, ids, 4).back() == 2);
  CHECK_THROWS_WITH_AS(bert::likeliest(logp, 1, ids, 3), doctest::Contains("likeliest: row 1"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(bert::likeliest(logp, 0, ids, 5), doctest::Contains("the 5 likeliest of the characters [2, 6)"),
                       std::invalid_argument);
}

TEST_CASE("masking_figure and pretraining_figure: drawn from consistent input, bad input named") {
  const data::ClozeCorpus c = tiny_corpus();
  const std::vector<Index> ids = data::entry_ids(c, "the cat sat");
  Generator gen(4);
  const data::MaskedTokens masked = data::mask_tokens(ids, c.ids.mask, c.ids.first, c.ids.end, gen);
  CHECK_NOTHROW(bert::masking_figure(c.vocab, {{ids, masked}}, 5));
  CHECK_THROWS_WITH_AS(bert::masking_figure(c.vocab, {{ids, masked}}, 0), doctest::Contains("masking_figure: rows of 0"),
                       std::invalid_argument);
  data::MaskedTokens cut = masked;
  cut.choice.pop_back();
  CHECK_THROWS_WITH_AS(bert::masking_figure(c.vocab, {{ids, cut}}, 5), doctest::Contains("example 0 has 13 tokens"),
                       std::invalid_argument);
  History h;
  h.loss = {3.0, 2.5, 2.0, 1.8};
  h.steps = 4;
  h.epoch_loss = {2.75, 1.9};
  h.validation = {{"loss", {2.8, 2.0}}, {"accuracy", {0.2, 0.3}}, {"loss_short", {2.7, 2.1}}, {"accuracy_short", {0.2, 0.3}}};
  h.steps_per_epoch = 2;
  const bert::ModelSettings r = tiny_settings();
  CHECK_NOTHROW(bert::pretraining_figure(h, 1, 2, r, {3.3, 0.16, {}, {}}, {1.8, 0.43, {}, {}}));
  h.validation[1].second = {0.2};  // one accuracy for two epochs
  CHECK_THROWS_WITH_AS(bert::pretraining_figure(h, 1, 2, r, {}, {}), doctest::Contains("pretraining_figure: validation scores of 2, 1"),
                       std::invalid_argument);
}

TEST_CASE("cls_attention_by_kind: [CLS]'s weight by kind of token sums to 1 a layer; the shares of the kinds too") {
  const data::ClozeCorpus c = tiny_corpus();
  nn::MaskedLM<float> m = tiny_model(c);
  const data::TopicSet s = data::topic_set(c, c.split.test, {"x", "y"});
  const bert::ClsMass mass = bert::cls_attention_by_kind(m.model, c, s, 6);  // "the mat" cut to [CLS] t h e ' ' m
  REQUIRE(mass.by_layer.size() == 2);
  for (const auto& layer : mass.by_layer) CHECK(layer[0] + layer[1] + layer[2] == doctest::Approx(1.0));
  CHECK(mass.share[0] + mass.share[1] + mass.share[2] == doctest::Approx(1.0));
  // Both cut to 6: [CLS] t h e ' ' m and [CLS] a ' ' l o g (1 special, 1 space, 4 letters each; <eos> cut off).
  CHECK(mass.share[0] == doctest::Approx(1.0 / 6));
  CHECK(mass.share[1] == doctest::Approx(1.0 / 6));
  CHECK(mass.share[2] == doctest::Approx(4.0 / 6));
  CHECK_THROWS_WITH_AS(bert::cls_attention_by_kind(m.model, c, data::TopicSet{}, 6),
                       doctest::Contains("cls_attention_by_kind: an empty set"), std::invalid_argument);
  const AttentionInput in = bert::attention_input(m.model, c.vocab, s.entries[0], "the mat");
  CHECK_NOTHROW(bert::cls_attention_figure(in, "Where [CLS] looks"));
  CHECK_THROWS_WITH_AS(bert::cls_attention_figure(AttentionInput{"none", {}, {}, {}, {}}, "t"),
                       doctest::Contains("cls_attention_figure: 'none'"), std::invalid_argument);
}

TEST_CASE("finetuning_figure and labels_figure: drawn from consistent curves, mismatched ones named") {
  History a, b;
  a.loss = b.loss = {1.6, 1.4, 1.2, 1.0};
  a.steps = b.steps = 4, a.steps_per_epoch = b.steps_per_epoch = 2;
  a.validation = {{"accuracy", {0.3, 0.5}}};
  b.validation = {{"accuracy", {0.35, 0.45}}};
  CHECK_NOTHROW(bert::finetuning_figure(a, b, 0.6, 5));
  b.validation = {{"accuracy", {0.35}}};
  CHECK_THROWS_WITH_AS(bert::finetuning_figure(a, b, 0.6, 5), doctest::Contains("finetuning_figure: validation accuracies of 2 and 1"),
                       std::invalid_argument);
  bert::LabelCurves c{{5, 10, 100}, {0.3, 0.4, 0.7}, {0.35, 0.45, 0.72}, {0.45, 0.5, 0.64}, {-0.05, -0.05, -0.02}, {0.03, 0.03, 0.025}};
  CHECK_NOTHROW(bert::labels_figure(c, 5));
  c.gap.pop_back();
  CHECK_THROWS_WITH_AS(bert::labels_figure(c, 5), doctest::Contains("labels_figure: 3 label counts"), std::invalid_argument);
}
