// Positional information for attention, which by itself is blind to order (permuting the keys
// permutes nothing in the output). Six ways to put position back:
//
//   sinusoidal   x + PE, PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(...): fixed, any length
//   learned      x + W[p], W (max_length, d) trained: cannot go past max_length
//   relative     a learned bias b(j - i) per head added to the scores (T5 buckets): any length
//   rotary       rotate pairs of q and k dimensions by p * theta_i, so q.k sees only i - j: any length
//   ALiBi        a fixed bias -slope_h * |i - j| added to the scores: any length
//   Shaw         a learned vector w per clipped distance in the score, q_i . (k_j + w_{j - i}): any length
//
// The first two act on the embeddings; the last four act inside attention.
#pragma once

#include <string>

#include "nn/positional/alibi.hpp"
#include "nn/positional/learned.hpp"
#include "nn/positional/relative.hpp"
#include "nn/positional/rotary.hpp"
#include "nn/positional/shaw.hpp"
#include "nn/positional/sinusoidal.hpp"

namespace attnlab::nn {

// Which positional method a model uses (the encoder-only model takes any of them).
enum class Positional { None, Sinusoidal, Learned, RelativeBias, Rotary, ALiBi, ShawRelative };
std::string positional_name(Positional p);       // "none", "sinusoidal", ... "alibi", "shaw"
Positional parse_positional(const std::string& name);  // the inverse; ShapeError on unknown names

}  // namespace attnlab::nn
