#include "lessons/kit/image_classifier.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/error.hpp"
#include "core/ops.hpp"
#include "lessons/story/lesson.hpp"
#include "lessons/story/text.hpp"
#include "nn/confusions.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/images.hpp"
#include "nn/metrics.hpp"
#include "plots/error.hpp"

namespace attnlab::lessons {

namespace {

// Images (N, H, W) with N labels, or a ShapeError naming `where` and the set.
void check_set(const char* where, const char* which, const LabelledImages& set) {
  check(set.images.dimension() == 3 && set.labels.dimension() == 1 && set.images.shape()[0] == set.labels.size(), where,
        "needs ", which, " images (N, H, W) and N labels, got images ", shape_str(set.images.shape()), " and labels ",
        shape_str(set.labels.shape()));
}

}  // namespace

Array<float> class_probabilities(nn::Module<float>& model, const ImageLogits& logits, const Array<float>& images,
                                 Reading reading) {
  return reading == Reading::mirror_averaged ? mirror_averaged_probabilities(model, logits, images)
                                             : image_probabilities(model, logits, images);
}

History train_image_classifier(nn::Module<float>& model, const ImageLogits& logits, const LabelledImages& training,
                               const LabelledImages& validation, Recipe r, Reading reading,
                               const std::optional<ShiftAndMirror>& augment) {
  check_set("train_image_classifier", "training", training);
  check_set("train_image_classifier", "validation", validation);
  r.validate = [&] { return class_scores(class_probabilities(model, logits, validation.images, reading), validation.labels); };
  std::optional<Generator> gen;
  if (augment) gen.emplace(augment->seed);
  return train(model, training.labels.size(), [&](const std::vector<std::size_t>& rows) {
    Array<float> images = nn::data::take_rows(training.images, rows);
    if (augment) images = nn::data::shift_and_mirror(images, augment->max_shift, *gen);
    return cross_entropy(logits(Tensor<float>(images)), nn::data::take_rows(training.labels, rows));
  }, r);
}

ImageScores score_images(nn::Module<float>& model, const ImageLogits& logits, const LabelledImages& set, Reading reading) {
  check_set("score_images", "the", set);
  ImageScores s{nn::argmax_last(class_probabilities(model, logits, set.images, reading)), 0};
  s.accuracy = nn::accuracy(s.predicted, set.labels);
  return s;
}

void train_and_test(std::vector<Contender>& contenders, const LabelledImages& training, const LabelledImages& validation,
                    const LabelledImages& test, Reading reading) {
  for (Contender& c : contenders) {
    c.history = train_image_classifier(c.model, c.logits, training, validation, c.recipe, reading);
    c.test_accuracy = score_images(c.model, c.logits, test, reading).accuracy;
  }
}

std::vector<std::vector<std::string>> contender_rows(const std::vector<Contender>& contenders) {
  std::vector<std::vector<std::string>> rows;
  for (const Contender& c : contenders) {
    if (c.history.epoch_loss.empty())
      throw std::invalid_argument("contender_rows: " + c.name + " has not been trained (train_and_test first)");
    rows.push_back(row(c.name, c.model.parameter_count(), c.recipe.epochs, fixed(c.history.seconds, 1),
                       fixed(c.history.epoch_loss.back(), 3), fixed(c.history.validation_of("accuracy").back(), 4),
                       fixed(c.test_accuracy, 4)));
  }
  return rows;
}

void contender_table(const std::vector<Contender>& contenders) {
  table({"model", "parameters", "epochs", "seconds", "training loss", "validation accuracy", "test accuracy"},
        contender_rows(contenders));
}

std::vector<std::vector<std::string>> classifier_epoch_rows(const History& h) {
  const std::vector<double>&acc = h.validation_of("accuracy"), &loss = h.validation_of("loss");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t e = 0; e < acc.size(); ++e)
    if (e < 3 || (e + 1) % 5 == 0 || e + 1 == acc.size())
      rows.push_back(row(e + 1, fixed(h.epoch_loss[e], 4), fixed(loss[e], 4), fixed(acc[e], 4)));
  return rows;
}

void classifier_epoch_table(const History& h) {
  table({"epoch", "training loss", "validation loss", "validation accuracy"}, classifier_epoch_rows(h));
}

std::vector<std::string> class_captions(const IndexArray& labels, const std::vector<std::size_t>& rows,
                                        const std::vector<std::string>& classes, const std::string& prefix) {
  std::vector<std::string> captions;
  for (std::size_t r : rows) {
    if (r >= labels.size()) throw std::out_of_range(text("class_captions: row ", r, " of ", labels.size(), " labels"));
    const Index c = labels(r);
    if (c < 0 || std::size_t(c) >= classes.size())
      throw std::out_of_range(text("class_captions: label ", c, " of row ", r, " has no name among ", classes.size(), " classes"));
    captions.push_back(prefix.empty() ? classes[std::size_t(c)] : text(prefix, r, ": ", classes[std::size_t(c)]));
  }
  return captions;
}

std::vector<std::vector<std::string>> most_confused_rows(const IndexArray& labels, const IndexArray& predicted,
                                                         const std::vector<std::string>& classes, std::size_t n) {
  std::vector<std::vector<std::string>> rows;
  for (const nn::Confusion& c : nn::most_confused(labels, predicted, classes.size(), n))
    rows.push_back(row(classes[c.truth], classes[c.predicted], c.examples.size()));
  return rows;
}

plots::Figure confusion_figure(const IndexArray& labels, const IndexArray& predicted, const std::vector<std::string>& classes,
                               const std::string& title) {
  plots::Figure fig(1500, 1350);
  confusion_panel(fig.panel(0).title(title), nn::confusion_rates(labels, predicted, classes.size()), classes,
                  "share of the true class");
  return fig;
}

plots::Figure test_accuracy_bars(const std::vector<std::string>& models, const std::vector<double>& accuracy,
                                 const std::string& title) {
  plots::Figure bars(1800, 900);
  bar_panel(bars.panel(0).title(title).ylabel("test accuracy"), models, {{"test accuracy", accuracy}}, 3, 1.0);
  return bars;
}

plots::Figure accuracy_by_epoch(const std::vector<Run>& runs, const std::string& chance_name, double chance,
                                const std::string& title) {
  if (runs.empty()) plots::fail("accuracy_by_epoch", "no runs to draw");
  std::vector<plots::Series> series;
  std::size_t epochs = 0;
  for (const auto& [name, h] : runs) {
    series.push_back(curve(name, h->validation_of("accuracy")));
    epochs = std::max(epochs, h->validation_of("accuracy").size());
  }
  series.push_back(reference(chance_name, {1.0, double(epochs)}, {chance, chance}));
  LineFigureOptions style{title, "epoch", "validation accuracy"};
  style.ymin = 0.0, style.ymax = 1.0, style.markers = true;
  return line_figure(series, style);
}

}  // namespace attnlab::lessons
