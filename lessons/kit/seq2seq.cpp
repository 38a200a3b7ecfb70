#include "lessons/kit/seq2seq.hpp"

#include <algorithm>
#include <stdexcept>

#include "io/files.hpp"
#include "lessons/story/lesson.hpp"
#include "nn/checkpoint.hpp"
#include "nn/optim.hpp"

namespace attnlab::lessons {

void record(const Seq2SeqPlan& p) {
  config({{"examples", p.examples}, {"embed", p.model.embed}, {"encoder_hidden", p.model.encoder_hidden},
          {"hidden", p.model.decoder_hidden}, {"attention_hidden", p.model.attention_hidden},
          {"epochs", p.recipe.epochs}, {"batch", p.recipe.batch}, {"lr", p.recipe.lr}, {"clip", p.recipe.clip}});
}

void record_scores(const std::string& suffix, const nn::rnn::Evaluation& test, const History& h) {
  const bool has_loss = std::any_of(h.validation.begin(), h.validation.end(),
                                    [](const auto& score) { return score.first == "loss" && !score.second.empty(); });
  if (!has_loss) throw std::invalid_argument("record_scores '" + suffix + "': the history has no validation loss");
  metric("test_exact_match" + suffix, test.exact_match);
  metric("test_char_accuracy" + suffix, test.char_accuracy);
  metric("validation_loss" + suffix, h.validation_of("loss").back());
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

std::vector<ScoreCost> time_scores(const nn::rnn::Seq2SeqConfig& model, const std::vector<std::string>& scores,
                                   std::size_t source_vocab, std::size_t target_vocab,
                                   const nn::data::Seq2SeqBatch& batch, int rounds, std::uint64_t seed) {
  if (scores.empty() || rounds < 1)
    throw std::invalid_argument("time_scores: need at least one score and one round, got " +
                                std::to_string(scores.size()) + " scores and " + std::to_string(rounds) + " rounds");
  const std::size_t B = batch.source.ids.shape()[0], S = batch.source.ids.shape()[1];
  const std::size_t T = batch.decoder_input.ids.shape()[1];
  std::vector<std::unique_ptr<nn::rnn::Seq2Seq>> models;
  std::vector<std::unique_ptr<nn::Adam<float>>> opts;
  Generator gen(seed);
  const nn::rnn::Tns q0 = nn::rnn::Tns::randn({B, T, model.decoder_hidden}, gen);
  const nn::rnn::Tns k0 = nn::rnn::Tns::randn({B, S, 2 * model.encoder_hidden}, gen);
  std::vector<std::function<void()>> work;
  for (const std::string& score : scores) {
    nn::rnn::Seq2SeqConfig c = model;
    c.score = score;
    models.push_back(std::make_unique<nn::rnn::Seq2Seq>(c, source_vocab, target_vocab, gen));
    opts.push_back(std::make_unique<nn::Adam<float>>(models.back()->parameters(), 1e-3));
    nn::rnn::Seq2Seq& m = *models.back();
    nn::Adam<float>& opt = *opts.back();
    work.push_back([&] {
      opt.zero_grad();
      m.loss(batch).backward();
      nn::clip_grad_norm(opt.params(), 1.0);
      opt.step();
    });
    work.push_back([&] {
      const nn::rnn::Tns q = q0.detach().set_requires_grad(true), k = k0.detach().set_requires_grad(true);
      sum(m.decoder->attention()(q, k, k, batch.source.allowed()).output).backward();
      m.zero_grad();
    });
  }
  const std::vector<Timing> t = interleaved_medians(work, rounds);
  std::vector<ScoreCost> costs;
  for (std::size_t i = 0; i < scores.size(); ++i) costs.push_back({t[2 * i], t[2 * i + 1]});
  return costs;
}

namespace {

Json seq2seq_card(const nn::rnn::Seq2SeqConfig& c, const nn::data::Vocab& source, const nn::data::Vocab& target) {
  Json card = card_origin();
  card.update(Json{{"style", c.style == nn::rnn::DecoderStyle::Bahdanau ? "bahdanau" : "luong"},
                   {"score", c.score}, {"embed", c.embed}, {"encoder_hidden", c.encoder_hidden},
                   {"decoder_hidden", c.decoder_hidden}, {"attention_hidden", c.attention_hidden},
                   {"source_tokens", card_tokens(source)}, {"target_tokens", card_tokens(target)}});
  if (c.local_window > 0) {  // a global model's card stays as it was
    card["local_window"] = c.local_window;
    card["local_alignment"] = c.local_alignment == nn::rnn::LocalAlignment::monotonic ? "monotonic" : "predictive";
  }
  return card;
}

void write_card(const std::string& stem, const Json& card) {
  write_file_atomic(lesson().path(stem + ".json"), card.dump(1) + "\n", "write_model_card");
}

}  // namespace

void write_model_card(const std::string& stem, const nn::rnn::Seq2SeqConfig& c, const nn::data::Vocab& source,
                      const nn::data::Vocab& target) {
  write_card(stem, seq2seq_card(c, source, target));
}

void write_model_card(const std::string& stem, const nn::rnn::Seq2SeqConfig& c, const nn::data::Vocab& source,
                      const nn::data::Vocab& target, const HeldOut& held_out) {
  Json card = seq2seq_card(c, source, target);
  card["held_out"] = to_json(held_out);
  write_card(stem, card);
}

LoadedSeq2Seq load_seq2seq(const std::string& folder, const std::string& stem) {
  const Card card = Card::read(folder + "/" + stem + ".json", "load_seq2seq");
  nn::rnn::Seq2SeqConfig c;
  const std::string style = card.field("style").get<std::string>();
  if (style != "luong" && style != "bahdanau")
    throw std::runtime_error("load_seq2seq: '" + card.file + "' names style \"" + style +
                             "\"; expected \"bahdanau\" (lesson 02) or \"luong\" (lesson 03)");
  c.style = style == "luong" ? nn::rnn::DecoderStyle::Luong : nn::rnn::DecoderStyle::Bahdanau;
  c.score = card.field("score").get<std::string>();
  c.embed = card.field("embed").get<std::size_t>();
  c.encoder_hidden = card.field("encoder_hidden").get<std::size_t>();
  c.decoder_hidden = card.field("decoder_hidden").get<std::size_t>();
  c.attention_hidden = card.field("attention_hidden").get<std::size_t>();
  if (card.json.contains("local_window")) {  // local attention; a card without it is a global model
    c.local_window = card.json["local_window"].get<std::size_t>();
    const std::string alignment = card.field("local_alignment").get<std::string>();
    if (alignment != "predictive" && alignment != "monotonic")
      throw std::runtime_error("load_seq2seq: '" + card.file + "' names local_alignment \"" + alignment +
                               "\"; expected \"predictive\" (local-p) or \"monotonic\" (local-m)");
    c.local_alignment = alignment == "monotonic" ? nn::rnn::LocalAlignment::monotonic
                                                 : nn::rnn::LocalAlignment::predictive;
  }
  LoadedSeq2Seq m;
  m.source = vocab_from_card(card.field("source_tokens").get<std::vector<std::string>>());
  m.target = vocab_from_card(card.field("target_tokens").get<std::vector<std::string>>());
  const CardOrigin origin = origin_of(card);
  m.lesson = origin.lesson, m.seed = origin.seed, m.quick = origin.quick;
  if (card.json.contains("held_out")) m.held_out = held_out_of(card);
  Generator gen(0);  // every weight is then read from the file
  m.model = std::make_unique<nn::rnn::Seq2Seq>(c, m.source.size(), m.target.size(), gen);
  nn::load_checkpoint(folder + "/" + stem + ".npz", m.model->named_parameters());
  m.model->eval();
  return m;
}

}  // namespace attnlab::lessons
