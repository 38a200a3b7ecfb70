// A causal language model read position by position (nn/lm/by_position): the loss at each position
// against one forward per opening, the counted model's against its own token scores, the causal
// mask seen as a logit change of exactly 0 before the first changed token, the KV cache against the
// full forward; the counted baselines of every order (nn/lm/kneser_ney_orders); the openings and
// text of a character corpus (nn/data/char_corpus); and the errors, by name.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include "core/ops.hpp"
#include "nn/data/char_corpus.hpp"
#include "nn/lm/by_position.hpp"
#include "nn/lm/kneser_ney_orders.hpp"
#include "nn/lm/score.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::nn;
using attnlab::testing::contains;
using attnlab::testing::error_of;
using Seq = std::vector<Index>;

namespace {

constexpr Index kBos = 1, kEos = 2;

std::unique_ptr<CausalLM<double>> tiny_lm(std::size_t max_length = 16) {
  CausalLMConfig c;
  c.vocab = 9;
  c.num_layers = 2;
  c.max_length = max_length;
  c.layer = {16, 2, 32, 0.0, true, Activation::GELU, 1e-5};
  c.positional = Positional::Rotary;
  Generator gen(5);
  auto lm = std::make_unique<CausalLM<double>>(c, gen);
  lm->eval();
  return lm;
}

const std::vector<Seq> kOpenings{{3, 4, 5, 6}, {8, 7, 3, 3}, {4, 4, 4, 5}};

}  // namespace

TEST_CASE("as_row: one sequence as a batch of one") {
  const IndexArray row = lm::as_row({3, 4, 5});
  REQUIRE(row.shape() == std::vector<std::size_t>{1, 3});
  CHECK(row(0, 2) == 5);
}

TEST_CASE("openings: the first tokens of every sequence long enough") {
  CHECK(lm::openings({{3, 4, 5}, {6}, {7, 8}}, 2) == std::vector<Seq>{{3, 4}, {7, 8}});
  CHECK(lm::openings({{3}}, 2).empty());
}

TEST_CASE("after_bos: <bos> then every token but the last, row by row") {
  const IndexArray ids = lm::after_bos(kOpenings, 1, 2, kBos);
  REQUIRE(ids.shape() == std::vector<std::size_t>{2, 4});
  CHECK(ids(0, 0) == kBos);
  CHECK(ids(0, 1) == 8);
  CHECK(ids(0, 3) == 3);
  CHECK(ids(1, 2) == 4);
  CHECK_OP_ERROR("after_bos", lm::after_bos(kOpenings, 2, 2, kBos));
  CHECK(contains(error_of([] { lm::after_bos({{3, 4}, {5}}, 0, 2, kBos); }), "opening 1 holds 1 tokens, opening 0 holds 2"));
}

TEST_CASE("causal_lm_nats_by_position: the mean over openings of one forward each, whatever the batch") {
  auto model = tiny_lm();
  std::vector<double> expected(4, 0.0);
  for (const Seq& o : kOpenings) {
    Seq x{kBos};
    x.insert(x.end(), o.begin(), o.end() - 1);
    IndexArray ids = IndexArray::from_shape({1, 4});
    std::copy(x.begin(), x.end(), ids.begin());
    NoGrad no_grad;
    const Array<double> logp = log_softmax(model->forward(ids), -1).value();
    for (std::size_t t = 0; t < 4; ++t) expected[t] -= logp(0, t, std::size_t(o[t])) / 3.0;
  }
  for (std::size_t batch : {1, 2, 100}) {
    const std::vector<double> got = lm::causal_lm_nats_by_position(*model, kOpenings, kBos, batch);
    REQUIRE(got.size() == 4);
    for (std::size_t t = 0; t < 4; ++t) CHECK(got[t] == doctest::Approx(expected[t]).epsilon(1e-12));
  }
  CHECK_OP_ERROR("causal_lm_nats_by_position", lm::causal_lm_nats_by_position(*model, {}, kBos));
  CHECK_OP_ERROR("causal_lm_nats_by_position", lm::causal_lm_nats_by_position(*model, kOpenings, kBos, 0));
  CHECK(contains(error_of([&] { lm::causal_lm_nats_by_position(*model, {Seq(17, 3)}, kBos); }),
                 "openings of 17 tokens are longer than max_length 16"));
  model->train();
  CHECK(contains(error_of([&] { lm::causal_lm_nats_by_position(*model, kOpenings, kBos); }), "training mode"));
}

TEST_CASE("kneser_ney_nats_by_position: the token scores of each opening, its <eos> left out") {
  const lm::KneserNey kn({{3, 4, 5, 6, 3, 4}, {8, 7, 3, 3, 4}}, 9, 3, kBos, kEos);
  const std::vector<std::vector<double>> all = kn.token_nats(kOpenings);
  for (std::size_t order = 1; order <= 3; ++order) {
    const std::vector<double> got = lm::kneser_ney_nats_by_position(kn, kOpenings, order);
    REQUIRE(got.size() == 4);
    for (std::size_t t = 0; t < 4; ++t) {
      const double expected = (all[order - 1][t] + all[order - 1][5 + t] + all[order - 1][10 + t]) / 3.0;
      CHECK(got[t] == doctest::Approx(expected).epsilon(1e-12));
    }
  }
  CHECK(contains(error_of([&] { lm::kneser_ney_nats_by_position(kn, kOpenings, 4); }), "order 4 is outside 1 .. 3"));
}

TEST_CASE("logit_change_by_position: exactly 0 before the first change, not after") {
  auto model = tiny_lm();
  const Seq a{kBos, 3, 4, 5, 6, 7}, b{kBos, 3, 4, 8, 8, 8};
  const std::vector<double> change = lm::logit_change_by_position(*model, a, b);
  REQUIRE(change.size() == 6);
  for (std::size_t t = 0; t < 3; ++t) CHECK(change[t] == 0.0);
  for (std::size_t t = 3; t < 6; ++t) CHECK(change[t] > 1e-6);
  CHECK(contains(error_of([&] { lm::logit_change_by_position(*model, a, {kBos}); }), "got 6 and 1"));
}

TEST_CASE("cache_max_diff: one token at a time through the cache gives the full forward's logits") {
  auto model = tiny_lm();
  CHECK(lm::cache_max_diff(*model, {kBos, 3, 4, 5, 6, 7, 8}) < 1e-12);
  CHECK_OP_ERROR("cache_max_diff", lm::cache_max_diff(*model, {}));
}

TEST_CASE("count_kneser_ney_orders: every order scored on validation, the best one kept") {
  const std::vector<Seq> train{{3, 4, 5, 3, 4, 5, 3, 4, 5}, {3, 4, 5, 6}}, validation{{3, 4, 5, 3, 4}};
  const lm::KneserNeyOrders o = lm::count_kneser_ney_orders(train, validation, 9, 4, kBos, kEos);
  REQUIRE(o.validation_nats.size() == 4);
  CHECK(o.validation_nats == o.model->mean_nats(validation));
  for (std::size_t k = 1; k <= 4; ++k) CHECK(o.best() <= o.nats(k));
  CHECK(o.best_order > 1);  // the text repeats its training text: context helps
  CHECK(o.count_seconds >= 0.0);
  CHECK_OP_ERROR("count_kneser_ney_orders", lm::count_kneser_ney_orders(train, {}, 9, 4, kBos, kEos));
}

TEST_CASE("opening and char_text: what a model reads of an entry, and ids back to text") {
  data::Vocab v;
  const Index a = v.add("a"), b = v.add("b");
  CHECK(data::opening({a, b, a}, 3) == Seq{data::Vocab::bos, a, b});
  CHECK(data::opening({a}, 5) == Seq{data::Vocab::bos, a});
  CHECK(data::char_text(v, {data::Vocab::bos, a, data::Vocab::unk, b, data::Vocab::eos}) == "a?b");
}
