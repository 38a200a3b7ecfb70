#include "nn/caption/captioner.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <xtensor/xview.hpp>

#include "core/error.hpp"

namespace attnlab::nn {

template <class T>
PatchEncoder<T>::PatchEncoder(const ViTConfig& c, Generator& gen)
    : patch_embed(c.channels, c.patch, c.layer.d_model, gen),
      pos_embed((check(c.patch > 0 && c.image_height % c.patch == 0 && c.image_width % c.patch == 0, "PatchEncoder",
                       "patch size ", c.patch, " does not divide the image size ", c.image_height, "x", c.image_width),
                 (c.image_height / c.patch) * (c.image_width / c.patch)),
                c.layer.d_model, gen),
      encoder(c.num_layers > 0 ? std::make_unique<Encoder<T>>(c.num_layers, c.layer, gen, /*final_norm=*/false) : nullptr),
      norm(c.layer.d_model, c.layer.eps),
      config_(c),
      num_patches_((c.image_height / c.patch) * (c.image_width / c.patch)) {
  this->register_module("patch_embed", patch_embed);
  this->register_module("pos_embed", pos_embed);
  if (encoder) this->register_module("encoder", *encoder);
  this->register_module("norm", norm);
}

template <class T>
Tensor<T> PatchEncoder<T>::forward(const Tensor<T>& images) {
  need("PatchEncoder", images, "images");
  const Shape s = images.shape();
  check(s.size() >= 3 && s[s.size() - 2] == config_.image_height && s.back() == config_.image_width, "PatchEncoder",
        "expected images of ", config_.image_height, "x", config_.image_width, ", got ", shape_str(s));
  const Tensor<T> x = pos_embed.forward(patch_embed(images));
  return norm(encoder ? encoder->forward(x) : x);
}

template <class T>
Captioner<T>::Captioner(const CaptionerConfig& c, Generator& gen)
    : encoder(c.encoder, gen),
      init(c.encoder.layer.d_model, c.hidden, gen),
      embed(c.vocab, c.embed, gen),
      score(c.hidden, c.encoder.layer.d_model, c.attention_hidden, gen),
      cell(c.embed + c.encoder.layer.d_model, c.hidden, gen),
      out(c.hidden + c.encoder.layer.d_model, c.vocab, gen),
      config_(c) {
  this->register_module("encoder", encoder);
  this->register_module("init", init);
  this->register_module("embed", embed);
  this->register_module("score", score);
  this->register_module("cell", cell);
  this->register_module("out", out);
}

template <class T>
Tensor<T> Captioner<T>::first_state(const Tensor<T>& annotations) const {
  if (config_.summary_init) return tanh(init(mean(annotations, {1})));
  return Tensor<T>::zeros({annotations.shape()[0], config_.hidden});
}

template <class T>
typename Captioner<T>::Glance Captioner<T>::step(const Tensor<T>& annotations, const Tensor<T>& read_keys,
                                                 const IndexArray& prev, const Tensor<T>& state, Glimpse glimpse,
                                                 Generator* draws, const IndexArray* choice) {
  const std::size_t B = annotations.shape()[0], N = annotations.shape()[1], d = annotations.shape()[2];
  Glance g;
  // alpha_t (B, 1, N): the additive score of the previous state against every patch, softmaxed.
  const Tensor<T> alpha = softmax(score.compare(unsqueeze(state, 1), read_keys), -1);
  g.weights = squeeze(alpha, 1);
  Tensor<T> z;
  if (glimpse == Glimpse::soft) {
    z = squeeze(matmul(alpha, annotations), 1);  // sum_i alpha_i a_i
  } else {
    g.choice = IndexArray::from_shape({B});
    const Array<T>& a = g.weights.value();
    for (std::size_t b = 0; b < B; ++b) {
      std::size_t c = 0;
      if (choice) {
        c = std::size_t((*choice)(b));
      } else if (draws) {  // inverse CDF: the first patch whose cumulative weight passes u
        const double u = draws->uniform();
        double cum = 0;
        for (c = 0; c + 1 < N; ++c) {
          cum += double(a(b, c));
          if (u < cum) break;
        }
      } else {  // the patch of largest weight
        for (std::size_t i = 1; i < N; ++i)
          if (a(b, i) > a(b, c)) c = i;
      }
      g.choice(b) = Index(c);
    }
    g.log_choice = log_of_chosen(g.weights, g.choice);
    IndexArray rows = IndexArray::from_shape({B, 1, d});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t k = 0; k < d; ++k) rows(b, 0, k) = g.choice(b);
    z = squeeze(gather(annotations, 1, rows), 1);  // a_{c_t}: the drawn patch alone
  }
  g.state = cell.forward(concat<T>({embed(prev), z}, -1), state);
  g.logits = out(concat<T>({g.state, z}, -1));
  return g;
}

template <class T>
CaptionPass<T> Captioner<T>::teacher_forced(const Tensor<T>& images, const IndexArray& inputs, Glimpse glimpse,
                                            Generator* draws, const IndexArray* choices) {
  const std::size_t B = images.shape()[0], L = inputs.dimension() == 2 ? inputs.shape(1) : 0;
  if (inputs.dimension() != 2 || inputs.shape(0) != B)
    throw std::invalid_argument("Captioner::teacher_forced: inputs " + shape_str(Shape(inputs.shape().begin(), inputs.shape().end())) +
                                " must be (" + std::to_string(B) + ", L): one row of words per image");
  if (glimpse == Glimpse::hard && !draws && !choices)
    throw std::invalid_argument("Captioner::teacher_forced: hard glimpses need draws or choices");
  if (choices && (choices->dimension() != 2 || choices->shape(0) != B || choices->shape(1) != L))
    throw std::invalid_argument("Captioner::teacher_forced: choices " +
                                shape_str(Shape(choices->shape().begin(), choices->shape().end())) + " must be " +
                                shape_str(Shape{B, L}));
  const Tensor<T> a = encoder.forward(images), keys = score.read_keys(a);
  Tensor<T> state = first_state(a);
  std::vector<Tensor<T>> logits, weights, logp;
  CaptionPass<T> pass;
  if (glimpse == Glimpse::hard) pass.choices = IndexArray::from_shape({B, L});
  for (std::size_t t = 0; t < L; ++t) {
    const IndexArray prev = xt::view(inputs, xt::all(), t);
    std::optional<IndexArray> given;
    if (choices) given = IndexArray(xt::view(*choices, xt::all(), t));
    Glance g = step(a, keys, prev, state, glimpse, draws, given ? &*given : nullptr);
    logits.push_back(g.logits), weights.push_back(g.weights);
    if (glimpse == Glimpse::hard) {
      logp.push_back(g.log_choice);
      xt::view(pass.choices, xt::all(), t) = g.choice;
    }
    state = g.state;
  }
  pass.logits = stack(logits, 1), pass.weights = stack(weights, 1);
  if (glimpse == Glimpse::hard) pass.log_choice = stack(logp, 1);
  return pass;
}

template <class T>
Caption<T> Captioner<T>::greedy(const Tensor<T>& images, std::size_t length, Index bos, Glimpse glimpse) {
  NoGrad off;
  const std::size_t B = images.shape()[0];
  const Tensor<T> a = encoder.forward(images), keys = score.read_keys(a);
  Tensor<T> state = first_state(a);
  Caption<T> c{IndexArray::from_shape({B, length}), Array<T>::from_shape({B, length, a.shape()[1]})};
  IndexArray prev = xt::full_like(IndexArray::from_shape({B}), bos);
  for (std::size_t t = 0; t < length; ++t) {
    Glance g = step(a, keys, prev, state, glimpse, nullptr, nullptr);
    const Array<T>& lg = g.logits.value();
    for (std::size_t b = 0; b < B; ++b) {
      std::size_t best = 0;
      for (std::size_t v = 1; v < lg.shape(1); ++v)
        if (lg(b, v) > lg(b, best)) best = v;
      prev(b) = Index(best);
    }
    xt::view(c.words, xt::all(), t) = prev;
    xt::view(c.weights, xt::all(), t, xt::all()) = g.weights.value();
    state = g.state;
  }
  return c;
}

template <class T>
Caption<T> greedy_in_batches(Captioner<T>& cap, const Array<T>& images, std::size_t length, Index bos, Glimpse glimpse,
                             std::size_t batch) {
  const std::size_t N = images.shape(0), P = cap.encoder.num_patches();
  Caption<T> all{IndexArray::from_shape({N, length}), Array<T>::from_shape({N, length, P})};
  const std::size_t step = std::max<std::size_t>(batch, 1);
  for (std::size_t from = 0; from < N; from += step) {
    const std::size_t to = std::min(N, from + step);
    const Caption<T> c = cap.greedy(Tensor<T>(Array<T>(xt::view(images, xt::range(from, to)))), length, bos, glimpse);
    xt::view(all.words, xt::range(from, to)) = c.words;
    xt::view(all.weights, xt::range(from, to)) = c.weights;
  }
  return all;
}

template <class T>
ReinforceLoss<T> reinforce_loss(const CaptionPass<T>& pass, const IndexArray& targets, const IndexArray& word_counts,
                                double baseline, Index ignore) {
  const Shape ls = pass.logits.shape();
  const std::size_t B = ls.at(0), L = ls.at(1);
  if (!pass.log_choice.defined() || pass.log_choice.shape() != Shape{B, L} || targets.dimension() != 2 || targets.shape(0) != B ||
      targets.shape(1) != L || word_counts.dimension() != 1 || word_counts.shape(0) != B)
    throw std::invalid_argument("reinforce_loss: a hard pass with logits " + shape_str(ls) +
                                ", targets (B, L) and word counts (B) are needed");
  const Array<T> logp = log_softmax(pass.logits, -1).value();
  Array<T> advantage = xt::zeros<T>({B, L});
  ReinforceLoss<T> r;
  for (std::size_t b = 0; b < B; ++b) {
    const std::size_t n = std::min<std::size_t>(L, std::size_t(std::max<Index>(0, word_counts(b))));
    double reward = 0;
    for (std::size_t t = 0; t < n; ++t) reward += double(logp(b, t, std::size_t(targets(b, t))));
    for (std::size_t t = 0; t < n; ++t) advantage(b, t) = T(reward - baseline);
    r.mean_reward += reward / double(B);
  }
  r.loss = sub(cross_entropy(pass.logits, targets, {ignore}), mean(mul(Tensor<T>(advantage), pass.log_choice)));
  return r;
}

template ReinforceLoss<float> reinforce_loss<float>(const CaptionPass<float>&, const IndexArray&, const IndexArray&,
                                                    double, Index);
template ReinforceLoss<double> reinforce_loss<double>(const CaptionPass<double>&, const IndexArray&, const IndexArray&,
                                                      double, Index);

template Caption<float> greedy_in_batches<float>(Captioner<float>&, const Array<float>&, std::size_t, Index, Glimpse,
                                                 std::size_t);
template Caption<double> greedy_in_batches<double>(Captioner<double>&, const Array<double>&, std::size_t, Index, Glimpse,
                                                   std::size_t);

template class PatchEncoder<float>;
template class PatchEncoder<double>;
template class Captioner<float>;
template class Captioner<double>;

}  // namespace attnlab::nn
