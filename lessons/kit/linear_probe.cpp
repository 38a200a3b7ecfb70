#include "lessons/kit/linear_probe.hpp"

#include <cmath>
#include <stdexcept>

#include <xtensor/xmath.hpp>
#include <xtensor/xreducer.hpp>

#include "core/ops.hpp"
#include "lessons/kit/train.hpp"
#include "lessons/story/text.hpp"
#include "nn/data/batch.hpp"
#include "nn/layers.hpp"
#include "nn/metrics.hpp"

namespace attnlab::lessons {
namespace {

struct LinearClassifier : nn::Module<float> {
  LinearClassifier(std::size_t features, std::size_t classes, Generator& gen) : linear(features, classes, gen) {
    register_module("linear", linear);
  }
  nn::Linear<float> linear;
};

void check_set(const LabelledFeatures& s, const char* name, std::size_t k, std::size_t classes) {
  const auto& shape = s.x.shape();
  if (shape.size() != 2 || shape[1] != k || s.y.dimension() != 1 || s.y.size() != shape[0])
    throw std::invalid_argument(text("linear_probe: the ", name, " set has features ", shape_str(shape), " and labels ",
                                     shape_str(s.y.shape()), " (need (N, ", k, ") and (N))"));
  for (Index label : s.y)
    if (label < 0 || std::size_t(label) >= classes)
      throw std::invalid_argument(text("linear_probe: a label ", label, " in the ", name, " set, outside [0, ", classes, ")"));
}

}  // namespace

ProbeScores linear_probe(LabelledFeatures train, LabelledFeatures validation, LabelledFeatures test, const ProbeRecipe& r) {
  if (train.x.dimension() != 2 || train.x.shape()[0] == 0)
    throw std::invalid_argument(text("linear_probe: training features ", shape_str(train.x.shape()), " (need (N, k), N > 0)"));
  const std::size_t k = train.x.shape()[1];
  check_set(train, "training", k, r.classes);
  check_set(validation, "validation", k, r.classes);
  check_set(test, "test", k, r.classes);
  // Standardized with the training set's statistics (a constant feature stays 0: its spread is floored).
  // Written as loops: xtensor's reducer over (x - mu)^2 trips a false -Wstringop-overflow in GCC 12.
  const std::size_t n = train.x.shape()[0];
  Array<float> mu = xt::zeros<float>({k}), sd = xt::zeros<float>({k});
  for (std::size_t j = 0; j < k; ++j) {
    double sum = 0, squares = 0;
    for (std::size_t i = 0; i < n; ++i) sum += train.x(i, j);
    mu(j) = float(sum / double(n));
    for (std::size_t i = 0; i < n; ++i) squares += double(train.x(i, j) - mu(j)) * double(train.x(i, j) - mu(j));
    sd(j) = float(std::sqrt(squares / double(n))) + 1e-3f;
  }
  for (LabelledFeatures* s : {&train, &validation, &test}) s->x = (s->x - mu) / sd;
  Generator gen(r.init_seed);
  LinearClassifier probe(k, r.classes, gen);
  Recipe recipe;  // full-batch AdamW at a constant rate, to convergence
  recipe.label = r.label, recipe.epochs = r.steps, recipe.batch = 0;
  recipe.lr = r.lr, recipe.weight_decay = r.weight_decay, recipe.decay = Decay::constant, recipe.clip = 0, recipe.seed = r.order_seed;
  lessons::train(probe, train.y.size(), [&](const std::vector<std::size_t>& rows) {
    return cross_entropy(probe.linear(Tensor<float>(nn::data::take_rows(train.x, rows))), nn::data::take_rows(train.y, rows));
  }, recipe);
  NoGrad no_grad;
  const auto accuracy = [&](const LabelledFeatures& s) {
    return nn::accuracy(nn::argmax_last(probe.linear(Tensor<float>(s.x)).value()), s.y);
  };
  return {accuracy(validation), accuracy(test)};
}

}  // namespace attnlab::lessons
