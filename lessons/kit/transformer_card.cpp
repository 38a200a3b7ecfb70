#include "lessons/kit/transformer_card.hpp"

#include <stdexcept>

#include "core/error.hpp"
#include "io/files.hpp"
#include "lessons/kit/model_card.hpp"
#include "lessons/story/lesson.hpp"
#include "nn/checkpoint.hpp"
#include "nn/positional/positional.hpp"

namespace attnlab::lessons {
namespace {

namespace data = nn::data;

// The fields every card has (lessons/kit/model_card), then the layers; `kind` says which model it is.
Json card_head(const std::string& kind, const nn::LayerConfig& l, std::size_t layers, const data::Vocab& vocab,
               const CardMetric& held_out) {
  Json card = {{"model", kind}};
  card.update(card_origin());
  card["held_out"] = {{"metric", held_out.first}, {"value", held_out.second}};
  card["layers"] = layers;
  put_layer(card, l);
  // the specials (<pad> <bos> <eos> <unk>) have fixed ids; the rest in id order
  card["tokens"] = card_tokens(vocab);
  return card;
}

void write_card(const std::string& stem, const Json& card, const char* who) {
  write_file_atomic(lesson().path(stem + ".json"), card.dump(1) + "\n", who);
}

// A card read back (lessons/kit/model_card), refused when it describes another kind of model.
Card read_card(const std::string& file, const std::string& kind, const char* who) {
  Card c = Card::read(file, who);
  if (c.field("model") != kind)
    throw std::runtime_error(std::string(who) + ": '" + file + "' is the card of a " + c.json["model"].dump() +
                             " model, not a " + kind);
  return c;
}

CardInfo info_of(const Card& c) {
  const Json& h = c.field("held_out");
  const CardOrigin o = origin_of(c);
  return {o.lesson, o.seed, o.quick, {h.at("metric").get<std::string>(), h.at("value").get<double>()}};
}

data::Vocab vocab_of(const Card& c) { return vocab_from_card(c.field("tokens").get<std::vector<std::string>>()); }

// Reads the card and the weights as `load` says; any error but the weights' own names `who`.
template <class Load>
auto with_names(const char* who, Load load) {
  try {
    return load();
  } catch (const Json::exception& e) {
    throw std::runtime_error(std::string(who) + ": " + e.what());
  } catch (const ShapeError&) {
    throw;
  } catch (const IoError&) {
    throw;
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    throw std::runtime_error(what.rfind(who, 0) == 0 ? what : std::string(who) + ": " + what);
  }
}

}  // namespace

void write_gpt_card(const std::string& stem, const nn::CausalLMConfig& c, const data::Vocab& vocab,
                    const CardMetric& held_out) {
  Json card = card_head("gpt", c.layer, c.num_layers, vocab, held_out);
  card["context"] = c.max_length, card["positional"] = nn::positional_name(c.positional);
  card["tie_output"] = c.tie_output;
  write_card(stem, card, "write_gpt_card");
}

void write_bert_card(const std::string& stem, const nn::EncoderModelConfig& c, const data::Vocab& vocab,
                     const CardMetric& held_out) {
  Json card = card_head("bert", c.layer, c.num_layers, vocab, held_out);
  card["context"] = c.max_length, card["positional"] = nn::positional_name(c.positional);
  card["classes"] = c.num_classes;  // the [CLS] classifier lesson 15 fine-tunes (pretraining leaves it as drawn)
  write_card(stem, card, "write_bert_card");
}

LoadedGpt load_gpt(const std::string& folder, const std::string& stem) {
  return with_names("load_gpt", [&] {
    const Card card = read_card(folder + "/" + stem + ".json", "gpt", "load_gpt");
    LoadedGpt m;
    m.vocab = vocab_of(card);
    m.card = info_of(card);
    nn::CausalLMConfig c;
    c.vocab = m.vocab.size(), c.num_layers = card.field("layers").get<std::size_t>();
    c.max_length = card.field("context").get<std::size_t>();
    c.layer = layer_of(card);
    c.positional = nn::parse_positional(card.field("positional").get<std::string>());
    c.tie_output = card.field("tie_output").get<bool>();
    Generator gen(0);  // every weight is then read from the file
    m.model = std::make_unique<nn::CausalLM<float>>(c, gen);
    nn::load_checkpoint(folder + "/" + stem + ".npz", m.model->named_parameters());
    m.model->eval();
    return m;
  });
}

LoadedBert load_bert(const std::string& folder, const std::string& stem) {
  return with_names("load_bert", [&] {
    const Card card = read_card(folder + "/" + stem + ".json", "bert", "load_bert");
    LoadedBert m;
    m.vocab = vocab_of(card);
    m.card = info_of(card);
    // The cloze vocabulary: the characters, then <mask> and <cls> (nn/data/cloze_corpus).
    if (!m.vocab.contains("<mask>") || !m.vocab.contains("<cls>"))
      throw std::runtime_error("'" + card.file + "': its tokens have no <mask> or no <cls>");
    m.ids.mask = m.vocab.id("<mask>"), m.ids.cls = m.vocab.id("<cls>");
    m.ids.first = Index(data::Vocab::num_specials), m.ids.end = m.ids.mask;
    nn::EncoderModelConfig c;
    c.vocab = m.vocab.size(), c.num_classes = card.field("classes").get<std::size_t>();
    c.num_layers = card.field("layers").get<std::size_t>(), c.max_length = card.field("context").get<std::size_t>();
    c.layer = layer_of(card);
    c.positional = nn::parse_positional(card.field("positional").get<std::string>());
    c.pooling = nn::Pooling::First;
    c.pad_id = data::Vocab::pad;
    Generator gen(0);
    m.model = std::make_unique<nn::MaskedLM<float>>(c, gen);
    nn::load_checkpoint(folder + "/" + stem + ".npz", m.model->named_parameters());
    m.model->eval();
    return m;
  });
}

}  // namespace attnlab::lessons
