// Does a tagger read its input as a bag of tokens? Self-attention is permutation-equivariant:
// permute the tokens of x by pi and, without positions, every layer's output is permuted alike,
// f(pi x) = pi f(x), whatever the weights. A positional method breaks that symmetry; how far one
// sequence is from it is what permutation_error measures (lesson 05).
#pragma once

#include <cstddef>
#include <vector>

#include "core/array.hpp"
#include "core/random.hpp"
#include "nn/transformer/encoder_model.hpp"

namespace attnlab::nn {

// max over positions i and classes c of |f(pi x)[i, c] - f(x)[perm[i], c]|, where (pi x)[i] =
// x[perm[i]], for one sequence `one` (1, L) and a tagger `model` (Pooling::None: logits per token),
// in eval mode without the tape (the model is left in eval mode). Zero, to rounding, exactly when
// the model treats this input as a bag. ShapeError naming permutation_error for a pooled model, an
// input that is not (1, L), or a perm that is not a permutation of 0..L-1.
double permutation_error(EncoderModel<float>& model, const IndexArray& one, const std::vector<std::size_t>& perm);

// Permutations to test it with: 0..n-1 in a random order (a Fisher-Yates shuffle with `gen`), and
// reversed, n-1..0 (the mirror image of a sequence).
std::vector<std::size_t> random_permutation(std::size_t n, Generator& gen);
std::vector<std::size_t> reversal(std::size_t n);

}  // namespace attnlab::nn
