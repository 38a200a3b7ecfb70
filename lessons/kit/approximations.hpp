// Lesson 18's approximations of attention as AttentionFn (lessons/kit/timing.hpp), ready for the
// cost harness and for output errors: local (a sliding window), linear (elu + 1), Linformer at its
// segment means, and a sparse pattern on the tiled kernel, which skips the tiles the pattern leaves
// empty; and what each of the first three keeps of one exact attention.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/array.hpp"
#include "lessons/kit/timing.hpp"
#include "plots/plots.hpp"

namespace attnlab::lessons {

AttentionFn local_fn(std::size_t window);
AttentionFn linear_fn(bool causal = false);
// Linformer's projections have n columns: one for length n, of rank min(rank, n), E and F at their
// segment means (untrained).
AttentionFn linformer_fn(std::size_t n, std::size_t rank);
// nn::sparse_pattern(n, band, the first global_tokens positions global, strided) as
// sparse_attention's description (window band, stride band when strided): no mask, O(n) memory.
AttentionFn sparse_pattern_fn(std::size_t n, std::size_t band, std::size_t global_tokens, bool strided);

// Against exact attention on q, k, v (1, n, d): the relative output error of local attention
// (window band), linear attention and Linformer (rank band), and what the exact weights P look like
// to them: the weight within the window (nn::weight_in_band) and the energy kept by band segment
// means (nn::segment_mean_share). ShapeError naming approximation_errors unless q, k, v are one
// sequence (1, n, d) of one n.
struct ApproximationErrors {
  double local = 0, linear = 0, linformer = 0;
  double weight_in_band = 0, segment_share = 0;
};
ApproximationErrors approximation_errors(const Array<float>& q, const Array<float>& k, const Array<float>& v,
                                         std::size_t band);

// The errors against a sweep of the band's sharpness (one entry of `errors` per sharpness): the
// three output errors (log scale) on the left, the weight in the window and the energy the
// segment means keep on the right. PlotError for no points or counts that differ.
plots::Figure error_sweep_figure(const std::vector<double>& sharpness, const std::vector<ApproximationErrors>& errors,
                                 std::size_t n, std::size_t band);

}  // namespace attnlab::lessons
