// Lesson 03's four Luong date models as inspect runs them: the reference checkpoints kept in
// lessons/checkpoints/03_luong_attention still score what the lesson measured on its held-out
// dates, and `inspect luong` answers good input and refuses bad input in one line, writing nothing.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "io/files.hpp"
#include "lessons/kit/seq2seq.hpp"
#include "nn/data/date_task.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::contains;
using attnlab::testing::kHaveCourse;
using attnlab::testing::TempDir;
namespace data = attnlab::nn::data;

namespace {

const std::string kSource = ATTNLAB_SOURCE_DIR, kBin = ATTNLAB_BIN_DIR;
const std::string kReference = kSource + "/lessons/checkpoints/03_luong_attention";
const std::vector<std::string> kScores = {"dot", "general", "concat", "additive"};

}  // namespace

TEST_CASE("the reference Luong models still score their lesson's held-out exact match, on a sample of test dates") {
  // Lesson 03's full run with seed 1: the same task (12,000 dates, seed 1) gives the same held-out
  // test split (1,200 dates), of which the first 400 are decoded here. Each card records its
  // model's exact match on the whole split, one of the values the lesson's reference records over
  // its seeds. Measured: dot 0.9983 on the split and 1.000 on the sample, general 0.9817 and
  // 0.9875, concat 0.9983 and 1.000, additive 1.000 and 1.000. A model that ignored its input
  // would get none right; an untrained one writes no date at all.
  const nlohmann::json ref =
      nlohmann::json::parse(read_file(kSource + "/lessons/reference/03_luong_attention.json"))["metrics"];
  const data::DateTask task = data::make_date_task(12000, 1);
  REQUIRE(task.pairs.test.size() >= 400);
  for (const std::string& score : kScores) {
    CAPTURE(score);
    const LoadedSeq2Seq m = load_seq2seq(kReference, "luong_" + score);
    CHECK(m.lesson == "03_luong_attention");
    CHECK(m.seed == 1);
    CHECK(m.model->config().style == nn::rnn::DecoderStyle::Luong);
    CHECK(m.model->config().score == score);
    REQUIRE(m.held_out.has_value());
    const std::string metric = "test_exact_match_" + score;
    REQUIRE(m.held_out->metric == metric);
    CHECK(m.held_out->examples == task.pairs.test.size());
    CHECK(m.held_out->value >= ref[metric]["min"].get<double>() - 1e-9);
    CHECK(m.held_out->value <= ref[metric]["max"].get<double>() + 1e-9);
    CHECK(m.source.tokens() == task.source_vocab.tokens());
    CHECK(m.target.tokens() == task.target_vocab.tokens());
    data::EncodedPairs sample;
    const std::vector<data::Pair> pairs(task.pairs.test.begin(), task.pairs.test.begin() + 400);
    for (std::size_t i = 0; i < pairs.size(); ++i)
      sample.source.push_back(task.test.source[i]), sample.target.push_back(task.test.target[i]);
    const nn::rnn::Evaluation e = nn::rnn::evaluate(*m.model, sample, pairs, m.target);
    // Three binomial standard deviations at this count for the worst of them (0.98: 0.021).
    CHECK(std::abs(e.exact_match - m.held_out->value) <= 0.025);
  }
}

TEST_CASE("inspect luong: four scores' dates, maps and explorer; bad input in one line, nothing written" *
          doctest::skip(!kHaveCourse)) {
  TempDir d;
  const std::string inspect = kBin + "/inspect", out = d.path + "/out", log = d.path + "/log";
  auto run = [&](const std::string& args) {
    return std::system((inspect + " " + args + " > '" + log + "' 2>&1").c_str()) >> 8;
  };
  REQUIRE(run("luong '3rd of March, 1997' '12/25/68' --out '" + out + "'") == 0);
  const std::string said = read_file(log);
  for (const std::string& score : kScores) CHECK(contains(said, "  " + score));
  CHECK(contains(said, "-> 1997-03-03"));
  CHECK(contains(said, "-> 1968-12-25"));
  CHECK(contains(said, "the models of 03_luong_attention, seed 1"));
  CHECK(std::filesystem::exists(out + "/alignments_1.png"));
  CHECK(std::filesystem::exists(out + "/alignments_2.png"));
  const std::string page = read_file(out + "/explorer.html");
  // All four write the same dates here: each input is one entry with the four scores as its layers.
  for (const std::string& score : kScores) CHECK(contains(page, "{\"name\":\"" + score + "\",\"heads\""));
  CHECK(contains(page, "\"name\":\"\\\"3rd of March, 1997\\\" -> 1997-03-03\""));
  // The neuron view: dot and general, a query times a key, carry both in each input (the page checks
  // their softmax against the weights before it is written); concat and additive say why they have none.
  const auto count = [&](const std::string& part) {
    std::size_t n = 0;
    for (std::size_t at = page.find(part); at != std::string::npos; at = page.find(part, at + 1)) ++n;
    return n;
  };
  CHECK(count("\"parts\":[{\"q\":") == 4);
  CHECK(count("\"scale\":1.0") == 4);  // unscaled: s = h_t . h_s and h_t . W h_s
  CHECK(count("\"no_neuron_view\":\"Luong's concat score") == 2);
  CHECK(count("\"no_neuron_view\":\"Bahdanau's additive score") == 2);
  // A character the models never saw is read as <unk>, said so, and shown as itself.
  REQUIRE(run("luong '3 märz 1997' --out '" + out + "2'") == 0);
  CHECK(contains(read_file(log), "not in the models' vocabulary, read as <unk>: 'ä' and 'z'"));
  // The four write different dates for it: an entry for each.
  CHECK(contains(read_file(out + "2/explorer.html"), "\"name\":\"general: \\\"3 märz 1997\\\" -> 1997-03-03\""));
  CHECK(contains(read_file(out + "2/explorer.html"), "\"ä\""));

  // Bad input: usage errors exit 2; a missing or another lesson's checkpoint exits 1 naming lesson
  // 03; the output folder is never made.
  const std::string none = d.path + "/none";
  CHECK(run("luong --out '" + none + "'") == 2);
  CHECK(contains(read_file(log), "inspect: no input given for luong"));
  CHECK(run("luong ' ' --out '" + none + "'") == 2);
  CHECK(contains(read_file(log), "inspect: an input is empty"));
  CHECK(run("luong '1 May 2001' --from '" + d.path + "/nothing' --out '" + none + "'") == 1);
  CHECK(contains(read_file(log), "luong_dot.json"));
  CHECK(contains(read_file(log), "build/bin/03_luong_attention --out DIR"));
  // Lesson 02's date model under lesson 03's name: loaded, then refused for what its card says.
  const std::string wrong = d.path + "/wrong";
  std::filesystem::create_directories(wrong);
  for (const char* ext : {".json", ".npz"})
    std::filesystem::copy_file(kSource + "/lessons/checkpoints/02_additive_attention/dates" + std::string(ext),
                               wrong + "/luong_dot" + ext);
  CHECK(run("luong '1 May 2001' --from '" + wrong + "' --out '" + none + "'") == 1);
  CHECK(contains(read_file(log), "is not lesson 03's global Luong decoder with the dot score (its card: bahdanau, "
                                 "score additive)"));
  CHECK(contains(read_file(log), "build/bin/03_luong_attention --out DIR"));
  // The four compared must be one run's: a general model whose card says seed 2 is refused.
  const std::string mixed = d.path + "/mixed";
  std::filesystem::copy(kReference, mixed);
  nlohmann::json general = nlohmann::json::parse(read_file(mixed + "/luong_general.json"));
  general["seed"] = 2;
  write_file_atomic(mixed + "/luong_general.json", general.dump(1), "test");
  CHECK(run("luong '1 May 2001' --from '" + mixed + "' --out '" + none + "'") == 1);
  CHECK(contains(read_file(log), "luong_general.json' comes from 03_luong_attention seed 2, luong_dot.json from "
                                 "03_luong_attention seed 1: the four must be one run's"));
  CHECK(!std::filesystem::exists(none));
}
