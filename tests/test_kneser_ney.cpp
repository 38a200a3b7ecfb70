// Interpolated Kneser-Ney (nn/lm/kneser_ney): values computed by hand on a two-sentence corpus,
// every distribution summing to 1 (seen, unseen and sentence-start contexts, every order), backing
// off from unseen contexts, the one-pass scorer against probability(), and bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "core/random.hpp"
#include "nn/lm/kneser_ney.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using attnlab::nn::lm::KneserNey;
using Seq = std::vector<Index>;

namespace {
// The ids of the hand-computed corpus: V = 6, as a character vocabulary lays them out.
constexpr Index pad = 0, bos = 1, eos = 2, a = 3, b = 4, c = 5;
constexpr std::size_t V = 6;

// "a b" and "b a b", read as <bos> a b <eos> and <bos> b a b <eos>.
KneserNey two_sentences(std::size_t order) { return KneserNey({{a, b}, {b, a, b}}, V, order, bos, eos, 0.75); }

double sum(const std::vector<double>& p) { return std::accumulate(p.begin(), p.end(), 0.0); }
}  // namespace

// By hand, D = 0.75, P_0 = 1/5 (the five ids other than <bos>).
// Continuation counts N1+(. w): a after {bos, b} = 2, b after {a, bos} = 2, eos after {b} = 1, so
// A = 5, T = 3 and the lower-order unigram P1(w) = (N1+ - .75)/5 + .75*3/5 * 1/5 = (N1+ - .75)/5 + .09:
//   P1(a) = P1(b) = .34, P1(eos) = .14, P1(pad) = P1(c) = .09.
TEST_CASE("the unigram levels: continuation counts below the top, raw counts at the top") {
  const KneserNey kn = two_sentences(3);
  CHECK(kn.probability({c}, a, 2) == doctest::Approx(0.34));   // context c unseen: P1 of the order-2 model
  CHECK(kn.probability({c}, eos, 2) == doctest::Approx(0.14));
  CHECK(kn.probability({c}, pad, 2) == doctest::Approx(0.09));
  // The order-1 model uses raw counts a:2, b:3, eos:2 (A = 7, T = 3):
  // P(w) = (c - .75)/7 + .75*3/7 * 1/5, so P(b) = 2.7/7, P(a) = P(eos) = 1.7/7, P(c) = .45/7.
  CHECK(kn.probability({}, b, 1) == doctest::Approx(2.7 / 7));
  CHECK(kn.probability({a, b}, a, 1) == doctest::Approx(1.7 / 7));
  CHECK(kn.probability({bos}, eos, 1) == doctest::Approx(1.7 / 7));
  CHECK(kn.probability({}, c, 1) == doctest::Approx(0.45 / 7));
}

// Order 2, raw bigram counts at the top: (bos a) 1, (bos b) 1, (a b) 2, (b eos) 2, (b a) 1.
TEST_CASE("bigrams by hand") {
  const KneserNey kn = two_sentences(2);
  // Context a: A = 2, T = 1. P(b|a) = 1.25/2 + .375 * .34.
  CHECK(kn.probability({a}, b, 2) == doctest::Approx(0.625 + 0.375 * 0.34));
  CHECK(kn.probability({a}, a, 2) == doctest::Approx(0.375 * 0.34));
  CHECK(kn.probability({a}, eos, 2) == doctest::Approx(0.375 * 0.14));
  // Context b: A = 3, T = 2. P(eos|b) = 1.25/3 + .5 * .14, P(a|b) = .25/3 + .5 * .34.
  CHECK(kn.probability({b}, eos, 2) == doctest::Approx(1.25 / 3 + 0.07));
  CHECK(kn.probability({b}, a, 2) == doctest::Approx(0.25 / 3 + 0.17));
  CHECK(kn.probability({b, a, b}, a, 2) == doctest::Approx(0.25 / 3 + 0.17));  // only the last token counts
  // Context <bos>: A = 2, T = 2. P(a|bos) = .25/2 + .75 * .34.
  CHECK(kn.probability({bos}, a, 2) == doctest::Approx(0.125 + 0.255));
}

// Order 3. Level 2 now uses adjusted counts: bigrams that begin with <bos> keep their raw counts;
// N1+(. a b) = 2 (bos a b, b a b), N1+(. b eos) = 1 (a b eos), N1+(. b a) = 1 (bos b a).
TEST_CASE("trigrams by hand: the middle order uses continuation counts") {
  const KneserNey kn = two_sentences(3);
  // P2(eos | b) with adjusted counts: A(b) = 2, T = 2: .25/2 + .75 * .14 = .23 (the raw bigram
  // model said .4867). Trigram context (a b): (a b eos) twice, A = 2, T = 1.
  CHECK(kn.probability({bos, a, b}, eos, 3) == doctest::Approx(0.625 + 0.375 * 0.23));
  // (bos a) -> b once: A = 1, T = 1; P2(b | a) = .625 + .375 * .34 = .7525.
  CHECK(kn.probability({bos, a}, b, 3) == doctest::Approx(0.25 + 0.75 * 0.7525));
  // Context (c a) was never seen: back off to P2(b | a).
  CHECK(kn.probability({c, a}, b, 3) == doctest::Approx(0.7525));
  // Context (c c): c was never seen either, so down to P1.
  CHECK(kn.probability({c, c}, b, 3) == doctest::Approx(0.34));
  // At the start of a sentence the order-3 model has only <bos>: P2(a | bos) with the adjusted
  // counts, which for grams beginning with <bos> are the raw ones: .38.
  CHECK(kn.probability({bos}, a, 3) == doctest::Approx(0.38));
  CHECK(kn.distinct(1) == 4);  // bos, a, b, eos
  CHECK(kn.distinct(2) == 5);  // bos a, a b, b eos, bos b, b a
}

TEST_CASE("every distribution sums to 1: seen, unseen and start contexts, every order") {
  Generator gen(3);
  std::vector<Seq> corpus;
  for (int s = 0; s < 40; ++s) {
    Seq seq;
    const std::size_t n = 1 + gen.below(12);
    for (std::size_t i = 0; i < n; ++i) seq.push_back(Index(2 + gen.below(5)));  // ids 2..6; 7 never seen
    corpus.push_back(seq);
  }
  const KneserNey kn(corpus, 8, 5, /*bos=*/1, /*eos=*/0);
  std::vector<Seq> contexts{{}, {1}, {1, 3}, {1, 3, 4, 5}, {3, 3, 3, 3}, {7}, {7, 7, 7}, {2, 7, 3}, {4, 6, 2, 5, 3, 2}};
  for (const Seq& s : corpus) contexts.push_back(Seq(s.begin(), s.begin() + long(s.size() / 2)));
  for (std::size_t order = 1; order <= 5; ++order)
    for (const Seq& context : contexts) {
      const std::vector<double> p = kn.distribution(context, order);
      CHECK(sum(p) == doctest::Approx(1.0).epsilon(1e-12));
      CHECK(p[1] == 0.0);  // <bos> is never predicted
      for (std::size_t w = 0; w < p.size(); ++w)
        if (w != 1) CHECK(p[w] > 0.0);  // every other id keeps some mass, seen or not
    }
}

TEST_CASE("the one-pass scorer gives -log probability() of every token, every order") {
  const std::vector<Seq> train{{3, 4, 5, 3, 4}, {4, 4, 3}, {5, 3, 4, 5}, {3}};
  const std::vector<Seq> held_out{{3, 4, 4, 5}, {6, 3}, {}};
  const KneserNey kn(train, 7, 4, 1, 2);
  const auto nats = kn.token_nats(held_out);
  REQUIRE(nats.size() == 4);
  for (std::size_t order = 1; order <= 4; ++order) {
    std::size_t i = 0;
    for (Seq s : held_out) {
      s.push_back(2);  // the <eos> is predicted too
      Seq context{1};
      for (Index t : s) {
        REQUIRE(i < nats[order - 1].size());
        CHECK(nats[order - 1][i++] == doctest::Approx(-std::log(kn.probability(context, t, order))).epsilon(1e-12));
        context.push_back(t);
      }
    }
    CHECK(i == nats[order - 1].size());  // 5 + 3 + 1 predicted tokens
  }
  const std::vector<double> means = kn.mean_nats(held_out);
  CHECK(means[0] == doctest::Approx(sum(nats[0]) / 9.0));
}

TEST_CASE("more context helps on text that repeats its training text") {
  std::vector<Seq> corpus;
  Generator gen(11);
  Seq base;
  for (int i = 0; i < 60; ++i) base.push_back(Index(2 + gen.below(6)));
  for (int r = 0; r < 5; ++r) corpus.push_back(base);
  const KneserNey kn(corpus, 8, 4, 1, 0);
  const std::vector<double> m = kn.mean_nats({base});
  CHECK(m[1] < m[0]);
  CHECK(m[2] < m[1]);
  CHECK(m[3] < 0.5);  // a random string seen five times is nearly certain at order 4
}

TEST_CASE("context coverage: which predictions have counts of their own context") {
  const KneserNey kn = two_sentences(3);
  // On its own training text every context was seen (at the start, the shorter context <bos>).
  for (double v : kn.context_coverage({{a, b}, {b, a, b}})) CHECK(v == 1.0);
  // "a c a": targets a (context bos: seen), c (context a / bos a: seen), a (context c / a c: not),
  // eos (context a / c a: a seen at order 2, c a unseen at order 3).
  const std::vector<double> v = kn.context_coverage({{a, c, a}});
  CHECK(v[0] == 1.0);
  CHECK(v[1] == doctest::Approx(3.0 / 4));
  CHECK(v[2] == doctest::Approx(2.0 / 4));
}

TEST_CASE("bad input names KneserNey and the value") {
  using attnlab::testing::contains;
  using attnlab::testing::error_of;
  CHECK(contains(error_of([] { KneserNey({{3, 9}}, 6, 2, bos, eos); }), "KneserNey: a training sequence token 9"));
  CHECK(contains(error_of([] { KneserNey({{3, bos, 4}}, 6, 2, bos, eos); }), "holds <bos>"));
  CHECK(contains(error_of([] { KneserNey({{3}}, 6, 2, bos, eos, 1.5); }), "discount must be in (0, 1], got 1.5"));
  CHECK(contains(error_of([] { KneserNey({{3}}, 6, 0, bos, eos); }), "max_order must be in [1, 64], got 0"));
  CHECK(contains(error_of([] { KneserNey({{3}}, 6, 2, bos, bos); }), "must be two different ids"));
  CHECK(contains(error_of([] { KneserNey({}, 6, 2, bos, eos); }), "no sequences"));
  const KneserNey kn = two_sentences(2);
  CHECK(contains(error_of([&] { kn.probability({a}, b, 3); }), "order must be in [1, 2], got 3"));
  CHECK(contains(error_of([&] { kn.probability({a}, 6, 2); }), "next token 6 is outside"));
  CHECK(contains(error_of([&] { kn.probability({a}, bos, 2); }), "<bos> is never predicted"));
  CHECK(contains(error_of([&] { kn.probability({a, bos}, b, 2); }), "the context holds <bos>"));
  CHECK(contains(error_of([&] { kn.token_nats({{3, -1}}); }), "a scored sequence token -1"));
}
