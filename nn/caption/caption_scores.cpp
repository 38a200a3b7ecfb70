#include "nn/caption/caption_scores.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "nn/metrics.hpp"

namespace attnlab::nn {

CaptionScores score_captions(const IndexArray& words, const Array<float>& weights, const data::CaptionScenes& scenes,
                             std::size_t patch) {
  const std::size_t N = scenes.size(), side = N ? scenes.images.shape(1) : 0;
  const std::size_t L = scenes.captions.shape(1) - 1, grid = patch ? side / patch : 0;
  if (words.dimension() != 2 || words.shape(0) != N || words.shape(1) != L || weights.dimension() != 3 ||
      weights.shape(0) != N || weights.shape(1) != L || weights.shape(2) != grid * grid)
    throw std::invalid_argument("score_captions: words " + std::to_string(words.dimension()) + "-d of " +
                                std::to_string(words.size()) + " and weights of " + std::to_string(weights.size()) +
                                " entries do not fit " + std::to_string(N) + " scenes of " + std::to_string(L) +
                                " words over " + std::to_string(grid * grid) + " patches");
  CaptionScores r;
  std::vector<std::vector<Index>> hyps(N), refs(N);
  std::map<std::size_t, std::size_t> scenes_with;
  double tokens = 0, true_words = 0, relations = 0, relation_words = 0, named = 0;
  for (std::size_t n = 0; n < N; ++n) {
    const std::size_t k = scenes.garments(n), eos = 2 * k - 1;  // target position of <eos> (caption token 2k)
    bool all = true;
    for (std::size_t t = 0; t <= eos; ++t) {
      const bool ok = words(n, t) == scenes.captions(n, t + 1);
      tokens += ok, all = all && ok;
      if (t % 2 == 1 && t < eos) relations += ok, ++relation_words;
      if (t < eos) refs[n].push_back(scenes.captions(n, t + 1));
    }
    true_words += double(eos + 1);
    for (std::size_t t = 0; t < L && words(n, t) != data::kCaptionEos; ++t) hyps[n].push_back(words(n, t));
    r.exact += all, r.exact_by_garments[k] += all, ++scenes_with[k];
    xt::xarray<bool> in_any = xt::zeros<bool>({grid, grid});
    for (std::size_t g = 0; g < k; ++g) in_any = in_any || data::patches_in_box(scenes.boxes[n][g], side, patch);
    for (std::size_t g = 0; g < k; ++g) {
      const xt::xarray<bool> in = data::patches_in_box(scenes.boxes[n][g], side, patch);
      double inside = 0, best = -1;
      std::size_t at = 0;
      for (std::size_t p = 0; p < grid * grid; ++p) {
        const double w = weights(n, 2 * g, p);
        if (in(p / grid, p % grid)) inside += w;
        if (w > best) best = w, at = p;
      }
      r.share += inside, r.pointing += in(at / grid, at % grid), r.outside += !in_any(at / grid, at % grid);
      r.peak += best, ++named;
    }
  }
  if (N == 0) return r;
  r.exact /= double(N), r.tokens = tokens / true_words, r.relation = relation_words ? relations / relation_words : 0;
  r.share /= named, r.pointing /= named, r.outside /= named, r.peak /= named;
  for (auto& [k, e] : r.exact_by_garments) e /= double(scenes_with[k]);
  r.bleu = corpus_bleu<Index>(hyps, refs).score;
  return r;
}

}  // namespace attnlab::nn
