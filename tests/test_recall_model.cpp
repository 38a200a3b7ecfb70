// The recall model of lesson 18 (nn/recall_model.hpp): every attention kind gives logits of the
// right shape, exact attention's weights are distributions, the batched no-tape scoring agrees
// with scoring the whole set at once, a few steps of training lower the loss, bad sizes refused.
#include <doctest/doctest.h>

#include <cmath>

#include <xtensor/xmath.hpp>
#include <xtensor/xreducer.hpp>

#include "nn/metrics.hpp"
#include "nn/optim.hpp"
#include "nn/recall_model.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::nn;
using doctest::Contains;

namespace {
data::RecallConfig small() {
  data::RecallConfig c;
  c.length = 16;
  c.keys = 8;
  c.values = 4;
  c.pairs = 3;
  return c;
}
}  // namespace

TEST_CASE("recall model: logits (B, L, values) for every attention kind; Linformer's E and F trained only there") {
  const data::RecallConfig c = small();
  Generator data_gen(1);
  const data::Recall set = data::make_recall(c, 5, data_gen);
  std::size_t exact_params = 0;
  for (AttentionKind kind : {AttentionKind::exact, AttentionKind::local, AttentionKind::linear, AttentionKind::linformer,
                             AttentionKind::fixed_global, AttentionKind::asking_global, AttentionKind::strided}) {
    CAPTURE(kind_name(kind));
    Generator gen(2);
    const RecallModel m(c, kind, 8, 4, gen);
    const Tensor<float> logits = m.forward(set);
    CHECK(logits.shape() == Shape{5, 16, 4});
    const double loss = m.loss(set).value()();
    CHECK(std::isfinite(loss));
    CHECK(loss > 0.0);
    if (kind == AttentionKind::exact) exact_params = m.parameters().size();
    CHECK(m.parameters().size() == exact_params + (kind == AttentionKind::linformer ? 2 : 0));
  }
  CHECK(std::string(kind_name(AttentionKind::linformer)) == "linformer");
}

TEST_CASE("recall model: exact weights are distributions over the keys, and match the exact model's output") {
  const data::RecallConfig c = small();
  Generator data_gen(3), gen(4);
  const data::Recall set = data::make_recall(c, 3, data_gen);
  const RecallModel m(c, AttentionKind::exact, 8, 4, gen);
  const Array<float> w = m.exact_weights(set);
  REQUIRE(w.shape() == Shape{3, 16, 16});
  const Array<float> sums = xt::sum(w, {2});
  for (float s : sums) CHECK(s == doctest::Approx(1.0).epsilon(1e-5));
  // The tiled op of the exact model is the same function as the weights times v_proj x.
  NoGrad ng;
  const Tensor<float> x = add(m.key_embed(set.keys), m.value_embed(set.values));
  const Array<float> by_weights = m.out(matmul(Tensor<float>(w), m.v_proj(x))).value();
  const Array<float> direct = m.forward(set).value();
  CHECK(xt::amax(xt::abs(by_weights - direct))() < 1e-5);
}

TEST_CASE("recall_accuracy: batched without the tape, the same as scoring the whole set at once") {
  const data::RecallConfig c = small();
  Generator data_gen(5), gen(6);
  const data::Recall set = data::make_recall(c, 11, data_gen);
  const RecallModel m(c, AttentionKind::linear, 8, 4, gen);
  double whole = 0;
  {
    NoGrad ng;
    whole = accuracy_from_scores(m.forward(set).value(), set.targets, data::kNotAsked);
  }
  CHECK(recall_accuracy(m, set, 3) == doctest::Approx(whole));
  CHECK(recall_accuracy(m, set, 64) == doctest::Approx(whole));
  CHECK_THROWS_WITH_AS(recall_accuracy(m, set, 0), Contains("recall_accuracy: the batch size must be positive"), ShapeError);
}

TEST_CASE("recall model: a few steps of Adam lower the loss (gradients reach every part)") {
  const data::RecallConfig c = small();
  Generator data_gen(7), gen(8);
  const data::Recall set = data::make_recall(c, 32, data_gen);
  RecallModel m(c, AttentionKind::exact, 16, 4, gen);
  Adam<float> opt(m.parameters(), 1e-2);
  const double before = m.loss(set).value()();
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    m.loss(set).backward();
    opt.step();
  }
  CHECK(m.loss(set).value()() < before - 0.1);
}

TEST_CASE("recall model: sizes it cannot use are refused, naming the model and the sizes") {
  const data::RecallConfig c = small();
  Generator gen(9);
  CHECK_THROWS_WITH_AS(RecallModel(c, AttentionKind::local, 8, 17, gen),
                       Contains("RecallModel: needs width > 0 and 0 < band <= length, got width 8, band 17, length 16"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(RecallModel(c, AttentionKind::exact, 0, 4, gen), Contains("got width 0"), ShapeError);
  data::RecallConfig longer = c;
  longer.length = 20;
  Generator data_gen(10);
  const data::Recall other = data::make_recall(longer, 2, data_gen);
  const RecallModel m(c, AttentionKind::exact, 8, 4, gen);
  CHECK_THROWS_WITH_AS(m.forward(other), Contains("RecallModel: sequences of length 16 expected, got keys (2,20)"),
                       ShapeError);
}

TEST_CASE("sparse_pattern: the window, the global rows and columns, the stride; bad sizes named") {
  std::vector<bool> global(10, false);
  global[3] = true;
  const Mask m = sparse_pattern(10, 2, global, false), st = sparse_pattern(10, 3, std::vector<bool>(10, false), true);
  REQUIRE(m.shape() == std::vector<std::size_t>{10, 10});
  CHECK(m(0, 2));
  CHECK_FALSE(m(0, 5));
  CHECK(m(3, 9));  // a global query sees every key
  CHECK(m(9, 3));  // and every query sees it
  CHECK_FALSE(m(9, 0));
  CHECK(st(0, 9));  // 9 is a multiple of 3
  CHECK_FALSE(st(0, 8));
  CHECK_FALSE(st(1, 5));
  CHECK_THROWS_WITH_AS(sparse_pattern(10, 0, global, false), Contains("sparse_pattern: needs a band > 0"), ShapeError);
  CHECK_THROWS_AS(sparse_pattern(9, 2, global, false), ShapeError);
}

TEST_CASE("recall model: the sparse patterns see the window, their global tokens and their stride, and nothing else") {
  const data::RecallConfig c = small();  // length 16
  Generator data_gen(3);
  const data::Recall set = data::make_recall(c, 2, data_gen);
  Generator gen(4);
  const RecallModel fixed(c, AttentionKind::fixed_global, 8, 2, gen), asking(c, AttentionKind::asking_global, 8, 2, gen),
      strided(c, AttentionKind::strided, 8, 4, gen);
  const Mask f = fixed.pattern(set).mask(), a = asking.pattern(set).mask(), s = strided.pattern(set).mask();
  REQUIRE(f.shape() == std::vector<std::size_t>{2, 16, 16});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 16; ++i)
      for (std::size_t j = 0; j < 16; ++j) {
        const std::size_t d = i > j ? i - j : j - i;
        const bool window2 = d <= 2;
        CHECK(f(b, i, j) == (window2 || i < kGlobalTokens || j < kGlobalTokens));
        const bool asks_i = set.keys(b, i) != Index(c.keys) && set.values(b, i) == Index(c.values),
                   asks_j = set.keys(b, j) != Index(c.keys) && set.values(b, j) == Index(c.values);
        CHECK(a(b, i, j) == (window2 || asks_i || asks_j));
        CHECK(s(b, i, j) == (d <= 4 || d % 4 == 0));
      }
  // Every asked position is global: it sees the whole sequence.
  for (std::size_t i = 0; i < 16; ++i)
    if (set.targets(0, i) != data::kNotAsked)
      for (std::size_t j = 0; j < 16; ++j) CHECK(a(0, i, j));
  Generator gen2(5);
  const RecallModel exact(c, AttentionKind::exact, 8, 2, gen2);
  CHECK_THROWS_WITH_AS(exact.pattern(set), Contains("exact is not a sparse pattern"), std::logic_error);
}

TEST_CASE("recall model: the sparse kinds attend by the pattern's description with the bits of its mask, loss and gradients") {
  const data::RecallConfig c = small();  // length 16
  Generator data_gen(13);
  const data::Recall set = data::make_recall(c, 3, data_gen);
  for (AttentionKind kind : {AttentionKind::fixed_global, AttentionKind::asking_global, AttentionKind::strided}) {
    CAPTURE(kind_name(kind));
    Generator gen(14);
    RecallModel m(c, kind, 8, 3, gen);
    // The model's own path (sparse_attention on pattern_description), its loss and gradients...
    const Tensor<float> loss = m.loss(set);
    loss.backward();
    std::vector<Array<float>> grads;
    for (const Tensor<float>& p : m.parameters()) grads.push_back(p.grad());
    // ...against tiled_attention under the written-out mask, by hand.
    m.zero_grad();
    const Tensor<float> x = add(m.key_embed(set.keys), m.value_embed(set.values));  // as RecallModel::embed
    TiledAttentionOptions<float> o;
    o.allowed = m.pattern(set);
    const Tensor<float> by_mask = cross_entropy(m.out(tiled_attention(m.q_proj(x), m.k_proj(x), m.v_proj(x), o)), set.targets);
    by_mask.backward();
    CHECK(loss.value()() == by_mask.value()());
    const std::vector<Tensor<float>> params = m.parameters();
    for (std::size_t i = 0; i < params.size(); ++i) CHECK(params[i].grad() == grads[i]);
    const SparsePattern p = m.pattern_description(set);
    CHECK(p.window == 3);
    CHECK(p.stride == (kind == AttentionKind::strided ? 3 : 0));
    CHECK(p.global_by_block.size() == 3);
  }
  Generator gen(15);
  const RecallModel exact(c, AttentionKind::exact, 8, 2, gen);
  CHECK_THROWS_WITH_AS(exact.pattern_description(set), Contains("exact is not a sparse pattern"), std::logic_error);
}

TEST_CASE("recall model: attention_weights are the weights its output is the sum under, for every kind but Linformer") {
  const data::RecallConfig c = small();
  Generator data_gen(6);
  const data::Recall set = data::make_recall(c, 2, data_gen);
  for (AttentionKind kind : {AttentionKind::exact, AttentionKind::local, AttentionKind::linear,
                             AttentionKind::fixed_global, AttentionKind::asking_global, AttentionKind::strided}) {
    CAPTURE(kind_name(kind));
    Generator gen(7);
    const RecallModel m(c, kind, 8, 2, gen);
    const Array<float> w = m.attention_weights(set);
    REQUIRE(w.shape() == std::vector<std::size_t>{2, 16, 16});
    NoGrad ng;
    const Tensor<float> x = add(m.key_embed(set.keys), m.value_embed(set.values));
    const Array<float> logits = m.out(matmul(Tensor<float>(w), m.v_proj(x))).value(), want = m.forward(set).value();
    CHECK(xt::allclose(logits, want, 1e-4, 1e-5));
    for (std::size_t i = 0; i < 16; ++i) {  // rows are distributions (linear: up to its eps)
      double sum = 0;
      for (std::size_t j = 0; j < 16; ++j) sum += w(1, i, j);
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-4));
    }
    if (kind == AttentionKind::local) CHECK(w(0, 0, 5) == 0.0f);  // beyond the window of 2
  }
  Generator gen(7);
  const RecallModel linformer(c, AttentionKind::linformer, 8, 2, gen);
  CHECK_THROWS_WITH_AS(linformer.attention_weights(set), Contains("RecallModel::attention_weights: Linformer"),
                       std::logic_error);
}
