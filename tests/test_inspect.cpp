// Your own input through a trained lesson model: the attention explorer page (lessons/kit/
// explorer.hpp), the model cards that let another program load a lesson's encoder-decoder
// (lessons/kit/seq2seq.hpp), GPT and BERT (lessons/kit/transformer_card.hpp), the reference
// checkpoints kept in lessons/checkpoints/, and the inspect program's answers to good and bad
// input. tests/browser/explorer.py clicks the page.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <xtensor/xbuilder.hpp>

#include "io/files.hpp"
#include "lessons/kit/bert.hpp"
#include "lessons/kit/explorer.hpp"
#include "lessons/kit/self_attention_input.hpp"
#include "lessons/kit/seq2seq.hpp"
#include "lessons/kit/transformer_card.hpp"
#include "nn/data/char_corpus.hpp"
#include "nn/data/date_task.hpp"
#include "nn/lm/score.hpp"
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
const std::string kGptReference = kSource + "/lessons/checkpoints/11_gpt";
const std::string kBertReference = kSource + "/lessons/checkpoints/14_bert";

// A reference checkpoint's card: the lesson's full run with seed 1, recording `metric`, whose value
// is one of those the lesson's reference (lessons/reference/NN.json) records over its seeds.
void check_card(const CardInfo& card, const std::string& lesson, const std::string& metric) {
  CHECK(card.lesson == lesson);
  CHECK(card.seed == 1);
  CHECK(!card.quick);
  REQUIRE(card.held_out.first == metric);
  const nlohmann::json ref =
      nlohmann::json::parse(read_file(kSource + "/lessons/reference/" + lesson + ".json"))["metrics"][metric];
  CHECK(card.held_out.second >= ref["min"].get<double>() - 1e-9);
  CHECK(card.held_out.second <= ref["max"].get<double>() + 1e-9);
}

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
  CHECK(run("nonesuch 'hello'") == 2);
  CHECK(contains(read_file(log), "unknown model 'nonesuch'"));
  CHECK(run("dates '1 May 2001' --from '" + d.path + "/nothing' --out '" + d.path + "/none'") == 1);
  CHECK(contains(read_file(log), "02_additive_attention --out DIR"));
  CHECK(!std::filesystem::exists(d.path + "/none"));
}

TEST_CASE("the reference GPT still scores its lesson's held-out bits per character, on a sample of test entries") {
  // lessons/checkpoints/11_gpt: lesson 11's full run with seed 1, whose card records its test bits
  // per character; lesson 11's split (5 % held out, split seed 1729) gives the same test entries.
  const LoadedGpt m = load_gpt(kGptReference, "gpt");
  check_card(m.card, "11_gpt", "gpt_test_bpc");
  const data::CharCorpus c = data::load_char_corpus({0.05, 1729, 0, 0});
  CHECK(c.vocab.tokens() == m.vocab.tokens());
  // The first 120 of the 750 test entries (19,422 of 133,581 characters): their bits per character
  // come within 0.1 of the whole split's (measured: 2.042 on these against 2.095, the entries
  // differing; a --quick model, trained for seconds, scores 3.2, Kneser-Ney's 4-gram 2.57).
  const data::Sequences sample(c.test.begin(), c.test.begin() + 120);
  const double bpc = nn::lm::mean_of(nn::lm::causal_lm_token_nats(*m.model, sample, data::Vocab::bos, data::Vocab::eos,
                                                                  m.model->config().max_length)) / std::log(2.0);
  CHECK(std::abs(bpc - m.card.held_out.second) < 0.1);
}

TEST_CASE("the reference BERT still fills in masked characters as its lesson measured, on a sample of test windows") {
  // lessons/checkpoints/14_bert: lesson 14's full run with seed 1; its card records the accuracy on
  // the test split's [MASK]ed characters. The same split and held-out mask seed give the same
  // windows: here the first 64 of them (971 [MASK]ed characters).
  const LoadedBert m = load_bert(kBertReference, "bert_mlm");
  check_card(m.card, "14_bert", "mlm_test_accuracy_masked");
  const data::ClozeCorpus c = bert::load_corpus();
  CHECK(c.vocab.tokens() == m.vocab.tokens());
  CHECK(c.ids.mask == m.ids.mask);
  CHECK(c.ids.end == m.ids.end);
  const auto windows = data::held_out_windows(m.ids, c.test, m.model->model.config().max_length, 64, 64,
                                              bert::kHeldOutMaskSeed);
  const data::ClozeScores s = bert::score(*m.model, windows);
  // Within 0.05 of the whole split's (three binomial standard deviations at this count; measured:
  // 0.478 on these against 0.478; a --quick model scores 0.28, the unigram guess 0.16).
  CHECK(std::abs(s.accuracy_on(data::MaskChoice::masked) - m.card.held_out.second) < 0.05);
}

TEST_CASE("load_gpt and load_bert name the file at fault") {
  TempDir d;
  CHECK(contains(error_of([&] { load_gpt(d.path, "gpt"); }), "'" + d.path + "/gpt.json'"));
  // A BERT's card is not a GPT's.
  std::filesystem::copy_file(kBertReference + "/bert_mlm.json", d.path + "/gpt.json");
  CHECK(contains(error_of([&] { load_gpt(d.path, "gpt"); }), "is the card of a \"bert\" model, not a gpt"));
  std::filesystem::copy_file(kGptReference + "/gpt.json", d.path + "/gpt.json",
                             std::filesystem::copy_options::overwrite_existing);
  CHECK(contains(error_of([&] { load_gpt(d.path, "gpt"); }), "gpt.npz"));
  write_file_atomic(d.path + "/bert_mlm.json", "{\"model\": \"bert\"}");
  CHECK(error_of([&] { load_bert(d.path, "bert_mlm"); }) == "load_bert: '" + d.path + "/bert_mlm.json' has no \"tokens\"");
}

TEST_CASE("self_attention_input and self_attention_span: one example's heads, and a few tokens of them") {
  Array<float> a = xt::zeros<float>({2, 3, 4, 4});
  a(1, 2, 3, 1) = 0.5f;
  const Tensor<float> w(a);
  const AttentionInput in = self_attention_input("x", {"a", "b", "c", "d"}, {w, w}, 1);
  CHECK(in.layers == std::vector<std::string>{"layer 1", "layer 2"});
  REQUIRE(in.heads.size() == 2);
  CHECK(in.heads[1].size() == 3);
  CHECK(in.heads[1][2](3, 1) == 0.5);
  CHECK(contains(error_of([&] { self_attention_input("x", {"a", "b"}, {w}); }), "self_attention_input: 'x': layer 1"));
  CHECK(contains(error_of([&] { self_attention_input("x", {"a", "b", "c", "d"}, {w}, 2); }), "for example 2"));
  const AttentionInput span = self_attention_span(in, 1, 3);
  CHECK(span.queries == std::vector<std::string>{"b", "c", "d"});
  CHECK(span.heads[0][2](2, 0) == 0.5);
  CHECK(contains(error_of([&] { self_attention_span(in, 2, 3); }), "self_attention_span: 'x': tokens [2, 5)"));
}

TEST_CASE("inspect gpt and bert: answers, figures and explorer; bad input exits 2 with the usage, writing nothing" *
          doctest::skip(!kHaveCourse)) {
  TempDir d;
  const std::string inspect = kBin + "/inspect", out = d.path + "/out", log = d.path + "/log";
  auto run = [&](const std::string& args) {
    return std::system((inspect + " " + args + " > '" + log + "' 2>&1").c_str()) >> 8;
  };
  auto files_in = [](const std::string& dir) {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::vector<std::string> written = {"explorer.html", "heads_layer_1.png", "heads_layer_2.png",
                                            "heads_layer_3.png", "heads_layer_4.png"};
  REQUIRE(run("gpt 'The meaning of life' --length 30 --seed 3 --out '" + out + "'") == 0);
  const std::string first = read_file(log);
  CHECK(contains(first, "The meaning of life["));
  // Only the outputs: each written under a temporary name and renamed, none left behind.
  CHECK(files_in(out) == written);
  CHECK(contains(read_file(out + "/explorer.html"), "\"layer 4\""));
  REQUIRE(run("gpt 'The meaning of life' --length 30 --seed 3 --out '" + out + "'") == 0);
  CHECK(read_file(log) == first);  // the seed decides the draws
  REQUIRE(run("gpt 'The meaning of life' --length 30 --seed 4 --top-k 3 --temperature 1.5 --out '" + out + "'") == 0);
  CHECK(contains(read_file(log), "temperature 1.5, top-k 3"));

  REQUIRE(run("bert 'To be or n_t to be, that is the qu_stion' --out '" + out + "2'") == 0);
  // The reference model's five guesses for each _, likeliest first: 'o' in "n_t" (its probability
  // 0.738, 'i' 0.144 next), and the text filled with the first guesses.
  CHECK(contains(read_file(log), "\"To be or n_t to be, that is the qu_stion\" -> \"To be or not to be, that is the qu"));
  CHECK(contains(read_file(log), "_ 1 (character 11):  'o' 0.738  'i' 0.144"));
  CHECK(contains(read_file(log), "_ 2 (character 35):  '"));
  CHECK(files_in(out + "2") == written);

  // Bad input: the usage and exit 2; an existing output folder left as it was.
  const std::string before = read_file(out + "/explorer.html");
  auto refused = [&](const std::string& args, const std::string& why) {
    CHECK(run(args + " --out '" + out + "'") == 2);
    CHECK(contains(read_file(log), why));
    CHECK(contains(read_file(log), "usage: inspect MODEL INPUT..."));
  };
  refused("llama 'x'", "inspect: unknown model 'llama' (the models: dates, luong, gpt, bert, vit, translate, long, captions)");
  refused("gpt 'naïve ☃'", "not in the vocabulary of 11_gpt's model (the characters of its training text): 'ï' and '☃'");
  refused("bert 'caf_ ☃'", "not in the vocabulary of 14_bert's model");
  refused("bert 'nothing masked'", "no masked character in \"nothing masked\": write _ for each character to fill in");
  refused("gpt 'x' --temperature 0", "--temperature needs a number from 0.01 to 100, got '0'");
  refused("gpt 'x' --top-k lots", "--top-k");
  refused("gpt 'one' 'two'", "gpt takes one prompt");
  refused("bert 'x_' --top-k 3", "unknown option '--top-k' for bert");
  CHECK(read_file(out + "/explorer.html") == before);
  CHECK(files_in(out) == written);
  // A missing checkpoint: exit 1, naming the lesson to run.
  CHECK(run("bert 'a_c' --from '" + d.path + "/nothing' --out '" + d.path + "/none'") == 1);
  CHECK(contains(read_file(log), "build/bin/14_bert --out DIR"));
  CHECK(!std::filesystem::exists(d.path + "/none"));
}
