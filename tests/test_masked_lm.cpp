// BERT's pieces: the 80/10/10 masking rule (counts, shares over many draws, what is eligible,
// seeds, bad rules) and MaskedLM (shapes, the gathered positions equal to the head on every token,
// the tie to the embedding, names, bad positions, float against double).
#include <doctest/doctest.h>

#include <map>

#include "core/gradcheck.hpp"
#include "helpers.hpp"
#include "nn/data/masking.hpp"
#include "nn/transformer/masked_lm.hpp"

using namespace attnlab;
using namespace attnlab::nn;
using namespace attnlab::nn::data;
using attnlab::testing::contains;
using attnlab::testing::error_of;

namespace {
constexpr Index kMask = 3, kFirst = 4, kEnd = 40;

std::vector<Index> characters(std::size_t n, Generator& gen) {
  std::vector<Index> ids;
  for (std::size_t i = 0; i < n; ++i) ids.push_back(kFirst + Index(gen.below(kEnd - kFirst)));
  return ids;
}

EncoderModelConfig small_bert(std::size_t vocab = 9) {
  EncoderModelConfig c;
  c.vocab = vocab;
  c.num_classes = 3;
  c.num_layers = 2;
  c.max_length = 6;
  c.layer = {8, 2, 16, 0.0, true, Activation::GELU, 1e-5};
  c.positional = Positional::Learned;
  c.pooling = Pooling::First;
  c.pad_id = 0;
  return c;
}
}  // namespace

TEST_CASE("mask_tokens: 15 % of the eligible tokens, each masked, replaced or kept") {
  Generator gen(1);
  std::vector<Index> ids = characters(200, gen);
  ids[0] = 1;  // a [CLS]-like special and padding are never chosen
  ids[199] = 0;
  const MaskedTokens m = mask_tokens(ids, kMask, kFirst, kEnd, gen);
  REQUIRE(m.input.size() == ids.size());
  std::size_t chosen = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const bool is_target = m.target[i] != -100;
    CHECK(is_target == (m.choice[i] != MaskChoice::none));
    if (!is_target) {
      CHECK(m.input[i] == ids[i]);
      continue;
    }
    ++chosen;
    CHECK(m.target[i] == ids[i]);
    if (m.choice[i] == MaskChoice::masked) CHECK(m.input[i] == kMask);
    if (m.choice[i] == MaskChoice::kept) CHECK(m.input[i] == ids[i]);
    if (m.choice[i] == MaskChoice::random) CHECK((m.input[i] >= kFirst && m.input[i] < kEnd));
  }
  CHECK(chosen == 30);  // round(0.15 * 198)
  CHECK(m.choice[0] == MaskChoice::none);
  CHECK(m.choice[199] == MaskChoice::none);
}

TEST_CASE("mask_tokens: over many draws the shares are 80/10/10 and every place is as likely") {
  Generator gen(2);
  const std::vector<Index> ids = characters(100, gen);
  std::map<MaskChoice, double> count;
  std::vector<double> per_place(ids.size(), 0.0);
  const int draws = 4000;
  for (int d = 0; d < draws; ++d) {
    const MaskedTokens m = mask_tokens(ids, kMask, kFirst, kEnd, gen);
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (m.choice[i] != MaskChoice::none) ++count[m.choice[i]], ++per_place[i];
  }
  const double chosen = count[MaskChoice::masked] + count[MaskChoice::random] + count[MaskChoice::kept];
  CHECK(chosen == doctest::Approx(15.0 * draws));
  // 60,000 chosen: the binomial sd of a 10 % share is 0.12 %, of the 80 % share 0.16 %.
  CHECK(count[MaskChoice::masked] / chosen == doctest::Approx(0.8).epsilon(0.01));
  CHECK(count[MaskChoice::random] / chosen == doctest::Approx(0.1).epsilon(0.05));
  CHECK(count[MaskChoice::kept] / chosen == doctest::Approx(0.1).epsilon(0.05));
  for (double p : per_place) CHECK(p / draws == doctest::Approx(0.15).epsilon(0.15));  // sd 0.0056
}

TEST_CASE("mask_tokens: short sequences, seeds, other rules, bad rules") {
  Generator a(3), b(3);
  const std::vector<Index> ids = {1, 5, 6, 7, 0};
  const MaskedTokens ma = mask_tokens(ids, kMask, kFirst, kEnd, a), mb = mask_tokens(ids, kMask, kFirst, kEnd, b);
  CHECK(ma.input == mb.input);
  CHECK(ma.target == mb.target);
  std::size_t chosen = 0;
  for (Index t : ma.target) chosen += t != -100;
  CHECK(chosen == 1);  // round(0.45) = 0, but a sequence with characters always has a target
  CHECK(mask_tokens({0, 1, 2}, kMask, kFirst, kEnd, a).target == std::vector<Index>{-100, -100, -100});

  MaskingRule all_masked{1.0, 1.0, 0.0};
  const MaskedTokens every = mask_tokens(ids, kMask, kFirst, kEnd, a, all_masked, -1);
  CHECK(every.input == std::vector<Index>{1, kMask, kMask, kMask, 0});
  CHECK(every.target == std::vector<Index>{-1, 5, 6, 7, -1});

  CHECK(contains(error_of([&] { mask_tokens(ids, kMask, kFirst, kEnd, a, {0.15, 0.8, 0.3}); }), "mask_tokens"));
  CHECK(contains(error_of([&] { mask_tokens(ids, kMask, kFirst, kEnd, a, {-0.1, 0.8, 0.1}); }), "select -0.1"));
  CHECK(contains(error_of([&] { mask_tokens(ids, 5, kFirst, kEnd, a); }), "mask id 5"));
  CHECK(contains(error_of([&] { mask_tokens(ids, kMask, 9, 9, a); }), "are empty"));
}

TEST_CASE("MaskedLM: logits at the chosen positions, the head on every token, tied to the embedding") {
  Generator gen(4);
  MaskedLM<double> bert(small_bert(), gen);
  const IndexArray ids = {{8, 4, 5, 6, 7}, {8, 5, 5, 0, 0}};
  const Allowed real = Allowed::where(Mask{{true, true, true, true, true}, {true, true, true, false, false}});
  const IndexArray positions = {1, 4, 7};
  const Tensor<double> logits = bert.forward(ids, real, positions);
  CHECK(logits.shape() == Shape{3, 9});
  // The same as the head applied to the whole (B, L, d) output, then the rows picked.
  const Tensor<double> all = bert.mlm.forward(reshape(bert.model.features(ids, real), {10, 8}));
  for (std::size_t k = 0; k < 3; ++k)
    for (std::size_t v = 0; v < 9; ++v)
      CHECK(logits.value()(k, v) == doctest::Approx(all.value()(std::size_t(positions(k)), v)).epsilon(1e-12));

  // Tied: the output projection is the embedding table, so both ends send it gradient; the
  // classifier is not touched by pretraining.
  sum(logits).backward();
  CHECK(bert.model.embed.weight.has_grad());
  CHECK_FALSE(bert.model.head.weight.has_grad());
  const auto names = bert.named_parameters();
  CHECK(names.front().first == "model.embed.weight");
  std::size_t mlm = 0;
  for (const auto& [n, p] : names) mlm += n.rfind("mlm.", 0) == 0;
  CHECK(mlm == 5);  // transform.weight, transform.bias, norm.weight, norm.bias, bias: no second table
  CHECK(bert.parameter_count() == bert.model.parameter_count() + 8 * 8 + 8 + 8 + 8 + 9);
}

TEST_CASE("MaskedLM: bad positions name the module; float agrees with double") {
  Generator gen(5);
  MaskedLM<double> bert(small_bert(), gen);
  const IndexArray ids = {{8, 4, 5}, {8, 5, 5}};
  CHECK(contains(error_of([&] { bert.forward(ids, std::nullopt, IndexArray{0, 6}); }), "MaskedLM: position 6"));
  CHECK(contains(error_of([&] { bert.forward(ids, std::nullopt, IndexArray{-1}); }), "MaskedLM"));
  CHECK(contains(error_of([&] { bert.forward(ids, std::nullopt, IndexArray{{0, 1}}); }), "expected positions (N)"));
  CHECK(contains(error_of([&] { bert.mlm.forward(Tensor<double>::zeros({2, 5})); }), "MaskedLMHead"));

  Generator g1(6), g2(6);
  MaskedLM<double> d(small_bert(), g1);
  MaskedLM<float> f(small_bert(), g2);
  const auto pd = d.named_parameters();
  const auto pf = f.named_parameters();
  {
    NoGrad ng;
    for (std::size_t i = 0; i < pd.size(); ++i) pd[i].second.mutable_value() = xt::cast<double>(pf[i].second.value());
  }
  const Array<double> ld = d.forward(ids, std::nullopt, IndexArray{1, 2, 4}).value();
  const Array<float> lf = f.forward(ids, std::nullopt, IndexArray{1, 2, 4}).value();
  for (std::size_t i = 0; i < ld.size(); ++i) CHECK(double(lf.data()[i]) == doctest::Approx(ld.data()[i]).epsilon(1e-4));
}

TEST_CASE("MaskedLMHead and MaskedLM have gradcheck rows") {
  // (tests/test_gradcheck_coverage.cpp lists the older modules; these two are checked here.)
  for (const std::string name : {"MaskedLMHead", "MaskedLM", "MaskedLM fine-tuning"}) {
    bool found = false;
    for (const auto& c : gradcheck_registry()) found = found || c.name == name || c.name.rfind(name + " ", 0) == 0;
    CHECK_MESSAGE(found, "no gradcheck row for ", name);
  }
}
