// Training and scoring image classifiers as lesson 16 does for every model it compares (the ViT
// and the MLP on pixels, on whole garments and on scenes of two), and what it shows of them:
//
//   train_image_classifier(model, logits, training, validation, recipe, reading, augment)
//                        cross-entropy of each batch's images (shifted and mirrored when asked),
//                        the validation scores after every epoch, read as `reading` says
//   score_images(model, logits, test, reading)     predictions and accuracy, the test set once
//   train_and_test(contenders, training, validation, test, reading)   several models in turn, and
//   contender_table(contenders)                    their sizes, budgets and scores as a table
//   classifier_epoch_table(history)                a run's losses and accuracy by epoch
//   class_captions, most_confused_rows, confusion_figure, test_accuracy_bars, accuracy_by_epoch
//                        captions by class, a classifier's mistakes, its test accuracy beside
//                        others', its curves
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/array.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/kit/history.hpp"
#include "lessons/kit/train.hpp"
#include "lessons/kit/vit_model.hpp"
#include "plots/plots.hpp"

namespace attnlab::lessons {

// Images (N, H, W) in [0, 1] and their class ids (N,), held elsewhere: a data split or a scene set
// (anything with `images` and `labels`, nn::data::FashionMnist and nn::data::Scenes among them),
// which must outlive it.
struct LabelledImages {
  LabelledImages(const Array<float>& images_, const IndexArray& labels_) : images(images_), labels(labels_) {}
  template <class Set>
  LabelledImages(const Set& set) : images(set.images), labels(set.labels) {}  // NOLINT: a view of any set
  const Array<float>& images;
  const IndexArray& labels;
};

// The logits of a model with forward(images), as an ImageLogits: [&model](x) { return model.forward(x); }.
template <class Model>
ImageLogits logits_of(Model& model) {
  return [&model](const Tensor<float>& images) { return model.forward(images); };
}

// How a model's class probabilities are read: from each image alone (image_probabilities), or as
// the mean of the image's and its mirror image's (mirror_averaged_probabilities), for a model
// trained on mirrored images.
enum class Reading { image, mirror_averaged };
Array<float> class_probabilities(nn::Module<float>& model, const ImageLogits& logits, const Array<float>& images,
                                 Reading reading);

// Augmentation: every training batch's images moved by up to max_shift pixels each way and
// mirrored half the time (nn::data::shift_and_mirror), new draws in every batch from one
// generator seeded `seed` (batches come in order, so one seed gives the same images).
struct ShiftAndMirror {
  std::size_t max_shift = 1;
  std::uint64_t seed = 0;
};

// train(model, training.size, loss, r) (lessons/kit/train.hpp) with the loss of a batch the mean
// cross-entropy of logits(its images, augmented when `augment` is given) against its labels, and
// r.validate set to class_scores ("accuracy", "loss") of the validation images read as `reading`
// (r.validate is replaced). ShapeError naming the function for images that are not (N, H, W) or
// labels that do not count them, in either set; train's errors for a recipe that cannot run.
History train_image_classifier(nn::Module<float>& model, const ImageLogits& logits, const LabelledImages& training,
                               const LabelledImages& validation, Recipe r, Reading reading,
                               const std::optional<ShiftAndMirror>& augment = std::nullopt);

// A classifier scored once: the class it gives each image (the most probable, read as `reading`)
// and the share it gets right. The ShapeError of train_image_classifier, naming score_images.
struct ImageScores {
  IndexArray predicted;  // (N,)
  double accuracy = 0;
};
ImageScores score_images(nn::Module<float>& model, const ImageLogits& logits, const LabelledImages& set, Reading reading);

// Models compared on one task: each trained with its own recipe on the same training set, then
// scored once on the test set; the results are filled in by train_and_test.
struct Contender {
  std::string name;
  nn::Module<float>& model;
  ImageLogits logits;
  Recipe recipe;
  History history = {};
  double test_accuracy = 0;
};
// In order, one after the other: train_image_classifier (no augmentation), then score_images on test.
void train_and_test(std::vector<Contender>& contenders, const LabelledImages& training, const LabelledImages& validation,
                    const LabelledImages& test, Reading reading);
// One row per trained contender: name, parameters, epochs, seconds, the last epoch's training
// loss, the last validation accuracy and the test accuracy. std::invalid_argument naming the
// function and the contender that has not been trained.
std::vector<std::vector<std::string>> contender_rows(const std::vector<Contender>& contenders);
// Those rows as a table in the report, under the header "model", "parameters", "epochs", ...
void contender_table(const std::vector<Contender>& contenders);

// A classifier's run by epoch (the first three, every fifth, the last): the epoch, its mean
// training loss, and the validation loss and accuracy after it (4 decimals). std::out_of_range
// naming the score a history without "loss" or "accuracy" lacks.
std::vector<std::vector<std::string>> classifier_epoch_rows(const History& h);
// Those rows as a table in the report: "epoch", "training loss", "validation loss", "validation accuracy".
void classifier_epoch_table(const History& h);

// A caption for each of the rows of a labelled set: the name of its class, classes[labels(row)],
// after `prefix` and the row when a prefix is given ("test image 12: Trouser" for the prefix
// "test image "). std::out_of_range naming the function for a row past the labels or a label
// without a name.
std::vector<std::string> class_captions(const IndexArray& labels, const std::vector<std::size_t>& rows,
                                        const std::vector<std::string>& classes, const std::string& prefix = "");

// The n most frequent mistakes (nn::most_confused) as rows: the true class's name, the predicted
// class's name, and how many examples. ShapeError naming the function when a label or prediction
// has no name in `classes`; most_confused's errors for predictions that do not fit the labels.
std::vector<std::vector<std::string>> most_confused_rows(const IndexArray& labels, const IndexArray& predicted,
                                                         const std::vector<std::string>& classes, std::size_t n);

// The confusion matrix of the predictions (nn::confusion_rates, each row summing to 1) as one
// panel titled `title` (confusion_panel, colorbar "share of the true class"), 1500 x 1350 pixels.
// confusion_rates' errors for predictions that do not fit the labels or the classes.
plots::Figure confusion_figure(const IndexArray& labels, const IndexArray& predicted, const std::vector<std::string>& classes,
                               const std::string& title);

// Test accuracies as bars with their values (3 decimals), one bar a model, the y axis from 0 to 1
// labelled "test accuracy", one panel titled `title`, 1800 x 900 pixels. bar_panel's PlotError for
// as many accuracies as models.
plots::Figure test_accuracy_bars(const std::vector<std::string>& models, const std::vector<double>& accuracy,
                                 const std::string& title);

// The validation accuracy after every epoch of each run (lines with markers, y from 0 to 1), and
// a dashed reference line at `chance` named `chance_name` across the epochs of the longest run.
// std::out_of_range naming "accuracy" for a run without it; PlotError for no runs.
plots::Figure accuracy_by_epoch(const std::vector<Run>& runs, const std::string& chance_name, double chance,
                                const std::string& title);

}  // namespace attnlab::lessons
