// lessons/kit/encoder_tagger: an encoder tagger trained by a recipe, its tags (with heads switched
// off), where its heads look, what each head is worth, and its attention as the explorer's input;
// checked against the model itself, and bad input named.
#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>

#include <xtensor/xview.hpp>

#include "core/error.hpp"
#include "io/files.hpp"
#include "lessons/kit/encoder_tagger.hpp"
#include "lessons/kit/tagging.hpp"
#include "lessons/story/lesson.hpp"
#include "lessons/story/stats.hpp"
#include "lessons/story/text.hpp"
#include "nn/data/shift_tags.hpp"
#include "nn/metrics.hpp"
#include "plots/error.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {
nn::EncoderModel<float> small_tagger(std::size_t vocab, nn::Pooling pooling = nn::Pooling::None) {
  nn::EncoderModelConfig c;
  c.vocab = c.num_classes = vocab, c.num_layers = 2, c.max_length = 8, c.pooling = pooling;
  c.layer = nn::LayerConfig{16, 2, 32, 0.0, true, nn::Activation::ReLU, 1e-5};
  Generator gen(4);
  return nn::EncoderModel<float>(c, gen);
}

// A lesson's arguments that write into d/lesson: train() and metric() write into a lesson.
LessonArgs args_in(const attnlab::testing::TempDir& d) {
  LessonArgs args;
  args.out = d / "lesson";
  return args;
}

// The tags by hand: argmax of the logits, gates set directly on the attention layers.
IndexArray tags_by_hand(nn::EncoderModel<float>& m, const IndexArray& inputs) {
  NoGrad no_grad;
  m.eval();
  return nn::argmax_last(m.forward(inputs).value());
}
}  // namespace

TEST_CASE("encoder tagger: trained by a recipe, its tags and accuracy, where its heads look, what each is worth") {
  attnlab::testing::TempDir d;
  Lesson lesson({"99_test", "A test lesson", "Trains a tagger.", ""}, args_in(d));  // train() writes into a lesson
  Generator gen(2);
  const data::ShiftTags task = data::shift_tags(1, 8, 8, 512, 64, gen);
  nn::EncoderModel<float> m = small_tagger(task.vocab.size());
  Recipe r;
  r.epochs = 4, r.batch = 32, r.lr = 1e-2, r.seed = 5;
  const History h = train_tagger(m, task.train, r);
  REQUIRE(h.epoch_loss.size() == 4);
  CHECK(h.epoch_loss.back() < h.epoch_loss.front());
  // The tags are the argmax of the logits, and the accuracy is theirs.
  const IndexArray tags = encoder_tags(m, task.test.inputs);
  CHECK(tags == tags_by_hand(m, task.test.inputs));
  CHECK(tag_accuracy(m, task.test, nn::kNoIgnore) == doctest::Approx(nn::accuracy(tags, task.test.targets)));
  // With every gate on nothing changes; a head off changes what the model computes.
  const nn::HeadGates on = nn::all_heads_on(m.encoder);
  CHECK(encoder_tags(m, task.test.inputs, on) == tags);
  nn::HeadGates off = on;
  off[0][1] = 0.0f;
  IndexArray gated;
  nn::with_head_gates(m.encoder, off, [&] { gated = tags_by_hand(m, task.test.inputs); });
  CHECK(encoder_tags(m, task.test.inputs, off) == gated);
  CHECK(encoder_tags(m, task.test.inputs) == tags);  // the gates are gone again
  // Where the heads look: offset_profile of the layer's weights.
  const std::vector<Tensor<float>> layers = attention_on(m, task.test.inputs);
  REQUIRE(layers.size() == 2);
  CHECK(offset_profile_of(m, task.test.inputs, 1).weight == offset_profile(layers[1].value()).weight);
  CHECK_THROWS_WITH_AS(offset_profile_of(m, task.test.inputs, 2), doctest::Contains("offset_profile_of: layer 2"),
                       std::out_of_range);
  // What each head is worth: the accuracy lost with it alone off, on the validation set.
  const HeadWorth w = head_worth(m, task.test, task.test, nn::kNoIgnore);
  REQUIRE(w.importance.shape() == std::vector<std::size_t>{2, 2});
  REQUIRE(w.alone_off.size() == 4);
  CHECK(w.pruned.size() == 4);  // 0, 1, 2 and 3 heads off
  CHECK(w.pruned[0] == doctest::Approx(nn::accuracy(tags, task.test.targets)));
  CHECK(w.alone_off[1] == gated);  // layer 0, head 1 alone off
  CHECK(w.importance(0, 1) == doctest::Approx(w.pruned[0] - nn::accuracy(gated, task.test.targets)));
  lesson.finish();
}

TEST_CASE("explorer_input: every layer and head with the queries and keys that score them; a pooled model refused") {
  nn::EncoderModel<float> m = small_tagger(6);
  const IndexArray one = {{1, 2, 3, 4, 5, 1}};
  const std::vector<std::string> tokens = {"a", "b", "c", "d", "e", "a"};
  const AttentionInput in = explorer_input(m, "six tokens", tokens, one);
  CHECK(in.name == "six tokens");
  CHECK(at_positions({"3", "1", "3"}) == std::vector<std::string>{"3 @0", "1 @1", "3 @2"});
  CHECK(in.layers == std::vector<std::string>{"layer 1", "layer 2"});
  REQUIRE(in.heads.size() == 2);
  REQUIRE(in.q.size() == 2);
  CHECK(in.q[1].size() == 2);
  CHECK(in.heads[1][0].shape() == std::vector<std::size_t>{6, 6});
  CHECK(m.encoder.score_parts().front().queries.dimension() == 0);  // no longer kept
  CHECK_NOTHROW(explorer_html({"t", "q", "k", "", {in}}));  // the page checks softmax(q . k * scale + bias) = weights
  CHECK_THROWS_AS(explorer_input(m, "short", {"a", "b"}, one), std::invalid_argument);
  nn::EncoderModel<float> pooled = small_tagger(6, nn::Pooling::Mean);
  CHECK_THROWS_WITH_AS(encoder_tags(pooled, one), doctest::Contains("encoder_tags"), ShapeError);
}

TEST_CASE("explorer_input of several models: their layers in turn, named by model; different scales refused") {
  nn::EncoderModel<float> a = small_tagger(6), b = small_tagger(6);
  const IndexArray one = {{1, 2, 3, 4}};
  const std::vector<std::string> tokens = at_positions({"1", "2", "3", "4"});
  const AttentionInput in = explorer_input({{"a", &a}, {"b", &b}}, "four tokens", tokens, one);
  CHECK(in.layers == std::vector<std::string>{"a, layer 1", "a, layer 2", "b, layer 1", "b, layer 2"});
  REQUIRE(in.heads.size() == 4);
  CHECK(in.q.size() == 4);
  CHECK(in.bias.size() == 4);
  CHECK(in.heads[2][1] == explorer_input(b, "b alone", tokens, one).heads[0][1]);
  CHECK_NOTHROW(explorer_html({"t", "q", "k", "", {in}}));
  nn::EncoderModelConfig c = a.config();
  c.layer.heads = 4;  // d_k 4 instead of 8: another scale
  Generator gen(9);
  nn::EncoderModel<float> narrow(c, gen);
  CHECK_THROWS_WITH_AS(explorer_input({{"a", &a}, {"narrow", &narrow}}, "x", tokens, one),
                       doctest::Contains("explorer_input: 'narrow' scores at scale"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(explorer_input(std::vector<NamedModel>{}, "x", tokens, one), doctest::Contains("no models"),
                       std::invalid_argument);
}

TEST_CASE("scored at two lengths, the head at an offset, a step timed, ids at their positions, importance drawn") {
  attnlab::testing::TempDir d;
  Lesson lesson({"99_test", "A test lesson", "Reads a tagger.", ""}, args_in(d));
  Generator gen(2);
  const data::ShiftTags task = data::shift_tags(1, 8, 12, 64, 16, gen);
  nn::EncoderModel<float> m = small_tagger(task.vocab.size());  // sinusoidal positions: any length
  const Tagger logits_of = [&m](const IndexArray& x) { return m.forward(x); };
  const LengthScores both = evaluate_at_two_lengths(logits_of, task.test, task.test_long, 5);
  CHECK(both.runs_long());
  CHECK(both.at_train.token == doctest::Approx(evaluate_tagger(logits_of, task.test).token));
  CHECK(both.at_long.by_position.size() == 12);
  nn::EncoderModelConfig c = m.config();
  c.positional = nn::Positional::Learned;  // a table of 8 rows: no position 8 to look up
  nn::EncoderModel<float> learned(c, gen);
  const LengthScores short_only = evaluate_at_two_lengths([&](const IndexArray& x) { return learned.forward(x); },
                                                          task.test, task.test_long);
  CHECK_FALSE(short_only.runs_long());
  CHECK(short_only.at_long.by_position.empty());
  CHECK(short_only.at_train.by_position.size() == 8);
  // The head at offset 1: the one head_for_offset picks, its far weight and profile from its own weights.
  const std::vector<Tensor<float>> layers = attention_on(m, task.test.inputs);
  const HeadPick pick = head_for_offset(layers, 1);
  const OffsetHead h = offset_head(m, task.test.inputs, 1, 3);
  CHECK(h.pick.layer == pick.layer);
  CHECK(h.pick.head == pick.head);
  CHECK(h.pick.mass == doctest::Approx(pick.mass));
  CHECK(h.far == doctest::Approx(far_mass(layers[pick.layer].value(), 3)[pick.head]));
  REQUIRE(h.profile.size() == 15);
  CHECK(h.profile(7 + 1) == doctest::Approx(pick.mass));  // offset 1: the mass head_for_offset measured
  // One step of each of two models timed; ids shown at their positions.
  std::vector<std::unique_ptr<nn::EncoderModel<float>>> two;
  for (int i = 0; i < 2; ++i) two.push_back(std::make_unique<nn::EncoderModel<float>>(m.config(), gen));
  const std::vector<Timing> t = tagger_step_medians(two, task.train.slice(0, 8), 2);
  REQUIRE(t.size() == 2);
  CHECK(t[1].wall_ms > 0.0);
  CHECK_THROWS_AS(tagger_step_medians(two, task.train.slice(0, 8), 0), std::invalid_argument);
  CHECK(at_positions(IndexArray{{3, 1, 3}}) == std::vector<std::string>{"3 @0", "1 @1", "3 @2"});
  // What each head is worth, as one heatmap per model.
  xt::xarray<double> importance = {{0.1, 0.5}, {0.0, 0.2}};
  const plots::Figure fig = head_importance_figure({{"two layers", importance}, {"again", importance}}, "Worth");
  CHECK(fig.height_px() == 1100);
  CHECK_THROWS_AS(head_importance_figure({}, "none"), plots::PlotError);
  lesson.finish();
}

TEST_CASE("train_and_score and its reports: metrics, rows and bars at two lengths, accuracy by position") {
  attnlab::testing::TempDir d;
  Lesson lesson({"99_test", "A test lesson", "Reports taggers.", ""}, args_in(d));
  Generator gen(2);
  const data::ShiftTags task = data::shift_tags(1, 8, 12, 256, 32, gen);
  Recipe r;
  r.epochs = 2, r.batch = 32, r.lr = 1e-2, r.seed = 5;
  Generator first(4);
  ScoredTagger sinus = train_and_score(std::make_unique<nn::EncoderModel<float>>(small_tagger(task.vocab.size()).config(), first),
                                       task.train, task.test, task.test_long, r, 16);
  REQUIRE(sinus.history.epoch_loss.size() == 2);
  CHECK(sinus.runs_long());
  CHECK(sinus.at_train.token == doctest::Approx(tag_accuracy(*sinus.model, task.test, nn::kNoIgnore)));
  CHECK(sinus.at_long.token == doctest::Approx(evaluate_at_two_lengths(*sinus.model, task.test, task.test_long).at_long.token));
  nn::EncoderModelConfig c = sinus.model->config();
  c.positional = nn::Positional::Learned;  // 8 rows: cannot read 12 tokens
  Generator draw(3);
  ScoredTagger learned = train_and_score(std::make_unique<nn::EncoderModel<float>>(c, draw), task.train, task.test,
                                         task.test_long, r);
  CHECK_FALSE(learned.runs_long());
  const TwoLengthReport rep = report_two_lengths({{"sin", &sinus}, {"learned", &learned}}, 8, 12);
  REQUIRE(rep.rows.size() == 2);
  CHECK(rep.rows[0][1] == fixed(sinus.at_train.token, 3));
  CHECK(rep.rows[0][5] == fixed(sinus.history.epoch_loss.back(), 4));
  CHECK(rep.rows[1][3] == "n/a");
  CHECK(rep.rows[1][4] == "n/a");
  CHECK(rep.bars[0].categories == std::vector<std::string>{"sin", "learned"});
  CHECK(rep.bars[1].categories == std::vector<std::string>{"sin"});
  REQUIRE(rep.bars[1].series.size() == 2);
  CHECK(rep.bars[1].series[1].second == std::vector<double>{sinus.at_long.exact});
  CHECK_THROWS_WITH_AS(report_two_lengths({}, 8, 12), doctest::Contains("report_two_lengths: no taggers"),
                       std::invalid_argument);
  ScoredTagger untrained;
  CHECK_THROWS_WITH_AS(report_two_lengths({{"raw", &untrained}}, 8, 12), doctest::Contains("raw has no training"),
                       std::invalid_argument);
  const PositionReport by = report_by_position({{"sin", &sinus}, {"learned", &learned}}, 8);
  REQUIRE(by.rows.size() == 2);
  CHECK(by.rows[0][1] == fixed(mean_over(sinus.at_long.by_position, 0, 8), 3));
  CHECK(by.rows[0][2] == fixed(mean_over(sinus.at_long.by_position, 8), 3));
  CHECK(by.rows[1] == std::vector<std::string>{"learned", "n/a", "n/a", "n/a"});
  REQUIRE(by.curves.size() == 1);
  CHECK(by.curves[0].x(0) == 0.0);  // positions from 0
  CHECK(by.curves[0].y.size() == 12);
  // The heads that look one place left, drawn a panel each; a profile of an even length refused.
  const OffsetHead h = offset_head(*sinus.model, task.test_long.inputs, 1, 8);
  const plots::Figure fig = offset_heads_figure({{"sin", h, plots::series_color(0)}, {"again", h, plots::series_color(1)}}, 8,
                                                "Where they look");
  CHECK(fig.width_px() == 1800);
  OffsetHead even = h;
  even.profile = xt::zeros<double>({4});
  CHECK_THROWS_WITH_AS(offset_heads_figure({{"even", even, plots::series_color(0)}}, 8, "bad"),
                       doctest::Contains("even's profile holds 4 offsets"), std::invalid_argument);
  CHECK_THROWS_AS(offset_heads_figure({}, 8, "none"), std::invalid_argument);
  lesson.finish();
  // The metrics, in the order the report recorded them: sin at both lengths, learned at 8 only.
  const Json m = Json::parse(read_file(d / "lesson/metrics.json"))["metrics"];
  std::vector<std::string> names;
  for (const auto& [name, value] : m.items()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"token_accuracy_sin_L8", "exact_match_sin_L8", "token_accuracy_sin_L12",
                                          "exact_match_sin_L12", "token_accuracy_learned_L8", "exact_match_learned_L8"});
  CHECK(m["exact_match_sin_L12"] == doctest::Approx(sinus.at_long.exact));
}

TEST_CASE("first_repeat and explorer_input from a vocabulary: the first token seen twice; tokens @ positions") {
  CHECK(first_repeat({"3", "1", "4", "1", "3"}) == std::make_optional(std::make_pair<std::size_t, std::size_t>(0, 4)));
  CHECK(first_repeat({"a", "b", "b"}) == std::make_optional(std::make_pair<std::size_t, std::size_t>(1, 2)));
  CHECK_FALSE(first_repeat({"a", "b"}).has_value());
  CHECK_FALSE(first_repeat({}).has_value());
  nn::data::Vocab v;
  for (const char* t : {"x", "y", "z"}) v.add(t);
  nn::EncoderModel<float> m = small_tagger(v.size());
  const IndexArray one = {{4, 5, 4}};  // x y x
  const AttentionInput in = explorer_input({{"m", &m}}, "three", v, one);
  CHECK(in.queries == std::vector<std::string>{"x @0", "y @1", "x @2"});
  CHECK(in.heads == explorer_input({{"m", &m}}, "three", at_positions({"x", "y", "x"}), one).heads);
}
