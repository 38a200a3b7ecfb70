#include "lessons/kit/caption_model.hpp"

#include <cmath>

#include "core/ops.hpp"
#include "io/files.hpp"
#include "nn/checkpoint.hpp"

namespace attnlab::lessons {

namespace data = nn::data;

namespace {

const char* const kRebuild = "a run of lesson 20 writes a model this code runs: build/bin/20_captions --seed 1 --out DIR, "
                             "then --from DIR";
constexpr double kProbeTolerance = 1e-3;  // on logits of order 1-10, computed in float

std::string glimpse_name(nn::Glimpse g) { return g == nn::Glimpse::soft ? "soft" : "hard"; }

// The probe: the teacher-forced logits (1, length, vocab) of a fixed canvas of smooth stripes and a
// fixed caption (garments and relations in turn); the hard decoder reads patch 5t mod N at word t,
// so that the pass is a function of the weights alone.
std::vector<double> probe_outputs(nn::Captioner<float>& cap, nn::Glimpse glimpse, std::size_t length) {
  NoGrad no_grad;
  cap.eval();
  const nn::ViTConfig& c = cap.config().encoder;
  Array<float> image = xt::zeros<float>({std::size_t(1), c.image_height, c.image_width});
  for (std::size_t y = 0; y < c.image_height; ++y)
    for (std::size_t x = 0; x < c.image_width; ++x)
      image(0, y, x) = float(0.5 + 0.5 * std::sin(0.3 * double(x) + 0.17 * double(y)) * std::cos(0.11 * double(y)));
  IndexArray words = IndexArray::from_shape({1, length}), patches = IndexArray::from_shape({1, length});
  const std::size_t n = cap.encoder.num_patches();
  for (std::size_t t = 0; t < length; ++t) {
    words(0, t) = t == 0 ? data::kCaptionBos : t % 2 ? Index(data::kFirstGarment + t % 10) : Index(data::kFirstRelation + t % 4);
    patches(0, t) = Index((5 * t) % n);
  }
  const Array<float> logits =
      cap.teacher_forced(Tensor<float>(image), words, glimpse, nullptr, glimpse == nn::Glimpse::hard ? &patches : nullptr)
          .logits.value();
  return std::vector<double>(logits.begin(), logits.end());
}

Json to_json(const SceneRecipe& r) {
  const data::CaptionSceneOptions& o = r.options;
  return {{"count", r.count}, {"seed", r.seed}, {"garments", r.garments}, {"side", o.side}, {"cell", o.cell},
          {"jitter", o.jitter}, {"min_garments", o.min_garments}, {"max_garments", o.max_garments},
          {"threshold", o.threshold}};
}

SceneRecipe recipe_of(const Card& card) {
  const Json& j = card.field("test_scenes");
  try {
    SceneRecipe r;
    r.count = j.at("count").get<std::size_t>(), r.seed = j.at("seed").get<std::uint64_t>();
    r.garments = j.at("garments").get<std::size_t>();
    data::CaptionSceneOptions& o = r.options;
    o.side = j.at("side").get<std::size_t>(), o.cell = j.at("cell").get<std::size_t>();
    o.jitter = j.at("jitter").get<std::size_t>(), o.min_garments = j.at("min_garments").get<std::size_t>();
    o.max_garments = j.at("max_garments").get<std::size_t>(), o.threshold = j.at("threshold").get<float>();
    return r;
  } catch (const Json::exception& e) {
    throw std::runtime_error(card.who + ": '" + card.file + "': \"test_scenes\" is not a scene recipe: " + e.what());
  }
}

}  // namespace

data::FashionMnist<float> recipe_garments(const SceneRecipe& r) {
  return data::load_fashion_mnist<float>(data::FashionSplit::test, r.garments);
}

data::CaptionScenes recipe_scenes(const SceneRecipe& r, const data::FashionMnist<float>& garments) {
  return data::make_caption_scenes(garments, r.count, r.seed, r.options);
}

void write_captioner_card(const std::string& stem, nn::Captioner<float>& cap, nn::Glimpse glimpse, std::size_t length,
                          const HeldOut& held_out, const SceneRecipe& test) {
  const nn::CaptionerConfig& c = cap.config();
  Json card = card_origin();
  card.update(Json{{"model", "Captioner"}, {"glimpse", glimpse_name(glimpse)}, {"image_height", c.encoder.image_height},
                   {"image_width", c.encoder.image_width}, {"channels", c.encoder.channels}, {"patch", c.encoder.patch},
                   {"layers", c.encoder.num_layers}});
  put_layer(card, c.encoder.layer);
  card.update(Json{{"words", data::caption_words()}, {"embed", c.embed}, {"hidden", c.hidden},
                   {"attention_hidden", c.attention_hidden}, {"summary_init", c.summary_init}, {"length", length},
                   {"input", "a canvas of grey levels in [0, 1]: light garments on black (0), as the scenes of lesson 20"},
                   {"prediction", "greedy: from <bos>, the likeliest word each step, until <eos> or length words"},
                   {"held_out", to_json(held_out)}, {"test_scenes", to_json(test)},
                   {"probe", {{"input", "probe_outputs (lessons/kit/caption_model.cpp)"},
                              {"outputs", probe_outputs(cap, glimpse, length)}}}});
  write_file_atomic(lesson().path(stem + ".json"), card.dump(1) + "\n", "write_captioner_card");
}

LoadedCaptioner load_captioner(const std::string& folder, const std::string& stem) {
  const Card card = Card::read(folder + "/" + stem + ".json", "load_captioner");
  card.expect("model", "Captioner", kRebuild);
  card.expect("words", data::caption_words(), kRebuild);
  const std::string glimpse = card.field("glimpse").get<std::string>();
  if (glimpse != "soft" && glimpse != "hard")
    throw std::runtime_error("load_captioner: '" + card.file + "': glimpse \"" + glimpse + "\" is neither soft nor hard");
  nn::CaptionerConfig c;
  c.encoder.image_height = card.field("image_height").get<std::size_t>();
  c.encoder.image_width = card.field("image_width").get<std::size_t>();
  c.encoder.channels = card.field("channels").get<std::size_t>();
  c.encoder.patch = card.field("patch").get<std::size_t>();
  c.encoder.num_layers = card.field("layers").get<std::size_t>();
  c.encoder.layer = layer_of(card);
  c.vocab = data::kCaptionVocab, c.embed = card.field("embed").get<std::size_t>();
  c.hidden = card.field("hidden").get<std::size_t>(), c.attention_hidden = card.field("attention_hidden").get<std::size_t>();
  c.summary_init = card.field("summary_init").get<bool>();
  LoadedCaptioner m;
  m.glimpse = glimpse == "soft" ? nn::Glimpse::soft : nn::Glimpse::hard;
  m.length = card.field("length").get<std::size_t>();
  const CardOrigin origin = origin_of(card);
  m.lesson = origin.lesson, m.seed = origin.seed;
  m.held_out = held_out_of(card);
  m.test = recipe_of(card);
  Generator gen(0);  // every weight is then read from the file
  m.model = std::make_unique<nn::Captioner<float>>(c, gen);
  nn::load_checkpoint(folder + "/" + stem + ".npz", m.model->named_parameters());
  check_probe(card, probe_outputs(*m.model, m.glimpse, m.length), kProbeTolerance, kRebuild);
  return m;
}

}  // namespace attnlab::lessons
