#include "lessons/kit/caption_views.hpp"

#include <stdexcept>

#include <xtensor/xview.hpp>

#include "lessons/kit/vit_model.hpp"
#include "lessons/story/text.hpp"

namespace attnlab::lessons {

namespace data = nn::data;

namespace {
data::CaptionScenes one_scene(const char* fn, const data::CaptionScenes& scenes, std::size_t n) {
  if (n >= scenes.size())
    throw std::out_of_range(std::string(fn) + ": scene " + std::to_string(n) + " of " + std::to_string(scenes.size()));
  return data::select_scenes(scenes, {n});
}

// The words of caption 0 through its <eos> (all `length` when it wrote none).
std::size_t written_words(const nn::Caption<float>& c, std::size_t length) {
  std::size_t words = 0;
  while (words < length && c.words(0, words++) != data::kCaptionEos) {}
  return words;
}
}  // namespace

plots::Figure caption_words_grid(const std::vector<CaptionReader>& readers, const data::CaptionScenes& scenes,
                                 std::size_t n, std::size_t length) {
  const data::CaptionScenes one = one_scene("caption_words_grid", scenes, n);
  const bool known = one.garments(0) > 0;  // a scene without garments: a picture whose truth is unknown
  std::size_t words = std::size_t(data::caption_word_counts(one)(0));
  // Short enough for the longest caption (60 characters) to fit the figure's width.
  std::string title = text("True caption: \"", data::caption_text(one.captions, 0), "\"");
  std::vector<xt::xarray<double>> images, overlays;
  std::vector<std::string> captions;
  for (const CaptionReader& r : readers) {
    const nn::Caption<float> c = r.model->greedy(Tensor<float>(one.images), length, data::kCaptionBos, r.glimpse);
    if (!known && &r == &readers.front()) {
      words = written_words(c, length);
      title = text("Caption written (", r.label, "): \"", data::caption_text(c.words, 0), "\"");
    }
    const std::size_t grid = one.images.shape(2) / r.model->config().encoder.patch;
    for (std::size_t w = 0; w < words; ++w) {
      images.push_back(data::scene_with_boxes(one, 0, w % 2 == 0 && w + 1 < words ? int(w / 2) : -2));
      overlays.push_back(xt::reshape_view(xt::cast<double>(xt::view(c.weights, 0, w)), {grid, grid}));
      captions.push_back(text(r.label, ": ", data::caption_words()[std::size_t(c.words(0, w))]));
    }
  }
  return looks_grid(images, captions, overlays, int(words), title, int(330 * readers.size() + 90));
}

AttentionInput caption_attention_input(const CaptionReader& reader, const data::CaptionScenes& scenes, std::size_t n,
                                       std::size_t length) {
  const data::CaptionScenes one = one_scene("caption_attention_input", scenes, n);
  const std::size_t patch = reader.model->config().encoder.patch;
  const nn::Caption<float> c = reader.model->greedy(Tensor<float>(one.images), length, data::kCaptionBos, reader.glimpse);
  const std::size_t words = written_words(c, length);
  AttentionInput in{text("scene ", n, ", ", reader.label, ": \"", data::caption_text(c.words, 0), "\""), {},
                    data::patch_names(one, 0, patch), {reader.label}, {}};
  for (std::size_t w = 0; w < words; ++w)
    in.queries.push_back(text(w + 1, " ", data::caption_words()[std::size_t(c.words(0, w))]));
  in.heads = {{xt::cast<double>(xt::view(c.weights, 0, xt::range(0, words)))}};
  return in;
}

}  // namespace attnlab::lessons
