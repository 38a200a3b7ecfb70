// Gradient checks of BERT's pieces: the masked-language-model head with its output tied to the
// token embedding (both ends of the table get gradients), and the whole MaskedLM on a padded batch
// predicting a few chosen positions (tiny sizes: d 8, 2 heads, FFN 16, dropout off).
#include "gradcheck/cases.hpp"
#include "nn/transformer/masked_lm.hpp"

namespace attnlab::cases {

namespace {
nn::EncoderModelConfig tiny_bert() {
  nn::EncoderModelConfig c;
  c.vocab = 7;
  c.num_classes = 3;
  c.num_layers = 2;
  c.max_length = 5;
  c.layer = {8, 2, 16, 0.0, /*norm_first=*/true, nn::Activation::GELU, 1e-5};
  c.positional = nn::Positional::Learned;
  c.pooling = nn::Pooling::First;
  c.pad_id = 0;
  return c;
}

// Non-zero values for the parameters that start at constants (biases, norm gains), so that no
// gradient path is a special case.
void perturb(const nn::Module<D>& m, Generator& gen) {
  NoGrad ng;
  for (auto& p : m.parameters()) p.mutable_value() += random_uniform<D>(p.shape(), gen, -0.3, 0.3);
}
}  // namespace

GRADCHECK_CASE("MaskedLMHead tied", "h (3,8), embedding (7,8) as input", [] {
  Generator gen(41);
  const TD embedding = rnd({7, 8}, 2);
  nn::MaskedLMHead<D> head(embedding, 1e-5, gen);
  perturb(head, gen);
  Inputs inputs = {rnd({3, 8}, 1), embedding};
  for (const TD& p : head.parameters()) inputs.push_back(p);
  return gradcheck([&](const Inputs& x) { return head.forward(x[0]); }, inputs);
});

GRADCHECK_CASE("MaskedLM", "ids (2,5) padded, 4 positions, 2 pre-norm layers", [] {
  Generator gen(42);
  nn::MaskedLM<D> bert(tiny_bert(), gen);
  perturb(bert, gen);
  const IndexArray ids = {{5, 1, 6, 2, 3}, {5, 4, 4, 0, 0}};
  const Allowed real = Allowed::where(Mask{{true, true, true, true, true}, {true, true, true, false, false}});
  const IndexArray positions = {1, 3, 6, 7};  // (0, 1), (0, 3), (1, 1), (1, 2)
  return gradcheck([&](const Inputs&) { return bert.forward(ids, real, positions); },
                   bert.parameters());
});

GRADCHECK_CASE("MaskedLM fine-tuning", "ids (2,5) padded, [CLS] pooled", [] {
  Generator gen(43);
  nn::MaskedLM<D> bert(tiny_bert(), gen);
  perturb(bert, gen);
  const IndexArray ids = {{5, 1, 6, 2, 3}, {5, 4, 4, 0, 0}};
  const Allowed real = Allowed::where(Mask{{true, true, true, true, true}, {true, true, true, false, false}});
  return gradcheck([&](const Inputs&) { return bert.model.forward(ids, real); }, bert.model.parameters());
});

}  // namespace attnlab::cases
