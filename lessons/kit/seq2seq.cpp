#include "lessons/kit/seq2seq.hpp"

#include <stdexcept>

#include "io/files.hpp"
#include "lessons/story/lesson.hpp"
#include "nn/checkpoint.hpp"

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

namespace {

std::vector<std::string> ordinary_tokens(const nn::data::Vocab& v) {  // the specials are fixed
  return {v.tokens().begin() + nn::data::Vocab::num_specials, v.tokens().end()};
}

nn::data::Vocab vocab_of(const std::vector<std::string>& tokens) {
  nn::data::Vocab v;
  for (const std::string& t : tokens) v.add(t);
  return v;
}

}  // namespace

void write_model_card(const std::string& stem, const nn::rnn::Seq2SeqConfig& c, const nn::data::Vocab& source,
                      const nn::data::Vocab& target) {
  const Json card = {{"lesson", lesson().info().id}, {"seed", seed()}, {"quick", quick()},
                     {"style", c.style == nn::rnn::DecoderStyle::Bahdanau ? "bahdanau" : "luong"},
                     {"score", c.score}, {"embed", c.embed}, {"encoder_hidden", c.encoder_hidden},
                     {"decoder_hidden", c.decoder_hidden}, {"attention_hidden", c.attention_hidden},
                     {"source_tokens", ordinary_tokens(source)}, {"target_tokens", ordinary_tokens(target)}};
  write_file_atomic(lesson().path(stem + ".json"), card.dump(1) + "\n", "write_model_card");
}

LoadedSeq2Seq load_seq2seq(const std::string& folder, const std::string& stem) {
  const std::string card_file = folder + "/" + stem + ".json", weights = folder + "/" + stem + ".npz";
  Json card;
  try {
    card = Json::parse(read_file(card_file, "load_seq2seq"));
  } catch (const Json::exception& e) {
    throw std::runtime_error("load_seq2seq: '" + card_file + "' is not JSON: " + e.what());
  }
  auto field = [&](const char* key) -> const Json& {
    if (!card.contains(key)) throw std::runtime_error("load_seq2seq: '" + card_file + "' has no \"" + key + "\"");
    return card[key];
  };
  nn::rnn::Seq2SeqConfig c;
  c.style = field("style") == "luong" ? nn::rnn::DecoderStyle::Luong : nn::rnn::DecoderStyle::Bahdanau;
  c.score = field("score").get<std::string>();
  c.embed = field("embed").get<std::size_t>();
  c.encoder_hidden = field("encoder_hidden").get<std::size_t>();
  c.decoder_hidden = field("decoder_hidden").get<std::size_t>();
  c.attention_hidden = field("attention_hidden").get<std::size_t>();
  LoadedSeq2Seq m;
  m.source = vocab_of(field("source_tokens").get<std::vector<std::string>>());
  m.target = vocab_of(field("target_tokens").get<std::vector<std::string>>());
  m.lesson = field("lesson").get<std::string>();
  m.seed = field("seed").get<long long>();
  Generator gen(0);  // every weight is then read from the file
  m.model = std::make_unique<nn::rnn::Seq2Seq>(c, m.source.size(), m.target.size(), gen);
  nn::load_checkpoint(weights, m.model->named_parameters());
  m.model->eval();
  return m;
}

}  // namespace attnlab::lessons
