// Optimizers (hand-computed steps, then PyTorch 1.13 to 1e-12), clip_grad_norm, schedules.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "core/runtime/parallel.hpp"
#include "io/npz.hpp"
#include "nn/optim.hpp"
#include "nn/schedule.hpp"

using namespace attnlab;
using namespace attnlab::nn;

namespace {

// Give a leaf the gradient g, exactly as if backward() had delivered it.
template <class T>
void set_grad(const Tensor<T>& p, const Array<T>& g) {
  p.zero_grad();
  p.node()->accumulate(Array<T>(g));
}

template <class T>
Tensor<T> param(Array<T> v) {
  return Tensor<T>(std::move(v), true);
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ShapeError& e) {
    return e.what();
  }
  return "(no ShapeError thrown)";
}

}  // namespace

TEST_CASE_TEMPLATE("SGD with momentum and weight decay, by hand", T, float, double) {
  Tensor<T> p = param<T>({1.0, -2.0});
  SGD<T> opt({p}, /*lr=*/0.1, /*momentum=*/0.9, /*weight_decay=*/0.01);
  set_grad<T>(p, {0.5, 1.0});
  opt.step();
  // d = g + 0.01 p = [0.51, 0.98]; first step: buf = d; p = p - 0.1 d = [0.949, -2.098]
  CHECK(p.value()(0) == doctest::Approx(0.949).epsilon(1e-6));
  CHECK(p.value()(1) == doctest::Approx(-2.098).epsilon(1e-6));
  opt.step();  // same gradient (still held)
  // d = [0.5 + 0.00949, 1 - 0.02098] = [0.50949, 0.97902]
  // buf = 0.9 [0.51, 0.98] + d = [0.96849, 1.86102];  p = [0.949 - 0.096849, -2.098 - 0.186102]
  CHECK(p.value()(0) == doctest::Approx(0.852151).epsilon(1e-6));
  CHECK(p.value()(1) == doctest::Approx(-2.284102).epsilon(1e-6));
}

TEST_CASE("SGD nesterov and plain, by hand") {
  Tensor<double> p = param<double>({1.0, -2.0});
  SGD<double> nesterov({p}, 0.1, 0.9, 0.01, /*nesterov=*/true);
  set_grad<double>(p, {0.5, 1.0});
  nesterov.step();
  // d = [0.51, 0.98], buf = d, step d + 0.9 buf = 1.9 d = [0.969, 1.862]; p = [0.9031, -2.1862]
  CHECK(p.value()(0) == doctest::Approx(0.9031).epsilon(1e-12));
  CHECK(p.value()(1) == doctest::Approx(-2.1862).epsilon(1e-12));

  Tensor<double> q = param<double>({3.0});
  SGD<double> plain({q}, 0.5);
  set_grad<double>(q, {2.0});
  plain.step();  // 3 - 0.5 * 2 = 2
  CHECK(q.value()(0) == 2.0);
  CHECK(plain.state({"q"}).size() == 2);  // lr and step only: no momentum buffer
}

TEST_CASE_TEMPLATE("Adam: constant gradient moves exactly lr per step (bias correction)", T, float, double) {
  Tensor<T> p = param<T>({1.0});
  Adam<T> opt({p}, /*lr=*/0.1);
  set_grad<T>(p, {0.5});
  opt.step();
  // m = 0.1*0.5 = 0.05, v = 0.001*0.25 = 0.00025; m/(1-0.9) = 0.5, v/(1-0.999) = 0.25
  // p = 1 - 0.1 * 0.5 / (sqrt(0.25) + 1e-8) = 0.9 + 2e-9
  CHECK(double(p.value()(0)) == doctest::Approx(0.9 + 2e-9).epsilon(sizeof(T) == 4 ? 1e-6 : 1e-13));
  opt.step();
  // m = 0.9*0.05 + 0.05 = 0.095, m_hat = 0.095/0.19 = 0.5;
  // v = 0.999*0.00025 + 0.00025 = 0.00049975, v_hat = 0.00049975/0.001999 = 0.25;  p = 0.8 + ...
  CHECK(double(p.value()(0)) == doctest::Approx(0.8 + 4e-9).epsilon(sizeof(T) == 4 ? 1e-6 : 1e-12));
  CHECK(opt.steps() == 2);
}

TEST_CASE("AdamW decays the weight itself; Adam folds decay into the gradient") {
  Tensor<double> a = param<double>({2.0}), b = param<double>({2.0});
  AdamW<double> decoupled({a}, /*lr=*/0.1, 0.9, 0.999, 1e-8, /*weight_decay=*/0.5);
  Adam<double> l2({b}, /*lr=*/0.1, 0.9, 0.999, 1e-8, /*weight_decay=*/0.5);
  set_grad<double>(a, {0.5});
  set_grad<double>(b, {0.5});
  decoupled.step();
  l2.step();
  // AdamW: p = 2 * (1 - 0.1*0.5) = 1.9, then the unit Adam step -0.1 -> 1.8
  CHECK(a.value()(0) == doctest::Approx(1.8).epsilon(1e-7));
  // Adam: g = 0.5 + 0.5*2 = 1.5, and the first bias-corrected step is lr * sign(g) -> 1.9
  CHECK(b.value()(0) == doctest::Approx(1.9).epsilon(1e-7));
}

TEST_CASE("Adam and AdamW on a large parameter: the same bits at 1 and 2 threads, and the 1-entry rule") {
  // 300,000 entries: chunks on the thread pool at 2 threads. Entry j gets gradient g_j; after
  // one step of AdamW every entry moved by the same unit step from its decayed value.
  const std::size_t n = 300000;
  Generator gen(5);
  const Array<float> start = random_uniform<float>({n}, gen, -1.0, 1.0), grad = random_uniform<float>({n}, gen, 0.1, 1.0);
  auto run = [&](int threads, bool decoupled) {
    set_threads(threads);
    Tensor<float> p(Array<float>(start), true);
    std::unique_ptr<Optimizer<float>> opt;
    if (decoupled) opt = std::make_unique<AdamW<float>>(std::vector<Tensor<float>>{p}, 0.1, 0.9, 0.999, 1e-8, 0.5);
    else opt = std::make_unique<Adam<float>>(std::vector<Tensor<float>>{p}, 0.1);
    for (int step = 0; step < 3; ++step) {
      set_grad<float>(p, grad);
      opt->step();
    }
    set_threads(1);
    return Array<float>(p.value());
  };
  for (const bool decoupled : {false, true}) {
    const Array<float> one = run(1, decoupled), two = run(2, decoupled);
    CHECK(one == two);
    // A constant positive gradient: Adam's bias-corrected step is lr each time (3 steps: -0.3),
    // AdamW's also shrinks by (1 - 0.1 * 0.5) first at every step.
    const double want0 = decoupled ? ((double(start(0)) * 0.95 - 0.1) * 0.95 - 0.1) * 0.95 - 0.1 : double(start(0)) - 0.3;
    CHECK(double(one(0)) == doctest::Approx(want0).epsilon(1e-5));
  }
}

TEST_CASE("step skips parameters without a gradient; zero_grad drops gradients") {
  Tensor<double> p = param<double>({1.0}), q = param<double>({5.0});
  Adam<double> opt({p, q}, 0.1);
  set_grad<double>(p, {1.0});
  opt.step();
  CHECK(q.value()(0) == 5.0);
  const Npz s = opt.state({"p", "q"});
  CHECK(s.contains("exp_avg/p"));
  CHECK(!s.contains("exp_avg/q"));  // q never had a gradient: no state
  CHECK(s.at("step/p").get<Index>()() == 1);
  opt.zero_grad();
  CHECK(!p.has_grad());
  opt.step();
  CHECK(p.value()(0) == doctest::Approx(0.9).epsilon(1e-7));
}

TEST_CASE("optimizer arguments are checked") {
  Tensor<double> p = param<double>({1.0});
  CHECK_THROWS_AS(SGD<double>({}, 0.1), ShapeError);
  CHECK(error_of([&] { SGD<double>({p}, -0.1); }).find("SGD: lr must be finite and >= 0, got -0.1") != std::string::npos);
  CHECK(error_of([&] { SGD<double>({p}, 0.1, 0.0, 0.0, true); }).find("nesterov") != std::string::npos);
  CHECK(error_of([&] { Adam<double>({p}, 0.1, 1.0); }).find("Adam: beta1 must be in [0, 1), got 1") != std::string::npos);
  CHECK(error_of([&] { AdamW<double>({p}, 0.1, 0.9, 0.999, -1.0); }).find("AdamW: eps") != std::string::npos);
  CHECK(error_of([&] { Adam<double>({p, p}, 0.1); }).find("more than once") != std::string::npos);
  Tensor<double> frozen(Array<double>{1.0}, false);
  CHECK(error_of([&] { Adam<double>({frozen}, 0.1); }).find("does not require a gradient") != std::string::npos);
  Adam<double> opt({p}, 0.1);
  CHECK_THROWS_AS(opt.set_lr(std::nan("")), ShapeError);
  opt.set_lr(0.25);
  CHECK(opt.lr() == 0.25);
}

TEST_CASE("optimizer state round trip continues identically; bad state is rejected whole") {
  Tensor<double> p = param<double>({{1.0, 2.0}, {3.0, 4.0}}), q = param<double>({0.5});
  Adam<double> a({p, q}, 0.05, 0.8, 0.9, 1e-8, 0.1);
  for (int k = 0; k < 2; ++k) {
    set_grad<double>(p, {{0.1, -0.2}, {0.3 * k, 0.4}});
    set_grad<double>(q, {1.0 - k});
    a.step();
  }
  Tensor<double> p2(p.value(), true), q2(q.value(), true);
  Adam<double> b({p2, q2}, 0.9, 0.8, 0.9, 1e-8, 0.1);  // hyperparameters come from the code
  const std::vector<std::string> names = {"p", "q"};
  b.load_state(a.state(names), names);
  CHECK(b.lr() == 0.05);
  CHECK(b.steps() == 2);
  set_grad<double>(p, {{0.7, 0.1}, {-0.3, 0.2}});
  set_grad<double>(p2, {{0.7, 0.1}, {-0.3, 0.2}});
  a.step();
  b.step();
  CHECK(p.value() == p2.value());  // bit-identical

  Npz bad;
  const Npz good = a.state(names);
  for (const auto& [k, v] : good.entries()) {
    if (k == "exp_avg_sq/q") continue;  // missing
    bad.add(k, k == "exp_avg/p" ? NpyArray(Array<double>{1.0, 2.0}) : v);  // wrong shape
  }
  bad.add("exp_avg/r", Array<double>{1.0});  // no parameter r
  const std::string msg = error_of([&] { b.load_state(bad, names); });
  INFO(msg);
  CHECK(msg.find("3 problems") != std::string::npos);
  CHECK(msg.find("'exp_avg/p' has shape (2), parameter 'p' has (2,2)") != std::string::npos);
  CHECK(msg.find("missing 'exp_avg_sq/q'") != std::string::npos);
  CHECK(msg.find("unexpected 'exp_avg/r': no parameter named 'r'") != std::string::npos);
  CHECK(b.steps() == 3);  // unchanged

  SGD<double> sgd({p2, q2}, 0.1, 0.9);
  CHECK(error_of([&] { sgd.load_state(a.state(names), names); })
            .find("unexpected 'exp_avg/p' (SGD keeps momentum_buffer per parameter)") != std::string::npos);
}

TEST_CASE("optimizer state keyed by parameter name follows its parameter, whatever the order") {
  Tensor<double> w = param<double>({{1.0, 2.0}, {3.0, 4.0}}), b = param<double>({0.5, -0.5});
  Adam<double> a({w, b}, 0.05);
  set_grad<double>(w, {{0.1, -0.2}, {0.3, 0.4}});
  set_grad<double>(b, {1.0, -1.0});
  a.step();
  const Npz st = a.state({"layer.weight", "layer.bias"});
  CHECK(st.contains("exp_avg/layer.weight"));
  CHECK(st.contains("exp_avg_sq/layer.bias"));
  CHECK(st.at("step/layer.bias").get<Index>()() == 1);

  // The same parameters listed the other way round: each gets its own moments back.
  Tensor<double> w2(w.value(), true), b2(b.value(), true);
  Adam<double> reversed({b2, w2}, 0.05);
  reversed.load_state(st, {"layer.bias", "layer.weight"});
  set_grad<double>(w, {{0.2, 0.2}, {-0.1, 0.0}});
  set_grad<double>(b, {0.3, 0.1});
  set_grad<double>(w2, {{0.2, 0.2}, {-0.1, 0.0}});
  set_grad<double>(b2, {0.3, 0.1});
  a.step();
  reversed.step();
  CHECK(w.value() == w2.value());
  CHECK(b.value() == b2.value());

  // Errors name the parameter; the names themselves are checked.
  Tensor<double> other = param<double>({1.0, 2.0, 3.0});
  Adam<double> c({w2, other}, 0.05);
  const std::string msg = error_of([&] { c.load_state(st, {"layer.weight", "layer.bias"}); });
  CHECK(msg.find("'exp_avg/layer.bias' has shape (2), parameter 'layer.bias' has (3)") != std::string::npos);
  CHECK(error_of([&] { c.load_state(st, {"layer.weight", "head.bias"}); })
            .find("unexpected 'exp_avg/layer.bias': no parameter named 'layer.bias'") != std::string::npos);
  CHECK(error_of([&] { a.state({"x"}); }).find("Adam: needs one name per parameter: 2 parameters, 1 names") == 0);
  CHECK(error_of([&] { a.state({"x", "x"}); }).find("Adam: parameter name 'x' given twice") == 0);
  // Positions are not names: state keyed by them would follow the list, not the parameter.
  CHECK(error_of([&] { a.state({"0", "1"}); }).find("Adam: parameter 0 is named '0', which reads as a position") == 0);
  CHECK(error_of([&] { a.load_state(st, {"layer.weight", "1"}); }).find("name the parameters as the model does") !=
        std::string::npos);
}

TEST_CASE("position-keyed optimizer state (before names) is refused with a way forward") {
  Tensor<double> p = param<double>({1.0}), q = param<double>({2.0});
  Adam<double> opt({p, q}, 0.1);
  Npz old;
  old.add("lr", NpyArray(Array<double>(0.1)));
  old.add("step", NpyArray(IndexArray(Index(1))));
  for (const char* key : {"exp_avg.0", "exp_avg_sq.0", "step.0"})
    old.add(key, key[0] == 's' ? NpyArray(IndexArray(Index(1))) : NpyArray(Array<double>{0.5}));
  const std::string msg = error_of([&] { opt.load_state(old, {"p", "q"}); });
  INFO(msg);
  CHECK(msg.find("'exp_avg.0' and 2 more are keyed by position") != std::string::npos);
  CHECK(msg.find("load the weights alone (load_checkpoint without an optimizer)") != std::string::npos);
  CHECK(msg.find("1 problem)") != std::string::npos);
  CHECK(opt.steps() == 0);
}

// ---------------------------------------------------------------- PyTorch reference

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double max_abs_diff(const Array<double>& a, const Array<double>& b) {
  REQUIRE(a.shape() == b.shape());
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a.data()[i] - b.data()[i]));
  return m;
}

// Three steps in double with fixed gradients; the bias b gets no gradient at step 2 (torch
// skips it and does not advance its step count; so must we).
const char* kTorchScript = R"PY(
import numpy as np, torch
torch.set_default_dtype(torch.float64)
z = np.load("inputs.npz")
configs = {
  "sgd":       lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
  "nesterov":  lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1),
  "plain_sgd": lambda ps: torch.optim.SGD(ps, lr=0.1, weight_decay=0.05),
  "adam":      lambda ps: torch.optim.Adam(ps, lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1),
  "adamw":     lambda ps: torch.optim.AdamW(ps, lr=0.01, betas=(0.85, 0.99), eps=1e-6, weight_decay=0.1),
}
out = {}
for name, make in configs.items():
    w = torch.tensor(z["w0"], requires_grad=True)
    b = torch.tensor(z["b0"], requires_grad=True)
    opt = make([w, b])
    for k in range(1, 4):
        opt.zero_grad(set_to_none=True)
        w.grad = torch.tensor(z["gw%d" % k])
        if k != 2:
            b.grad = torch.tensor(z["gb%d" % k])
        opt.step()
    out[name + "/w"] = w.detach().numpy()
    out[name + "/b"] = b.detach().numpy()
    st = opt.state[w]
    for key in ("exp_avg", "exp_avg_sq", "momentum_buffer"):
        if st.get(key) is not None:
            out[name + "/" + key] = st[key].numpy()
w = torch.tensor(z["w0"], requires_grad=True)
b = torch.tensor(z["b0"], requires_grad=True)
w.grad = torch.tensor(z["gw1"]); b.grad = torch.tensor(z["gb1"])
out["clip/norm"] = np.array(torch.nn.utils.clip_grad_norm_([w, b], 0.5).item())
out["clip/gw"] = w.grad.numpy(); out["clip/gb"] = b.grad.numpy()
np.savez("torch.npz", **out)
)PY";
}  // namespace

TEST_CASE("SGD, Adam, AdamW and clip_grad_norm match PyTorch 1.13 to 1e-12 in double") {
  REQUIRE_MESSAGE(::access("/usr/bin/python3", X_OK) == 0,
                  "/usr/bin/python3 is missing: apt-get install python3-torch python3-numpy");
  REQUIRE_MESSAGE(std::system("/usr/bin/python3 -c 'import numpy, torch' > /dev/null 2>&1") == 0,
                  "torch or numpy is missing for /usr/bin/python3: apt-get install python3-torch python3-numpy");
  char tmpl[] = "/tmp/attnlab_optim_XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;

  Generator gen(7);
  Npz in;
  const Array<double> w0 = random_normal<double>({3, 4}, gen), b0 = random_normal<double>({4}, gen);
  in.add("w0", w0);
  in.add("b0", b0);
  std::vector<Array<double>> gw, gb;
  for (int k = 1; k <= 3; ++k) {
    gw.push_back(random_normal<double>({3, 4}, gen, 0.0, 0.5));
    gb.push_back(random_normal<double>({4}, gen, 0.0, 0.5));
    in.add("gw" + std::to_string(k), gw.back());
    in.add("gb" + std::to_string(k), gb.back());
  }
  save_npz(dir + "/inputs.npz", in);
  std::ofstream(dir + "/ref.py") << kTorchScript;
  const int rc = std::system(("cd '" + dir + "' && /usr/bin/python3 ref.py > log.txt 2>&1").c_str());
  REQUIRE_MESSAGE(rc == 0, "torch reference script failed:\n", slurp(dir + "/log.txt"));
  const Npz ref = load_npz(dir + "/torch.npz");

  using Make = std::function<std::unique_ptr<Optimizer<double>>(std::vector<Tensor<double>>)>;
  const std::vector<std::pair<std::string, Make>> configs = {
      {"sgd", [](auto ps) { return std::make_unique<SGD<double>>(ps, 0.1, 0.9, 0.01); }},
      {"nesterov", [](auto ps) { return std::make_unique<SGD<double>>(ps, 0.05, 0.8, 0.1, true); }},
      {"plain_sgd", [](auto ps) { return std::make_unique<SGD<double>>(ps, 0.1, 0.0, 0.05); }},
      {"adam", [](auto ps) { return std::make_unique<Adam<double>>(ps, 0.01, 0.9, 0.999, 1e-8, 0.1); }},
      {"adamw", [](auto ps) { return std::make_unique<AdamW<double>>(ps, 0.01, 0.85, 0.99, 1e-6, 0.1); }},
  };
  for (const auto& [name, make] : configs) {
    Tensor<double> w(w0, true), b(b0, true);
    auto opt = make({w, b});
    for (int k = 0; k < 3; ++k) {
      opt->zero_grad();
      set_grad(w, gw[k]);
      if (k != 1) set_grad(b, gb[k]);
      opt->step();
    }
    INFO("optimizer ", name);
    CHECK(max_abs_diff(w.value(), ref.at(name + "/w").get<double>()) < 1e-12);
    CHECK(max_abs_diff(b.value(), ref.at(name + "/b").get<double>()) < 1e-12);
    // The moments themselves, through the checkpoint state export.
    const Npz st = opt->state({"w", "b"});
    for (const char* key : {"exp_avg", "exp_avg_sq", "momentum_buffer"}) {
      if (!ref.contains(name + "/" + key)) continue;
      CHECK(max_abs_diff(st.at(std::string(key) + "/w").get<double>(),
                         ref.at(name + "/" + key).get<double>()) < 1e-12);
    }
    // Moved far enough that a wrong formula could not pass.
    CHECK(max_abs_diff(w.value(), w0) > 1e-3);
  }

  Tensor<double> w(w0, true), b(b0, true);
  set_grad(w, gw[0]);
  set_grad(b, gb[0]);
  const double norm = clip_grad_norm<double>({w, b}, 0.5);
  CHECK(std::abs(norm - ref.at("clip/norm").get<double>()()) < 1e-12);
  CHECK(max_abs_diff(w.grad(), ref.at("clip/gw").get<double>()) < 1e-12);
  CHECK(max_abs_diff(b.grad(), ref.at("clip/gb").get<double>()) < 1e-12);
  std::system(("rm -rf '" + dir + "'").c_str());
}

// ---------------------------------------------------------------- clipping

TEST_CASE_TEMPLATE("clip_grad_norm returns the global norm and scales every gradient", T, float, double) {
  Tensor<T> a = param<T>({0.0, 0.0}), b = param<T>({0.0}), none = param<T>({9.0});
  set_grad<T>(a, {3.0, 4.0});
  set_grad<T>(b, {12.0});
  // norm = sqrt(9 + 16 + 144) = 13; factor = 6.5 / (13 + 1e-6)
  const double norm = clip_grad_norm<T>({a, b, none}, 6.5);
  CHECK(norm == doctest::Approx(13.0));
  const double f = 6.5 / (13.0 + 1e-6);
  CHECK(double(a.grad()(0)) == doctest::Approx(3.0 * f));
  CHECK(double(a.grad()(1)) == doctest::Approx(4.0 * f));
  CHECK(double(b.grad()(0)) == doctest::Approx(12.0 * f));
  CHECK(!none.has_grad());
  // Now below the limit: returned norm is 6.5 (minus the epsilon), gradients untouched.
  const Array<T> before = a.grad();
  CHECK(clip_grad_norm<T>({a, b}, 20.0) == doctest::Approx(6.5).epsilon(1e-6));
  CHECK(a.grad() == before);
  CHECK_THROWS_AS(clip_grad_norm<T>({a}, 0.0), ShapeError);
}

// ---------------------------------------------------------------- schedules

TEST_CASE("constant and Noam schedules") {
  const Schedule c = constant_lr(3e-4);
  CHECK(c(1) == 3e-4);
  CHECK(c(100000) == 3e-4);
  CHECK_THROWS_AS(c(0), ShapeError);

  const Schedule noam = noam_lr(512, 4000, 2.0);
  // Peak at step == warmup: 2 * 512^-0.5 * 4000^-0.5
  const double peak = 2.0 / std::sqrt(512.0) / std::sqrt(4000.0);
  CHECK(noam(4000) == doctest::Approx(peak).epsilon(1e-14));
  CHECK(noam(3999) < noam(4000));
  CHECK(noam(4001) < noam(4000));
  // Warm-up branch: linear, 2 * 512^-0.5 * step * 4000^-1.5
  CHECK(noam(1) == doctest::Approx(2.0 / std::sqrt(512.0) * std::pow(4000.0, -1.5)).epsilon(1e-14));
  CHECK(noam(2000) == doctest::Approx(peak / 2).epsilon(1e-14));
  // Decay branch: ~ 1/sqrt(step); four times the steps, half the rate.
  CHECK(noam(16000) == doctest::Approx(peak / 2).epsilon(1e-14));
  CHECK(error_of([] { noam_lr(512, 0); }).find("noam_lr: warmup must be > 0, got 0") != std::string::npos);
  CHECK_THROWS_AS(noam_lr(0, 10), ShapeError);
  CHECK_THROWS_AS(noam_lr(512, 10, -1.0), ShapeError);
  CHECK_THROWS_AS(constant_lr(-1.0), ShapeError);
}

TEST_CASE("warm-up then cosine, warm-up then exponential") {
  const Schedule cos = warmup_cosine_lr(1e-3, 10, 110, 1e-5);
  CHECK(cos(1) == doctest::Approx(1e-4).epsilon(1e-14));   // 1e-3 * 1/10
  CHECK(cos(5) == doctest::Approx(5e-4).epsilon(1e-14));
  CHECK(cos(10) == doctest::Approx(1e-3).epsilon(1e-14));
  CHECK(cos(60) == doctest::Approx((1e-3 + 1e-5) / 2).epsilon(1e-14));  // halfway: cos(pi/2) = 0
  CHECK(cos(35) == doctest::Approx(1e-5 + (1e-3 - 1e-5) * 0.5 * (1 + std::cos(M_PI / 4))).epsilon(1e-14));
  CHECK(cos(110) == doctest::Approx(1e-5).epsilon(1e-14));
  CHECK(cos(500) == 1e-5);
  CHECK(warmup_cosine_lr(1.0, 0, 4)(1) == doctest::Approx(0.5 * (1 + std::cos(M_PI / 4))));
  CHECK(error_of([] { warmup_cosine_lr(1e-3, 100, 100); }).find("total (100) must exceed warmup (100)") != std::string::npos);
  CHECK_THROWS_AS(warmup_cosine_lr(-1e-3, 1, 100), ShapeError);
  CHECK_THROWS_AS(warmup_cosine_lr(1e-3, 1, 100, 2e-3), ShapeError);

  const Schedule ex = warmup_exponential_lr(0.01, 4, 0.5);
  CHECK(ex(2) == doctest::Approx(0.005));
  CHECK(ex(4) == doctest::Approx(0.01));
  CHECK(ex(6) == doctest::Approx(0.0025));  // 0.01 * 0.5^2
  CHECK_THROWS_AS(warmup_exponential_lr(0.01, 4, 0.0), ShapeError);
  CHECK_THROWS_AS(warmup_exponential_lr(0.01, 4, 1.5), ShapeError);
  CHECK_THROWS_AS(ex(-3), ShapeError);
}
