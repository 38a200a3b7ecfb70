#include "lessons/kit/bert.hpp"

#include "core/ops.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/story/lesson.hpp"
#include "nn/metrics.hpp"

namespace attnlab::lessons::bert {

ModelSettings model_settings() {
  return full_or_quick(ModelSettings{64, 4, 4, 256, {32, 64, 8192, 10}, {128, 32, 2048, 4}, 2e-3, 400},
                       ModelSettings{48, 4, 2, 192, {32, 32, 4096, 6}, {64, 32, 1024, 1}, 4e-3, 64});
}

nn::data::ClozeCorpus load_corpus() {
  namespace data = nn::data;
  return data::cloze_corpus(data::split_fortunes(data::read_fortunes(), kHeldOutShare, kHeldOutShare, kSplitSeed));
}

std::string shown(const nn::data::Vocab& v, Index id) {
  const std::string& t = v.token(id);
  if (t == "<mask>") return "\u25ae";
  if (t == "<cls>") return "CLS";
  if (t == "<eos>") return "EOS";
  return visible(t);
}

std::string shown_text(const nn::data::Vocab& v, const std::vector<Index>& ids) {
  std::string s;
  for (Index id : ids) s += shown(v, id);
  return s;
}

nn::EncoderModelConfig config(const nn::data::ClozeCorpus& c, const ModelSettings& r) {
  nn::EncoderModelConfig cfg;
  cfg.vocab = c.vocab.size(), cfg.num_classes = kTopics.size(), cfg.num_layers = r.layers;
  cfg.max_length = r.context();
  // Pre-norm with a final norm (BERT itself is post-norm; pre-norm trains without a long warm-up).
  // No dropout: at this size it costs as much as the rest of the step and the few epochs do not overfit.
  cfg.layer = nn::LayerConfig{r.d_model, r.heads, r.d_ff, 0.0, /*norm_first=*/true, nn::Activation::GELU, 1e-5};
  cfg.positional = nn::Positional::RelativeBias;
  cfg.pooling = nn::Pooling::First;  // the classifier reads [CLS]
  cfg.pad_id = nn::data::Vocab::pad;
  return cfg;
}

std::unique_ptr<nn::MaskedLM<float>> new_model(const nn::data::ClozeCorpus& c, const ModelSettings& r) {
  Generator gen(seed());
  return std::make_unique<nn::MaskedLM<float>>(config(c, r), gen);
}

nn::data::ClozeScores score(nn::MaskedLM<float>& bert, const std::vector<nn::data::MaskedWindows>& set) {
  NoGrad no_grad;
  bert.eval();
  nn::data::ClozeTally tally;
  for (const nn::data::MaskedWindows& b : set) {
    const Array<float> logp = log_softmax(bert.forward(b.ids, b.real, b.positions), -1).value();
    const IndexArray guess = nn::argmax_last(logp);
    for (std::size_t k = 0; k < b.size(); ++k)
      tally.add(double(logp(k, std::size_t(b.targets(k)))), guess(k) == b.targets(k), b.choices[k]);
  }
  return tally.scores();
}

}  // namespace attnlab::lessons::bert
