// Language-model tools (nn/lm): held-out scoring in sliding windows against the full forward,
// sampling with temperature and top-k (frequencies, limits, errors), and generation with and
// without the KV cache giving the same tokens.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <memory>

#include "core/ops.hpp"
#include "nn/lm/sample.hpp"
#include "nn/lm/score.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::nn;
using attnlab::testing::contains;
using attnlab::testing::error_of;
using Seq = std::vector<Index>;

namespace {

constexpr Index kBos = 1, kEos = 2;

std::unique_ptr<CausalLM<double>> tiny_lm(Positional p, std::size_t max_length, std::uint64_t seed = 3) {
  CausalLMConfig c;
  c.vocab = 9;
  c.num_layers = 2;
  c.max_length = max_length;
  c.layer = {16, 2, 32, 0.0, true, Activation::GELU, 1e-5};
  c.positional = p;
  Generator gen(seed);
  auto lm = std::make_unique<CausalLM<double>>(c, gen);
  lm->eval();
  return lm;
}

// -log P(x[t + 1] | x[0 .. t]) for t in [from, to), from one forward over x[start .. to).
std::vector<double> direct_nats(CausalLM<double>& lm, const Seq& x, std::size_t start, std::size_t from, std::size_t to) {
  IndexArray ids = IndexArray::from_shape({1, to - start});
  for (std::size_t t = start; t < to; ++t) ids(0, t - start) = x[t];
  NoGrad no_grad;
  const Array<double> logp = log_softmax(lm.forward(ids), -1).value();
  std::vector<double> out;
  for (std::size_t t = from; t < to; ++t) out.push_back(-logp(0, t - start, std::size_t(x[t + 1])));
  return out;
}

Seq padded(const Seq& s) {
  Seq x{kBos};
  x.insert(x.end(), s.begin(), s.end());
  x.push_back(kEos);
  return x;
}

}  // namespace

TEST_CASE("causal_lm_token_nats: one forward per sequence when it fits, every token once") {
  auto lm = tiny_lm(Positional::Learned, 16);
  const std::vector<Seq> seqs{{3, 4, 5}, {}, {8, 7, 6, 5, 4, 3, 3, 3, 4}};
  const std::vector<double> nats = lm::causal_lm_token_nats(*lm, seqs, kBos, kEos, 16, 2);
  REQUIRE(nats.size() == 4 + 1 + 10);
  std::size_t at = 0;
  for (const Seq& s : seqs) {
    const Seq x = padded(s);
    for (double v : direct_nats(*lm, x, 0, 0, x.size() - 1)) CHECK(nats[at++] == doctest::Approx(v).epsilon(1e-12));
  }
  CHECK(lm::mean_of(nats) > 0.0);
}

TEST_CASE("causal_lm_token_nats: long sequences in half-overlapping windows") {
  auto lm = tiny_lm(Positional::Rotary, 64);
  Seq s;
  for (int i = 0; i < 17; ++i) s.push_back(Index(3 + (i * 5) % 6));
  const Seq x = padded(s);  // 19 tokens, 18 targets
  const std::vector<double> nats = lm::causal_lm_token_nats(*lm, {s}, kBos, kEos, 8, 3);
  REQUIRE(nats.size() == 18);
  // Window 8, half 4: [0, 8) scores targets 0..7; start 4 scores 8..11; start 8: 12..15;
  // start 12 (length 6, reaching the end): 16..17.
  std::vector<double> expected = direct_nats(*lm, x, 0, 0, 8);
  for (std::size_t start : {4, 8, 12}) {
    const std::size_t to = std::min<std::size_t>(start + 8, 18);
    const std::vector<double> part = direct_nats(*lm, x, start, start + 4, to);
    expected.insert(expected.end(), part.begin(), part.end());
  }
  REQUIRE(expected.size() == 18);
  for (std::size_t t = 0; t < 18; ++t) CHECK(nats[t] == doctest::Approx(expected[t]).epsilon(1e-12));
  // With a window that holds it all, the later targets see more context and change.
  const std::vector<double> whole = lm::causal_lm_token_nats(*lm, {s}, kBos, kEos, 32);
  CHECK(whole[7] == doctest::Approx(nats[7]).epsilon(1e-12));
  CHECK(std::abs(whole[17] - nats[17]) > 1e-9);
}

TEST_CASE("causal_lm_token_nats: bad input by name") {
  auto lm = tiny_lm(Positional::Learned, 8);
  CHECK(contains(error_of([&] { lm::causal_lm_token_nats(*lm, {{3}}, kBos, kEos, 16); }),
                 "causal_lm_token_nats: window 16 is longer than the learned positions (max_length 8)"));
  CHECK(contains(error_of([&] { lm::causal_lm_token_nats(*lm, {{3}}, kBos, kEos, 1); }), "window must be at least 2"));
  CHECK(contains(error_of([&] { lm::causal_lm_token_nats(*lm, {{3, 9}}, kBos, kEos, 8); }),
                 "sequence 0 holds token 9, outside the vocabulary of 9"));
}

TEST_CASE("sample_token: frequencies follow softmax(z / T) over the top k") {
  const std::vector<double> z{1.0, 2.0, 0.0, 2.0, -1.0};
  for (double T : {1.0, 0.5, 2.0})
    for (std::size_t k : {std::size_t(0), std::size_t(3), std::size_t(1)}) {
      CAPTURE(T);
      CAPTURE(k);
      // The expected distribution: top 3 = ids 1, 3, 0 (1 and 3 tie, both kept); top 1 = id 1.
      std::vector<double> p(5, 0.0);
      double sum = 0.0;
      for (std::size_t i = 0; i < 5; ++i) {
        const bool kept = k == 0 || (k == 3 && (i == 0 || i == 1 || i == 3)) || (k == 1 && i == 1);
        if (kept) sum += p[i] = std::exp(z[i] / T);
      }
      Generator gen(17);
      std::vector<double> count(5, 0.0);
      const int n = 40000;
      for (int d = 0; d < n; ++d) count[std::size_t(lm::sample_token(z, T, k, gen))] += 1;
      for (std::size_t i = 0; i < 5; ++i) {
        const double q = p[i] / sum;
        // Within 5 standard errors of a binomial proportion (exactly 0 where q = 0).
        CHECK(std::abs(count[i] / n - q) <= 5 * std::sqrt(q * (1 - q) / n) + 1e-12);
      }
    }
  Generator gen(1);
  CHECK(lm::sample_token({0.0, 5.0, 4.9}, 1e-3, 0, gen) == 1);  // a cold temperature is the argmax
  CHECK(contains(error_of([&] { lm::sample_token({}, 1.0, 0, gen); }), "sample_token: no logits"));
  CHECK(contains(error_of([&] { lm::sample_token({1.0}, 0.0, 0, gen); }), "temperature must be positive, got 0"));
  CHECK(contains(error_of([&] { lm::sample_token({1.0, NAN}, 1.0, 0, gen); }), "logit 1 is nan"));
}

TEST_CASE("sample: with and without the KV cache, the same tokens; the context restarts when full") {
  for (Positional p : {Positional::Learned, Positional::Rotary}) {
    CAPTURE(positional_name(p));
    auto lm = tiny_lm(p, 12);
    lm::SampleOptions o;
    o.max_tokens = 40;  // past max_length 12: the context restarts from its last 6 tokens
    o.stop_at_end = false;
    o.temperature = 1.5;  // flat enough that many different tokens come out
    Generator a(5), b(5);
    o.use_cache = true;
    const Seq cached = lm::sample(*lm, {kBos, 4}, kEos, o, a);
    o.use_cache = false;
    const Seq plain = lm::sample(*lm, {kBos, 4}, kEos, o, b);
    CHECK(cached.size() == 40);
    CHECK(cached == plain);
    std::map<Index, int> seen;
    for (Index t : cached) seen[t] += 1;
    CHECK(seen.size() >= 4);
  }
  auto lm = tiny_lm(Positional::Learned, 12);
  lm::SampleOptions o;
  o.max_tokens = 500;
  Generator gen(2);
  const Seq s = lm::sample(*lm, {kBos}, kEos, o, gen);  // stops at the first <eos>
  CHECK(!s.empty());
  CHECK(s.back() == kEos);
  for (std::size_t i = 0; i + 1 < s.size(); ++i) CHECK(s[i] != kEos);
  lm->train();
  CHECK(contains(error_of([&] { lm::sample(*lm, {kBos}, kEos, o, gen); }), "call eval() first"));
  lm->eval();
  CHECK(contains(error_of([&] { lm::sample(*lm, {}, kEos, o, gen); }), "the prompt must hold at least one token"));
}
