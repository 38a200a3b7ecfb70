// Exercises for lesson 10, a character-level GPT. Grade them with build/bin/grade 10.
//
// Write each function in plain C++ and xtensor (loops, std::exp, std::map ...), not with the
// engine's ops or nn/lm: the point is to do by hand what nn/lm/kneser_ney.cpp, nn/lm/sample.cpp
// and the KV cache of CausalLM do for you.
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

// ---- 10.1 One interpolated Kneser-Ney probability ------------------------------------------
// corpus holds sequences of token ids in [0, V); each is read as <bos> s <eos> (bos and eos are
// ids too, bos never inside a sequence). Return the interpolated Kneser-Ney bigram probability
// P(next | prev) with discount D, as lesson 10 (section 3) and Chen & Goodman (1998) define it:
// the discount comes off every count of a pair "prev then next" in the padded sequences, and the
// mass it frees goes to a unigram level that counts, for each token, how many DIFFERENT tokens came
// right before it (<bos> counts as one), itself discounted and interpolated with a uniform share
// over the V - 1 ids other than bos (bos is never predicted). A prev that never came first in a
// pair falls back to the unigram level entirely.
double kneser_ney_bigram(const std::vector<std::vector<Index>>& corpus, std::size_t V, Index bos, Index eos, double D,
                         Index prev, Index next) {
  not_attempted();  // delete this line and write your answer
}

// ---- 10.2 What sampling draws from: temperature and top-k -----------------------------------
// Return the distribution p (one probability per logit) that sampling with temperature T and
// top-k draws from: keep the k largest logits (k = 0: all of them; when several tie at the k-th
// value, keep the ones with the lower index first), p_i = exp(z_i / T) / sum over the kept j of
// exp(z_j / T) for a kept i, and 0 for the rest. Subtract the largest kept logit before exp.
std::vector<double> sampling_distribution(const std::vector<double>& logits, double T, std::size_t k) {
  not_attempted();  // delete this line and write your answer
}

// ---- 10.3 One step of generation with a KV cache (one head) ---------------------------------
// keys and values (t, d) hold the keys and values of the t positions already generated; q, k, v
// (1, d) are the new position's query, key and value. Append k and v to the cache (the new
// position may attend to itself) and return {output (1, d), keys (t + 1, d), values (t + 1, d)}:
//     output = softmax(q keys^T / sqrt(d)) values
// over all t + 1 cached positions: nothing to mask, they are all in the new position's past.
std::vector<Array<double>> cached_attention_step(const Array<double>& keys, const Array<double>& values,
                                                 const Array<double>& q, const Array<double>& k,
                                                 const Array<double>& v) {
  not_attempted();  // delete this line and write your answer
}

// ---- 10.4 Start from the uniform guess ------------------------------------------------------
// An experiment, graded by running it. Before its first step, a model that knows nothing should
// give every token the same probability: a loss of log2 V bits a token over a vocabulary of V.
// Lesson 10's GPT, freshly drawn, does not: measure it (return the config unchanged, and the
// grader prints what it measured) and find out why. Then change ONE setting of the
// lesson's config so that the untrained model starts within 0.5 bits of log2 V, keeping its
// vocabulary, layers, length, d_model, heads and d_ff as they are. The grader builds your config
// three times (three initial draws), measures the mean loss on 8 sequences of 64 random tokens,
// and compares it with log2 V.
nn::CausalLMConfig uniform_start(nn::CausalLMConfig lesson_config) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against nn::lm::KneserNey, against the
// engine's softmax over the allowed logits, and against the engine's causal attention over the
// whole sequence.
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

void grade_sampling_distribution(const std::function<std::vector<double>(const std::vector<double>&, double, std::size_t)>& answer,
                                 Grader& g) {
  // The engine's answer: the softmax of z / T over the allowed entries (the k largest).
  auto engine = [](const std::vector<double>& z, double T, std::size_t k) {
    const std::size_t n = z.size();
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return z[a] > z[b]; });
    Mask allowed = xt::zeros<bool>({n});
    for (std::size_t r = 0; r < (k == 0 ? n : std::min(k, n)); ++r) allowed(order[r]) = true;
    Array<double> scaled = xt::zeros<double>({n});
    for (std::size_t i = 0; i < n; ++i) scaled(i) = z[i] / T;
    return Array<double>(masked_softmax(Tensor<double>(scaled), Allowed::where(allowed)).value());
  };
  auto as_array = [](const std::vector<double>& v) {
    Array<double> a = xt::zeros<double>({v.size()});
    for (std::size_t i = 0; i < v.size(); ++i) a(i) = v[i];
    return a;
  };
  const std::vector<double> z{1.0, 2.0, 0.0, 2.0, -1.0, 0.5};
  g.close("T = 1, every logit", as_array(answer(z, 1.0, 0)), engine(z, 1.0, 0), 1e-12, "p = softmax(z): they sum to 1");
  g.close("T = 0.5 sharpens", as_array(answer(z, 0.5, 0)), engine(z, 0.5, 0), 1e-12, "divide every logit by T first");
  g.close("T = 2 flattens", as_array(answer(z, 2.0, 0)), engine(z, 2.0, 0), 1e-12, "divide every logit by T first");
  g.close("top-3 (two logits tie at the top)", as_array(answer(z, 1.0, 3)), engine(z, 1.0, 3), 1e-12,
          "keep the 3 largest, set the others to exactly 0 and renormalize over the kept ones");
  g.close("top-1 is the argmax (the lower index on a tie)", as_array(answer(z, 0.8, 1)), engine(z, 0.8, 1), 1e-12,
          "with k = 1 all the mass goes to one logit: of the two 2.0s, index 1");
  const std::vector<double> big{900.0, 905.0, 899.0};
  g.close("logits in the hundreds, T = 0.1", as_array(answer(big, 0.1, 0)), engine(big, 0.1, 0), 1e-12,
          "subtract the largest kept logit before exp, or exp(9050) overflows");
}

void grade_cached_attention_step(
    const std::function<std::vector<Array<double>>(const Array<double>&, const Array<double>&, const Array<double>&,
                                                   const Array<double>&, const Array<double>&)>& answer,
    Grader& g) {
  // A sequence of 7 positions (d = 5): the engine's causal attention over all of it at once, and
  // the answer fed the first 6 as the cache and the 7th as the new position.
  const std::size_t L = 7, d = 5;
  const Array<double> Q = random_array({L, d}, 11), K = random_array({L, d}, 12), V = random_array({L, d}, 13);
  AttentionOptions<double> o;
  o.causal = true;
  const Array<double> full = scaled_dot_product_attention(Tensor<double>(Q), Tensor<double>(K), Tensor<double>(V), o)
                                 .output.value();
  auto rows = [](const Array<double>& a, std::size_t lo, std::size_t hi) { return Array<double>(xt::view(a, xt::range(lo, hi))); };
  const std::vector<Array<double>> out =
      answer(rows(K, 0, L - 1), rows(V, 0, L - 1), rows(Q, L - 1, L), rows(K, L - 1, L), rows(V, L - 1, L));
  if (!g.check(out.size() == 3, "returns {output, keys, values}", std::to_string(out.size()) + " arrays returned",
               "return the output and the two grown caches"))
    return;
  g.close("the new position's output equals the last row of the full causal attention", out[0], rows(full, L - 1, L),
          1e-12, "scale by 1 / sqrt(d) and include the new key itself among the t + 1 keys");
  g.close("the keys cache grew by the new key", out[1], K, 0.0, "append k as the last row of keys");
  g.close("the values cache grew by the new value", out[2], V, 0.0, "append v as the last row of values");
  // Generation from an empty cache: every step through the answer, against every row.
  Array<double> keys = xt::zeros<double>({std::size_t(0), d}), values = keys, outs = xt::zeros<double>({L, d});
  for (std::size_t t = 0; t < L; ++t) {
    const std::vector<Array<double>> step = answer(keys, values, rows(Q, t, t + 1), rows(K, t, t + 1), rows(V, t, t + 1));
    if (step.size() != 3) return;
    xt::view(outs, t) = xt::view(step[0], 0);
    keys = step[1];
    values = step[2];
  }
  g.close("seven steps from an empty cache give every row of the full causal attention", outs, full, 1e-12,
          "the first step has no cache: the position attends to itself alone, output = v");
}

// Lesson 10's GPT as gpt_config builds it: 4 pre-norm layers, d_model 128, 4 heads, GELU, rotary
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

}  // namespace

EXERCISE(kneser_ney_bigram, "One interpolated Kneser-Ney probability", grade_kneser_ney_bigram);
HINT(kneser_ney_bigram,
     "P2(w|h) = max(c(h w) - D, 0) / c(h .) + D T(h) / c(h .) P1(w) when c(h .) > 0, else P1(w); "
     "P1(w) = max(N(. w) - D, 0) / N(. .) + D T1 / N(. .) / (V - 1) for w != bos. c(h w): pairs in <bos> s <eos>; "
     "c(h .) their sum over w; T(h): distinct w after h; N(. w): distinct tokens right before w; N(. .) their sum; "
     "T1: how many w have N(. w) > 0");
EXERCISE(sampling_distribution, "What sampling draws from: temperature and top-k", grade_sampling_distribution);
EXERCISE(cached_attention_step, "One step of generation with a KV cache", grade_cached_attention_step);
EXERCISE(uniform_start, "Start from the uniform guess", grade_uniform_start);
HINT(uniform_start,
     "with the output tied to the embedding, the logit of token v is the final state's dot product with v's own "
     "embedding, and each position's state still holds its input token's embedding: the untrained model predicts "
     "its input again, with a logit of about sqrt(d_model). An output layer of its own (tie_output = false), drawn "
     "small, gives logits near 0 for every token");
