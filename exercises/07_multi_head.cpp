// Exercises for lesson 07, multi-head attention. Grade them with build/bin/grade 07.
//
// Write each function in plain xtensor (loops, xt::zeros ...), not with the engine's ops.
#include <cmath>
#include <sstream>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "lessons/kit/tagging.hpp"
#include "lessons/kit/train.hpp"
#include "nn/attention/multi_head.hpp"
#include "nn/data/offset_tuples.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 07.1 Splitting into heads --------------------------------------------------------------------
// x (B, L, h d): each token's d_model = h d features are h heads of d, side by side (head 0 in
// columns 0 .. d-1, head 1 in d .. 2d-1, ...). Return them as (B, h, L, d), so that each head is
// an (L, d) matrix that attention can use on its own.
Array<double> split_heads(const Array<double>& x, std::size_t heads) {
  not_attempted();  // delete this line and write your answer
}

// ---- 07.2 Merging them back ---------------------------------------------------------------------
// The inverse: y (B, h, L, d) -> (B, L, h d), each head's output back in its own columns.
Array<double> merge_heads(const Array<double>& y) {
  not_attempted();  // delete this line and write your answer
}

// ---- 07.3 What heads cost in parameters ------------------------------------------------------------
// How many parameters has nn::MultiHeadAttention over d_model features with `heads` heads, with
// and without its biases? Count them from what the layer computes (the lesson's section 1), not
// by building one: what does each head own, and what do the heads share?
std::size_t attention_parameters(std::size_t d_model, std::size_t heads, bool bias) {
  not_attempted();  // delete this line and write your answer
}

// ---- 07.4 Experiment: one head, two tokens, in order -------------------------------------------------
// The lesson's pair task: at every position i, the ordered pair (x[i-2], x[i-5]) of six digits, one
// of 36 classes. One head fails it when it learns where to look by itself. Here you choose where it
// looks: return bias (16), the score added to query i's key at offset o = i - j (o = 0 is the token
// itself; keys after i are masked). The grader trains a model of ONE causal head with your bias
// fixed (learned embeddings, no positions but your bias, a two-layer read-out per position) on 2000
// sequences of 16 digits, twice with different seeds, and measures the held-out accuracy on 500
// others. Target: at least 0.9 on both seeds. (The head returns ONE weighted mean of the values:
// think about what the mean of two value vectors keeps of their order.)
Array<double> one_head_bias() {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against the engine's reshape and permute, its
// fused multi-head attention and nn::MultiHeadAttention.
namespace {

Array<double> engine_split(const Array<double>& x, std::size_t h) {
  const long B = long(x.shape()[0]), L = long(x.shape()[1]), d = long(x.shape()[2] / h);
  return permute(reshape(Tensor<double>(x), {B, L, long(h), d}), {0, 2, 1, 3}).value();
}

void grade_split_heads(const std::function<Array<double>(const Array<double>&, std::size_t)>& answer, Grader& g) {
  const Array<double> x = random_array({2, 5, 12}, 71);
  for (std::size_t h : {3, 4, 1})
    g.close("(2, 5, 12) into " + std::to_string(h) + " heads", answer(x, h), engine_split(x, h), 0.0,
            "head j's (L, d) matrix is x's columns of head j, for every token: which column is its entry c?");
}

void grade_merge_heads(const std::function<Array<double>(const Array<double>&)>& answer, Grader& g) {
  const Array<double> y = random_array({2, 4, 5, 3}, 72);
  const Array<double> merged = reshape(permute(Tensor<double>(y), {0, 2, 1, 3}), {2, 5, 12}).value();
  g.close("(2, 4, 5, 3) to (2, 5, 12)", answer(y), merged, 0.0,
          "the inverse of split_heads: where does entry c of head j go in its token's row?");
  // Split, attention per head, merge: what the engine's fused multi-head op computes in place.
  const Array<double> q = random_array({2, 5, 12}, 73), k = random_array({2, 6, 12}, 74), v = random_array({2, 6, 12}, 75);
  const Array<double> heads = scaled_dot_product_attention(Tensor<double>(engine_split(q, 4)), Tensor<double>(engine_split(k, 4)),
                                                           Tensor<double>(engine_split(v, 4)))
                                  .output.value();
  g.close("merged heads equal the engine's multi_head_attention", answer(heads),
          multi_head_attention(Tensor<double>(q), Tensor<double>(k), Tensor<double>(v), 4).output.value(), 1e-12,
          "head j's output belongs in columns j d .. (j + 1) d - 1 of its token's row");
}

void grade_attention_parameters(const std::function<std::size_t(std::size_t, std::size_t, bool)>& answer, Grader& g) {
  for (const bool bias : {true, false})
    for (const std::size_t h : {1, 8}) {
      Generator gen(76);
      const std::size_t expected = nn::MultiHeadAttention<double>(64, h, gen, 0.0, bias).parameter_count();
      const std::size_t yours = answer(64, h, bias);
      g.check(yours == expected,
              "d_model 64, " + std::to_string(h) + (h == 1 ? " head, " : " heads, ") + (bias ? "with" : "without") +
                  " biases, against nn::MultiHeadAttention",
              "yours " + std::to_string(yours) + ", the module's " + std::to_string(expected),
              "look at section 1's table: which column changes with the head count, and which does not?");
    }
}


// 07.4: one causal head over learned embeddings, its scores q.k / sqrt(d) plus the student's bias
// by offset, and a read-out per position (the head's output only: the pair needs no x_i).
constexpr std::size_t kDigits = 6, kLength = 16, kWidth = 32, kHidden = 64;
constexpr Index kNoTag = -100;
const std::vector<std::size_t> kPair = {2, 5};

class OneHeadTagger : public nn::Module<float> {
 public:
  OneHeadTagger(const Array<double>& bias_by_offset, Generator& gen)
      : embed(kDigits, kWidth, gen), head(kWidth, 1, gen), hidden(kWidth, kHidden, gen),
        out(kHidden, nn::data::offset_tuple_classes(kDigits, kPair.size()), gen) {
    register_module("embed", embed), register_module("head", head);
    register_module("hidden", hidden), register_module("out", out);
    Array<float> b = xt::zeros<float>({std::size_t(1), std::size_t(1), kLength, kLength});
    for (std::size_t i = 0; i < kLength; ++i)
      for (std::size_t j = 0; j <= i; ++j) b(0, 0, i, j) = float(bias_by_offset(i - j));
    bias = Tensor<float>(b);  // fixed: no gradient
  }
  Tensor<float> forward(const IndexArray& ids) {
    nn::MultiHeadOptions<float> o;
    o.causal = true, o.bias = bias;
    return out(relu(hidden(head.forward(embed(ids), o).output)));
  }
  nn::Embedding<float> embed;
  nn::MultiHeadAttention<float> head;
  nn::Linear<float> hidden, out;
  Tensor<float> bias;
};

// The held-out accuracy of a one-head model with this bias, trained on 2000 sequences from `seed`.
double one_head_accuracy(const Array<double>& bias_by_offset, std::uint64_t seed) {
  Generator gen(seed);
  const nn::data::Tagged all = nn::data::offset_tuples(2500, kLength, kDigits, kPair, kNoTag, gen);
  const nn::data::Tagged train_set = all.slice(0, 2000), test = all.slice(2000, 2500);
  OneHeadTagger model(bias_by_offset, gen);
  lessons::Recipe r;
  r.label = "one head", r.epochs = 20, r.batch = 64, r.lr = 1e-2, r.warmup = 0.05, r.floor = 0.05, r.seed = seed;
  const CrossEntropyOptions ce{kNoTag};
  lessons::train(model, train_set.size(), [&](const std::vector<std::size_t>& rows) {
    const nn::data::Tagged b = train_set.rows(rows);
    return cross_entropy(model.forward(b.inputs), b.targets, ce);
  }, r);
  model.eval();
  const IndexArray p = lessons::predict_tags([&](const IndexArray& x) { return model.forward(x); }, test.inputs);
  return lessons::score_tags(p, test.targets, kNoTag).token;
}

void grade_one_head_bias(const std::function<Array<double>()>& answer, Grader& g) {
  const Array<double> bias = answer();
  if (!g.check(bias.dimension() == 1 && bias.size() == kLength, "the bias has one entry per offset 0 .. 15",
               "yours has " + std::to_string(bias.size()) + " entries in " + std::to_string(bias.dimension()) +
                   " dimension(s)",
               "return an Array<double> of 16 numbers: bias(o) for o = 0 .. 15"))
    return;
  bool finite = true;
  for (double b : bias) finite = finite && std::isfinite(b);
  if (!g.check(finite, "every entry of the bias is finite", "",
               "a very negative number (-30) shuts an offset off; -inf would make a row with no key left a NaN"))
    return;
  for (std::uint64_t seed : {701, 702}) {
    const double acc = one_head_accuracy(bias, seed);
    std::ostringstream detail;
    detail.precision(3);
    detail << "measured held-out accuracy " << acc << ", target at least 0.9 (a guess: 1/36 = 0.028)";
    g.check(acc >= 0.9, "one head with your bias, trained on seed " + std::to_string(seed), detail.str(),
            "which offsets must the head see, and can it tell x[i-2] from x[i-5] if both get the same weight?");
  }
}
}  // namespace

EXERCISE(split_heads, "Splitting into heads", grade_split_heads);
HINT(split_heads,
     "out(b, j, l, c) = x(b, l, j d + c) with d = d_model / h: the head is the slower index of the columns.");
EXERCISE(merge_heads, "Merging heads back", grade_merge_heads);
HINT(merge_heads, "out(b, l, j d + c) = y(b, j, l, c).");
EXERCISE(attention_parameters, "What heads cost in parameters", grade_attention_parameters);
HINT(attention_parameters,
     "W_q, W_k, W_v and W_o are each (d_model, d_model), with a bias of d_model each: 4 d^2 + 4 d with biases, 4 d^2 "
     "without. Heads split the d_model columns among them: the count does not depend on the number of heads.");
EXERCISE(one_head_bias, "Experiment: one head, two tokens, in order", grade_one_head_bias);
HINT(one_head_bias,
     "Put a large bias on offsets 2 and 5 and a very negative one (-30) everywhere else, but not the same on both: "
     "bias 2 on offset 2 and 1 on offset 5 gives weights e^2 / (e^2 + e) = 0.73 and 0.27. The mean "
     "0.73 v(x[i-2]) + 0.27 v(x[i-5]) differs from 0.73 v(x[i-5]) + 0.27 v(x[i-2]), so the read-out can tell the "
     "pair (3, 5) from (5, 3); with equal weights the two means are the same vector.");
