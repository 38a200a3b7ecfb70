// Gradient checks of the fused GRU cell op: every input (gi, gh, h), 2-D and with a middle axis
// (the (B, 1, .) step layout of nn::GRU).
#include "core/ops/gru_cell.hpp"
#include "gradcheck/cases.hpp"

namespace attnlab::cases {

GRADCHECK_CASE("gru_cell", "gi (3,12), gh (3,12), h (3,4)", [] {
  return gradcheck([](const Inputs& x) { return gru_cell(x[0], x[1], x[2]); },
                   {rnd({3, 12}, 1, -2.0, 2.0), rnd({3, 12}, 2, -2.0, 2.0), rnd({3, 4}, 3)});
});
GRADCHECK_CASE("gru_cell step layout", "gi (2,1,9), gh (2,1,9), h (2,1,3)", [] {
  return gradcheck([](const Inputs& x) { return gru_cell(x[0], x[1], x[2]); },
                   {rnd({2, 1, 9}, 4, -2.0, 2.0), rnd({2, 1, 9}, 5, -2.0, 2.0), rnd({2, 1, 3}, 6)});
});

}  // namespace attnlab::cases
