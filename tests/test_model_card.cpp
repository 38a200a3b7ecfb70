// The fields model cards share (lessons/kit/model_card.hpp): one vocabulary for a Transformer
// layer, written by put_layer and read by layer_of, which also reads the names older cards used.
#include <doctest/doctest.h>

#include "lessons/kit/model_card.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::contains;

namespace {

Card card_of(const Json& json) { return Card{"test", "card.json", json}; }

}  // namespace

TEST_CASE("put_layer and layer_of: a layer's sizes and choices, back as they went, kv_heads included") {
  nn::LayerConfig l;
  l.d_model = 48, l.heads = 6, l.kv_heads = 2, l.d_ff = 96, l.dropout = 0.3, l.norm_first = true;
  l.activation = nn::Activation::GELU, l.eps = 1e-6;
  Json json = Json::object();
  put_layer(json, l);
  CHECK(json["d_ff"] == 96);
  CHECK(json["norm_eps"] == 1e-6);
  CHECK(json["kv_heads"] == 2);
  CHECK(json["activation"] == "gelu");
  const nn::LayerConfig back = layer_of(card_of(json));
  CHECK(back.d_model == 48);
  CHECK(back.heads == 6);
  CHECK(back.kv_heads == 2);
  CHECK(back.d_ff == 96);
  CHECK(back.dropout == 0.0);  // a loaded model runs; it does not train
  CHECK(back.norm_first);
  CHECK(back.activation == nn::Activation::GELU);
  CHECK(back.eps == 1e-6);
  // Multi-head attention (kv_heads 0 in the layer) is written as its count of heads, read back as 0.
  l.kv_heads = 0;
  json = Json::object();
  put_layer(json, l);
  CHECK(json["kv_heads"] == 6);
  CHECK(layer_of(card_of(json)).kv_heads == 0);
}

TEST_CASE("layer_of reads the names cards used before they shared one vocabulary") {
  // Lesson 16's ViT card: "feed_forward" and "norm_eps"; lessons 11 and 14's: "d_ff" and "eps";
  // neither has "kv_heads" (as many as heads).
  const Json vit = {{"d_model", 64}, {"heads", 4}, {"feed_forward", 256}, {"norm_first", true},
                    {"activation", "gelu"}, {"norm_eps", 1e-6}};
  nn::LayerConfig l = layer_of(card_of(vit));
  CHECK(l.d_ff == 256);
  CHECK(l.eps == 1e-6);
  CHECK(l.kv_heads == 0);
  const Json gpt = {{"d_model", 128}, {"heads", 4}, {"d_ff", 512}, {"norm_first", true}, {"activation", "gelu"},
                    {"eps", 1e-5}};
  l = layer_of(card_of(gpt));
  CHECK(l.d_ff == 512);
  CHECK(l.eps == 1e-5);
  // A card with neither name is refused, naming the shared one.
  Json neither = gpt;
  neither.erase("eps");
  CHECK(testing::error_of<std::runtime_error>([&] { layer_of(card_of(neither)); }) ==
        "test: 'card.json' has no \"norm_eps\"");
}

TEST_CASE("origin_of: where a model came from, as every card begins") {
  const Json json = {{"lesson", "03_luong_attention"}, {"seed", 7}, {"quick", true}};
  const CardOrigin o = origin_of(card_of(json));
  CHECK(o.lesson == "03_luong_attention");
  CHECK(o.seed == 7);
  CHECK(o.quick);
  CHECK(contains(testing::error_of<std::runtime_error>([&] { origin_of(card_of(Json{{"lesson", "x"}})); }),
                 "has no \"seed\""));
}
