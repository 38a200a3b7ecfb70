// Exercises for lesson 11, a character-level GPT. Grade them with build/bin/grade 11.
//
// Write each function in plain C++ and xtensor (loops, std::exp, std::map ...), not with the
// engine's ops or nn/lm: the point is to do by hand what nn/lm/kneser_ney.cpp does for you.
// (Sampling and the KV cache, by hand, are lesson 12's exercises.)
#include <cmath>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "nn/lm/kneser_ney.hpp"
#include "nn/transformer/causal_lm.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 11.1 One interpolated Kneser-Ney probability ------------------------------------------
// corpus holds sequences of token ids in [0, V); each is read as <bos> s <eos> (bos and eos are
// ids too, bos never inside a sequence). Return the interpolated Kneser-Ney bigram probability
// P(next | prev) with discount D, as lesson 11 (section 3) and Chen & Goodman (1998) define it:
// the discount comes off every count of a pair "prev then next" in the padded sequences, and the
// mass it frees goes to a unigram level that counts, for each token, how many DIFFERENT tokens came
// right before it (<bos> counts as one), itself discounted and interpolated with a uniform share
// over the V - 1 ids other than bos (bos is never predicted). A prev that never came first in a
// pair falls back to the unigram level entirely.
double kneser_ney_bigram(const std::vector<std::vector<Index>>& corpus, std::size_t V, Index bos, Index eos, double D,
                         Index prev, Index next) {
  not_attempted();  // delete this line and write your answer
}

// ---- 11.2 Start from the uniform guess ------------------------------------------------------
// An experiment, graded by running it. Before its first step, a model that knows nothing should
// give every token the same probability: a loss of log2 V bits a token over a vocabulary of V.
// Lesson 11's GPT, freshly drawn, does not: measure it (return the config unchanged, and the
// grader prints what it measured) and find out why. Then change ONE setting of the
// lesson's config so that the untrained model starts within 0.5 bits of log2 V, keeping its
// vocabulary, layers, length, d_model, heads and d_ff as they are. The grader builds your config
// three times (three initial draws), measures the mean loss on 8 sequences of 64 random tokens,
// and compares it with log2 V.
nn::CausalLMConfig uniform_start(nn::CausalLMConfig lesson_config) {
  not_attempted();  // delete this line and write your answer
}

// ---- 11.3 The loss at every position of a window --------------------------------------------
// One forward pass over a window gives logits (L, V): row t is the prediction of the character
// after position t, and targets[t] (L ids) is that character (the window shifted by one: teacher
// forcing). Return the L losses in bits, -log2 p_t(targets[t]) with p_t = softmax of row t: what
// lesson 11 (section 5) averages over many windows, position by position. Logits can be large.
std::vector<double> bits_by_position(const Array<double>& logits, const std::vector<Index>& targets) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against nn::lm::KneserNey, by building your
// config and measuring it, and against the engine's cross-entropy row by row.
namespace {

using Corpus = std::vector<std::vector<Index>>;

void grade_kneser_ney_bigram(
    const std::function<double(const Corpus&, std::size_t, Index, Index, double, Index, Index)>& answer, Grader& g) {
  // The lesson's ids: 0 pad, 1 bos, 2 eos, then characters. "a b" and "b a b" (a = 3, b = 4), and
  // c = 5 that never occurs.
  const Corpus tiny{{3, 4}, {4, 3, 4}};
  const nn::lm::KneserNey kn(tiny, 6, 2, 1, 2, 0.75);
  const std::vector<std::pair<Index, Index>> pairs{{3, 4}, {4, 2}, {4, 3}, {1, 3}, {3, 3}, {5, 3}, {4, 0}};
  Array<double> got = xt::zeros<double>({pairs.size()}), want = xt::zeros<double>({pairs.size()});
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    got(i) = answer(tiny, 6, 1, 2, 0.75, pairs[i].first, pairs[i].second);
    want(i) = kn.probability({pairs[i].first}, pairs[i].second, 2);
  }
  g.close("'a b' and 'b a b': P(b|a), P(eos|b), P(a|b), P(a|bos), P(a|a), P(a|c unseen), P(pad|b)", got, want, 1e-12,
          "c(h .) counts every pair that starts with h in <bos> s <eos>; an unseen h falls back to P1 entirely");
  // Unigram continuation counts, not frequencies: a token that follows many different tokens.
  Generator gen(3);
  Corpus random;
  for (int s = 0; s < 30; ++s) {
    std::vector<Index> seq;
    for (std::size_t i = 0, n = 1 + gen.below(10); i < n; ++i) seq.push_back(Index(2 + gen.below(6)));
    random.push_back(seq);
  }
  for (double D : {0.75, 0.3}) {
    const nn::lm::KneserNey model(random, 9, 2, 1, 0, D);
    Array<double> a = xt::zeros<double>({9, 9}), b = xt::zeros<double>({9, 9});
    for (Index h = 0; h < 9; ++h)
      for (Index w = 0; w < 9; ++w)
        if (w != 1) {
          a(std::size_t(h), std::size_t(w)) = answer(random, 9, 1, 0, D, h, w);
          b(std::size_t(h), std::size_t(w)) = model.probability({h}, w, 2);
        }
    g.close("30 random sequences, every (prev, next), D = " + std::to_string(D).substr(0, 4), a, b, 1e-12,
            "P1 uses N(. w), the number of distinct left neighbours of w, not how often w occurs");
  }
}

// Lesson 11's GPT as gpt_config builds it: 4 pre-norm layers, d_model 128, 4 heads, GELU, rotary
// positions, no dropout, the output tied to the embedding.
nn::CausalLMConfig lesson_gpt_config(std::size_t vocab) {
  nn::CausalLMConfig c;
  c.vocab = vocab, c.num_layers = 4, c.max_length = 64;
  c.layer = nn::LayerConfig{128, 4, 512, 0.0, true, nn::Activation::GELU, 1e-5};
  c.positional = nn::Positional::Rotary;
  return c;
}

// The mean cross-entropy in bits of freshly drawn models of config c on 8 sequences of 64
// uniformly drawn tokens, over three draws of the weights.
double measured_untrained_bits(const nn::CausalLMConfig& c) {
  double bits = 0;
  for (std::uint64_t seed : {1, 2, 3}) {
    Generator gen(seed);
    nn::CausalLM<float> model(c, gen);
    model.eval();
    IndexArray ids = IndexArray::from_shape({8, 65});
    for (Index& id : ids) id = Index(gen.below(c.vocab));
    NoGrad no_grad;
    const IndexArray in = xt::view(ids, xt::all(), xt::range(0, 64)), out = xt::view(ids, xt::all(), xt::range(1, 65));
    bits += double(cross_entropy(model.forward(in), out).value()()) / std::log(2.0) / 3;
  }
  return bits;
}

void grade_uniform_start(const std::function<nn::CausalLMConfig(nn::CausalLMConfig)>& answer, Grader& g) {
  for (std::size_t vocab : {100, 30}) {
    const nn::CausalLMConfig lesson = lesson_gpt_config(vocab), yours = answer(lesson);
    const bool same = yours.vocab == lesson.vocab && yours.num_layers == lesson.num_layers &&
                      yours.max_length == lesson.max_length && yours.layer.d_model == lesson.layer.d_model &&
                      yours.layer.heads == lesson.layer.heads && yours.layer.d_ff == lesson.layer.d_ff;
    const std::string v = "a vocabulary of " + std::to_string(vocab) + ": ";
    if (!g.check(same, v + "the same model sizes", "", "keep vocab, num_layers, max_length, d_model, heads and d_ff"))
      continue;
    const double measured = measured_untrained_bits(yours), target = std::log2(double(vocab));
    const double before = measured_untrained_bits(lesson);
    g.check(std::abs(measured - target) <= 0.5, v + "the untrained model's loss against the uniform guess",
            "measured " + std::to_string(measured) + " bits, target log2 V = " + std::to_string(target) +
                " within 0.5 (the lesson's config: " + std::to_string(before) + " bits; mean of 3 draws)",
            "a loss far above log2 V means the model is sure of the wrong tokens: which token gets the largest logit "
            "at the start, and through which weights?");
  }
}

void grade_bits_by_position(const std::function<std::vector<double>(const Array<double>&, const std::vector<Index>&)>& answer,
                            Grader& g) {
  // The engine's cross-entropy (nats, mean over the rows it is given) of each row alone, in bits.
  auto engine = [](const Array<double>& logits, const std::vector<Index>& targets) {
    Array<double> bits = xt::zeros<double>({targets.size()});
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const Array<double> row = xt::view(logits, xt::range(t, t + 1), xt::all());
      IndexArray target = IndexArray::from_shape({1});
      target(0) = targets[t];
      bits(t) = cross_entropy(Tensor<double>(row), target).value()() / std::log(2.0);
    }
    return bits;
  };
  auto as_array = [](const std::vector<double>& v) {
    Array<double> a = xt::zeros<double>({v.size()});
    for (std::size_t i = 0; i < v.size(); ++i) a(i) = v[i];
    return a;
  };
  const std::size_t L = 6, V = 7;
  const Array<double> logits = random_array({L, V}, 41, -3.0, 3.0);
  const std::vector<Index> targets{2, 0, 6, 3, 3, 1};
  const std::vector<double> got = answer(logits, targets);
  if (!g.check(got.size() == L, "one loss per position", std::to_string(got.size()) + " returned", "L numbers, one per row"))
    return;
  g.close("a window of 6 positions over 7 tokens", as_array(got), engine(logits, targets), 1e-12,
          "row t against targets[t], in bits: divide the natural log by ln 2");
  Array<double> sure = logits * 0.0;
  for (std::size_t t = 0; t < L; ++t) sure(t, std::size_t(targets[t])) = 40.0;
  g.close("a model sure of every target loses ~0 bits", as_array(answer(sure, targets)), engine(sure, targets), 1e-12,
          "the target's own logit, not another row's");
  const Array<double> big = logits * 300.0;
  g.close("logits in the hundreds", as_array(answer(big, targets)), engine(big, targets), 1e-9,
          "subtract each row's largest logit before exp, or exp overflows");
}

}  // namespace

EXERCISE(kneser_ney_bigram, "One interpolated Kneser-Ney probability", grade_kneser_ney_bigram);
HINT(kneser_ney_bigram,
     "P2(w|h) = max(c(h w) - D, 0) / c(h .) + D T(h) / c(h .) P1(w) when c(h .) > 0, else P1(w); "
     "P1(w) = max(N(. w) - D, 0) / N(. .) + D T1 / N(. .) / (V - 1) for w != bos. c(h w): pairs in <bos> s <eos>; "
     "c(h .) their sum over w; T(h): distinct w after h; N(. w): distinct tokens right before w; N(. .) their sum; "
     "T1: how many w have N(. w) > 0");
EXERCISE(uniform_start, "Start from the uniform guess", grade_uniform_start);
HINT(uniform_start,
     "with the output tied to the embedding, the logit of token v is the final state's dot product with v's own "
     "embedding, and each position's state still holds its input token's embedding: the untrained model predicts "
     "its input again, with a logit of about sqrt(d_model). An output layer of its own (tie_output = false), drawn "
     "small, gives logits near 0 for every token");
EXERCISE(bits_by_position, "The loss at every position of a window", grade_bits_by_position);
HINT(bits_by_position, "bits_t = (log sum_v exp(z_tv - m_t) + m_t - z_t,targets[t]) / ln 2, with m_t the largest logit of row t");
