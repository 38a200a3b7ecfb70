// Gradient checks of lesson 20's captioner: the log-probability of a chosen patch (the op of
// REINFORCE), the doubly stochastic penalty on the attention, the patch encoder, and the captioner's teacher-forced pass with soft glimpses and
// with hard glimpses replayed from fixed choices (the draw itself has no gradient; given the
// draws, the words' logits and log alpha_{t, c_t} are smooth functions of every weight).
#include "gradcheck/cases.hpp"
#include "nn/caption/captioner.hpp"
#include "nn/caption/coverage.hpp"

namespace attnlab::cases {

namespace {
Inputs with_caption_params(const nn::Module<D>& m, Inputs inputs) {
  for (const TD& p : m.parameters()) inputs.push_back(p);
  return inputs;
}

nn::ViTConfig tiny_encoder() {
  nn::ViTConfig c;
  c.image_height = c.image_width = 8;
  c.patch = 4;
  c.num_layers = 1;
  c.layer = {8, 2, 16, 0.0, true, nn::Activation::GELU, 1e-6};
  return c;
}

nn::CaptionerConfig tiny_captioner() {
  nn::CaptionerConfig c;
  c.encoder = tiny_encoder();
  c.vocab = 5, c.embed = 3, c.hidden = 4, c.attention_hidden = 3;
  return c;
}

const IndexArray& three_words() {
  static const IndexArray w = {{0, 3, 1}, {0, 2, 4}};
  return w;
}
}  // namespace

GRADCHECK_CASE("log_of_chosen", "p (2,3,4) in [0.2, 1], one choice per row", [] {
  const IndexArray chosen = {{0, 3, 1}, {2, 2, 0}};
  return gradcheck([&](const Inputs& x) { return log_of_chosen(x[0], chosen); }, {rnd({2, 3, 4}, 41, 0.2, 1.0)});
});

GRADCHECK_CASE("log_of_chosen of a softmax", "softmax(x (3,5)): d/dx = onehot - p", [] {
  const IndexArray chosen = {4, 0, 2};
  return gradcheck([&](const Inputs& x) { return log_of_chosen(softmax(x[0], -1), chosen); }, {rnd({3, 5}, 42)});
});

GRADCHECK_CASE("doubly_stochastic_penalty", "weights (3,4,5), lengths 4, 2, 0; tau 1 and 0.4", [] {
  const IndexArray lengths = {4, 2, 0};
  return gradcheck(
      [&](const Inputs& x) {
        return concat<D>({reshape(nn::doubly_stochastic_penalty(x[0], lengths), {1}),
                          reshape(nn::doubly_stochastic_penalty(x[0], lengths, 0.4), {1})},
                         0);
      },
      {rnd({3, 4, 5}, 53, 0.0, 1.0)});
});

GRADCHECK_CASE("doubly_stochastic_penalty of softmax weights", "softmax(x (2,3,4)) over patches, lengths 3, 1", [] {
  const IndexArray lengths = {3, 1};
  return gradcheck([&](const Inputs& x) { return nn::doubly_stochastic_penalty(softmax(x[0], -1), lengths); },
                   {rnd({2, 3, 4}, 54)});
});

GRADCHECK_CASE("PatchEncoder", "(2,8,8), patch 4, d 8, 2 heads, 1 layer -> (2,4,8)", [] {
  Generator gen(43);
  nn::PatchEncoder<D> enc(tiny_encoder(), gen);
  return gradcheck([&](const Inputs& x) { return enc.forward(x[0]); }, with_caption_params(enc, {rnd({2, 8, 8}, 44)}));
});

GRADCHECK_CASE("PatchEncoder no layers", "(2,8,8), patch 4, d 8: each patch its own annotation -> (2,4,8)", [] {
  nn::ViTConfig c = tiny_encoder();
  c.num_layers = 0;
  Generator gen(49);
  nn::PatchEncoder<D> enc(c, gen);
  return gradcheck([&](const Inputs& x) { return enc.forward(x[0]); }, with_caption_params(enc, {rnd({2, 8, 8}, 50)}));
});

GRADCHECK_CASE("Captioner soft summary init", "s_0 = tanh(W mean a): logits (2,3,5)", [] {
  nn::CaptionerConfig c = tiny_captioner();
  c.summary_init = true;
  Generator gen(51);
  nn::Captioner<D> cap(c, gen);
  return gradcheck([&](const Inputs& x) { return cap.teacher_forced(x[0], three_words(), nn::Glimpse::soft).logits; },
                   with_caption_params(cap, {rnd({2, 8, 8}, 52)}));
});

GRADCHECK_CASE("Captioner soft", "(2,8,8), 3 words teacher-forced, 4 patches -> logits (2,3,5)", [] {
  Generator gen(45);
  nn::Captioner<D> cap(tiny_captioner(), gen);
  return gradcheck([&](const Inputs& x) { return cap.teacher_forced(x[0], three_words(), nn::Glimpse::soft).logits; },
                   with_caption_params(cap, {rnd({2, 8, 8}, 46)}));
});

GRADCHECK_CASE("Captioner hard", "fixed choices: logits (2,3,5) and log alpha (2,3) of the chosen patches", [] {
  Generator gen(47);
  nn::Captioner<D> cap(tiny_captioner(), gen);
  const IndexArray choices = {{0, 3, 2}, {1, 1, 0}};
  return gradcheck(
      [&](const Inputs& x) {
        const nn::CaptionPass<D> p = cap.teacher_forced(x[0], three_words(), nn::Glimpse::hard, nullptr, &choices);
        return concat<D>({reshape(p.logits, {-1}), reshape(p.log_choice, {-1})}, 0);
      },
      with_caption_params(cap, {rnd({2, 8, 8}, 48)}));
});

}  // namespace attnlab::cases
