// `inspect long`: lesson 09's four translation Transformers, one per positions, from their
// reference checkpoints (lessons/checkpoints/09_long_sentences, cards as lessons/kit/
// translation_model.hpp writes them) and the program's answers to good and bad input.
#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "io/files.hpp"
#include "lessons/kit/translation_model.hpp"
#include "nn/metrics.hpp"
#include "nn/translate.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::contains;
using attnlab::testing::kHaveCourse;
using attnlab::testing::TempDir;
namespace data = attnlab::nn::data;

namespace {

const std::string kSource = ATTNLAB_SOURCE_DIR, kBin = ATTNLAB_BIN_DIR;
const std::string kReference = kSource + "/lessons/checkpoints/09_long_sentences";

// Each model: its card's stem, its key in lesson 09's metrics, its positions and --method.
struct Method {
  std::string stem, key;
  nn::Positional positions;
  std::string flag;
};
const std::vector<Method> kMethods = {{"transformer_sinusoidal", "transformer", nn::Positional::Sinusoidal, "sinusoidal"},
                                      {"transformer_relative", "relative", nn::Positional::RelativeBias, "t5"},
                                      {"transformer_rope", "rope", nn::Positional::Rotary, "rope"},
                                      {"transformer_alibi", "alibi", nn::Positional::ALiBi, "alibi"}};

}  // namespace

TEST_CASE("lesson 09's reference Transformers still translate as the lesson measured, on held-out sentences") {
  // lessons/checkpoints/09_long_sentences: lesson 09's full run with seed 1. For each of the four,
  // the card's task options make the lesson's splits again (the same vocabularies, checked); the
  // first 200 test sentences, decoded greedily as the lesson does, must reach a corpus BLEU within
  // 0.02 of the card's (the lesson's on all test sentences), and the card's must lie within the
  // lesson's reference range (seeds 1-3).
  const nlohmann::json ref = nlohmann::json::parse(read_file(kSource + "/lessons/reference/09_long_sentences.json"));
  for (const Method& method : kMethods) {
    CAPTURE(method.stem);
    const LoadedTransformer m = load_transformer(kReference, method.stem);
    CHECK(m.lesson == "09_long_sentences");
    CHECK(m.seed == 1);
    CHECK(m.model->config().positional == method.positions);
    CHECK(m.held_out.metric == "bleu_test_" + method.key);
    const data::TranslationTask task = data::make_translation_task(m.task);
    CHECK(task.source_vocab.tokens() == m.source.tokens());
    CHECK(task.target_vocab.tokens() == m.target.tokens());
    CHECK(task.test.size() == m.held_out.examples);
    const data::EncodedPairs sample = data::first_pairs(task.test, 200);
    const double bleu = nn::corpus_bleu(nn::translate(*m.model, sample), sample.target).score;
    MESSAGE(method.stem, ": BLEU ", bleu, " on the first 200 test sentences; card: ", m.held_out.value);
    CHECK(std::abs(bleu - m.held_out.value) <= 0.02);
    const nlohmann::json& range = ref["metrics"][m.held_out.metric];
    CHECK(m.held_out.value >= range["min"].get<double>() - 0.01);
    CHECK(m.held_out.value <= range["max"].get<double>() + 0.01);
  }
}

TEST_CASE("inspect long --method M: each model's translation; bad input and a missing or mismatched checkpoint "
          "refused naming lesson 09, nothing written" * doctest::skip(!kHaveCourse)) {
  TempDir d;
  const std::string inspect = kBin + "/inspect", log = d / "log";
  auto run = [&](const std::string& args) { return std::system((inspect + " " + args + " > '" + log + "' 2>&1").c_str()) >> 8; };
  // A sentence longer than any in training, typed with a capital and a full stop: each model must
  // write what nn::translate writes for it.
  const LoadedTransformer first_model = load_transformer(kReference, kMethods[0].stem);
  const data::TranslationTask task = data::make_translation_task(first_model.task);
  const data::EncodedPairs one = data::first_pairs(task.longer_ids, 1);
  std::string typed = task.longer[0].source;
  typed[0] = char(std::toupper(static_cast<unsigned char>(typed[0])));
  for (const Method& method : kMethods) {
    CAPTURE(method.stem);
    const LoadedTransformer m = load_transformer(kReference, method.stem);
    const std::vector<data::Sequence> expected = nn::translate(*m.model, one);
    const std::string out = d / method.flag;
    REQUIRE(run("long --method " + method.flag + " '" + typed + ".' --out '" + out + "'") == 0);
    CHECK(contains(read_file(log), "\"" + task.longer[0].source + "\" -> " +
                                       m.target.decode(expected[0], data::Tokenizer::words) + "\n  ("));
    CHECK(contains(read_file(log), "longer than any training sentence, 10; lesson 09 measures"));
    for (const char* f : {"cross_attention_1.png", "cross_attention_mean_1.png", "explorer.html"})
      CHECK(std::filesystem::exists(out + "/" + f));
    CHECK(contains(read_file(out + "/explorer.html"), "layer 2 cross-attention"));
  }
  // Bad input: exit 2 with the usage, and nothing written.
  const std::string none = d / "none";
  CHECK(run("long --method rope 'the giraffe sees two cats' --out '" + none + "'") == 2);
  CHECK(contains(read_file(log), "inspect: not in lesson 09's source vocabulary: 'giraffe' (its "));
  CHECK(contains(read_file(log), "usage: inspect MODEL"));
  CHECK(run("long 'the cat' --out '" + none + "'") == 2);
  CHECK(contains(read_file(log), "inspect: long needs --method"));
  CHECK(run("long --method learned 'the cat' --out '" + none + "'") == 2);
  CHECK(contains(read_file(log), "got 'learned'"));
  CHECK(run("long --method alibi '' --out '" + none + "'") == 2);
  CHECK(run("long --method alibi '...' --out '" + none + "'") == 2);
  CHECK(run("long --method alibi") == 2);
  // A folder without lesson 09's checkpoints, and one whose card is lesson 08's: exit 1, naming lesson 09.
  CHECK(run("long --method alibi 'the cat' --from '" + d / "nothing" + "' --out '" + none + "'") == 1);
  CHECK(contains(read_file(log), "build/bin/09_long_sentences --out DIR"));
  const std::string other = d / "other";
  std::filesystem::create_directories(other);
  const std::string lesson08 = kSource + "/lessons/checkpoints/08_transformer/transformer";
  std::filesystem::copy_file(lesson08 + ".json", other + "/transformer_sinusoidal.json");
  std::filesystem::copy_file(lesson08 + ".npz", other + "/transformer_sinusoidal.npz");
  CHECK(run("long --method sinusoidal 'the cat' --from '" + other + "' --out '" + none + "'") == 1);
  CHECK(contains(read_file(log), "is a model of 08_transformer, not of 09_long_sentences"));
  CHECK(contains(read_file(log), "build/bin/09_long_sentences --out DIR"));
  // A card of other positions under a method's name.
  std::filesystem::copy_file(kReference + "/transformer_rope.json", other + "/transformer_alibi.json");
  std::filesystem::copy_file(kReference + "/transformer_rope.npz", other + "/transformer_alibi.npz");
  CHECK(run("long --method alibi 'the cat' --from '" + other + "' --out '" + none + "'") == 1);
  CHECK(contains(read_file(log), "holds a Transformer with rope positions, not alibi"));
  CHECK(!std::filesystem::exists(none));
}
