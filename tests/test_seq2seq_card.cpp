// The encoder-decoder's model card (lessons/kit/seq2seq.hpp) with local attention: a local-m or
// local-p card loads the model it describes (a local-m model has exactly a global model's
// weights, so a card that forgot its window would load it as global attention without a word).
#include <doctest/doctest.h>

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "io/files.hpp"
#include "lessons/kit/seq2seq.hpp"
#include "nn/checkpoint.hpp"
#include "nn/data/batch.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::TempDir;

namespace {

nlohmann::json card(const std::string& alignment) {
  nlohmann::json c = {{"lesson", "03_luong_attention"}, {"seed", 7}, {"quick", true}, {"style", "luong"},
                      {"score", "general"}, {"embed", 4}, {"encoder_hidden", 3}, {"decoder_hidden", 6},
                      {"attention_hidden", 5}, {"source_tokens", {"a", "b", "c", "d"}},
                      {"target_tokens", {"0", "1", "2", "3", "-"}}};
  if (!alignment.empty()) c["local_window"] = 1, c["local_alignment"] = alignment;
  return c;
}

nn::rnn::Seq2SeqConfig config_of(nn::rnn::LocalAlignment alignment) {
  nn::rnn::Seq2SeqConfig c;
  c.style = nn::rnn::DecoderStyle::Luong, c.score = "general", c.embed = 4, c.encoder_hidden = 3, c.decoder_hidden = 6;
  c.attention_hidden = 5, c.local_window = 1, c.local_alignment = alignment;
  return c;
}

}  // namespace

TEST_CASE("load_seq2seq: a local-m card loads local-m, a local-p card local-p, each computing what was saved") {
  nn::data::EncodedPairs p;
  p.source = {{4, 5, 6, 7, 4, 5, 6, 7}, {5, 4}};
  p.target = {{6, 4, 5}, {7}};
  const nn::data::Seq2SeqBatch b = nn::data::make_seq2seq_batch(p, {0, 1});
  for (const auto& [name, alignment] : {std::pair{"monotonic", nn::rnn::LocalAlignment::monotonic},
                                        std::pair{"predictive", nn::rnn::LocalAlignment::predictive}}) {
    TempDir d;
    Generator gen(3);
    nn::rnn::Seq2Seq saved(config_of(alignment), 8, 9, gen);
    nn::save_checkpoint(d.path + "/model.npz", saved.named_parameters());
    write_file_atomic(d.path + "/model.json", card(name).dump(1), "test");
    const LoadedSeq2Seq loaded = load_seq2seq(d.path, "model");
    CHECK(loaded.model->config().local_window == 1);
    CHECK(loaded.model->config().local_alignment == alignment);
    NoGrad no_grad;
    CHECK(loaded.model->forward(b).value() == saved.forward(b).value());
  }
  // Without the window, the same local-m weights load as a global model, which computes something else.
  TempDir d;
  Generator gen(3);
  nn::rnn::Seq2Seq local_m(config_of(nn::rnn::LocalAlignment::monotonic), 8, 9, gen);
  nn::save_checkpoint(d.path + "/model.npz", local_m.named_parameters());
  write_file_atomic(d.path + "/model.json", card("").dump(1), "test");
  const LoadedSeq2Seq global = load_seq2seq(d.path, "model");
  CHECK(global.model->config().local_window == 0);
  NoGrad no_grad;
  CHECK(global.model->forward(b).value() != local_m.forward(b).value());
}

TEST_CASE("load_seq2seq refuses a local window placed in no known way, naming the card") {
  TempDir d;
  write_file_atomic(d.path + "/model.json", card("sideways").dump(1), "test");
  CHECK_THROWS_WITH_AS(load_seq2seq(d.path, "model"), doctest::Contains("local_alignment \"sideways\""),
                       std::runtime_error);
  nlohmann::json no_alignment = card("monotonic");
  no_alignment.erase("local_alignment");
  write_file_atomic(d.path + "/model.json", no_alignment.dump(1), "test");
  CHECK_THROWS_WITH_AS(load_seq2seq(d.path, "model"), doctest::Contains("has no \"local_alignment\""),
                       std::runtime_error);
}
