#include "lessons/kit/translation_setup.hpp"

#include <cmath>
#include <stdexcept>

#include "lessons/kit/seq2seq.hpp"
#include "lessons/story/lesson.hpp"
#include "lessons/story/text.hpp"
#include "nn/translate.hpp"
#include "nn/translation_scores.hpp"

namespace attnlab::lessons {

namespace data = nn::data;

TranslationPlan translation_plan() {
  TranslationPlan p;
  p.sentences = full_or_quick<std::size_t>(30000, 4000);
  p.per_long_length = full_or_quick<std::size_t>(150, 40);
  p.words_per_class = full_or_quick<std::size_t>(0, 10);
  p.epochs = epochs(5, 8);
  p.batch = full_or_quick<std::size_t>(64, 32);
  p.warmup = full_or_quick<long>(400, 300);
  config({{"sentences_generated", p.sentences}, {"words_per_class", p.words_per_class},
          {"max_train_words", kMaxTrainWords}, {"d_model", p.d_model}, {"heads", p.heads}, {"d_ff", p.d_ff},
          {"layers", p.layers}, {"gru_hidden", p.gru_hidden}, {"epochs", p.epochs}, {"batch", p.batch},
          {"warmup", p.warmup}});
  return p;
}

data::TranslationTaskOptions translation_task_options(const TranslationPlan& plan) {
  if (plan.sentences == 0) throw std::invalid_argument("translation_task_options: the plan generates no sentences");
  data::TranslationTaskOptions o;
  o.sentences = plan.sentences, o.max_train_words = kMaxTrainWords, o.per_long_length = plan.per_long_length;
  o.words_per_class = plan.words_per_class, o.sample_seed = seed() + 1, o.split_seed = seed() + 2;
  return o;
}

nn::Seq2SeqConfig translation_transformer_config(const TranslationPlan& p, const data::TranslationTask& t,
                                                 nn::Positional positional) {
  nn::Seq2SeqConfig c;
  c.src_vocab = t.source_vocab.size();
  c.tgt_vocab = t.target_vocab.size();
  c.encoder_layers = c.decoder_layers = p.layers;
  c.layer = nn::LayerConfig{p.d_model, p.heads, p.d_ff, 0.1, /*pre_norm=*/false, nn::Activation::ReLU, 1e-5};
  c.pad_id = data::Vocab::pad;
  c.positional = positional;
  return c;
}

Recipe translation_transformer_recipe(const TranslationPlan& p) {
  Recipe r;
  r.label = "Transformer";
  r.epochs = p.epochs, r.batch = p.batch, r.seed = seed() + 4;
  r.lr = 1.0 / std::sqrt(double(p.d_model) * double(p.warmup));
  r.beta2 = 0.98, r.eps = 1e-9;
  r.warmup = double(p.warmup), r.decay = Decay::inverse_sqrt, r.clip = 1.0;
  r.checkpoint = "transformer.npz";  // with transformer.json (write_transformer_card): what `inspect translate` runs
  return r;
}

std::unique_ptr<nn::Seq2SeqTransformer<float>> translation_transformer(const TranslationPlan& plan,
                                                                       const data::TranslationTask& task,
                                                                       nn::Positional positional) {
  Generator gen(seed() + 3);
  return std::make_unique<nn::Seq2SeqTransformer<float>>(translation_transformer_config(plan, task, positional), gen);
}

History train_translation_transformer(nn::Seq2SeqTransformer<float>& m, const data::TranslationTask& task, Recipe r) {
  r.validate = [&] { return Scores{{"bleu_longer", nn::bleu_of(nn::translate(m, task.longer_ids), task.longer_ids)}}; };
  return train_translation(m, task, r, kLabelSmoothing);
}

Translator train_translation_gru(const TranslationPlan& p, const data::TranslationTask& t, const std::string& score,
                                 const std::string& name, const std::string& key,
                                 std::unique_ptr<nn::rnn::Seq2Seq>& model, History& h) {
  if (t.train.size() == 0)
    throw std::invalid_argument("train_translation_gru '" + name + "': the training split is empty");
  nn::rnn::Seq2SeqConfig c;
  c.style = nn::rnn::DecoderStyle::Bahdanau;
  c.score = score;
  c.embed = c.encoder_hidden = c.decoder_hidden = c.attention_hidden = p.gru_hidden;
  Generator gen(seed() + 5);
  model = std::make_unique<nn::rnn::Seq2Seq>(c, t.source_vocab.size(), t.target_vocab.size(), gen);
  Recipe r;
  r.label = name, r.epochs = p.epochs, r.batch = p.batch, r.seed = seed() + 4;
  r.lr = 3e-3, r.decay = Decay::constant;
  h = train_seq2seq(*model, t, r);
  return translator(name, key, *model, h, t);
}

void save_translation_bleu_by_length(std::vector<plots::Series> series, const std::string& title,
                                     const std::string& stem, const std::string& caption) {
  save_bleu_by_length(std::move(series), double(kMaxTrainWords) + 0.5,
                      {title, text("source words (the last point: ", kLongestBucket, " and 15)"), "corpus BLEU"}, stem,
                      caption);
}

}  // namespace attnlab::lessons
