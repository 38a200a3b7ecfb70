// Gradient checks of matmul (every batch and transpose pattern, each backward path: the folded
// single gemm, the per-block loop, broadcast accumulation) and linear.
#include "gradcheck/cases.hpp"

namespace attnlab::cases {

namespace {
GradcheckResult mm(const Shape& a, const Shape& b, bool ta = false, bool tb = false) {
  return gradcheck([ta, tb](const Inputs& x) { return matmul(x[0], x[1], ta, tb); },
                   {rnd(a, 1), rnd(b, 2)});
}
}  // namespace

GRADCHECK_CASE("matmul 2-D", "(3,4) x (4,5)", [] { return mm({3, 4}, {4, 5}); });
GRADCHECK_CASE("matmul batched", "(2,3,4) x (2,4,5)", [] { return mm({2, 3, 4}, {2, 4, 5}); });
GRADCHECK_CASE("matmul broadcast batch (2-D right)", "(2,3,4) x (4,5)",
               [] { return mm({2, 3, 4}, {4, 5}); });
GRADCHECK_CASE("matmul broadcast batch (2-D left)", "(3,4) x (2,4,5)",
               [] { return mm({3, 4}, {2, 4, 5}); });
GRADCHECK_CASE("matmul broadcast batch both", "(2,1,3,4) x (1,3,4,5)",
               [] { return mm({2, 1, 3, 4}, {1, 3, 4, 5}); });
GRADCHECK_CASE("matmul broadcast batch size-1 right", "(2,3,4) x (1,4,5)",
               [] { return mm({2, 3, 4}, {1, 4, 5}); });
GRADCHECK_CASE("matmul transpose_a", "(2,4,3)^T x (2,4,5)",
               [] { return mm({2, 4, 3}, {2, 4, 5}, true, false); });
GRADCHECK_CASE("matmul transpose_a 2-D right", "(2,4,3)^T x (4,5)",
               [] { return mm({2, 4, 3}, {4, 5}, true, false); });
GRADCHECK_CASE("matmul transpose_b", "(2,3,4) x (2,5,4)^T",
               [] { return mm({2, 3, 4}, {2, 5, 4}, false, true); });
GRADCHECK_CASE("matmul transpose_b 2-D right", "(2,3,4) x (5,4)^T",
               [] { return mm({2, 3, 4}, {5, 4}, false, true); });
GRADCHECK_CASE("matmul transpose both broadcast", "(4,3)^T x (2,5,4)^T",
               [] { return mm({4, 3}, {2, 5, 4}, true, true); });
GRADCHECK_CASE("matmul 1-D", "(4) x (2,4,5)", [] { return mm({4}, {2, 4, 5}); });
GRADCHECK_CASE("matmul 1-D right", "(2,3,4) x (4)", [] { return mm({2, 3, 4}, {4}); });
GRADCHECK_CASE("matmul 1-D both", "(4) x (4)", [] { return mm({4}, {4}); });
GRADCHECK_CASE("matmul reuse", "x x^T", [] {
  return gradcheck([](const Inputs& x) { return matmul(x[0], x[0], false, true); },
                   {rnd({2, 3, 4}, 1)});
});

GRADCHECK_CASE("linear with bias", "(2,3,4) W(5,4) b(5)", [] {
  return gradcheck([](const Inputs& x) { return linear(x[0], x[1], x[2]); },
                   {rnd({2, 3, 4}, 1), rnd({5, 4}, 2), rnd({5}, 3)});
});
GRADCHECK_CASE("linear without bias", "(3,4) W(5,4)", [] {
  return gradcheck([](const Inputs& x) { return linear(x[0], x[1]); },
                   {rnd({3, 4}, 1), rnd({5, 4}, 2)});
});
GRADCHECK_CASE("linear 1-D input", "(4) W(3,4) b(3)", [] {
  return gradcheck([](const Inputs& x) { return linear(x[0], x[1], x[2]); },
                   {rnd({4}, 1), rnd({3, 4}, 2), rnd({3}, 3)});
});

}  // namespace attnlab::cases
