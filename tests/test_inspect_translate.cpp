// `inspect translate`: the model card and reference checkpoint of lesson 08
// (lessons/checkpoints/08_transformer, lessons/kit/translation_model.hpp) and the program's
// answers to good and bad input.
#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "io/files.hpp"
#include "lessons/kit/translation_model.hpp"
#include "lessons/story/text.hpp"
#include "nn/metrics.hpp"
#include "nn/translate.hpp"
#include "tests/card_editor.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::any_error;
using attnlab::testing::contains;
using attnlab::testing::kHaveCourse;
using attnlab::testing::TempDir;
namespace data = attnlab::nn::data;

namespace {

const std::string kSource = ATTNLAB_SOURCE_DIR, kBin = ATTNLAB_BIN_DIR;
const std::string kReference = kSource + "/lessons/checkpoints/08_transformer";


}  // namespace

TEST_CASE("the reference Transformer still translates as its lesson measured, on held-out sentences") {
  // lessons/checkpoints/08_transformer: lesson 08's full run with seed 1. The card's task options
  // make the lesson's splits again (the same vocabularies, checked); the first 300 test sentences,
  // decoded greedily as the lesson does, must reach a corpus BLEU within 0.02 of the card's (the
  // lesson's on all test sentences), and the card's within the lesson's reference range (seeds 1-3).
  const LoadedTransformer m = load_transformer(kReference, "transformer");
  CHECK(m.lesson == "08_transformer");
  CHECK(m.seed == 1);
  CHECK(m.held_out.metric == "bleu_test_transformer");
  const data::TranslationTask task = data::make_translation_task(m.task);
  CHECK(task.source_vocab.tokens() == m.source.tokens());
  CHECK(task.target_vocab.tokens() == m.target.tokens());
  CHECK(task.test.size() == m.held_out.examples);
  const data::EncodedPairs sample = data::first_pairs(task.test, 300);
  const double bleu = nn::corpus_bleu(nn::translate(*m.model, sample), sample.target).score;
  MESSAGE("reference Transformer: BLEU ", bleu, " on the first 300 test sentences; card: ", m.held_out.value);
  CHECK(std::abs(bleu - m.held_out.value) <= 0.02);
  const nlohmann::json ref = nlohmann::json::parse(read_file(kSource + "/lessons/reference/08_transformer.json"));
  CHECK(m.held_out.value >= ref["metrics"]["bleu_test_transformer"]["min"].get<double>() - 0.01);
  CHECK(m.held_out.value <= ref["metrics"]["bleu_test_transformer"]["max"].get<double>() + 0.01);
}

TEST_CASE("load_transformer refuses a card that does not describe the weights, naming what to run") {
  TempDir d;
  CHECK(contains(any_error([&] { load_transformer(d.path, "transformer"); }), "'" + d.path + "/transformer.json'"));
  const auto with = testing::card_editor(d.path, kReference, "transformer", [](const std::string& dir) { load_transformer(dir, "transformer"); });
  CHECK(with([](nlohmann::json&) {}) == "(no exception)");
  // Positions are the change a checkpoint's shapes cannot reveal (sinusoidal and rotary ones have no
  // weights): a card naming positions this code does not build is refused; one naming another method
  // builds that model, and the sinusoidal weights then fail the card's probe.
  const std::string positions = with([](nlohmann::json& c) { c["positions"] = "rotary (RoPE)"; });
  CHECK(contains(positions, "positions \"rotary (RoPE)\" are none this code builds"));
  CHECK(contains(positions, "build/bin/08_transformer --seed 1 --out DIR"));
  CHECK(contains(with([](nlohmann::json& c) { c["positions"] = "rope"; }), "probe"));
  CHECK(contains(with([](nlohmann::json& c) { c["probe"]["outputs"][0] = c["probe"]["outputs"][0].get<double>() - 1.0; }),
                 "the weights do not compute, with this code, what the lesson recorded on the card's probe (output 0"));
  CHECK(contains(with([](nlohmann::json& c) { c["norm_first"] = true; }), "probe"));  // same shapes, other model
  CHECK(contains(with([](nlohmann::json& c) { c["task"].erase("split_seed"); }), "\"task\" is not the task's options"));
  CHECK(contains(with([](nlohmann::json& c) { c["source_tokens"].erase(0); }), "transformer.npz"));  // shapes listed
}

TEST_CASE("inspect translate: translations, figures and explorer; unknown words and bad input refused, nothing written" *
          doctest::skip(!kHaveCourse)) {
  TempDir d;
  const std::string inspect = kBin + "/inspect", out = d / "out", log = d / "log";
  auto run = [&](const std::string& args) { return std::system((inspect + " " + args + " > '" + log + "' 2>&1").c_str()) >> 8; };
  // Two held-out test sentences, typed with capitals and a full stop: inspect must write what the
  // model writes for them (nn::translate on the same sentences).
  const LoadedTransformer m = load_transformer(kReference, "transformer");
  const data::TranslationTask task = data::make_translation_task(m.task);
  const data::EncodedPairs two = data::first_pairs(task.test, 2);
  const std::vector<data::Sequence> expected = nn::translate(*m.model, two);
  std::string typed = task.pairs.test[0].source;
  typed[0] = char(std::toupper(static_cast<unsigned char>(typed[0])));
  REQUIRE(run("translate '" + typed + ".' '" + task.pairs.test[1].source + "' --out '" + out + "'") == 0);
  for (std::size_t i = 0; i < 2; ++i)
    CHECK(contains(read_file(log), "\"" + task.pairs.test[i].source + "\" -> " +
                                       m.target.decode(expected[i], data::Tokenizer::words) + "\n  writes "));
  for (const char* f : {"cross_attention_1.png", "cross_attention_mean_1.png", "cross_attention_2.png", "explorer.html"})
    CHECK(std::filesystem::exists(out + "/" + f));
  CHECK(contains(read_file(out + "/explorer.html"), "layer 2 cross-attention"));
  // Bad input: exit 2 with the usage, and nothing written.
  CHECK(run("translate 'the giraffe sees two xylophones' 'the cat' --out '" + d / "none" + "'") == 2);
  CHECK(contains(read_file(log), "inspect: not in lesson 08's source vocabulary: 'giraffe' and 'xylophones' (its "));
  CHECK(contains(read_file(log), "usage: inspect MODEL"));
  CHECK(run("translate '...' --out '" + d / "none" + "'") == 2);
  CHECK(contains(read_file(log), "inspect: '...' has no words"));
  CHECK(run("translate") == 2);
  CHECK(run("translate 'a cat' --from '" + d / "nothing" + "' --out '" + d / "none" + "'") == 1);
  CHECK(contains(read_file(log), "08_transformer --out DIR"));
  CHECK(!std::filesystem::exists(d / "none"));
}

TEST_CASE("inspect translate --beam K: the beam's translation and score are nn::beam_translate's; --beam 1 --alpha 0 "
          "is greedy; a bad K or an --alpha without a beam is refused, nothing written" * doctest::skip(!kHaveCourse)) {
  TempDir d;
  const std::string inspect = kBin + "/inspect", out = d / "out", log = d / "log";
  auto run = [&](const std::string& args) { return std::system((inspect + " " + args + " > '" + log + "' 2>&1").c_str()) >> 8; };
  // A held-out test sentence and one longer than any training sentence.
  const LoadedTransformer m = load_transformer(kReference, "transformer");
  const data::TranslationTask task = data::make_translation_task(m.task);
  const std::vector<std::string> typed = {task.pairs.test[0].source, task.longer[0].source};
  const std::vector<data::Sequence> sources = {task.test.source[0], task.longer_ids.source[0]};
  const std::string inputs = "'" + typed[0] + "' '" + typed[1] + "'";
  auto words = [&](const data::Sequence& ids) { return m.target.decode(ids, data::Tokenizer::words); };

  REQUIRE(run("translate " + inputs + " --beam 4 --out '" + out + "'") == 0);
  const std::string beam4 = read_file(log);
  for (std::size_t i = 0; i < 2; ++i) {
    // The decoder called directly: 4 beams, alpha 1 (the default), what the program must print.
    const nn::Hypothesis h = nn::beam_translate(*m.model, sources[i], 4, 1.0);
    CHECK(contains(beam4, "  beam 4 (alpha 1) -> " + words(h.tokens)));
    CHECK(contains(beam4, "  score " + fixed(h.score, 4) + " (log-probability " + fixed(h.log_prob, 4) + " over " +
                              std::to_string(h.tokens.size() + 1) + " tokens with <eos>"));
  }
  for (const char* f : {"cross_attention_1.png", "beam_cross_attention_1.png", "beam_cross_attention_mean_2.png", "explorer.html"})
    CHECK(std::filesystem::exists(out + "/" + f));
  CHECK(contains(read_file(out + "/explorer.html"), "beam 4: "));

  // One beam ranked by the raw log-probability is greedy decoding: the same words as the greedy line.
  data::EncodedPairs split;
  for (const auto& s : sources) split.source.push_back(s), split.target.push_back({});
  const std::vector<data::Sequence> greedy = nn::translate(*m.model, split);
  REQUIRE(run("translate " + inputs + " --beam 1 --alpha 0 --out '" + d / "one" + "'") == 0);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(nn::beam_translate(*m.model, sources[i], 1, 0.0).tokens == greedy[i]);
    CHECK(contains(read_file(log), "\"" + typed[i] + "\" -> " + words(greedy[i]) + "\n"));
    CHECK(contains(read_file(log), "  beam 1 (alpha 0) -> " + words(greedy[i]) + "   (the same as greedy)\n"));
  }

  // Bad K: exit 2 with the usage, and nothing written.
  for (const std::string k : {"0", "17", "two", "-1"}) {
    CHECK(run("translate " + inputs + " --beam " + k + " --out '" + d / "none" + "'") == 2);
    CHECK(contains(read_file(log), "inspect: --beam needs an integer from 1 to 16, got '" + k + "'"));
    CHECK(contains(read_file(log), "usage: inspect MODEL"));
  }
  CHECK(run("translate " + inputs + " --alpha 0.5 --out '" + d / "none" + "'") == 2);
  CHECK(contains(read_file(log), "inspect: --alpha is the beam's length penalty: give --beam K too"));
  CHECK(run("translate " + inputs + " --beam 2 --alpha 3 --out '" + d / "none" + "'") == 2);
  CHECK(contains(read_file(log), "--alpha needs a number from 0 to 2, got '3'"));
  CHECK(!std::filesystem::exists(d / "none"));
}
