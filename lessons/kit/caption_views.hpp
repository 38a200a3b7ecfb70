// What lesson 20 shows of a captioner's attention: where each word of a scene's caption looked,
// as images (the scene under each word's weights over the patches) and as an explorer input.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lessons/kit/explorer.hpp"
#include "nn/caption/captioner.hpp"
#include "nn/data/caption_scenes.hpp"
#include "plots/figure.hpp"

namespace attnlab::lessons {

// A captioner as one row of the figure: its name, the model, and how it reads the patches.
struct CaptionReader {
  std::string label;
  nn::Captioner<float>* model;
  nn::Glimpse glimpse;
};

// Scene n captioned greedily (`length` words from <bos>) by each reader, one row of images per
// reader: under each of the true caption's words and its <eos>, the scene with the weights over
// the reader's patches before that word (looks_grid's colours), the word written as the image's
// caption, and the box of the garment the true caption names there outlined; titled "True
// caption: ...". A scene without garments (a picture whose truth is unknown): under each word the
// first reader wrote through its <eos>, titled "Caption written (soft): ...".
// std::out_of_range naming the function for a scene past the end.
plots::Figure caption_words_grid(const std::vector<CaptionReader>& readers, const nn::data::CaptionScenes& scenes,
                                 std::size_t n, std::size_t length);

// Scene n captioned greedily by one reader, for the attention explorer: the words it wrote through
// its <eos> (numbered: "1 bag") against the patches (nn::data::patch_names), one layer named after
// the reader, one head: the weights. std::out_of_range naming the function for a scene past the end.
AttentionInput caption_attention_input(const CaptionReader& reader, const nn::data::CaptionScenes& scenes,
                                       std::size_t n, std::size_t length);

}  // namespace attnlab::lessons
