// lessons/kit/image_classifier: lesson 16's training and scoring of image classifiers. The loop is
// train() with the cross-entropy of each batch's images (augmented when asked) and the validation
// scores read as asked, step for step the same as written out by hand; it learns a task a small
// MLP can learn; score_images, train_and_test and their tables report what was trained; the
// figures draw; bad input is refused by name.
#include <doctest/doctest.h>

#include <stdexcept>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "io/files.hpp"
#include "lessons/kit/image_classifier.hpp"
#include "lessons/kit/pixel_mlp.hpp"
#include "lessons/story/lesson.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/images.hpp"
#include "nn/metrics.hpp"
#include "plots/error.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::TempDir;
using doctest::Contains;

namespace {

struct Set {
  Array<float> images;
  IndexArray labels;
};

// n images (4, 4) of noise in [0, 0.2], the top half lit (0.8 added) for class 1, the bottom half
// for class 0: a task an MLP on the pixels learns in a few epochs.
Set halves(std::size_t n, Generator& gen) {
  Set s{random_uniform<float>({n, 4, 4}, gen) * 0.2f, xt::zeros<Index>({n})};
  for (std::size_t i = 0; i < n; ++i) {
    s.labels(i) = Index(gen.below(2));
    const std::size_t top = s.labels(i) == 1 ? 0 : 2;
    xt::view(s.images, i, xt::range(top, top + 2)) += 0.8f;
  }
  return s;
}

Recipe small_recipe(int epochs) {
  Recipe r;
  r.label = "test", r.epochs = epochs, r.batch = 16, r.lr = 1e-2, r.seed = 3;
  return r;
}

void drawn(const plots::Figure& fig, const std::string& stem) {
  TempDir d;
  fig.save(d / (stem + ".png"));
  CHECK(read_file(d / (stem + ".png")).size() > 1000);
}

}  // namespace

TEST_CASE("train_image_classifier: train() with the batch's cross-entropy, the same as written by hand, and it learns") {
  TempDir d;
  LessonArgs args;
  args.out = d / "lesson";
  Lesson lesson({"99_test", "A test lesson", "Trains images.", ""}, args);  // train() writes into a lesson
  Generator data_gen(1);
  const Set train_set = halves(96, data_gen), validation = halves(64, data_gen);

  Generator gen_a(2), gen_b(2);
  PixelMLP a(gen_a, 16, 8, 2), b(gen_b, 16, 8, 2);
  const History h = train_image_classifier(a, logits_of(a), train_set, validation, small_recipe(3), Reading::mirror_averaged,
                                           ShiftAndMirror{1, 7});
  // The same by hand: the lesson's loop before it moved here.
  Recipe r = small_recipe(3);
  r.validate = [&] {
    return class_scores(mirror_averaged_probabilities(b, logits_of(b), validation.images), validation.labels);
  };
  Generator augment(7);
  const History by_hand = train(b, train_set.labels.size(), [&](const std::vector<std::size_t>& rows) {
    const Array<float> images = nn::data::shift_and_mirror(nn::data::take_rows(train_set.images, rows), 1, augment);
    return cross_entropy(b.forward(Tensor<float>(images)), nn::data::take_rows(train_set.labels, rows));
  }, r);
  CHECK(h.loss == by_hand.loss);
  CHECK(h.validation_of("accuracy") == by_hand.validation_of("accuracy"));
  CHECK(h.validation_of("loss") == by_hand.validation_of("loss"));

  // Without augmentation, read image by image: a task the MLP learns.
  Generator gen_c(4);
  PixelMLP c(gen_c, 16, 8, 2);
  const History plain = train_image_classifier(c, logits_of(c), train_set, validation, small_recipe(8), Reading::image);
  CHECK(plain.validation_of("accuracy").back() > 0.9);
  const ImageScores s = score_images(c, logits_of(c), validation, Reading::image);
  CHECK(s.accuracy == doctest::Approx(plain.validation_of("accuracy").back()));
  CHECK(s.predicted == nn::argmax_last(image_probabilities(c, logits_of(c), validation.images)));
  CHECK(class_probabilities(c, logits_of(c), validation.images, Reading::mirror_averaged) ==
        mirror_averaged_probabilities(c, logits_of(c), validation.images));
}

TEST_CASE("train_and_test: each contender trained with its own recipe, scored once, and tabled") {
  TempDir d;
  LessonArgs args;
  args.out = d / "lesson";
  Lesson lesson({"99_test", "A test lesson", "Trains images.", ""}, args);
  Generator data_gen(5), gen(6);
  const Set train_set = halves(64, data_gen), validation = halves(32, data_gen), test = halves(32, data_gen);
  PixelMLP small(gen, 16, 4, 2), wide(gen, 16, 12, 2);
  std::vector<Contender> models{{"small", small, logits_of(small), small_recipe(1)},
                                {"wide", wide, logits_of(wide), small_recipe(2)}};
  CHECK_THROWS_WITH_AS(contender_rows(models), Contains("contender_rows: small has not been trained"), std::invalid_argument);
  train_and_test(models, train_set, validation, test, Reading::image);
  CHECK(models[0].history.validation_of("accuracy").size() == 1);
  CHECK(models[1].history.validation_of("accuracy").size() == 2);
  CHECK(models[1].test_accuracy == score_images(wide, logits_of(wide), test, Reading::image).accuracy);
  const auto rows = contender_rows(models);
  REQUIRE(rows.size() == 2);
  CHECK(rows[1][0] == "wide");
  CHECK(rows[1][1] == std::to_string(wide.parameter_count()));
  CHECK(rows[1][2] == "2");
  CHECK(rows[1][6] == fixed(models[1].test_accuracy, 4));
}

TEST_CASE("train_image_classifier and score_images refuse images and labels that do not fit") {
  Generator gen(7);
  PixelMLP m(gen, 16, 4, 2);
  const Set ok = halves(8, gen);
  const Array<float> flat = xt::zeros<float>({8, 16});
  const IndexArray short_labels = xt::zeros<Index>({7});
  CHECK_THROWS_WITH_AS(train_image_classifier(m, logits_of(m), LabelledImages{flat, ok.labels}, ok, small_recipe(1), Reading::image),
                       Contains("train_image_classifier: needs training images (N, H, W) and N labels, got images (8,16) and labels (8)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(train_image_classifier(m, logits_of(m), ok, LabelledImages{ok.images, short_labels}, small_recipe(1),
                                              Reading::image),
                       Contains("needs validation images (N, H, W) and N labels, got images (8,4,4) and labels (7)"), ShapeError);
  CHECK_THROWS_WITH_AS(score_images(m, logits_of(m), LabelledImages{ok.images, short_labels}, Reading::image),
                       Contains("score_images: needs the images (N, H, W) and N labels"), ShapeError);
}

TEST_CASE("classifier_epoch_rows: the first three epochs, every fifth and the last") {
  History h;
  for (int e = 0; e < 12; ++e) h.epoch_loss.push_back(1.0 / (e + 1));
  h.validation = {{"accuracy", {}}, {"loss", {}}};
  for (int e = 0; e < 12; ++e) h.validation[0].second.push_back(0.5 + 0.01 * e), h.validation[1].second.push_back(2.0 - 0.1 * e);
  const auto rows = classifier_epoch_rows(h);
  REQUIRE(rows.size() == 6);
  const std::vector<std::string> epochs{rows[0][0], rows[1][0], rows[2][0], rows[3][0], rows[4][0], rows[5][0]};
  CHECK(epochs == std::vector<std::string>{"1", "2", "3", "5", "10", "12"});
  CHECK(rows[3] == std::vector<std::string>{"5", "0.2000", "1.6000", "0.5400"});
  History no_loss;
  no_loss.validation = {{"accuracy", {0.5}}};
  CHECK_THROWS_WITH_AS(classifier_epoch_rows(no_loss), Contains("loss"), std::out_of_range);
}

TEST_CASE("class_captions: the class of each row, numbered after a prefix; rows and labels outside refused") {
  const IndexArray labels{2, 0, 1};
  const std::vector<std::string> names{"cat", "dog", "fox"};
  CHECK(class_captions(labels, {2, 0}, names) == std::vector<std::string>{"dog", "fox"});
  CHECK(class_captions(labels, {1}, names, "image ") == std::vector<std::string>{"image 1: cat"});
  CHECK(class_captions(labels, {}, names).empty());
  CHECK_THROWS_WITH_AS(class_captions(labels, {3}, names), Contains("class_captions: row 3 of 3 labels"), std::out_of_range);
  CHECK_THROWS_WITH_AS(class_captions(labels, {0}, {"cat", "dog"}), Contains("class_captions: label 2 of row 0 has no name among 2"),
                       std::out_of_range);
}

TEST_CASE("most_confused_rows, confusion_figure, test_accuracy_bars and accuracy_by_epoch") {
  const IndexArray labels{0, 0, 1, 1, 2, 2, 2}, predicted{0, 1, 1, 0, 1, 1, 2};
  const std::vector<std::string> names{"cat", "dog", "fox"};
  const auto rows = most_confused_rows(labels, predicted, names, 2);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0] == std::vector<std::string>{"fox", "dog", "2"});
  CHECK(rows[1] == std::vector<std::string>{"cat", "dog", "1"});
  CHECK_THROWS_AS(most_confused_rows(labels, IndexArray{0, 1, 1, 0, 1, 1, 3}, names, 2), ShapeError);

  drawn(confusion_figure(labels, predicted, names, "Confusions"), "confusion");
  drawn(test_accuracy_bars({"a", "b"}, {0.5, 0.75}, "Bars"), "bars");
  CHECK_THROWS_AS(test_accuracy_bars({"a", "b"}, {0.5}, "Bars"), plots::PlotError);

  History one, two;
  one.validation = {{"accuracy", {0.2, 0.4}}};
  two.validation = {{"accuracy", {0.3, 0.5, 0.6}}};
  drawn(accuracy_by_epoch({{"one", &one}, {"two", &two}}, "chance", 0.1, "By epoch"), "epochs");
  CHECK_THROWS_AS(accuracy_by_epoch({}, "chance", 0.1, "By epoch"), plots::PlotError);
  History none;
  CHECK_THROWS_AS(accuracy_by_epoch({{"none", &none}}, "chance", 0.1, "By epoch"), std::out_of_range);
}
