#include "lessons/kit/translation_model.hpp"

#include <algorithm>
#include <stdexcept>

#include <xtensor/xview.hpp>

#include "io/files.hpp"
#include "lessons/kit/self_attention_input.hpp"
#include "nn/checkpoint.hpp"
#include "nn/positional/positional.hpp"
#include "nn/translate.hpp"

namespace attnlab::lessons {

const char* const kTransformerPositions =
    "sinusoidal (base 10000) added to the token embeddings times sqrt(d_model), from position 0 in the source and "
    "in the decoder input; no learned positions";

namespace {

namespace data = nn::data;
using Transformer = nn::Seq2SeqTransformer<float>;

const char* const kRebuild = "a run of lesson 08 writes a model this code runs: build/bin/08_transformer --seed 1 "
                             "--out DIR, then --from DIR";
constexpr double kProbeTolerance = 1e-3;  // on logits of order 1-10, computed in float

// The probe: the source "w4 w5 ... w11" (the first eight ordinary source ids) and the decoder input
// <bos> w4 ... w7; the logits of the first eight target ids at each of the five positions.
std::vector<double> probe_outputs(Transformer& m) {
  const nn::Seq2SeqConfig& c = m.config();
  const std::size_t S = std::min<std::size_t>(8, c.src_vocab - data::Vocab::num_specials);
  const std::size_t T = std::min<std::size_t>(4, c.tgt_vocab - data::Vocab::num_specials);
  IndexArray src = xt::zeros<Index>({std::size_t(1), S}), tgt = xt::zeros<Index>({std::size_t(1), T + 1});
  for (std::size_t i = 0; i < S; ++i) src(0, i) = Index(data::Vocab::num_specials + i);
  tgt(0, 0) = data::Vocab::bos;
  for (std::size_t i = 0; i < T; ++i) tgt(0, i + 1) = Index(data::Vocab::num_specials + i);
  NoGrad no_grad;
  m.eval();
  const Array<float> logits = m.forward(src, tgt).value();
  std::vector<double> out;
  for (std::size_t t = 0; t <= T; ++t)
    for (std::size_t v = 0; v < std::min<std::size_t>(8, c.tgt_vocab); ++v) out.push_back(logits(0, t, v));
  return out;
}

// The card's "positions": the sinusoidal table described in words (what every card so far holds),
// any other method by its name (lesson 09 trains relative, rope and alibi variants).
std::string positions_entry(nn::Positional p) {
  return p == nn::Positional::Sinusoidal ? kTransformerPositions : nn::positional_name(p);
}
nn::Positional positions_of(const std::string& entry) {
  return entry == kTransformerPositions ? nn::Positional::Sinusoidal : nn::parse_positional(entry);
}

}  // namespace

void write_transformer_card(const std::string& stem, Transformer& model, const data::TranslationTaskOptions& task,
                            const data::Vocab& source, const data::Vocab& target, const HeldOut& held_out) {
  const nn::Seq2SeqConfig& c = model.config();
  const Json task_json = {{"sentences", task.sentences}, {"max_train_words", task.max_train_words},
                          {"per_long_length", task.per_long_length}, {"words_per_class", task.words_per_class},
                          {"fractions", {task.fractions.train, task.fractions.validation, task.fractions.test}},
                          {"sample_seed", task.sample_seed}, {"split_seed", task.split_seed}};
  Json card = card_origin();
  card["model"] = "Seq2SeqTransformer";
  put_layer(card, c.layer);
  card.update(Json{{"encoder_layers", c.encoder_layers}, {"decoder_layers", c.decoder_layers},
                   {"final_norm", c.final_norm.value_or(c.layer.norm_first)}, {"tie_output", c.tie_output},
                   {"positions", positions_entry(c.positional)}, {"source_reads", "words, without <eos>"},
                   {"task", task_json}, {"source_tokens", card_tokens(source)}, {"target_tokens", card_tokens(target)},
                   {"held_out", to_json(held_out)},
                   {"probe", {{"input", "source ids 4..11, decoder input <bos> 4..7 (lessons/kit/translation_model.cpp)"},
                              {"outputs", probe_outputs(model)}}}});
  write_file_atomic(lesson().path(stem + ".json"), card.dump(1) + "\n", "write_transformer_card");
}

LoadedTransformer load_transformer(const std::string& folder, const std::string& stem) {
  const Card card = Card::read(folder + "/" + stem + ".json", "load_transformer");
  card.expect("model", "Seq2SeqTransformer", kRebuild);
  LoadedTransformer m;
  m.source = vocab_from_card(card.field("source_tokens").get<std::vector<std::string>>());
  m.target = vocab_from_card(card.field("target_tokens").get<std::vector<std::string>>());
  nn::Seq2SeqConfig c;
  c.src_vocab = m.source.size(), c.tgt_vocab = m.target.size();
  c.encoder_layers = card.field("encoder_layers").get<std::size_t>();
  c.decoder_layers = card.field("decoder_layers").get<std::size_t>();
  c.layer = layer_of(card);
  c.final_norm = card.field("final_norm").get<bool>();
  c.tie_output = card.field("tie_output").get<bool>();
  try {
    c.positional = positions_of(card.field("positions").get<std::string>());
  } catch (const std::exception&) {
    throw std::runtime_error("load_transformer: '" + card.file + "': positions " + card.field("positions").dump() +
                             " are none this code builds (the sinusoidal table, or a method's name: relative, rope, "
                             "alibi); " + kRebuild);
  }
  c.pad_id = data::Vocab::pad;
  const Json& t = card.field("task");
  try {
    m.task.sentences = t.at("sentences").get<std::size_t>();
    m.task.max_train_words = t.at("max_train_words").get<std::size_t>();
    m.task.per_long_length = t.at("per_long_length").get<std::size_t>();
    m.task.words_per_class = t.at("words_per_class").get<std::size_t>();
    const std::vector<double> f = t.at("fractions").get<std::vector<double>>();
    m.task.fractions = {f.at(0), f.at(1), f.at(2)};
    m.task.sample_seed = t.at("sample_seed").get<std::uint64_t>();
    m.task.split_seed = t.at("split_seed").get<std::uint64_t>();
  } catch (const std::exception& e) {
    throw std::runtime_error("load_transformer: '" + card.file + "': \"task\" is not the task's options: " + e.what());
  }
  const CardOrigin origin = origin_of(card);
  m.lesson = origin.lesson, m.seed = origin.seed;
  m.held_out = held_out_of(card);
  Generator gen(0);  // every weight is then read from the file
  m.model = std::make_unique<Transformer>(c, gen);
  nn::load_checkpoint(folder + "/" + stem + ".npz", m.model->named_parameters());
  check_probe(card, probe_outputs(*m.model), kProbeTolerance, kRebuild);
  return m;
}

namespace {

// Sentence i of a batch's cross-attention (`layers` from nn::cross_attention_weights) as the
// explorer's input, without queries and keys.
AttentionInput cross_attention_input(const std::vector<Array<float>>& layers, std::size_t i,
                                     const std::vector<std::string>& source_words, const data::Vocab& target,
                                     const data::Sequence& translation) {
  std::vector<std::string> queries = target.decode(translation);
  queries.push_back("<eos>");
  const std::size_t S = source_words.size(), T = queries.size();
  AttentionInput in{"\"" + data::detokenize(source_words, data::Tokenizer::words) + "\" -> " +
                        target.decode(translation, data::Tokenizer::words),
                    queries, source_words, {}, {}};
  for (std::size_t l = 0; l < layers.size(); ++l) {
    if (layers[l].dimension() != 4 || i >= layers[l].shape()[0] || layers[l].shape()[2] < T || layers[l].shape()[3] < S)
      throw std::invalid_argument("cross_attention_input: layer " + std::to_string(l + 1) + " of shape " +
                                  shape_str(layers[l].shape()) + " has no (" + std::to_string(T) + ", " +
                                  std::to_string(S) + ") map for sentence " + std::to_string(i));
    in.layers.push_back("layer " + std::to_string(l + 1) + " cross-attention"), in.heads.emplace_back();
    for (std::size_t h = 0; h < layers[l].shape()[1]; ++h)
      in.heads[l].push_back(xt::cast<double>(xt::view(layers[l], i, h, xt::range(0, T), xt::range(0, S))));
  }
  return in;
}

}  // namespace

AttentionInput translated_sentence_input(Transformer& model, const data::EncodedPairs& split, std::size_t i,
                                         const data::Vocab& source, const data::Vocab& target) {
  if (i >= split.size())
    throw std::invalid_argument("translated_sentence_input: sentence " + std::to_string(i) + " of a split of " +
                                std::to_string(split.size()));
  const nn::CrossAttention a = nn::cross_attention_with_parts(model, data::make_seq2seq_batch(split, {i}, false));
  return with_score_parts(cross_attention_input(a.weights, 0, source.decode(split.source[i]), target, split.target[i]),
                          a.parts, 0);
}

SentenceAttention translated_sentence_attention(Transformer& model, const data::EncodedPairs& split, std::size_t i,
                                                const data::Vocab& source, const data::Vocab& target) {
  if (i >= split.size())
    throw std::invalid_argument("translated_sentence_attention: sentence " + std::to_string(i) + " of a split of " +
                                std::to_string(split.size()));
  nn::TransformerAttention a = nn::attention_with_parts(model, data::make_seq2seq_batch(split, {i}, false));
  const std::vector<std::string> words = source.decode(split.source[i]);
  std::vector<std::string> written = target.decode(split.target[i]);
  written.insert(written.begin(), "<bos>");
  // self_attention_input names the layers "layer N"; here they say which stack they are in.
  const auto in_stack = [](AttentionInput in, const std::string& stack) {
    for (std::string& l : in.layers) l = stack + " " + l;
    return in;
  };
  std::vector<Array<float>> cross;
  for (const Tensor<float>& w : a.cross) cross.push_back(w.value());
  return {in_stack(with_score_parts(self_attention_input("\"" + data::detokenize(words, data::Tokenizer::words) + "\"",
                                                         words, a.encoder), a.encoder_parts), "encoder"),
          in_stack(with_score_parts(self_attention_input(data::detokenize(written, data::Tokenizer::words), written,
                                                         a.decoder), a.decoder_parts), "decoder"),
          with_score_parts(cross_attention_input(cross, 0, words, target, split.target[i]), a.cross_parts, 0)};
}

}  // namespace attnlab::lessons
