// Exercises for lesson 15, fine-tuning and probing. Grade them with build/bin/grade 15.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "lessons/kit/bert.hpp"
#include "nn/data/cloze_corpus.hpp"
#include "nn/layers.hpp"
#include "nn/metrics.hpp"
#include "nn/optim.hpp"
#include "nn/transformer/masked_lm.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 15.1 Predict: what does an untrained encoder know about the topic? ----------------------
// An experiment, graded by measuring. Lesson 15 asks what pretraining put into BERT's features by
// reading the topic of an entry (which of five fortune files it comes from) off the frozen
// encoder's output with a linear classifier, a probe; the bar is the same probe on the entry's
// character frequencies, the bag of characters. Predict, before it is measured, the probe's
// accuracy on an UNTRAINED encoder: lesson 14's BERT (relative position bias, 2 pre-norm layers of
// width 48) at its random initial draw, reading the mean of its output vectors over the entry's
// tokens. The grader measures the bag of characters' accuracy first and passes it to you; then it
// measures the random encoder's probe (two draws of the weights, the mean) and compares it with
// your prediction within 0.08. Entries: lesson 15's, 100 of each topic to train the probe on, its
// validation entries to score it; the probe: standardized features, full-batch AdamW, 300 steps.
// Think about what the mean of the first layer's inputs is, as a function of the characters.
double random_encoder_probe_accuracy(double bag_of_characters_accuracy) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): lesson 15's entries and features (lessons/kit/
// bert, nn/data/cloze_corpus), a linear classifier trained with the engine on each.
namespace {

// The linear classifier on standardized features: full-batch AdamW, 300 steps, rate 0.01, weight
// decay 0.05 (lesson 15's probe); its accuracy on the held-out rows.
double probe_accuracy(Array<float> train, const IndexArray& train_labels, Array<float> held_out,
                      const IndexArray& held_out_labels) {
  const Array<float> mu = xt::mean(train, {0});
  const Array<float> sd = xt::sqrt(xt::mean(xt::square(train - mu), {0})) + 1e-3f;
  train = (train - mu) / sd, held_out = (held_out - mu) / sd;
  Generator gen(13);
  nn::Linear<float> probe(train.shape()[1], lessons::bert::kTopics.size(), gen);
  nn::AdamW<float> adam(probe.parameters(), 1e-2, 0.9, 0.999, 1e-8, 0.05);
  for (int step = 0; step < 300; ++step) {
    adam.zero_grad();
    cross_entropy(probe(Tensor<float>(train)), train_labels).backward();
    adam.step();
  }
  NoGrad no_grad;
  return nn::accuracy(nn::argmax_last(probe(Tensor<float>(held_out)).value()), held_out_labels);
}

// The mean of a frozen encoder's output vectors over each entry's real tokens ([CLS] and the
// characters up to the context), as lesson 15's encoder_features reads them.
Array<float> mean_features(nn::EncoderModel<float>& model, const nn::data::TopicSet& s, std::size_t context) {
  NoGrad no_grad;
  model.eval();
  const std::size_t d = model.config().layer.d_model;
  Array<float> f = xt::zeros<float>({s.size(), d});
  for (std::size_t start = 0; start < s.size(); start += 64) {
    std::vector<std::size_t> rows;
    for (std::size_t i = start; i < std::min(s.size(), start + 64); ++i) rows.push_back(i);
    const nn::data::TopicBatch b = nn::data::topic_batch(s, rows, context, nullptr);
    const Array<float> h = model.features(b.ids, b.real).value();  // (B, L, d)
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::size_t n = 0;
      for (std::size_t l = 0; l < h.shape()[1]; ++l)
        if (b.real.mask()(i, l)) xt::view(f, rows[i]) += xt::view(h, i, l), ++n;
      xt::view(f, rows[i]) /= float(std::max<std::size_t>(n, 1));
    }
  }
  return f;
}

// Lesson 15's entries: 100 of each topic to train the probe on, the validation entries to score it.
struct Entries {
  nn::data::ClozeCorpus corpus;
  nn::data::TopicSet train, held_out;
  lessons::bert::ModelSettings settings{48, 4, 2, 192, {32, 32, 4096, 6}, {64, 32, 1024, 1}, 4e-3, 64};  // --quick's
};

const Entries& entries() {
  static const Entries e = [] {
    Entries e{lessons::bert::load_corpus(), {}, {}};
    e.train = nn::data::topic_set(e.corpus, e.corpus.split.train, lessons::bert::kTopics, 100);
    e.held_out = nn::data::topic_set(e.corpus, e.corpus.split.validation, lessons::bert::kTopics);
    return e;
  }();
  return e;
}

// The probe on the bag of characters.
double bag_of_characters() {
  static const double accuracy = [] {
    const Entries& e = entries();
    const std::size_t v = e.corpus.vocab.size(), context = e.settings.context();
    return probe_accuracy(nn::data::character_frequencies(e.train, v, context), e.train.labels,
                          nn::data::character_frequencies(e.held_out, v, context), e.held_out.labels);
  }();
  return accuracy;
}

// The probe on the untrained encoder's mean output vector, over two random draws.
double random_encoder() {
  static const double accuracy = [] {
    const Entries& e = entries();
    double mean = 0;
    for (std::uint64_t seed : {1, 2}) {
      Generator gen(seed);
      nn::MaskedLM<float> bert(lessons::bert::config(e.corpus, e.settings), gen);
      const std::size_t context = e.settings.context();
      mean += probe_accuracy(mean_features(bert.model, e.train, context), e.train.labels,
                             mean_features(bert.model, e.held_out, context), e.held_out.labels) / 2;
    }
    return mean;
  }();
  return accuracy;
}

void grade_random_encoder_probe_accuracy(const std::function<double(double)>& answer, Grader& g) {
  const double bag = bag_of_characters(), predicted = answer(bag), measured = random_encoder();
  g.check(std::abs(predicted - measured) <= 0.08,
          "your prediction against the probe on the untrained encoder's mean output vector",
          with_digits(4, "predicted ", predicted, ", measured ", measured, " (mean of 2 draws; tolerance 0.08); the bag "
                  "of characters ", bag, ", chance ", 1.0 / double(lessons::bert::kTopics.size())),
          "a random encoder has learned nothing, but its input is the entry's characters: the mean of the embedded "
          "tokens is a linear function of what?");
}

}  // namespace

EXERCISE(random_encoder_probe_accuracy, "Predict: what does an untrained encoder know about the topic?",
         grade_random_encoder_probe_accuracy);
HINT(random_encoder_probe_accuracy,
     "the mean of the embedded tokens is E^T f, f the entry's character frequencies: a random linear image of the bag "
     "of characters, which the residual stream carries through the random layers. A linear probe reads about what it "
     "reads from f itself, a little less (48 random directions of a vocabulary about twice that): predict a little "
     "below the bag of characters' accuracy, far above chance");
