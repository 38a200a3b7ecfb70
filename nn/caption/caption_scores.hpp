// Lesson 20's scores of captions written for held-out scenes: how good the captions are, and
// whether each word that names a garment looked at it.
//
//   exact     the caption is the true one, word for word, up to and including <eos>
//   tokens    the words right at their position, over the true words and <eos>
//   relation  the relation words right (every second word between two garments)
//   bleu      corpus BLEU-4 (nn/metrics.hpp's corpus_bleu, no smoothing) of the captions up to
//             <eos> against the true ones, tokens as words ("left of" is one token)
//   share     for the word t = 2g naming garment g: the attention before it that falls on the
//             patches whose centre is inside g's box, averaged over every such word
//   pointing  how often that attention's peak patch is inside g's box
//   outside   how often it is inside no garment's box at all (empty canvas)
//   peak      that attention's largest weight, averaged: 1 when a word reads one patch alone
//
// The attention of step t is scored whether or not the word written there is right: it is where
// the decoder looked when the true caption names garment g there.
#pragma once

#include <cstddef>
#include <map>

#include "core/array.hpp"
#include "nn/data/caption_scenes.hpp"

namespace attnlab::nn {

struct CaptionScores {
  double exact = 0, tokens = 0, relation = 0, bleu = 0;
  double share = 0, pointing = 0;
  double outside = 0, peak = 0;
  std::map<std::size_t, double> exact_by_garments;  // garments in the scene -> exact captions among those scenes
};

// words (N, L) and their attention weights (N, L, P) for scenes (N of them, L = their captions'
// width - 1, P = (side / patch)^2 patches). std::invalid_argument naming the function for shapes
// that do not fit.
CaptionScores score_captions(const IndexArray& words, const Array<float>& weights, const data::CaptionScenes& scenes,
                             std::size_t patch);

}  // namespace attnlab::nn
