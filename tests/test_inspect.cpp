// Your own input through a trained lesson model: the attention explorer page (lessons/kit/
// explorer.hpp), the model card that lets another program load a lesson's encoder-decoder
// (lessons/kit/seq2seq.hpp), the reference checkpoint kept in lessons/checkpoints/, and the
// inspect program's answers to good and bad input. tests/browser/explorer.py clicks the page.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <xtensor/xbuilder.hpp>

#include "io/files.hpp"
#include "lessons/kit/explorer.hpp"
#include "lessons/kit/seq2seq.hpp"
#include "nn/data/date_task.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::contains;
using attnlab::testing::TempDir;
using attnlab::testing::kHaveCourse;
namespace data = attnlab::nn::data;

namespace {

const std::string kSource = ATTNLAB_SOURCE_DIR, kBin = ATTNLAB_BIN_DIR;
const std::string kReference = kSource + "/lessons/checkpoints/02_additive_attention";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

AttentionInput two_by_three() {
  return {"ab -> xyz", {"x", "y", "z"}, {"a", "b"}, {"cross-attention"},
          {{xt::xarray<double>{{0.25, 0.75}, {1.0, 0.0}, {0.5, 0.5}}}}};
}

}  // namespace

TEST_CASE("explorer: the page carries the weights, and refuses a matrix that does not fit its tokens") {
  ExplorerPage page{"Test page", "outputs", "inputs", "A note.", {two_by_three()}};
  const std::string html = explorer_html(page);
  CHECK(contains(html, "<h1>Test page</h1>"));
  CHECK(contains(html, "[[0.25,0.75],[1.0,0.0],[0.5,0.5]]"));
  CHECK(contains(html, "\"query_side\":\"outputs\""));
  // A token that would close the script element is written so that it cannot.
  AttentionInput tricky = two_by_three();
  tricky.keys[0] = "</script>";
  page.inputs = {tricky};
  CHECK(!contains(explorer_html(page), "\"</script>\""));
  CHECK(contains(explorer_html(page), "<\\/script>"));

  AttentionInput wrong = two_by_three();
  wrong.heads[0][0] = xt::ones<double>({3, 3}) / 3.0;
  page.inputs = {wrong};
  CHECK(error_of([&] { explorer_html(page); }) ==
        "explorer: input 'ab -> xyz': layer 'cross-attention', head 1: weights of shape (3, 3) for 3 queries and 2 keys");
  wrong = two_by_three();
  wrong.heads[0][0](1, 1) = std::nan("");
  page.inputs = {wrong};
  CHECK(contains(error_of([&] { explorer_html(page); }), "weight (1, 1) = nan is not a weight in [0, 1]"));
  wrong = two_by_three();
  wrong.layers.push_back("another");
  page.inputs = {wrong};
  CHECK(contains(error_of([&] { explorer_html(page); }), "2 layer names for 1 layers"));
  page.inputs = {};
  CHECK(error_of([&] { explorer_html(page); }) == "explorer: 'Test page' has no inputs");
}

TEST_CASE("the reference date model still does what its lesson measured, on held-out dates") {
  // lessons/checkpoints/02_additive_attention: lesson 02's full run with seed 1, whose reference
  // records test exact match 1.000 on every seed. The same task (12,000 dates, seed 1) gives the
  // same held-out test split; 300 of its dates are decoded here.
  const LoadedSeq2Seq m = load_seq2seq(kReference, "dates");
  CHECK(m.lesson == "02_additive_attention");
  CHECK(m.seed == 1);
  const data::DateTask task = data::make_date_task(12000, 1);
  data::EncodedPairs sample;
  std::vector<data::Pair> pairs;
  for (std::size_t i = 0; i < 300; ++i) {
    const data::Pair& p = task.pairs.test[i];
    sample.source.push_back(m.source.encode(p.source, data::Tokenizer::chars));
    sample.target.push_back(m.target.encode(p.target, data::Tokenizer::chars));
    pairs.push_back(p);
  }
  const nlohmann::json ref = nlohmann::json::parse(read_file(kSource + "/lessons/reference/02_additive_attention.json"));
  const double lowest = ref["metrics"]["test_exact_match"]["min"].get<double>();
  const nn::rnn::Evaluation e = nn::rnn::evaluate(*m.model, sample, pairs, m.target);
  CHECK(e.exact_match >= lowest - 0.02);
}

TEST_CASE("load_seq2seq names the file at fault and what to do") {
  TempDir d;
  CHECK(contains(error_of([&] { load_seq2seq(d.path, "dates"); }), "'" + d.path + "/dates.json'"));
  write_file_atomic(d.path + "/dates.json", "{\"lesson\": \"02_additive_attention\"}");
  CHECK(contains(error_of([&] { load_seq2seq(d.path, "dates"); }), "has no \"style\""));
  std::filesystem::copy_file(kReference + "/dates.json", d.path + "/dates.json",
                             std::filesystem::copy_options::overwrite_existing);
  CHECK(contains(error_of([&] { load_seq2seq(d.path, "dates"); }), "dates.npz"));
}

TEST_CASE("inspect: answers, figures and explorer for good input; one-line errors and nothing written for bad" *
          doctest::skip(!kHaveCourse)) {
  TempDir d;
  const std::string inspect = kBin + "/inspect", out = d.path + "/out", log = d.path + "/log";
  auto run = [&](const std::string& args) {
    return std::system((inspect + " " + args + " > '" + log + "' 2>&1").c_str()) >> 8;
  };
  REQUIRE(run("dates '3rd of March, 1997' '12/25/68' --out '" + out + "'") == 0);
  CHECK(contains(read_file(log), "\"3rd of March, 1997\" -> 1997-03-03"));
  CHECK(contains(read_file(log), "\"12/25/68\" -> 1968-12-25"));
  CHECK(std::filesystem::exists(out + "/attention_1.png"));
  CHECK(std::filesystem::exists(out + "/attention_2.png"));
  CHECK(contains(read_file(out + "/explorer.html"), "\\\"3rd of March, 1997\\\" -> 1997-03-03"));
  // A character never seen in training is read as <unk>, said, and shown as itself.
  REQUIRE(run("dates '3 märz 1997' --out '" + out + "2'") == 0);
  CHECK(contains(read_file(log), "not in the model's vocabulary, read as <unk>: 'ä'"));
  // Bad input: usage errors exit 2, a missing model 1, and nothing is written.
  CHECK(run("") == 2);
  CHECK(run("dates") == 2);
  CHECK(contains(read_file(log), "inspect: no input given for dates"));
  CHECK(run("dates '  '") == 2);
  CHECK(run("gpt 'hello'") == 2);
  CHECK(contains(read_file(log), "unknown model 'gpt'"));
  CHECK(run("dates '1 May 2001' --from '" + d.path + "/nothing' --out '" + d.path + "/none'") == 1);
  CHECK(contains(read_file(log), "02_additive_attention --out DIR"));
  CHECK(!std::filesystem::exists(d.path + "/none"));
}
