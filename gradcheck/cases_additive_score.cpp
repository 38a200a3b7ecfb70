// Gradient checks of the fused additive score op: pq, pk and v, one query per batch row (a
// decoder step) and several, v as (H) and as Linear's (1, H).
#include "gradcheck/cases.hpp"

namespace attnlab::cases {

GRADCHECK_CASE("additive_score", "pq (2,3,4), pk (2,5,4), v (4)", [] {
  return gradcheck([](const Inputs& x) { return additive_score(x[0], x[1], x[2]); },
                   {rnd({2, 3, 4}, 1, -1.5, 1.5), rnd({2, 5, 4}, 2, -1.5, 1.5), rnd({4}, 3)});
});
GRADCHECK_CASE("additive_score decoder step", "pq (3,1,4), pk (3,6,4), v (1,4)", [] {
  return gradcheck([](const Inputs& x) { return additive_score(x[0], x[1], x[2]); },
                   {rnd({3, 1, 4}, 4, -1.5, 1.5), rnd({3, 6, 4}, 5, -1.5, 1.5), rnd({1, 4}, 6)});
});

}  // namespace attnlab::cases
