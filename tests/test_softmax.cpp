// softmax, log_softmax, cross_entropy, mse: golden values, numerical stability, reference values,
// float against double, and every error.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "core/runtime/parallel.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;
using TD = Tensor<double>;
using TF = Tensor<float>;

// ---------------------------------------------------------------- softmax, log_softmax

TEST_CASE("softmax golden values from the course") {
  const Array<double> y = softmax(TD(Array<double>{2.0, 1.0, 0.5})).value();
  CHECK(y(0) == doctest::Approx(0.6285).epsilon(1e-4));
  CHECK(y(1) == doctest::Approx(0.2312).epsilon(1e-3));
  CHECK(y(2) == doctest::Approx(0.1402).epsilon(1e-3));
  // Saturation: [1, 2e-9, 1e-11] to print precision; e^-20 and e^-25 exactly.
  const Array<double> s = softmax(TD(Array<double>{30.0, 10.0, 5.0})).value();
  CHECK(s(0) == doctest::Approx(1.0).epsilon(1e-8));
  CHECK(s(1) == doctest::Approx(2.0611536182e-9).epsilon(1e-9));
  CHECK(s(2) == doctest::Approx(1.3887943836e-11).epsilon(1e-9));
}

TEST_CASE("softmax and log_softmax are stable at extreme values") {
  CHECK(softmax(TD(Array<double>{1000.0, 0.0})).value() == Array<double>{1.0, 0.0});
  CHECK(softmax(TF(Array<float>{1000.0f, 0.0f})).value() == Array<float>{1.0f, 0.0f});
  const Array<double> l = log_softmax(TD(Array<double>{-1000.0, 0.0})).value();
  CHECK(all_finite(l));
  CHECK(l(0) == doctest::Approx(-1000.0));
  CHECK(l(1) == 0.0);
  const Array<float> lf = log_softmax(TF(Array<float>{-1000.0f, 0.0f})).value();
  CHECK(std::isfinite(lf(0)));
  CHECK(lf(0) == doctest::Approx(-1000.0f));
  // -inf entries (a mask fill) get exactly zero probability.
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(softmax(TD(Array<double>{-inf, 0.0, 0.0})).value() == Array<double>{0.0, 0.5, 0.5});
}

TEST_CASE("softmax along any axis matches exp(x - max) / sum, and log_softmax its log") {
  const Array<double> x = rand_array({3, 4, 5}, 1, -3.0, 3.0);
  for (long axis : {0L, 1L, 2L, -1L}) {
    CAPTURE(axis);
    const std::size_t ax = axis < 0 ? 2 : std::size_t(axis);
    // Reducers evaluated first: a lazy keep_dims reducer inside a larger expression broadcasts
    // wrongly in xtensor 0.24.3.
    const Array<double> mx = xt::amax(x, {ax}, xt::keep_dims);
    const Array<double> e = xt::exp(x - mx);
    const Array<double> se = xt::sum(e, {ax}, xt::keep_dims);
    const Array<double> want = e / se;
    CHECK(xt::allclose(softmax(TD(x), axis).value(), want, 1e-14, 1e-14));
    CHECK(xt::allclose(log_softmax(TD(x), axis).value(), Array<double>(xt::log(want)), 1e-12, 1e-12));
  }
}

TEST_CASE("softmax backward is y * (dy - sum(dy * y)) per lane") {
  const Array<double> x = rand_array({2, 3}, 2, -3.0, 3.0), g = rand_array({2, 3}, 3, -3.0, 3.0);
  TD X(x, true);
  TD y = softmax(X, 0);
  const Array<double> yv = y.value();
  y.backward(g);
  const Array<double> gy = xt::sum(g * yv, {0}, xt::keep_dims);
  const Array<double> want = yv * (g - gy);
  CHECK(xt::allclose(X.grad(), want, 1e-14, 1e-14));
}

TEST_CASE("softmax family: float and double forwards agree") {
  const Array<double> x = rand_array({4, 6, 3}, 4, -3.0, 3.0);
  const Array<float> xf = xt::cast<float>(x);
  for (long axis : {0L, 1L, -1L}) {
    CHECK(xt::allclose(Array<double>(xt::cast<double>(softmax(TF(xf), axis).value())),
                       softmax(TD(x), axis).value(), 1e-5, 1e-6));
    CHECK(xt::allclose(Array<double>(xt::cast<double>(log_softmax(TF(xf), axis).value())),
                       log_softmax(TD(x), axis).value(), 1e-5, 1e-5));
  }
}

TEST_CASE("softmax errors name the op") {
  CHECK(error_of([] { softmax(TD(Array<double>::from_shape({2, 0})), 1); }) ==
        "softmax: axis 1 has size 0 in shape (2,0)");
  CHECK(error_of([] { log_softmax(TD(Array<double>::from_shape({0, 3})), 0); }) ==
        "log_softmax: axis 0 has size 0 in shape (0,3)");
  CHECK(error_of([] { softmax(TD(rand_array({2, 3}, 1, -3.0, 3.0)), 2); }) ==
        "softmax: axis 2 out of range for shape (2,3)");
  CHECK(starts_with(error_of([] { log_softmax(TD::scalar(1.0)); }), "log_softmax: axis -1"));
}

// ---------------------------------------------------------------- cross_entropy

namespace {
// Reference values: PyTorch 1.13, torch.nn.functional.cross_entropy in float64 on these logits.
const Array<double> kLogits = {{1.0, 2.0, 3.0}, {0.5, 0.0, -1.0}, {-2.0, 1.0, 0.25}};
const IndexArray kTargets = {2, 1, 0};

double ce_value(const CrossEntropyOptions& o, Array<double>* grad = nullptr) {
  TD z(kLogits, true);
  TD l = cross_entropy(z, kTargets, o);
  l.backward();
  if (grad) *grad = z.grad();
  return l.item();
}
}  // namespace

TEST_CASE("cross_entropy of uniform logits is log C") {
  const Array<double> z = xt::zeros<double>({4, 7});
  CHECK(cross_entropy(TD(z), IndexArray{0, 6, 3, 2}).item() == doctest::Approx(std::log(7.0)));
}

TEST_CASE("cross_entropy matches reference values, with gradient softmax - q over N") {
  Array<double> g;
  CHECK(ce_value({}, &g) == doctest::Approx(1.6439542526128743).epsilon(1e-12));
  const Array<double> g_plain = {{0.0300101911, 0.0815761570, -0.1115863481},
                                 {0.1821831291, -0.2228336799, 0.0406505508},
                                 {-0.3224305642, 0.2189879712, 0.1034425930}};
  CHECK(xt::allclose(g, g_plain, 0.0, 1e-10));
  // The same gradient by the formula: (softmax(z) - onehot) / N
  const Array<double> e = xt::exp(kLogits);
  const Array<double> se = xt::sum(e, {1}, xt::keep_dims);
  Array<double> p = e / se;
  for (std::size_t r = 0; r < 3; ++r) p(r, kTargets(r)) -= 1.0;
  CHECK(xt::allclose(g, Array<double>(p / 3.0), 1e-12, 1e-14));

  CrossEntropyOptions smooth;
  smooth.label_smoothing = 0.1;
  CHECK(ce_value(smooth, &g) == doctest::Approx(1.62450980816843).epsilon(1e-12));
  CHECK(g(0, 2) == doctest::Approx(-0.0893641259).epsilon(1e-8));
  CHECK(g(2, 0) == doctest::Approx(-0.3002083420).epsilon(1e-8));

  CrossEntropyOptions sum;
  sum.reduction = Reduction::Sum;
  sum.label_smoothing = 0.2;
  CHECK(ce_value(sum, &g) == doctest::Approx(4.8151960911719565).epsilon(1e-12));
  CHECK(g(1, 1) == doctest::Approx(-0.5351677062).epsilon(1e-8));
}

TEST_CASE("cross_entropy ignore_index: ignored rows add nothing and get zero gradient") {
  CrossEntropyOptions o;
  o.ignore_index = 1;  // target of row 1
  Array<double> g;
  CHECK(ce_value(o, &g) == doctest::Approx(1.9138660762509472).epsilon(1e-12));
  CHECK(xt::view(g, 1) == xt::zeros<double>({3}));
  CHECK(g(2, 0) == doctest::Approx(-0.4836458464).epsilon(1e-8));

  // Every target ignored: loss 0 and zero gradient, not NaN.
  TD z(kLogits, true);
  TD l = cross_entropy(z, IndexArray{-100, -100, -100});
  CHECK(l.item() == 0.0);
  l.backward();
  CHECK(z.grad() == xt::zeros<double>({3, 3}));
}

TEST_CASE("cross_entropy is finite at extreme logits") {
  const Array<double> z = {{1e4, 0.0, -1e4}, {-1e4, 1e4, 0.0}};
  TD zd(z, true);
  TD l = cross_entropy(zd, IndexArray{2, 1});
  CHECK(l.item() == doctest::Approx(1e4));  // (2e4 + 0) / 2
  l.backward();
  CHECK(all_finite(zd.grad()));
  TF zf(Array<float>(xt::cast<float>(z)), true);
  TF lf = cross_entropy(zf, IndexArray{2, 1});
  CHECK(std::isfinite(lf.item()));
  CHECK(lf.item() == doctest::Approx(1e4f));
  lf.backward();
  for (float v : zf.grad()) CHECK(std::isfinite(v));
}

TEST_CASE("cross_entropy with masked classes (-inf logits) is finite where the loss is") {
  const double inf = std::numeric_limits<double>::infinity();
  TD z(Array<double>{{0.0, -inf}, {1.0, 2.0}}, true);
  TD l = cross_entropy(z, IndexArray{0, 1});  // PyTorch: row 0 gives 0
  const double row1 = std::log(std::exp(1.0) + std::exp(2.0)) - 2.0;
  CHECK(l.item() == doctest::Approx(row1 / 2));
  l.backward();
  CHECK(z.grad()(0, 0) == 0.0);
  CHECK(z.grad()(0, 1) == 0.0);
  CHECK(all_finite(z.grad()));
  TF zf(Array<float>{{0.0f, -std::numeric_limits<float>::infinity()}}, true);
  CHECK(cross_entropy(zf, IndexArray{0}).item() == 0.0f);
  // The target itself masked: the loss is +inf, not NaN; smoothing puts weight on the masked
  // class, so its loss is +inf too.
  CHECK(cross_entropy(TD(Array<double>{{0.0, -inf}}), IndexArray{1}).item() == inf);
  CrossEntropyOptions o;
  o.label_smoothing = 0.1;
  CHECK(cross_entropy(TD(Array<double>{{0.0, -inf}}), IndexArray{0}, o).item() == inf);
  // No finite logit, or +inf: no softmax to speak of.
  CHECK(error_of([&] { cross_entropy(TD(Array<double>{{-inf, -inf}}), IndexArray{0}); }) ==
        "cross_entropy: row 0 has no finite logit: its softmax is undefined");
  CHECK(error_of([&] { cross_entropy(TD(Array<double>{{1.0, 2.0}, {inf, 0.0}}), IndexArray{0, 0}); }) ==
        "cross_entropy: row 1 has a logit of +inf: its softmax is undefined");
}

TEST_CASE("cross_entropy over 3-D logits equals the flattened 2-D one") {
  const Array<double> z = rand_array({2, 3, 5}, 5, -3.0, 3.0);
  const IndexArray t = {{1, 0, 4}, {3, 2, 2}};
  Array<double> z2 = z;
  z2.reshape({6, 5});
  IndexArray t2 = t;
  t2.reshape({6});
  CHECK(cross_entropy(TD(z), t).item() == doctest::Approx(cross_entropy(TD(z2), t2).item()));
  CHECK(cross_entropy(TF(Array<float>(xt::cast<float>(z))), t).item() ==
        doctest::Approx(cross_entropy(TD(z), t).item()).epsilon(1e-6));
}

// From 2^14 logits a chunk, rows run on the thread pool and each row's loss terms are added in
// row order afterwards (core/ops/softmax.cpp): 4,000 rows of 16 classes at 2 threads make two
// chunks of 2,000 rows.
TEST_CASE("cross_entropy on many rows: the same bits at 1 and 2 threads, and the first bad row named") {
  const std::size_t N = 4000, C = 16;
  const Array<float> z = xt::cast<float>(rand_array({N, C}, 31, -4.0, 4.0));
  IndexArray t = IndexArray::from_shape({N});
  for (std::size_t r = 0; r < N; ++r) t(r) = static_cast<Index>((r * 7) % C);
  t(5) = -100;  // ignored
  CrossEntropyOptions o;
  o.label_smoothing = 0.1;
  auto run = [&](int threads, bool record) {
    set_threads(threads);
    TF logits(z, record);
    TF loss = cross_entropy(logits, t, o);
    Array<float> grad;
    if (record) {
      loss.backward();
      grad = logits.grad();
    }
    set_threads(1);
    return std::make_pair(loss.item(), grad);
  };
  const auto one = run(1, true), two = run(2, true);
  CHECK(one.first == two.first);
  CHECK(one.second == two.second);
  CHECK(run(2, false).first == one.first);  // no tape: one scratch row per chunk
  // The loss against the same sum in double, row by row.
  double want = 0.0;
  for (std::size_t r = 0; r < N; ++r) {
    if (t(r) == -100) continue;
    double mx = -1e300, s = 0.0, mean = 0.0;
    for (std::size_t j = 0; j < C; ++j) mx = std::max(mx, double(z(r, j)));
    for (std::size_t j = 0; j < C; ++j) s += std::exp(double(z(r, j)) - mx), mean += double(z(r, j)) / C;
    const double lse = mx + std::log(s);
    want += 0.9 * (lse - double(z(r, std::size_t(t(r))))) + 0.1 * (lse - mean);
  }
  CHECK(one.first == doctest::Approx(want / double(N - 1)).epsilon(1e-5));
  // A bad row in each chunk: the error names the first, whichever thread met its row first.
  Array<float> bad = z;
  bad(3500, 2) = std::numeric_limits<float>::infinity();
  bad(1500, 0) = std::numeric_limits<float>::infinity();
  set_threads(2);
  CHECK(error_of([&] { cross_entropy(TF(bad), t); }) ==
        "cross_entropy: row 1500 has a logit of +inf: its softmax is undefined");
  set_threads(1);
}

TEST_CASE("cross_entropy errors name the op and the values at fault") {
  const TD z(kLogits);
  CHECK(error_of([&] { cross_entropy(z, IndexArray{0, 1}); }) ==
        "cross_entropy: targets (2) do not match logits (3,3); expected (3)");
  CHECK(error_of([&] { cross_entropy(z, IndexArray{0, 3, 1}); }) ==
        "cross_entropy: target 3 at row 1 is outside [0, 3) and is not ignore_index -100");
  CHECK(starts_with(error_of([&] { cross_entropy(z, IndexArray{0, -1, 1}); }),
                    "cross_entropy: target -1 at row 1"));
  CrossEntropyOptions o;
  o.label_smoothing = 1.5;
  CHECK(error_of([&] { cross_entropy(z, kTargets, o); }) ==
        "cross_entropy: label_smoothing 1.5 outside [0, 1]");
  CHECK(starts_with(error_of([] { cross_entropy(TD::scalar(1.0), IndexArray(0)); }),
                    "cross_entropy: 0-D logits"));
}

// ---------------------------------------------------------------- mse

TEST_CASE("mse is mean((a - b)^2) with gradient 2 (a - b) / N") {
  const Array<double> a = {{1.0, 2.0}, {3.0, 4.0}}, b = {{0.0, 2.0}, {5.0, 1.0}};
  TD A(a, true), B(b, true);
  TD y = mse(A, B);
  CHECK(y.item() == doctest::Approx((1.0 + 0.0 + 4.0 + 9.0) / 4.0));
  y.backward();
  CHECK(A.grad() == Array<double>{{0.5, 0.0}, {-1.0, 1.5}});
  CHECK(B.grad() == Array<double>{{-0.5, 0.0}, {1.0, -1.5}});
  CHECK(mse(TF(Array<float>(xt::cast<float>(a))), TF(Array<float>(xt::cast<float>(b)))).item() ==
        doctest::Approx(3.5f));
}

TEST_CASE("mse errors name the op and the shapes") {
  CHECK(error_of([] { mse(TD(rand_array({2, 3}, 1, -3.0, 3.0)), TD(rand_array({3, 2}, 2, -3.0, 3.0))); }) ==
        "mse: shapes differ: (2,3) and (3,2)");
  CHECK(starts_with(error_of([] {
                      mse(TD(Array<double>::from_shape({0})), TD(Array<double>::from_shape({0})));
                    }),
                    "mse: empty"));
}
