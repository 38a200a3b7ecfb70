// The induction score of attention heads (Olsson et al. 2022): how much weight a head puts, at a
// repeated token, on the position right after that token's previous occurrence ("... A B ... A"
// -> B), which is what a head that copies from its context fetches. Lesson 13 finds its induction
// head with it.
#pragma once

#include <cstddef>
#include <vector>

#include "core/tensor.hpp"

namespace attnlab::nn {

// weights (B, h, L, L) of causal self-attention over ids (B, L): for each head, the mean weight a
// query puts on the position right after the most recent earlier occurrence of its own token, over
// every query from position first_query on whose token occurred before. Zeros when no token
// repeats. ShapeError naming induction_mass and both shapes when they do not match as (B, h, L, L)
// and (B, L).
std::vector<double> induction_mass(const Array<float>& weights, const IndexArray& ids, std::size_t first_query = 1);

}  // namespace attnlab::nn
