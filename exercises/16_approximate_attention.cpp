// Exercises for lesson 16, approximate attention. Grade them with build/bin/grade 16.
//
// Write each function in plain xtensor (xt::zeros, loops, std::exp ...), not with the engine's
// ops: this is the inner loop of core/ops/linear_attention.cpp.
#include <cmath>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 16.1 Causal linear attention as an RNN -------------------------------------------------
// phi(x) = elu(x) + 1: x + 1 for x > 0, e^x otherwise, entry by entry. Causal linear attention
// of Q, K (n, d) and V (n, dv) is, for each i,
//     O_i = phi(q_i)^T S_i / (phi(q_i) . z_i + 1e-6),   S_i = sum_{j <= i} phi(k_j) v_j^T,  z_i = sum_{j <= i} phi(k_j).
// Return O (n, dv) in one pass over the rows with a running state S (d, dv) and z (d): no n x n
// matrix, O(n d dv) work.
Array<double> causal_linear_attention(const Array<double>& Q, const Array<double>& K, const Array<double>& V) {
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
            "add phi(k_i) v_i^T to S and phi(k_i) to z before query i reads them (key i is visible to query i), and "
            "divide by phi(q_i) . z_i + 1e-6");
  };
  one("n = 6, d = 3, dv = 2", 6, 3, 2, 51);
  one("n = 1", 1, 4, 3, 54);
  one("n = 20, d = 5, dv = 4", 20, 5, 4, 57);
}

}  // namespace

EXERCISE(causal_linear_attention, "Causal linear attention as an RNN", grade_causal_linear_attention);
