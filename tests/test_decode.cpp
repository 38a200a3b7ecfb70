#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "nn/decode.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::nn;
using attnlab::testing::contains;
using attnlab::testing::error_of;

namespace {

// Token ids of the toy vocabulary.
constexpr Index S = 0;  // start
constexpr Index E = 1;  // end
constexpr Index A = 2;
constexpr Index B = 3;
constexpr std::size_t V = 4;

using Dist = std::vector<double>;  // probabilities over the V tokens
using Table = std::map<std::vector<Index>, Dist>;

// A step function reading next-token probabilities from a table keyed by the whole prefix;
// prefixes missing from the table get `fallback`. Counts its calls.
struct TableModel {
  Table table;
  Dist fallback;
  int calls = 0;

  StepFn fn() {
    return [this](const std::vector<std::vector<Index>>& prefixes) {
      ++calls;
      Array<float> out = Array<float>::from_shape({prefixes.size(), V});
      for (std::size_t i = 0; i < prefixes.size(); ++i) {
        auto it = table.find(prefixes[i]);
        const Dist& d = it == table.end() ? fallback : it->second;
        for (std::size_t v = 0; v < V; ++v) out(i, v) = static_cast<float>(std::log(d[v]));
      }
      return out;
    };
  }
};

}  // namespace

TEST_CASE("greedy_decode and beam_search: beam width 2 finds the more probable sequence") {
  // Distributions over (S, E, A, B):
  //   [S]     -> A .6, B .4
  //   [S A]   -> E .30, A .36, B .34
  //   [S B]   -> E .90, A .05, B .05
  //   else    -> E 1
  // Greedy: A (.6), then A (.36), then E (1): P = .216.
  // Width 2: step 1 keeps A (.6), B (.4). Step 2 ranks B E .36, A A .216, A B .204, A E .18,
  // B A .02, B B .02: B E finishes, A A and A B stay live. Step 3: A A E .216, A B E .204 finish.
  // Best: B E with P = .36 > .216, then A A E.
  TableModel m{{{{S}, {0, 0, .6, .4}}, {{S, A}, {0, .30, .36, .34}}, {{S, B}, {0, .90, .05, .05}}},
               {0, 1, 0, 0}};
  const std::vector<Index> greedy = greedy_decode(m.fn(), S, E, 10);
  CHECK(greedy == std::vector<Index>{A, A, E});

  BeamOptions opt;
  opt.width = 2;
  opt.length_penalty = 0.0;
  const std::vector<Hypothesis> beams = beam_search(m.fn(), S, E, opt);
  REQUIRE(beams.size() == 2);
  CHECK(beams[0].tokens == std::vector<Index>{B, E});
  CHECK(beams[0].log_prob == doctest::Approx(std::log(.36)).epsilon(1e-6));
  CHECK(beams[0].score == doctest::Approx(std::log(.36)).epsilon(1e-6));
  CHECK(beams[1].tokens == std::vector<Index>{A, A, E});
  CHECK(beams[1].log_prob == doctest::Approx(std::log(.216)).epsilon(1e-6));
}

TEST_CASE("beam_search: width 1 equals greedy_decode") {
  TableModel m{{{{S}, {0, 0, .6, .4}}, {{S, A}, {0, .30, .36, .34}}, {{S, B}, {0, .90, .05, .05}}},
               {0, 1, 0, 0}};
  BeamOptions opt;
  opt.width = 1;
  opt.length_penalty = 0.0;
  auto beams = beam_search(m.fn(), S, E, opt);
  REQUIRE(beams.size() == 1);
  CHECK(beams[0].tokens == greedy_decode(m.fn(), S, E, 50));

  // Random tables keyed by the last token, over 6 tokens: a bigram model.
  for (unsigned seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0.05, 1.0);
    const std::size_t n = 6;
    std::vector<std::vector<double>> logp(n, std::vector<double>(n));
    for (auto& row : logp) {
      double z = 0;
      for (double& x : row) z += (x = u(rng));
      for (double& x : row) x = std::log(x / z);
    }
    StepFn bigram = [&](const std::vector<std::vector<Index>>& prefixes) {
      Array<float> out = Array<float>::from_shape({prefixes.size(), n});
      for (std::size_t i = 0; i < prefixes.size(); ++i)
        for (std::size_t v = 0; v < n; ++v)
          out(i, v) = static_cast<float>(logp[static_cast<std::size_t>(prefixes[i].back())][v]);
      return out;
    };
    BeamOptions o;
    o.width = 1;
    o.max_len = 8;
    o.length_penalty = 0.0;
    auto g = greedy_decode(bigram, 0, 5, 8);
    auto b = beam_search(bigram, 0, 5, o);
    REQUIRE(b.size() == 1);
    CHECK(b[0].tokens == g);
  }
}

TEST_CASE("beam_search: length normalization changes the winner") {
  //   [S]     -> E .5, A .5
  //   [S A]   -> A .9, E .1
  //   else    -> E 1
  // Short: E, log P = log .5 = -0.693, length 1.
  // Long:  A A E, log P = log .45 = -0.799, length 3, score with alpha 1 = -0.266.
  // alpha 0 prefers the short one (-0.693 > -0.799); alpha 1 the long one (-0.266 > -0.693).
  TableModel m{{{{S}, {0, .5, .5, 0}}, {{S, A}, {0, .1, .9, 0}}}, {0, 1, 0, 0}};
  BeamOptions opt;
  opt.width = 2;
  opt.max_len = 10;

  opt.length_penalty = 0.0;
  auto raw = beam_search(m.fn(), S, E, opt);
  REQUIRE(raw.size() == 2);
  CHECK(raw[0].tokens == std::vector<Index>{E});
  CHECK(raw[1].tokens == std::vector<Index>{A, A, E});

  opt.length_penalty = 1.0;
  auto norm = beam_search(m.fn(), S, E, opt);
  REQUIRE(norm.size() == 2);
  CHECK(norm[0].tokens == std::vector<Index>{A, A, E});
  CHECK(norm[0].log_prob == doctest::Approx(std::log(.45)).epsilon(1e-6));
  CHECK(norm[0].score == doctest::Approx(std::log(.45) / 3).epsilon(1e-6));
  CHECK(norm[1].tokens == std::vector<Index>{E});
  CHECK(norm[1].score == doctest::Approx(std::log(.5)).epsilon(1e-6));
}

TEST_CASE("beam_search: early stop, and max_len finalizes unfinished beams") {
  //   [S]   -> E .6, A .4;  after A, A forever (P 1): the A-branch never ends.
  TableModel m{{{{S}, {0, .6, .4, 0}}}, {0, 0, 1, 0}};
  BeamOptions opt;
  opt.width = 1;
  opt.max_len = 7;

  // alpha 0: E finishes at step 1 with log .6; the live A-branch has log .4 and can only lose.
  opt.length_penalty = 0.0;
  auto raw = beam_search(m.fn(), S, E, opt);
  CHECK(m.calls == 1);
  REQUIRE(raw.size() == 1);
  CHECK(raw[0].tokens == std::vector<Index>{E});

  // alpha 1: log .4 / 7 = -0.131 beats log .6 = -0.511, so the search runs to max_len and the
  // unfinished A x 7 wins (the well-known bias of per-token normalization toward long outputs).
  m.calls = 0;
  opt.length_penalty = 1.0;
  auto norm = beam_search(m.fn(), S, E, opt);
  CHECK(m.calls == 7);
  REQUIRE(norm.size() == 1);
  CHECK(norm[0].tokens == std::vector<Index>(7, A));
  CHECK(norm[0].log_prob == doctest::Approx(std::log(.4)).epsilon(1e-6));
  CHECK(norm[0].score == doctest::Approx(std::log(.4) / 7).epsilon(1e-6));

  // greedy: max_len cuts the endless branch; the end token is included when it is emitted.
  TableModel g{{{{S}, {0, .4, .6, 0}}}, {0, 0, 1, 0}};
  CHECK(greedy_decode(g.fn(), S, E, 5) == std::vector<Index>(5, A));
  CHECK(g.calls == 5);
  TableModel h{{}, {0, .7, .3, 0}};
  CHECK(greedy_decode(h.fn(), S, E, 5) == std::vector<Index>{E});
  CHECK(h.calls == 1);
}

TEST_CASE("greedy_decode and beam_search: ties go to the lower token id") {
  TableModel m{{{{S}, {0, 0, .5, .5}}}, {0, 1, 0, 0}};
  CHECK(greedy_decode(m.fn(), S, E, 5) == std::vector<Index>{A, E});
  BeamOptions opt;
  opt.width = 2;
  auto beams = beam_search(m.fn(), S, E, opt);
  REQUIRE(beams.size() == 2);
  CHECK(beams[0].tokens == std::vector<Index>{A, E});
  CHECK(beams[1].tokens == std::vector<Index>{B, E});
  // Width 1 must prune one of the tied candidates: the lower id survives.
  opt.width = 1;
  beams = beam_search(m.fn(), S, E, opt);
  REQUIRE(beams.size() == 1);
  CHECK(beams[0].tokens == std::vector<Index>{A, E});
}

TEST_CASE("greedy_decode and beam_search: bad inputs") {
  TableModel m{{}, {0, .5, .5, 0}};
  BeamOptions opt;
  opt.width = 0;
  CHECK(contains(error_of([&] { beam_search(m.fn(), S, E, opt); }), "beam_search: width"));
  opt.width = 2;
  opt.max_len = 0;
  CHECK(contains(error_of([&] { beam_search(m.fn(), S, E, opt); }), "beam_search: max_len"));
  CHECK(contains(error_of([&] { greedy_decode(m.fn(), S, E, 0); }), "greedy_decode: max_len"));
  opt.max_len = 5;
  CHECK(contains(error_of([&] { beam_search(m.fn(), S, 7, opt); }), "beam_search: end token 7"));

  StepFn wrong_rows = [](const std::vector<std::vector<Index>>& p) {
    return Array<float>(xt::zeros<float>({p.size() + 1, V}) - 1.0f);
  };
  StepFn one_d = [](const std::vector<std::vector<Index>>&) {
    return Array<float>(xt::zeros<float>({V}) - 1.0f);
  };
  StepFn with_nan = [](const std::vector<std::vector<Index>>& p) {
    Array<float> a = xt::zeros<float>({p.size(), V}) - 1.0f;
    a(0, 2) = std::numeric_limits<float>::quiet_NaN();
    return a;
  };
  StepFn positive = [](const std::vector<std::vector<Index>>& p) {
    return Array<float>(xt::zeros<float>({p.size(), V}) + 0.5f);
  };
  StepFn growing = [](const std::vector<std::vector<Index>>& p) {
    return Array<float>(xt::zeros<float>({p.size(), p[0].size() + 3}) - 1.0f);
  };
  for (const StepFn* f : {&wrong_rows, &one_d}) {
    CHECK(contains(error_of([&] { beam_search(*f, S, E, opt); }), "beam_search: step function returned shape"));
    CHECK(contains(error_of([&] { greedy_decode(*f, S, E, 5); }), "greedy_decode: step function returned shape"));
  }
  CHECK(contains(error_of([&] { beam_search(with_nan, S, E, opt); }), "beam_search: step function returned NaN"));
  CHECK(contains(error_of([&] { greedy_decode(with_nan, S, E, 5); }), "greedy_decode: step function returned NaN"));
  CHECK(contains(error_of([&] { beam_search(positive, S, E, opt); }), "beam_search: step function returned log-probability 0.5"));
  CHECK(contains(error_of([&] { greedy_decode(growing, S, 3, 5); }), "greedy_decode: step function changed the vocabulary size from 4 to 5"));
}

TEST_CASE("causal_lm_step: log-softmax of the last real position, padding-independent") {
  CausalLMConfig c;
  c.vocab = 7;
  c.num_layers = 1;
  c.max_length = 16;
  c.layer = {8, 2, 16, 0.0, true, Activation::GELU, 1e-5};
  Generator gen(3);
  CausalLM<double> lm(c, gen);
  StepFn step = causal_lm_step(lm);
  CHECK(contains(error_of([&] { step({{0}}); }), "causal_lm_step: the model is in training mode"));
  lm.eval();

  const std::vector<std::vector<Index>> prefixes{{0, 3, 4, 5}, {0, 2}};
  const Array<float> both = step(prefixes);
  REQUIRE(shape_of(both) == Shape{2, 7});
  for (std::size_t i = 0; i < 2; ++i) {
    // Each row alone (no padding) equals its row in the padded batch, and the forward pass.
    const Array<float> alone = step({prefixes[i]});
    IndexArray ids = IndexArray::from_shape({1, prefixes[i].size()});
    for (std::size_t j = 0; j < prefixes[i].size(); ++j) ids(0, j) = prefixes[i][j];
    const Array<double> logits = lm.forward(ids).value();
    const std::size_t last = prefixes[i].size() - 1;
    double sum = 0.0;
    for (std::size_t v = 0; v < 7; ++v) {
      sum += std::exp(static_cast<double>(both(i, v)));
      CHECK(both(i, v) == doctest::Approx(alone(0, v)).epsilon(1e-5));
      // log-softmax differences are logit differences
      CHECK(both(i, v) - both(i, 0) ==
            doctest::Approx(logits(0, last, v) - logits(0, last, 0)).epsilon(1e-4));
    }
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
  }

  const std::vector<Index> g = greedy_decode(step, 0, 1, 6);
  BeamOptions opt;
  opt.width = 1;
  opt.max_len = 6;
  opt.length_penalty = 0.0;
  CHECK(beam_search(step, 0, 1, opt)[0].tokens == g);
  opt.width = 3;
  auto beams = beam_search(step, 0, 1, opt);
  REQUIRE(!beams.empty());
  for (std::size_t k = 0; k < beams.size(); ++k) {
    if (k > 0) CHECK(beams[k - 1].score >= beams[k].score);
    // log_prob is the sum of the step log-probabilities along the hypothesis.
    std::vector<Index> prefix{0};
    double lp = 0.0;
    for (Index t : beams[k].tokens) {
      lp += step({prefix})(0, static_cast<std::size_t>(t));
      prefix.push_back(t);
    }
    CHECK(beams[k].log_prob == doctest::Approx(lp).epsilon(1e-5));
  }
}

TEST_CASE("seq2seq_step: the source is encoded once; each row is the decoder's next-token log_softmax") {
  using namespace attnlab;
  using namespace attnlab::nn;
  Generator gen(11);
  Seq2SeqConfig cfg;
  cfg.src_vocab = 7;
  cfg.tgt_vocab = 6;
  cfg.encoder_layers = 1;
  cfg.decoder_layers = 1;
  cfg.layer.d_model = 8;
  cfg.layer.heads = 2;
  cfg.layer.d_ff = 16;
  Seq2SeqTransformer<double> model(cfg, gen);
  const IndexArray src = {3, 1, 4, 1, 5};
  CHECK_THROWS_AS(seq2seq_step(model, src), ShapeError);  // still in training mode
  model.eval();
  const StepFn step = seq2seq_step(model, src);
  const std::vector<std::vector<Index>> prefixes = {{0}, {0, 2, 4}};
  const Array<float> lp = step(prefixes);
  REQUIRE(lp.shape() == std::vector<std::size_t>{2, 6});
  // Row 1 equals the full model on that prefix alone, log-softmaxed at its last position.
  NoGrad ng;
  IndexArray s2 = src, t2 = {0, 2, 4};
  s2.reshape({1, 5});
  t2.reshape({1, 3});
  const Array<double> logits = model.forward(s2, t2).value();
  double m = -1e300, sum = 0;
  for (int v = 0; v < 6; ++v) m = std::max(m, logits(0, 2, v));
  for (int v = 0; v < 6; ++v) sum += std::exp(logits(0, 2, v) - m);
  for (int v = 0; v < 6; ++v) CHECK(lp(1, v) == doctest::Approx(logits(0, 2, v) - m - std::log(sum)).epsilon(1e-6));
  // Width-1 beam search is greedy decoding.
  BeamOptions o;
  o.width = 1;
  o.max_len = 6;
  o.length_penalty = 0.0;
  CHECK(beam_search(step, 0, 5, o).front().tokens == greedy_decode(step, 0, 5, 6));
  CHECK_THROWS_AS(seq2seq_step(model, IndexArray::from_shape({0})), ShapeError);
}

TEST_CASE("greedy_decode_batch: padded sources of different lengths decode as greedy_decode one by one") {
  Generator gen(5);
  Seq2SeqConfig cfg;
  cfg.src_vocab = 9;
  cfg.tgt_vocab = 7;
  cfg.encoder_layers = cfg.decoder_layers = 1;
  cfg.layer.d_model = 8;
  cfg.layer.heads = 2;
  cfg.layer.d_ff = 16;
  cfg.pad_id = 0;
  Seq2SeqTransformer<double> model(cfg, gen);
  const std::vector<std::vector<Index>> sources = {{3, 1, 4, 1, 5}, {2, 6}, {8, 7, 6}};
  IndexArray src = IndexArray::from_shape({3, 5});
  Mask real = Mask::from_shape({3, 5});
  src.fill(0);
  real.fill(false);
  for (std::size_t b = 0; b < 3; ++b)
    for (std::size_t j = 0; j < sources[b].size(); ++j) src(b, j) = sources[b][j], real(b, j) = true;
  CHECK_THROWS_AS(greedy_decode_batch(model, src, Allowed::where(real), 1, 2, 6), ShapeError);  // training mode
  model.eval();
  // Every end id in turn, so that some rows stop early and others run to max_len.
  for (Index end = 2; end < 7; ++end) {
    const auto batch = greedy_decode_batch(model, src, Allowed::where(real), 1, end, 6);
    REQUIRE(batch.size() == 3);
    for (std::size_t b = 0; b < 3; ++b) {
      IndexArray one = IndexArray::from_shape({sources[b].size()});
      std::copy(sources[b].begin(), sources[b].end(), one.begin());
      CHECK(batch[b] == greedy_decode(seq2seq_step(model, one), 1, end, 6));
    }
  }
  CHECK_THROWS_AS(greedy_decode_batch(model, src, Allowed::where(real), 1, 7, 6), ShapeError);  // end out of range
  CHECK_THROWS_AS(greedy_decode_batch(model, src, Allowed::where(real), 1, 2, 0), ShapeError);
}
