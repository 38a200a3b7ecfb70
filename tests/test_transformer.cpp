// Transformer blocks and models: golden parameter counts and names, norm placement, causality,
// masks, tied weights, dropout modes, pooling, and clear errors on bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "nn/parameter_blocks.hpp"
#include "nn/transformer/transformer.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;
using namespace attnlab::nn;
using TD = Tensor<double>;

namespace {

LayerConfig small(bool norm_first, double dropout = 0.0) {
  return {16, 4, 32, dropout, norm_first, Activation::ReLU, 1e-5};
}

Seq2SeqConfig paper_sized() {
  Seq2SeqConfig c;
  c.src_vocab = c.tgt_vocab = 1000;
  c.encoder_layers = c.decoder_layers = 3;
  c.layer = {128, 8, 512, 0.1, /*norm_first=*/false, Activation::ReLU, 1e-5};
  c.tie_output = false;
  return c;
}

}  // namespace

TEST_CASE("golden parameter counts: 1000/1000 vocab, d 128, 8 heads, 3+3 post-norm, FFN 512") {
  Generator gen(1);
  Seq2SeqTransformer<float> model(paper_sized(), gen);
  CHECK(model.encoder.layer(0).parameter_count() == 198272);
  CHECK(model.decoder.layer(0).parameter_count() == 264576);
  CHECK(model.parameter_count() == 1773544);
  CHECK(!model.encoder.norm);  // post-norm: no final norm by default
  // The standalone layers count the same.
  EncoderLayer<float> enc(paper_sized().layer, gen);
  DecoderLayer<float> dec(paper_sized().layer, gen);
  CHECK(enc.parameter_count() == 198272);
  CHECK(dec.parameter_count() == 264576);
  // Tying removes the output matrix (1000 x 128) and keeps its bias.
  Seq2SeqConfig tied = paper_sized();
  tied.tie_output = true;
  Seq2SeqTransformer<float> tied_model(tied, gen);
  CHECK(tied_model.parameter_count() == 1773544 - 1000 * 128);
}

TEST_CASE("parameter_blocks: the golden counts per block, nested, and the model's own parameters") {
  Generator gen(1);
  Seq2SeqTransformer<float> model(paper_sized(), gen);
  const std::vector<ParameterBlock> top = parameter_blocks(model, 1);
  std::vector<std::string> names;
  std::size_t sum = 0;
  for (const auto& b : top) {
    names.push_back(b.name);
    sum += b.parameters;
    CHECK(b.depth == 1);
  }
  // positions and the dropouts hold no parameters but are blocks all the same.
  CHECK(names == std::vector<std::string>{"src_embed", "tgt_embed", "positions", "src_dropout", "tgt_dropout",
                                          "encoder", "decoder", "output"});
  CHECK(sum == 1773544);
  const auto two = parameter_blocks(model, 2);
  auto find = [&](const std::string& n) {
    for (const auto& b : two)
      if (b.name == n) return b;
    FAIL("no block ", n);
    return ParameterBlock{};
  };
  CHECK(find("encoder").parameters == 3 * 198272);
  CHECK(find("encoder.layers.2").parameters == 198272);
  CHECK(find("encoder.layers.2").depth == 2);
  CHECK(find("decoder.layers.0").parameters == 264576);
  for (const auto& b : two) CHECK(b.name != "output.weight");  // it belongs to the block "output"
  const auto three = parameter_blocks(model, 3);
  std::size_t layer0 = 0;
  for (const auto& b : three)
    if (b.depth == 3 && b.name.rfind("decoder.layers.0.", 0) == 0) layer0 += b.parameters;
  CHECK(layer0 == 264576);  // the sublayers of a layer add up to it: no parameter of its own
  // A tied model holds output_bias itself: a row of its own.
  Seq2SeqConfig tied = paper_sized();
  tied.tie_output = true;
  Seq2SeqTransformer<float> tied_model(tied, gen);
  const auto blocks = parameter_blocks(tied_model, 1);
  CHECK(blocks.back().name == "output_bias");
  CHECK(blocks.back().parameters == 1000);
  CHECK_THROWS_AS(parameter_blocks(model, 0), ShapeError);
}

TEST_CASE("parameter names follow the tree: encoder.layers.0.self_attn.in_proj_weight") {
  Generator gen(2);
  Seq2SeqTransformer<float> model(paper_sized(), gen);
  std::vector<std::string> names;
  for (const auto& [name, t] : model.named_parameters()) names.push_back(name);
  auto has = [&](const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  CHECK(has("src_embed.weight"));
  CHECK(has("tgt_embed.weight"));
  CHECK(has("encoder.layers.0.self_attn.in_proj_weight"));
  CHECK(has("encoder.layers.2.linear2.bias"));
  CHECK(has("decoder.layers.1.multihead_attn.in_proj_bias"));
  CHECK(has("decoder.layers.2.norm3.weight"));
  CHECK(has("output.weight"));
  CHECK(has("output.bias"));
  CHECK(!has("encoder.layers.3.self_attn.in_proj_weight"));
  Encoder<float> enc(2, small(false), gen);
  CHECK(enc.named_parameters().front().first == "layers.0.self_attn.in_proj_weight");
}

namespace {
std::vector<std::string> names_of(const Module<float>& m) {
  std::vector<std::string> out;
  for (const auto& [name, t] : m.named_parameters()) out.push_back(name);
  return out;
}
}  // namespace

// The keys of torch.nn.TransformerEncoderLayer(...).state_dict() and of the decoder layer, in
// PyTorch 1.13's order: the same names mean a state_dict loads by name (the round trips against
// PyTorch itself are in test_parity_torch.cpp).
TEST_CASE("layers, stacks and Transformer carry nn.Transformer's state_dict keys") {
  Generator gen(5);
  const std::vector<std::string> encoder_layer = {
      "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
      "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
      "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"};
  const std::vector<std::string> decoder_layer = {
      "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
      "self_attn.out_proj.bias", "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
      "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias", "linear1.weight",
      "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight",
      "norm2.bias", "norm3.weight", "norm3.bias"};
  CHECK(names_of(EncoderLayer<float>(small(false), gen)) == encoder_layer);
  CHECK(names_of(DecoderLayer<float>(small(true), gen)) == decoder_layer);

  TransformerConfig c;
  c.encoder_layers = 2;
  c.decoder_layers = 1;
  c.layer = small(false);
  Transformer<float> model(c, gen);
  std::vector<std::string> want;
  for (const char* stack : {"encoder.layers.0.", "encoder.layers.1."})
    for (const auto& n : encoder_layer) want.push_back(stack + n);
  want.insert(want.end(), {"encoder.norm.weight", "encoder.norm.bias"});
  for (const auto& n : decoder_layer) want.push_back("decoder.layers.0." + n);
  want.insert(want.end(), {"decoder.norm.weight", "decoder.norm.bias"});
  CHECK(names_of(model) == want);
}

TEST_CASE("Transformer is its encoder then its decoder, causal, with the source's padding") {
  Generator gen(6);
  TransformerConfig c;
  c.encoder_layers = c.decoder_layers = 2;
  c.layer = small(true);
  Transformer<double> model(c, gen);
  const TD src(random_normal<double>({2, 5, 16}, gen)), tgt(random_normal<double>({2, 4, 16}, gen));
  const Allowed src_real = Allowed::where(Mask{{true, true, true, true, true}, {true, true, true, false, false}});
  const Allowed tgt_real = Allowed::where(Mask{{true, true, true, true}, {true, true, false, false}});
  const Array<double> y = model.forward(src, tgt, src_real, tgt_real).value();
  MultiHeadOptions<double> o;
  o.allowed_keys = src_real;
  const TD memory = model.encoder.forward(src, o);
  const Array<double> by_hand = model.decoder.forward(tgt, memory, tgt_real, src_real, true).value();
  CHECK(y == by_hand);
  CHECK(model.encoder.norm);
  CHECK(model.decoder.norm);
  CHECK_THROWS_AS(model.forward(src, TD(random_normal<double>({2, 4, 8}, gen))), ShapeError);
}

TEST_CASE("post-norm ends in a LayerNorm; pre-norm keeps the residual stream un-normalized") {
  Generator gen(3);
  TD x(random_normal<double>({2, 5, 16}, gen, 0.0, 3.0));
  EncoderLayer<double> post(small(false), gen), pre(small(true), gen);
  Array<double> yp = post.forward(x).value();
  auto row_stats = [](const Array<double>& y, std::size_t b, std::size_t l) {
    double m = 0, v = 0;
    for (std::size_t j = 0; j < 16; ++j) m += y(b, l, j) / 16;
    for (std::size_t j = 0; j < 16; ++j) v += (y(b, l, j) - m) * (y(b, l, j) - m) / 16;
    return std::make_pair(m, v);
  };
  for (std::size_t l = 0; l < 5; ++l) {
    auto [m, v] = row_stats(yp, 1, l);
    CHECK(std::abs(m) < 1e-9);
    CHECK(v == doctest::Approx(1.0).epsilon(1e-3));
  }
  // Pre-norm: y = x + (sublayers), so with x of std 3 the rows keep roughly that scale.
  Array<double> yq = pre.forward(x).value();
  auto [m, v] = row_stats(yq, 0, 0);
  CHECK(v > 2.0);
  // A pre-norm Encoder gets its final norm on request.
  Encoder<double> stack(2, small(true), gen, /*final_norm=*/true);
  Array<double> ys = stack.forward(x).value();
  CHECK(row_stats(ys, 1, 4).second == doctest::Approx(1.0).epsilon(1e-3));
}

TEST_CASE("causal decoder: output at t has exactly zero gradient from inputs after t") {
  Generator gen(4);
  for (bool norm_first : {false, true}) {
    Decoder<double> dec(2, small(norm_first), gen);
    TD memory(random_normal<double>({2, 3, 16}, gen));
    const std::size_t L = 6;
    for (std::size_t t = 0; t < L; ++t) {
      TD x(random_normal<double>({2, L, 16}, gen), true);
      TD y = dec.forward(x, memory);
      // A random upstream: a plain sum would be constant through post-norm's final LayerNorm.
      TD w(random_normal<double>({2, 1, 16}, gen));
      sum(mul(slice(y, 1, static_cast<long>(t), static_cast<long>(t + 1)), w)).backward();
      const Array<double>& g = x.grad();
      for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t s = 0; s < L; ++s) {
          double norm = 0.0;
          for (std::size_t j = 0; j < 16; ++j) norm += std::abs(g(b, s, j));
          if (s > t)
            CHECK(norm == 0.0);
          else
            CHECK(norm > 0.0);
        }
    }
  }
}

TEST_CASE("CausalLM: logits up to t do not change when tokens after t change") {
  for (Positional p : {Positional::Learned, Positional::Sinusoidal, Positional::RelativeBias,
                       Positional::Rotary, Positional::ALiBi}) {
    CAPTURE(positional_name(p));
    CausalLMConfig c;
    c.vocab = 12;
    c.num_layers = 2;
    c.max_length = 16;
    c.layer = {16, 4, 32, 0.0, true, Activation::GELU, 1e-5};
    c.positional = p;
    Generator gen(5);
    CausalLM<double> lm(c, gen);
    IndexArray a = {{1, 2, 3, 4, 5, 6}}, b = {{1, 2, 3, 9, 10, 11}};
    Array<double> la = lm.forward(a).value(), lb = lm.forward(b).value();
    CHECK(shape_of(la) == Shape{1, 6, 12});
    for (std::size_t t = 0; t < 6; ++t) {
      double diff = 0.0;
      for (std::size_t v = 0; v < 12; ++v) diff = std::max(diff, std::abs(la(0, t, v) - lb(0, t, v)));
      if (t < 3)
        CHECK(diff == 0.0);
      else
        CHECK(diff > 0.0);
    }
  }
}

TEST_CASE("Seq2SeqTransformer: shapes, source padding, tied output gets the embedding gradient") {
  Seq2SeqConfig c;
  c.src_vocab = 11;
  c.tgt_vocab = 9;
  c.encoder_layers = c.decoder_layers = 2;
  c.layer = small(false);
  c.tie_output = true;
  c.pad_id = 0;
  Generator gen(6);
  Seq2SeqTransformer<double> model(c, gen);
  IndexArray src = {{3, 4, 5, 0}, {6, 7, 8, 9}}, tgt = {{1, 2, 3}, {4, 5, 6}};
  const Allowed src_real = Allowed::where(Mask{{true, true, true, false}, {true, true, true, true}});
  TD logits = model.forward(src, tgt, src_real);
  CHECK(logits.shape() == Shape{2, 3, 9});
  // A padded source token changes nothing: it is masked out of every cross-attention.
  IndexArray src2 = src;
  src2(0, 3) = 10;
  Array<double> again = model.forward(src2, tgt, src_real).value();
  CHECK(xt::amax(xt::abs(again - logits.value()))() == 0.0);
  // Tied: the output projection is the target embedding, so it receives a gradient even from
  // target rows that never appear as input tokens (8 is never a decoder input here).
  sum(logits).backward();
  const Array<double>& g = model.tgt_embed.weight.grad();
  double row8 = 0.0;
  for (std::size_t j = 0; j < 16; ++j) row8 += std::abs(g(8, j));
  CHECK(row8 > 0.0);
  CHECK(!model.output);
  CHECK(model.output_bias.has_grad());
}

TEST_CASE("dropout: random in training, the identity in evaluation, switched recursively") {
  Seq2SeqConfig c;
  c.src_vocab = c.tgt_vocab = 10;
  c.encoder_layers = c.decoder_layers = 1;
  c.layer = small(true, 0.5);
  Generator gen(7);
  Seq2SeqTransformer<double> model(c, gen);
  IndexArray src = {{1, 2, 3}}, tgt = {{4, 5}};
  Array<double> t1 = model.forward(src, tgt).value(), t2 = model.forward(src, tgt).value();
  CHECK(xt::amax(xt::abs(t1 - t2))() > 1e-6);
  model.eval();
  CHECK(!model.encoder.layer(0).dropout1.training());
  CHECK(!model.decoder.layer(0).self_attn.training());
  Array<double> e1 = model.forward(src, tgt).value(), e2 = model.forward(src, tgt).value();
  CHECK(xt::amax(xt::abs(e1 - e2))() == 0.0);
}

TEST_CASE("EncoderModel: tagging, mean and first-token pooling; padding is ignored") {
  for (Pooling pooling : {Pooling::None, Pooling::Mean, Pooling::First}) {
    EncoderModelConfig c;
    c.vocab = 10;
    c.num_classes = 4;
    c.num_layers = 2;
    c.layer = small(false);
    c.pooling = pooling;
    c.pad_id = 0;
    Generator gen(8);
    EncoderModel<double> model(c, gen);
    IndexArray ids = {{1, 2, 3, 0, 0}, {4, 5, 6, 7, 8}};
    const Allowed real = Allowed::where(Mask{{true, true, true, false, false}, {true, true, true, true, true}});
    Array<double> y = model.forward(ids, real).value();
    CHECK(shape_of(y) == (pooling == Pooling::None ? Shape{2, 5, 4} : Shape{2, 4}));
    if (pooling != Pooling::None) {
      IndexArray other = ids;
      other(0, 3) = 9;
      other(0, 4) = 3;
      CHECK(xt::amax(xt::abs(model.forward(other, real).value() - y))() == 0.0);
    }
    CHECK(model.attention_weights().size() == 2);
    CHECK(shape_of(model.attention_weights()[1].value()) == Shape{2, 4, 5, 5});
  }
}

TEST_CASE("EncoderModel::classify on the encoder's output is forward; features off the tape train the head alone") {
  for (Pooling pooling : {Pooling::Mean, Pooling::First}) {
    EncoderModelConfig c;
    c.vocab = 10, c.num_classes = 3, c.num_layers = 1, c.layer = small(true), c.pooling = pooling, c.pad_id = 0;
    Generator gen(11);
    EncoderModel<double> model(c, gen);
    const IndexArray ids = {{1, 2, 3, 0}, {4, 5, 6, 7}};
    const Allowed real = Allowed::where(Mask{{true, true, true, false}, {true, true, true, true}});
    const Array<double> y = model.forward(ids, real).value();
    CHECK(xt::amax(xt::abs(model.classify(model.features(ids, real), real).value() - y))() == 0.0);
    Tensor<double> frozen;
    {
      NoGrad no_grad;
      frozen = model.features(ids, real);
    }
    sum(model.classify(frozen, real), {0, 1}).backward();
    CHECK(model.head.weight.has_grad());
    CHECK(!model.embed.weight.has_grad());  // the encoder took no part
    CHECK_THROWS_WITH_AS(model.classify(Tensor<double>(Array<double>(xt::zeros<double>({2, 4, 5}))), real),
                         doctest::Contains("EncoderModel::classify"), ShapeError);
    CHECK_THROWS_WITH_AS(model.classify(frozen, Allowed::where(Mask{{true, true, true}, {true, true, true}})),
                         doctest::Contains("EncoderModel::classify"), ShapeError);
  }
}

TEST_CASE("attention weights of each layer are kept for plotting") {
  Generator gen(9);
  Decoder<double> dec(2, small(true), gen);
  TD x(random_normal<double>({2, 3, 16}, gen)), mem(random_normal<double>({2, 5, 16}, gen));
  dec.forward(x, mem);
  auto self = dec.self_attention_weights(), cross = dec.cross_attention_weights();
  REQUIRE(self.size() == 2);
  CHECK(shape_of(self[0].value()) == Shape{2, 4, 3, 3});
  CHECK(shape_of(cross[1].value()) == Shape{2, 4, 3, 5});
  CHECK(self[0].value()(1, 2, 0, 1) == 0.0);  // causal: query 0 never sees key 1
  CHECK(xt::sum(xt::view(cross[1].value(), 1, 3, 2, xt::all()))() == doctest::Approx(1.0));
}

TEST_CASE("bad input: clear ShapeErrors naming the module and the sizes") {
  Generator gen(10);
  EncoderLayer<double> enc(small(false), gen);
  std::string msg = error_of([&] { enc.forward(TD::zeros({2, 4, 7})); });
  CHECK(contains(msg, "EncoderLayer"));
  CHECK(contains(msg, "(2,4,7)"));
  CHECK(contains(msg, "16"));
  DecoderLayer<double> dec(small(false), gen);
  MultiHeadOptions<double> causal;
  causal.causal = true;
  msg = error_of([&] { dec.forward(TD::zeros({2, 3, 16}), TD::zeros({2, 5, 8}), causal); });
  CHECK(contains(msg, "DecoderLayer"));
  CHECK(contains(msg, "memory"));
  CHECK(contains(msg, "(2,5,8)"));
  msg = error_of([&] { dec.forward(TD::zeros({2, 3, 16}), TD::zeros({3, 5, 16}), causal); });
  CHECK(contains(msg, "batch"));
  CHECK_THROWS_AS(EncoderLayer<double>(LayerConfig{16, 3, 32}, gen), ShapeError);  // 16 % 3
  CHECK_THROWS_AS(Encoder<double>(0, small(false), gen), ShapeError);
  Seq2SeqConfig c;
  c.src_vocab = c.tgt_vocab = 10;
  c.encoder_layers = c.decoder_layers = 1;
  c.layer = small(false);
  Seq2SeqTransformer<double> model(c, gen);
  IndexArray flat = {1, 2, 3};
  msg = error_of([&] { model.encode(flat); });
  CHECK(contains(msg, "Seq2SeqTransformer"));
  CHECK(contains(msg, "(3)"));
  EncoderModelConfig ec;
  ec.layer = small(false);
  EncoderModel<double> em(ec, gen);
  IndexArray ids = {{1, 2, 3}};
  const Allowed wrong = Allowed::where(Mask{{true, true}});
  msg = error_of([&] { em.forward(ids, wrong); });
  CHECK(contains(msg, "EncoderModel"));
  CHECK(contains(msg, "(1,2)"));
}

TEST_CASE("Seq2SeqTransformer with position inside attention: names, order, causality, any length") {
  Seq2SeqConfig c;
  c.src_vocab = c.tgt_vocab = 12;
  c.encoder_layers = c.decoder_layers = 2;
  c.layer = small(false);
  c.pad_id = 0;
  Generator gen(8);
  Seq2SeqTransformer<double> sinusoidal(c, gen);
  CHECK(!sinusoidal.src_positions);  // the paper's model: no new parameters, the same names
  c.positional = Positional::RelativeBias;
  Seq2SeqTransformer<double> relative(c, gen);
  std::size_t tables = 0;
  for (const auto& [name, p] : relative.named_parameters())
    tables += name == "src_positions.relative.weight" || name == "tgt_positions.relative.weight";
  CHECK(tables == 2);  // T5: one table for the encoder (both directions), one for the decoder
  CHECK(relative.parameter_count() == sinusoidal.parameter_count() + 2 * 32 * 4);
  const IndexArray src = {{3, 4, 5, 6}}, swapped = {{4, 3, 5, 6}}, tgt = {{1, 7, 8}};
  for (Positional method : {Positional::None, Positional::RelativeBias, Positional::Rotary, Positional::ALiBi}) {
    CAPTURE(positional_name(method));
    c.positional = method;
    Seq2SeqTransformer<double> model(c, gen);
    model.eval();
    // Order: swapping two source words swaps their memory rows, nothing else, for a model blind
    // to order; with positions the swapped words are read differently.
    const Array<double> m = model.encode(src).value(), ms = model.encode(swapped).value();
    const double moved = xt::amax(xt::abs(xt::view(m, 0, 0) - xt::view(ms, 0, 1)))();
    if (method == Positional::None) CHECK(moved < 1e-12);
    else CHECK(moved > 1e-6);
    // Causality with the decoder's positional terms: a later target word changes no earlier row.
    const Array<double> short_ = model.forward(src, tgt).value();
    const Array<double> longer = model.forward(src, IndexArray{{1, 7, 8, 9, 10}}).value();
    CHECK(xt::amax(xt::abs(short_ - xt::view(longer, xt::all(), xt::range(0, 3), xt::all())))() < 1e-12);
    // Any length: 40 source and 40 target words, far past anything a table would hold.
    const IndexArray long_ids = xt::ones<Index>({std::size_t(1), std::size_t(40)}) * Index(5);
    CHECK(model.forward(long_ids, long_ids).shape() == Shape{1, 40, 12});
  }
  c.positional = Positional::Learned;
  const std::string msg = error_of([&] { Seq2SeqTransformer<double> m(c, gen); });
  CHECK(contains(msg, "Seq2SeqTransformer"));
  CHECK(contains(msg, "learned"));
}
