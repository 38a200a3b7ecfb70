// Positional methods: the sinusoidal table and its rotation property, learned positions and their
// length limit, T5 buckets, Shaw's clipped vectors, RoPE's relative-offset property, ALiBi slopes, and extrapolation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "nn/positional/positional.hpp"
#include "nn/transformer/transformer.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;
using namespace attnlab::nn;
using TD = Tensor<double>;

namespace {

bool all_finite(const Array<float>& a) {
  for (float v : a)
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

TEST_CASE("sinusoidal table: PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(...)") {
  const std::size_t d = 6;
  Array<double> pe = sinusoidal_table<double>(50, d);
  CHECK(shape_of(pe) == Shape{50, d});
  for (std::size_t p : {0, 1, 7, 49})
    for (std::size_t i = 0; i < d / 2; ++i) {
      const double angle = p / std::pow(10000.0, 2.0 * i / d);
      CHECK(pe(p, 2 * i) == doctest::Approx(std::sin(angle)).epsilon(1e-15));
      CHECK(pe(p, 2 * i + 1) == doctest::Approx(std::cos(angle)).epsilon(1e-15));
    }
  // Row 0 is (0, 1, 0, 1, ...); an offset table is a slice of the full one.
  CHECK(pe(0, 0) == 0.0);
  CHECK(pe(0, 1) == 1.0);
  Array<double> shifted = sinusoidal_table<double>(5, d, 10);
  for (std::size_t p = 0; p < 5; ++p)
    for (std::size_t j = 0; j < d; ++j) CHECK(shifted(p, j) == pe(p + 10, j));
  // Odd d keeps the last sine column.
  CHECK(shape_of(sinusoidal_table<double>(3, 5)) == Shape{3, 5});
}

TEST_CASE("sinusoidal rotation property: PE(p + k) = M_k PE(p) with one block-diagonal rotation") {
  for (std::size_t d : {4, 8, 16, 64}) {
    const std::size_t L = 300;
    Array<double> pe = sinusoidal_table<double>(L, d);
    for (std::size_t k : {1, 3, 10, 57}) {
      for (std::size_t i = 0; i < d / 2; ++i) {
        // Solve the 2x2 block M from two positions: [PE(k) PE(k+1)] = M [PE(0) PE(1)] (pair i).
        const double a0 = pe(0, 2 * i), b0 = pe(0, 2 * i + 1);
        const double a1 = pe(1, 2 * i), b1 = pe(1, 2 * i + 1);
        const double det = a0 * b1 - a1 * b0;
        if (std::abs(det) < 1e-3) continue;  // slow frequencies: two positions are too close
        const double c0 = pe(k, 2 * i), e0 = pe(k, 2 * i + 1);
        const double c1 = pe(k + 1, 2 * i), e1 = pe(k + 1, 2 * i + 1);
        // M = [[c0 c1],[e0 e1]] [[a0 a1],[b0 b1]]^-1
        const double m00 = (c0 * b1 - c1 * b0) / det, m01 = (c1 * a0 - c0 * a1) / det;
        const double m10 = (e0 * b1 - e1 * b0) / det, m11 = (e1 * a0 - e0 * a1) / det;
        // A rotation: orthogonal with determinant 1, and the angle-sum form [[cos, sin],[-sin, cos]].
        CHECK(std::abs(m00 * m00 + m10 * m10 - 1.0) < 1e-9);
        CHECK(std::abs(m00 * m11 - m01 * m10 - 1.0) < 1e-9);
        const double w = std::pow(10000.0, -2.0 * i / d);
        CHECK(std::abs(m00 - std::cos(k * w)) < 1e-9);
        CHECK(std::abs(m01 - std::sin(k * w)) < 1e-9);
        // The analytic block works for every p, to 1e-12.
        const double c = std::cos(k * w), s = std::sin(k * w);
        double worst = 0.0;
        for (std::size_t p = 0; p + k < L; ++p) {
          const double x = pe(p, 2 * i), y = pe(p, 2 * i + 1);
          worst = std::max(worst, std::abs(pe(p + k, 2 * i) - (c * x + s * y)));
          worst = std::max(worst, std::abs(pe(p + k, 2 * i + 1) - (-s * x + c * y)));
        }
        CHECK(worst < 1e-12);
      }
    }
  }
}

TEST_CASE("sinusoidal_offset_rotation: M_k PE(p) = PE(p + k) at every position, M_k orthogonal") {
  const std::size_t d = 16, L = 200;
  const Array<double> pe = sinusoidal_table<double>(L + 40, d);
  for (std::size_t k : {0, 1, 7, 40}) {
    const Array<double> m = sinusoidal_offset_rotation(k, d);
    double worst = 0.0, orthogonality = 0.0;
    for (std::size_t p = 0; p < L; ++p)
      for (std::size_t r = 0; r < d; ++r) {
        double moved = 0.0;
        for (std::size_t c = 0; c < d; ++c) moved += m(r, c) * pe(p, c);
        worst = std::max(worst, std::abs(pe(p + k, r) - moved));
      }
    for (std::size_t r = 0; r < d; ++r)
      for (std::size_t c = 0; c < d; ++c) {
        double dot = 0.0;  // (M M^T)(r, c)
        for (std::size_t j = 0; j < d; ++j) dot += m(r, j) * m(c, j);
        orthogonality = std::max(orthogonality, std::abs(dot - (r == c ? 1.0 : 0.0)));
      }
    CHECK(worst < 1e-12);
    CHECK(orthogonality < 1e-15);
  }
  // Block 0 turns by k w_0 = k radians.
  CHECK(sinusoidal_offset_rotation(1, d)(0, 1) == doctest::Approx(std::sin(1.0)));
  CHECK(sinusoidal_frequency(1, d) == doctest::Approx(std::pow(10000.0, -2.0 / 16.0)));
  CHECK_THROWS_WITH_AS(sinusoidal_offset_rotation(1, 5), doctest::Contains("sinusoidal_offset_rotation"), ShapeError);
}

TEST_CASE("sinusoidal_rotation_error: rounding only, where a misaligned map errs by more than 0.1") {
  const std::size_t d = 16, P = 200;
  for (std::size_t k : {0, 1, 7, 40}) CHECK(sinusoidal_rotation_error(k, d, P) < 1e-12);
  // The same measure by hand for k = 3 against the rotation of k = 4: the error of a wrong map.
  const Array<double> pe = sinusoidal_table<double>(P + 3, d), m = sinusoidal_offset_rotation(4, d);
  double wrong = 0.0;
  for (std::size_t p = 0; p < P; ++p)
    for (std::size_t r = 0; r < d; ++r) {
      double moved = 0.0;
      for (std::size_t c = 0; c < d; ++c) moved += m(r, c) * pe(p, c);
      wrong = std::max(wrong, std::abs(pe(p + 3, r) - moved));
    }
  CHECK(wrong > 0.1);
  CHECK(sinusoidal_rotation_error(3, d, P) < 1e-12);
  CHECK(sinusoidal_rotation_error(0, d, 1) == 0.0);  // M_0 = I at p = 0: nothing to round
  CHECK_THROWS_WITH_AS(sinusoidal_rotation_error(1, 5, P), doctest::Contains("sinusoidal_offset_rotation"), ShapeError);
}

TEST_CASE("SinusoidalPositionalEncoding adds the table and works for any length") {
  SinusoidalPositionalEncoding<double> pe(8);
  TD x = TD::zeros({2, 5, 8});
  Array<double> y = pe.forward(x, 3).value();
  Array<double> table = sinusoidal_table<double>(5, 8, 3);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t p = 0; p < 5; ++p)
      for (std::size_t j = 0; j < 8; ++j) CHECK(y(b, p, j) == table(p, j));
  SinusoidalPositionalEncoding<float> pf(16);
  CHECK(all_finite(pf.forward(Tensor<float>::zeros({1, 5000, 16})).value()));
  std::string msg = error_of([&] { pe.forward(TD::zeros({2, 5, 7})); });
  CHECK(msg.find("SinusoidalPositionalEncoding") != std::string::npos);
  CHECK(msg.find("(2,5,7)") != std::string::npos);
}

TEST_CASE("LearnedPositionalEmbedding: adds its rows, and refuses sequences past its table") {
  Generator gen(1);
  LearnedPositionalEmbedding<double> pos(6, 4, gen);
  CHECK(pos.parameter_count() == 24);
  TD x = TD::zeros({2, 3, 4});
  Array<double> y = pos.forward(x, 2).value();
  for (std::size_t p = 0; p < 3; ++p)
    for (std::size_t j = 0; j < 4; ++j) CHECK(y(1, p, j) == pos.weight().value()(p + 2, j));
  CHECK_NOTHROW(pos.forward(TD::zeros({2, 6, 4})));
  std::string msg = error_of([&] { pos.forward(TD::zeros({2, 7, 4})); });
  CHECK(msg.find("LearnedPositionalEmbedding") != std::string::npos);
  CHECK(msg.find("7") != std::string::npos);
  CHECK(msg.find("6") != std::string::npos);
  CHECK_THROWS_AS(pos.forward(TD::zeros({2, 5, 4}), 2), ShapeError);
  CHECK(error_of([&] { pos.forward(TD::zeros({2, 3, 5})); }).find("(2,3,5)") !=
        std::string::npos);
}

TEST_CASE("T5 relative buckets: exact near zero, logarithmic farther, clipped at the end") {
  auto bucket = [](long r) { return relative_position_bucket(r, 32, 128, true); };
  // Keys before the query (r < 0) use buckets 0..15, keys after it 16..31.
  CHECK(bucket(0) == 0);
  CHECK(bucket(-1) == 1);
  CHECK(bucket(-7) == 7);
  CHECK(bucket(1) == 17);
  CHECK(bucket(7) == 23);
  // 8 + floor(log(n / 8) / log(16) * 8): n = 8 -> 8, n = 17 -> 10, n = 127 -> 15.
  CHECK(bucket(-8) == 8);
  CHECK(bucket(-17) == 10);
  CHECK(bucket(-127) == 15);
  CHECK(bucket(-100000) == 15);
  CHECK(bucket(100000) == 31);
  std::size_t previous = 0;
  for (long n = 0; n < 1000; ++n) {  // monotone in the distance
    CHECK(bucket(-n) >= previous);
    previous = bucket(-n);
  }
  // One-directional (a causal decoder): keys after the query all fall in bucket 0.
  CHECK(relative_position_bucket(5, 32, 128, false) == 0);
  CHECK(relative_position_bucket(-5, 32, 128, false) == 5);
}

TEST_CASE("RelativePositionBias: bias[0, h, i, j] = W[bucket(j - i), h], any length") {
  Generator gen(2);
  RelativePositionBias<double> rel(3, gen, 8, 16);
  CHECK(rel.parameter_count() == 8 * 3);
  Array<double> b = rel.forward(4, 6, 1).value();
  CHECK(shape_of(b) == Shape{1, 3, 4, 6});
  const Array<double>& w = rel.weight().value();
  for (std::size_t h = 0; h < 3; ++h)
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t j = 0; j < 6; ++j) {
        const long r = static_cast<long>(j) - static_cast<long>(i + 1);
        CHECK(b(0, h, i, j) == w(relative_position_bucket(r, 8, 16, true), h));
      }
  // Gradient: every table cell receives the sum over the (i, j) in its bucket.
  TD bias = rel.forward(5, 5);
  bias.backward(Array<double>(xt::ones<double>({1, 3, 5, 5})));
  double total = 0.0;
  for (double g : rel.weight().grad()) total += g;
  CHECK(total == doctest::Approx(3 * 25));
  RelativePositionBias<float> big(4, gen);
  CHECK(all_finite(big.forward(700, 700).value()));
  CHECK_THROWS_AS(RelativePositionBias<double>(2, gen, 2, 16), ShapeError);
}

TEST_CASE("RoPE: scores depend only on the offset between query and key") {
  Generator gen(3);
  TD q(random_normal<double>({1, 1, 1, 8}, gen));
  TD k(random_normal<double>({1, 1, 1, 8}, gen));
  auto score = [&](std::size_t pq, std::size_t pk) {
    return sum(mul(rotary(q, pq), rotary(k, pk))).item();
  };
  CHECK(score(5, 2) == doctest::Approx(score(105, 102)).epsilon(1e-12));
  CHECK(score(0, 7) == doctest::Approx(score(300, 307)).epsilon(1e-12));
  CHECK(score(3, 3) == doctest::Approx(sum(mul(q, k)).item()).epsilon(1e-12));  // offset 0: R^T R = I
  // A rotation keeps the norm of every row.
  TD x(random_normal<double>({2, 3, 50, 8}, gen));
  Array<double> y = rotary(x).value();
  for (std::size_t l = 0; l < 50; ++l) {
    double nx = 0, ny = 0;
    for (std::size_t j = 0; j < 8; ++j) {
      nx += x.value()(1, 2, l, j) * x.value()(1, 2, l, j);
      ny += y(1, 2, l, j) * y(1, 2, l, j);
    }
    CHECK(ny == doctest::Approx(nx).epsilon(1e-12));
  }
  // Position 0 is the identity; pair i at position p turns by p * 10000^(-2i/d).
  CHECK(y(0, 0, 0, 3) == x.value()(0, 0, 0, 3));
  const double a = 7 * std::pow(10000.0, -2.0 / 8);
  CHECK(y(0, 1, 7, 2) == doctest::Approx(x.value()(0, 1, 7, 2) * std::cos(a) -
                                         x.value()(0, 1, 7, 3) * std::sin(a)));
  RotaryEmbedding<float> rope(16);
  CHECK(all_finite(rope.forward(Tensor<float>::ones({1, 2, 4000, 16})).value()));
  CHECK_THROWS_AS(RotaryEmbedding<double>(7), ShapeError);
  std::string msg = error_of([&] { rope.forward(Tensor<float>::ones({1, 2, 5, 8})); });
  CHECK(msg.find("RotaryEmbedding") != std::string::npos);
  CHECK(msg.find("(1,2,5,8)") != std::string::npos);
}

TEST_CASE("RoPE on heads side by side rotates each head as if it stood alone") {
  Generator gen(4);
  const TD x(random_normal<double>({2, 5, 3 * 8}, gen));  // (B, L, h * d_k), h = 3, d_k = 8
  const Array<double> packed = rotary(x, 4, 10000.0, 8).value();
  for (std::size_t h = 0; h < 3; ++h) {
    const TD head(Array<double>(xt::view(x.value(), xt::all(), xt::all(), xt::range(8 * h, 8 * h + 8))));
    const Array<double> alone = rotary(head, 4).value();
    CHECK(xt::view(packed, xt::all(), xt::all(), xt::range(8 * h, 8 * h + 8)) == alone);
  }
  // The module passes its head size on; a last axis of no whole heads is refused.
  const Array<double> y = RotaryEmbedding<double>(8).forward(x, 4).value();
  CHECK(y == packed);
  std::string msg = error_of([&] { rotary(x, 0, 10000.0, 7); });
  CHECK(msg.find("rotary") != std::string::npos);
  CHECK(msg.find("(2,5,24)") != std::string::npos);
  msg = error_of([&] { RotaryEmbedding<double>(16).forward(x); });
  CHECK(msg.find("heads * 16") != std::string::npos);
}

TEST_CASE("ALiBi: geometric slopes 2^(-8i/h) and bias -slope |i - j|") {
  std::vector<double> s8 = alibi_slopes(8);
  REQUIRE(s8.size() == 8);
  for (std::size_t i = 0; i < 8; ++i) CHECK(s8[i] == std::pow(2.0, -double(i + 1)));
  std::vector<double> s4 = alibi_slopes(4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(s4[i] == std::pow(2.0, -2.0 * (i + 1)));
  // Not a power of two: the 4-head slopes, then every other slope of 8 heads.
  std::vector<double> s6 = alibi_slopes(6);
  REQUIRE(s6.size() == 6);
  CHECK(s6[4] == 0.5);
  CHECK(s6[5] == 0.125);
  ALiBi<double> alibi(4);
  Array<double> b = alibi.forward(3, 5, 2).value();
  CHECK(shape_of(b) == Shape{1, 4, 3, 5});
  for (std::size_t h = 0; h < 4; ++h)
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 5; ++j)
        CHECK(b(0, h, i, j) == -s4[h] * std::abs(double(i + 2) - double(j)));
  ALiBi<float> big(8);
  CHECK(all_finite(big.forward(600, 600).value()));
  CHECK_THROWS_AS(alibi_slopes(0), ShapeError);
}

TEST_CASE("positional method names round-trip") {
  for (Positional p : {Positional::None, Positional::Sinusoidal, Positional::Learned,
                       Positional::RelativeBias, Positional::Rotary, Positional::ALiBi, Positional::ShawRelative})
    CHECK(parse_positional(positional_name(p)) == p);
  CHECK(error_of([] { parse_positional("fourier"); }).find("fourier") != std::string::npos);
}

TEST_CASE("extrapolation: an encoder built for length 8 runs on length 40, except learned") {
  for (Positional p : {Positional::None, Positional::Sinusoidal, Positional::RelativeBias,
                       Positional::Rotary, Positional::ALiBi, Positional::ShawRelative, Positional::Learned}) {
    CAPTURE(positional_name(p));
    EncoderModelConfig c;
    c.vocab = 10;
    c.num_classes = 3;
    c.num_layers = 2;
    c.max_length = 8;
    c.layer = {16, 4, 32, 0.0, true, Activation::GELU, 1e-5};
    c.positional = p;
    Generator gen(4);
    EncoderModel<float> model(c, gen);
    IndexArray ids = xt::zeros<Index>({2, 40});
    for (std::size_t l = 0; l < 40; ++l) ids(0, l) = ids(1, l) = static_cast<Index>(l % 10);
    IndexArray short_ids = xt::view(ids, xt::all(), xt::range(0, 8));
    CHECK(all_finite(model.forward(short_ids).value()));
    if (p == Positional::Learned) {
      std::string msg = error_of([&] { model.forward(ids); });
      CHECK(msg.find("LearnedPositionalEmbedding") != std::string::npos);
      CHECK(msg.find("40") != std::string::npos);
      CHECK(msg.find("8") != std::string::npos);
    } else {
      Tensor<float> logits = model.forward(ids);
      CHECK(shape_of(logits.value()) == Shape{2, 3});
      CHECK(all_finite(logits.value()));
    }
  }
}

TEST_CASE("positions matter: without them the encoder is blind to order, with them it is not") {
  auto run = [](Positional p, const IndexArray& ids) {
    EncoderModelConfig c;
    c.vocab = 10;
    c.num_classes = 3;
    c.num_layers = 1;
    c.layer = {16, 4, 32, 0.0, true, Activation::GELU, 1e-5};
    c.positional = p;
    Generator gen(5);
    EncoderModel<double> model(c, gen);
    {
      // A non-zero relative table (its init is small but let it matter clearly).
      NoGrad ng;
      for (auto& [name, t] : model.named_parameters())
        if (name.find("positional") != std::string::npos)
          t.mutable_value() = random_normal<double>(t.shape(), gen);
    }
    return model.forward(ids).value();
  };
  IndexArray a = {{1, 2, 3, 4, 5}}, b = {{5, 3, 1, 4, 2}};  // a permutation
  for (Positional p : {Positional::Sinusoidal, Positional::Learned, Positional::RelativeBias,
                       Positional::Rotary, Positional::ALiBi, Positional::ShawRelative}) {
    CAPTURE(positional_name(p));
    CHECK(xt::amax(xt::abs(run(p, a) - run(p, b)))() > 1e-6);
  }
  CHECK(xt::amax(xt::abs(run(Positional::None, a) - run(Positional::None, b)))() < 1e-12);
}

TEST_CASE("Shaw's index: clip(j - i, -K, K) + K, every far distance on the edge row") {
  // Queries at positions 1, 2, 3 (offset 1), keys 0..4, K = 2.
  const IndexArray index = shaw_relative_index(3, 5, 1, 2);
  const IndexArray expected = {{1, 2, 3, 4, 4}, {0, 1, 2, 3, 4}, {0, 0, 1, 2, 3}};
  CHECK(index == expected);
  // Any length: at L = 100 the entries stay in 0..2K, the diagonal on row K.
  const IndexArray big = shaw_relative_index(100, 100, 0, 3);
  CHECK(xt::amin(big)() == 0);
  CHECK(xt::amax(big)() == 6);
  for (std::size_t i = 0; i < 100; ++i) CHECK(big(i, i) == 3);
  CHECK(error_of([] { shaw_relative_index(2, 2, 0, 0); }).find("shaw_relative_index") != std::string::npos);
}

TEST_CASE("relative_key_scores: out[b, h, i, j] = scale * q[b, i, h] . table[index[i, j]]") {
  Generator gen(3);
  const std::size_t B = 2, L = 4, h = 3, dk = 2;
  const TD q(random_normal<double>({B, L, h * dk}, gen));
  const TD table(random_normal<double>({5, dk}, gen));
  const IndexArray index = shaw_relative_index(L, L, 0, 2);
  const Array<double> out = relative_key_scores(q, table, index, h, 0.5).value();
  REQUIRE(shape_of(out) == Shape{B, h, L, L});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t head = 0; head < h; ++head)
      for (std::size_t i = 0; i < L; ++i)
        for (std::size_t j = 0; j < L; ++j) {
          double dot = 0;
          for (std::size_t c = 0; c < dk; ++c) dot += q.value()(b, i, head * dk + c) * table.value()(index(i, j), c);
          CHECK(out(b, head, i, j) == doctest::Approx(0.5 * dot).epsilon(1e-14));
        }
  const std::string wrong_width = error_of([&] { relative_key_scores(q, table, index, 2, 1.0); });
  CHECK(wrong_width.find("relative_key_scores") != std::string::npos);
  CHECK(wrong_width.find("(2,4,6)") != std::string::npos);
  const IndexArray too_far = {{0, 5, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}};
  CHECK(error_of([&] { relative_key_scores(q, table, too_far, h, 1.0); }).find("index entry 5") != std::string::npos);
  CHECK_THROWS_AS(relative_key_scores(q, table, shaw_relative_index(3, 4, 0, 2), h, 1.0), ShapeError);
}

TEST_CASE("Shaw in MultiHeadAttention: softmax(q . (k + w_{clip(j - i)}) / sqrt(d_k)) v, written out") {
  Generator gen(6);
  const std::size_t B = 2, L = 6, d = 8, h = 2, dk = d / h, K = 2;
  MultiHeadAttention<double> mha(d, h, gen);
  ShawRelativePosition<double> shaw(dk, K, gen);
  {
    NoGrad ng;
    shaw.key_table().mutable_value() = random_normal<double>({2 * K + 1, dk}, gen);
  }
  const TD x(random_normal<double>({B, L, d}, gen));
  MultiHeadOptions<double> opt;
  opt.query_bias = [&shaw, L](const TD& q) { return shaw.forward(q, L); };
  opt.causal = true;  // the masks still apply on top of the bias
  const AttentionResult<double> got = mha.forward(x, opt);
  // By hand: per head, e_ij = q_i . (k_j + w[clip(j - i) + K]) / sqrt(d_k), causal softmax.
  NoGrad ng;
  const Array<double> q = mha.q_proj(x).value(), k = mha.k_proj(x).value();
  const Array<double>& w = shaw.key_table().value();
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t head = 0; head < h; ++head)
      for (std::size_t i = 0; i < L; ++i) {
        std::vector<double> e(i + 1);
        double top = -1e300, total = 0;
        for (std::size_t j = 0; j <= i; ++j) {
          const long r = std::clamp(long(j) - long(i), -long(K), long(K)) + long(K);
          double s = 0;
          for (std::size_t c = 0; c < dk; ++c)
            s += q(b, i, head * dk + c) * (k(b, j, head * dk + c) + w(r, c));
          e[j] = s / std::sqrt(double(dk));
          top = std::max(top, e[j]);
        }
        for (double& v : e) total += (v = std::exp(v - top));
        for (std::size_t j = 0; j < L; ++j)
          CHECK(got.weights.value()(b, head, i, j) == doctest::Approx(j <= i ? e[j] / total : 0.0).epsilon(1e-12));
      }
  // A query_bias of the wrong shape is refused by name.
  MultiHeadOptions<double> bad;
  bad.query_bias = [](const TD&) { return TD::zeros({3, 1, 1, 1}); };
  const std::string msg = error_of([&] { mha.forward(x, bad); });
  CHECK(msg.find("MultiHeadAttention") != std::string::npos);
  CHECK(msg.find("(3,1,1,1)") != std::string::npos);
}

TEST_CASE("Shaw's clipping: at lengths past K, every key K or more places away reads the edge vector") {
  Generator gen(8);
  ShawRelativePosition<double> shaw(4, 3, gen);
  const TD q(random_normal<double>({1, 40, 8}, gen));
  const Array<double> bias = shaw.forward(q, 40).value();  // (1, 2, 40, 40)
  // Query 39's keys 0..36 are all K = 3 or more places to its left: one value, row 0's.
  for (std::size_t j = 1; j <= 36; ++j) CHECK(bias(0, 1, 39, j) == bias(0, 1, 39, 0));
  CHECK(bias(0, 1, 39, 37) != bias(0, 1, 39, 0));
  CHECK_THROWS_AS(ShawRelativePosition<double>(0, 3, gen), ShapeError);
}

TEST_CASE("unseen_buckets: the T5 buckets a longer sequence reaches that training never did") {
  // Offsets up to 15 reach buckets 0..9 each way; 16..22 fall in 10 and 23..31 in 11 (and 26, 27
  // after the query): 8 + floor(log(n / 8) / log(16) * 8).
  CHECK(unseen_buckets(16, 32, 32, 128, true) == std::vector<std::size_t>{10, 11, 26, 27});
  CHECK(unseen_buckets(16, 16, 32, 128, true).empty());  // the same length: nothing new
  CHECK(unseen_buckets(8, 9, 32, 128, true) == std::vector<std::size_t>{8, 24});  // offset 8, its first log bucket
  CHECK(unseen_buckets(200, 400, 32, 128, true).empty());  // past max_distance every offset shares the last bucket
  CHECK_THROWS_WITH_AS(unseen_buckets(0, 8, 32, 128, true), doctest::Contains("unseen_buckets"), ShapeError);
  CHECK_THROWS_WITH_AS(unseen_buckets(9, 8, 32, 128, true), doctest::Contains("0 < trained_length <= length"), ShapeError);
}
