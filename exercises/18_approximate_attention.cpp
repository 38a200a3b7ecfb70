// Exercises for lesson 18, approximate attention. Grade them with build/bin/grade 18.
//
// Write each function in plain xtensor (xt::zeros, loops, std::exp ...), not with the engine's
// ops: this is the inner loop of core/ops/linear_attention.cpp.
#include <cmath>
#include <string>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "nn/attention/linformer.hpp"
#include "nn/attention/structure.hpp"
#include "nn/positional/sinusoidal.hpp"
#include "nn/recall_model.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 18.1 Causal linear attention as an RNN -------------------------------------------------
// phi(x) = elu(x) + 1: x + 1 for x > 0, e^x otherwise, entry by entry. Causal linear attention
// of Q, K (n, d) and V (n, dv) replaces e^(q . k) by phi(q) . phi(k):
//     O_i = sum_{j <= i} (phi(q_i) . phi(k_j)) v_j / (sum_{j <= i} phi(q_i) . phi(k_j) + 1e-6).
// Return O (n, dv) in one pass over the rows, carrying a state of a (d, dv) matrix and a d-vector
// from row to row: no n x n matrix, O(n d dv) work. What must the state hold?
Array<double> causal_linear_attention(const Array<double>& Q, const Array<double>& K, const Array<double>& V) {
  not_attempted();  // delete this line and write your answer
}

// ---- 18.2 Which approximation, for which attention? ------------------------------------------
// An experiment, graded by running it. Lesson 18's queries and keys q_i = k_i = a PE(i) (sinusoidal
// position codes, d = 64, n = 512) make attention a band around the diagonal whose width the
// sharpness a sets: broad and smooth for a small a, a few tokens wide for a large one. For each
// sharpness, choose the approximation (nn::AttentionKind::local, ::linear or ::linformer; local's
// window and Linformer's rank are 64) whose output stays within 0.4 of exact attention's
// (||O - O_exact|| / ||O_exact||, V normal). The grader runs your choice at a = 0.5, 0.75, 2 and 3
// with the engine's ops. Predict from what each approximation keeps before you measure.
nn::AttentionKind approximation_for(double sharpness) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against the engine's linear_attention op.
namespace {

void grade_causal_linear_attention(
    const std::function<Array<double>(const Array<double>&, const Array<double>&, const Array<double>&)>& answer,
    Grader& g) {
  auto one = [&](const std::string& what, std::size_t n, std::size_t d, std::size_t dv, std::uint64_t seed) {
    const Array<double> Q = random_array({n, d}, seed, -2, 2), K = random_array({n, d}, seed + 1, -2, 2),
                        V = random_array({n, dv}, seed + 2);
    LinearAttentionOptions o;
    o.causal = true;
    g.close(what, answer(Q, K, V), linear_attention(Tensor<double>(Q), Tensor<double>(K), Tensor<double>(V), o).value(),
            1e-10,
            "key i is visible to query i: does your state take row i in before or after query i reads it? And is the "
            "1e-6 added to the denominator only?");
  };
  one("n = 6, d = 3, dv = 2", 6, 3, 2, 51);
  one("n = 1", 1, 4, 3, 54);
  one("n = 20, d = 5, dv = 4", 20, 5, 4, 57);
}

// The output error of one approximation against exact attention on q = k = a PE (1, 512, 64).
double band_error(nn::AttentionKind kind, double sharpness) {
  const std::size_t n = 512, d = 64, band = 64;
  Array<float> pe = nn::sinusoidal_table<float>(n, d) * float(sharpness);
  pe.reshape({1, n, d});
  const Tensor<float> Q(pe), K(pe), V(Array<float>(xt::cast<float>(random_array({1, n, d}, 161, -1.7, 1.7))));
  NoGrad no_grad;
  const Array<float> exact = scaled_dot_product_attention(Q, K, V).output.value();
  Array<float> approx;
  if (kind == nn::AttentionKind::local) approx = local_attention(Q, K, V, band).value();
  if (kind == nn::AttentionKind::linear) approx = linear_attention(Q, K, V).value();
  if (kind == nn::AttentionKind::linformer) approx = nn::Linformer<float>(n, band).forward(Q, K, V).value();
  return nn::relative_error(xt::xarray<double>(xt::cast<double>(approx)), xt::xarray<double>(xt::cast<double>(exact)));
}

void grade_approximation_for(const std::function<nn::AttentionKind(double)>& answer, Grader& g) {
  for (double a : {0.5, 0.75, 2.0, 3.0}) {
    const nn::AttentionKind kind = answer(a);
    const std::string at = "sharpness " + std::to_string(a).substr(0, 4) + ": ";
    if (!g.check(kind == nn::AttentionKind::local || kind == nn::AttentionKind::linear ||
                     kind == nn::AttentionKind::linformer,
                 at + "one of local, linear, linformer", std::string("you chose ") + nn::kind_name(kind)))
      continue;
    const double error = band_error(kind, a);
    g.check(error <= 0.4, at + "the output error of your choice",
            std::string(nn::kind_name(kind)) + ": measured " + std::to_string(error) + ", target at most 0.4",
            "how many tokens wide is the band at this sharpness, and what does each approximation keep: a window of "
            "keys, a smooth kernel, or a few pooled summaries?");
  }
}

}  // namespace

EXERCISE(causal_linear_attention, "Causal linear attention as an RNN", grade_causal_linear_attention);
HINT(causal_linear_attention,
     "phi(q_i) factors out of both sums: O_i = phi(q_i)^T S_i / (phi(q_i) . z_i + 1e-6) with S_i = sum_{j <= i} "
     "phi(k_j) v_j^T (d, dv) and z_i = sum_{j <= i} phi(k_j) (d); add row i's terms to S and z, then read them");
EXERCISE(approximation_for, "Which approximation, for which attention?", grade_approximation_for);
HINT(approximation_for,
     "a narrow band fits in local attention's window, which is then nearly exact; a broad, smooth band is low-rank "
     "and smooth in position, which Linformer's segment means (and linear attention's smooth kernel) keep: local for "
     "a large sharpness, Linformer for a small one");
