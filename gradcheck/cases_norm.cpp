// Gradient checks of layer_norm (with and without its affine part) and dropout.
#include "gradcheck/cases.hpp"

namespace attnlab::cases {

GRADCHECK_CASE("layer_norm affine", "(2,3,6) g(6) b(6)", [] {
  return gradcheck([](const Inputs& x) { return layer_norm(x[0], x[1], x[2]); },
                   {rnd({2, 3, 6}, 1, -2.0, 2.0), rnd({6}, 2, 0.5, 1.5), rnd({6}, 3)});
});
GRADCHECK_CASE("layer_norm no affine", "(4,5)", [] {
  return gradcheck([](const Inputs& x) { return layer_norm(x[0], TD(), TD()); },
                   {rnd({4, 5}, 1, -2.0, 2.0)});
});
GRADCHECK_CASE("layer_norm gamma only", "(3,5) g(5)", [] {
  return gradcheck([](const Inputs& x) { return layer_norm(x[0], x[1], TD(), 1e-3); },
                   {rnd({3, 5}, 1, -2.0, 2.0), rnd({5}, 2, 0.5, 1.5)});
});

// The generator is reseeded inside f, so every evaluation (analytic and each finite
// difference) draws the same mask.
GRADCHECK_CASE("dropout training", "(4,5) p 0.3", [] {
  return gradcheck(
      [](const Inputs& x) {
        Generator gen(11);
        return dropout(x[0], 0.3, true, gen);
      },
      {rnd({4, 5}, 1)});
});
GRADCHECK_CASE("dropout eval", "(4,5) p 0.3", [] {
  return gradcheck(
      [](const Inputs& x) {
        Generator gen(11);
        return dropout(x[0], 0.3, false, gen);
      },
      {rnd({4, 5}, 1)});
});

}  // namespace attnlab::cases
