#include "lessons/kit/seq2seq.hpp"

#include <stdexcept>

#include "lessons/story/lesson.hpp"

namespace attnlab::lessons {

void record(const Seq2SeqPlan& p) {
  config({{"examples", p.examples}, {"embed", p.model.embed}, {"encoder_hidden", p.model.encoder_hidden},
          {"hidden", p.model.decoder_hidden}, {"attention_hidden", p.model.attention_hidden},
          {"epochs", p.recipe.epochs}, {"batch", p.recipe.batch}, {"lr", p.recipe.lr}, {"clip", p.recipe.clip}});
}

History train_seq2seq(nn::rnn::Seq2Seq& model, const nn::data::EncodedSplits& data, Recipe recipe) {
  for (const auto& [name, split] : {std::pair{"training", &data.train}, std::pair{"validation", &data.validation}})
    if (split->size() == 0)
      throw std::invalid_argument("train_seq2seq '" + recipe.label + "': the " + std::string(name) + " split is empty");
  recipe.validate = [&] { return Scores{{"loss", nn::rnn::mean_loss(model, data.validation)}}; };
  return train(model, data.train.size(), [&](const std::vector<std::size_t>& rows) {
    return model.loss(nn::data::make_seq2seq_batch(data.train, rows));
  }, recipe);
}

}  // namespace attnlab::lessons
