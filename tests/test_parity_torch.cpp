// Parity with PyTorch 1.13 (float64), module by module, forward and backward.
//
// Each case builds one of our modules with seeded random weights, runs it on seeded random
// inputs and backpropagates a seeded random upstream gradient g (loss = sum <y, g> over the
// differentiable outputs). Weights (under their named_parameters() names), inputs, masks, g, our
// outputs and all our gradients go into one .npz; tests/parity/torch_parity.py rebuilds every
// case in PyTorch (the torch module where one exists, the paper's formula otherwise), loads the
// weights by name and writes torch's outputs and gradients back. Every array must agree to
// |ours - torch| <= 1e-9 * max(1, |torch|); the worst difference of each quantity is printed.
// One python process runs all cases (importing torch costs more than the cases themselves).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/npz.hpp"
#include "core/ops.hpp"
#include "nn/attention/attention.hpp"
#include "nn/attention/multi_head.hpp"
#include "nn/gru.hpp"
#include "nn/layers.hpp"
#include "nn/optim.hpp"
#include "nn/transformer/transformer.hpp"

using namespace attnlab;
using Tn = Tensor<double>;

namespace {

constexpr double kTolerance = 1e-9;
const char* const kPython = "/usr/bin/python3";
const char* const kInstallHint = "apt-get install python3-torch";

// One case. Everything goes into `in` (for torch) and what we computed also into `ours`, keyed
// "<case>/<kind>/<name>"; the case's first word is its family for the python side.
class Case {
 public:
  Case(std::string name, Npz& in, Npz& ours, std::uint64_t seed)
      : name_(std::move(name)), in_(in), ours_(ours), gen_(seed) {}

  Generator& gen() { return gen_; }

  // A random leaf input (N(mean, std)) that requires a gradient.
  Tn input(const std::string& name, const Shape& shape, double std = 1.0, double mean = 0.0) {
    Tn x(random_normal<double>(shape, gen_, mean, std), true);
    in_.add(key("input", name), NpyArray(x.value()));
    inputs_.emplace_back(name, x);
    return x;
  }
  void data(const std::string& name, NpyArray a) { in_.add(key("data", name), std::move(a)); }
  void cfg(const std::string& name, double v) { in_.add(key("cfg", name), NpyArray(Array<double>(v))); }

  // Give every parameter of m seeded random values (N(0, std): no zero biases or unit gains
  // that would hide a transposed or misplaced term), then hand them to torch by name.
  void params(const nn::Module<double>& m, double std = 0.5) {
    NoGrad no_grad;
    for (const auto& [name, t] : m.named_parameters()) {
      t.mutable_value() = random_normal<double>(t.shape(), gen_, 0.0, std);
      in_.add(key("param", name), NpyArray(t.value()));
      params_.emplace_back(name, t);
    }
  }

  // A free-standing random parameter (for the optimizers), handed to torch by name.
  Tn param(const std::string& name, const Shape& shape) {
    Tn p(random_normal<double>(shape, gen_), true);
    in_.add(key("param", name), NpyArray(p.value()));
    params_.emplace_back(name, p);
    return p;
  }

  // Our output; a differentiable one gets a random upstream gradient and joins the loss.
  void output(const std::string& name, const Tn& y, bool differentiable = true) {
    ours_.add(key("output", name), NpyArray(y.value()));
    if (!differentiable) return;
    Array<double> g = random_normal<double>(y.shape(), gen_);
    in_.add(key("upstream", name), NpyArray(g));
    Tn term = sum(mul(y, Tn(std::move(g))));
    loss_ = loss_.defined() ? add(loss_, term) : term;
  }

  // loss.backward(), then record every parameter's and input's gradient (zeros if none arrived).
  void backward() {
    REQUIRE_MESSAGE(loss_.defined(), name_, ": no differentiable output");
    loss_.backward();
    auto grad_of = [](const Tn& t) {
      return t.has_grad() ? Array<double>(t.grad()) : Array<double>(xt::zeros<double>(t.shape()));
    };
    for (const auto& [n, t] : params_) ours_.add(key("param_grad", n), NpyArray(grad_of(t)));
    for (const auto& [n, t] : inputs_) ours_.add(key("input_grad", n), NpyArray(grad_of(t)));
  }

 private:
  std::string key(const char* kind, const std::string& name) const {
    return name_ + "/" + kind + "/" + name;
  }
  std::string name_;
  Npz& in_;
  Npz& ours_;
  Generator gen_;
  std::vector<std::pair<std::string, Tn>> params_, inputs_;
  Tn loss_;
};

// (B, L) true for positions < lengths[b].
Mask length_mask(const std::vector<std::size_t>& lengths, std::size_t L) {
  Mask m = xt::zeros<bool>({lengths.size(), L});
  for (std::size_t b = 0; b < lengths.size(); ++b)
    for (std::size_t t = 0; t < lengths[b] && t < L; ++t) m(b, t) = true;
  return m;
}

// ---------------------------------------------------------------- the cases

void linear_cases(Npz& in, Npz& ours) {
  for (bool bias : {true, false}) {
    Case c(bias ? "Linear" : "Linear no-bias", in, ours, bias ? 11 : 12);
    const std::size_t i = bias ? 5 : 4, o = bias ? 4 : 3;
    nn::Linear<double> m(i, o, c.gen(), bias);
    c.params(m);
    c.cfg("in", double(i));
    c.cfg("out", double(o));
    c.cfg("bias", bias);
    Tn x = c.input("x", bias ? Shape{2, 3, i} : Shape{6, i});
    c.output("output", m(x));
    c.backward();
  }
}

void layer_norm_case(Npz& in, Npz& ours) {
  Case c("LayerNorm", in, ours, 21);
  nn::LayerNorm<double> m(6, 1e-5);
  c.params(m);
  c.cfg("dim", 6);
  c.cfg("eps", 1e-5);
  Tn x = c.input("x", {2, 3, 6}, 2.0, 1.0);  // off-centre and wide: the mean and variance matter
  c.output("output", m(x));
  c.backward();
}

void gru_case(Npz& in, Npz& ours, const std::string& name, std::uint64_t seed, std::size_t layers,
              bool bidirectional, bool with_h0, const std::vector<std::size_t>& lengths) {
  Case c(name, in, ours, seed);
  const std::size_t B = 3, L = 5, I = 3, H = 4, dirs = bidirectional ? 2 : 1;
  nn::GRUOptions opt;
  opt.num_layers = layers;
  opt.bidirectional = bidirectional;
  nn::GRU<double> m(I, H, c.gen(), opt);
  c.params(m);
  c.cfg("input_size", double(I));
  c.cfg("hidden_size", double(H));
  c.cfg("num_layers", double(layers));
  c.cfg("bidirectional", bidirectional);
  Tn x = c.input("x", {B, L, I});
  Tn h0 = with_h0 ? c.input("h0", {layers * dirs, B, H}, 0.5) : Tn();
  if (!lengths.empty()) {
    IndexArray len = xt::zeros<Index>({B});
    for (std::size_t b = 0; b < B; ++b) len(b) = static_cast<Index>(lengths[b]);
    c.data("lengths", NpyArray(len));
  }
  nn::GRUOutput<double> r = m.forward(x, h0, lengths);
  c.output("output", r.output);
  c.output("state", r.state);
  c.backward();
}

void gru_cases(Npz& in, Npz& ours) {
  gru_case(in, ours, "GRU 2-layer bidirectional", 31, 2, true, true, {});
  gru_case(in, ours, "GRU packed 2-layer bidirectional", 32, 2, true, true, {5, 2, 4});
  gru_case(in, ours, "GRU 1-layer no h0 packed", 33, 1, false, false, {3, 5, 1});
}

// Keys (B = 2, Lk = 4) with the second sequence padded after 2; every query keeps a real key.
const std::vector<std::size_t> kKeyLengths{4, 2};

// One Attention case per score family: query (2, 3, dq) or one decoder step (2, dq), keys
// (2, 4, dk), values (2, 4, 2), the second sequence's keys padded after 2. The weights are an
// output for plots, not differentiable.
void attention_case(Npz& in, Npz& ours, const std::string& score, bool step, std::uint64_t seed) {
  const bool dot = score == "dot" || score == "scaled dot";
  Case c("Attention " + score + (step ? " step with biases" : " masked"), in, ours, seed);
  const std::size_t dq = dot ? 4 : 3, dk = 4;
  nn::Attention<double> m(step ? std::make_unique<nn::AdditiveScore<double>>(dq, dk, 5, c.gen(), /*bias=*/true)
                               : nn::make_score<double>(score, dq, dk, c.gen(), 5));
  c.params(m);
  Tn q = c.input("query", step ? Shape{2, dq} : Shape{2, 3, dq});
  Tn k = c.input("keys", {2, 4, dk});
  Tn v = c.input("values", {2, 4, 2});
  const Allowed real = Allowed::where(length_mask(kKeyLengths, 4));
  c.data("key_mask", NpyArray(real.mask()));
  AttentionResult<double> r = m(q, k, v, real);
  c.output("output", r.output);
  c.output("weights", r.weights, /*differentiable=*/false);
  c.backward();
}

void attention_cases(Npz& in, Npz& ours) {
  std::uint64_t seed = 41;
  attention_case(in, ours, "additive", /*step=*/true, seed++);
  for (const char* score : {"additive", "dot", "scaled dot", "general", "concat"})
    attention_case(in, ours, score, /*step=*/false, seed++);
}

void mha_cases(Npz& in, Npz& ours) {
  const std::size_t d = 8, h = 2, B = 2;
  {
    // Self-attention, causal, the second sequence padded at the end (row 0 always sees key 0).
    Case c("MultiHeadAttention self causal key-padding", in, ours, 61);
    nn::MultiHeadAttention<double> m(d, h, c.gen());
    c.params(m);
    c.cfg("d_model", double(d));
    c.cfg("heads", double(h));
    c.cfg("causal", 1);
    Tn x = c.input("x", {B, 5, d});
    nn::MultiHeadOptions<double> opt;
    opt.allowed_keys = Allowed::where(length_mask({5, 3}, 5));
    opt.causal = true;
    c.data("key_padding_mask", NpyArray(opt.allowed_keys->mask()));
    AttentionResult<double> r = m.forward(x, opt);
    c.output("output", r.output);
    c.output("weights", r.weights, /*differentiable=*/false);
    c.backward();
  }
  {
    Case c("MultiHeadAttention cross key-padding", in, ours, 62);
    nn::MultiHeadAttention<double> m(d, h, c.gen());
    c.params(m);
    c.cfg("d_model", double(d));
    c.cfg("heads", double(h));
    c.cfg("causal", 0);
    Tn q = c.input("query", {B, 3, d});
    Tn k = c.input("key", {B, 4, d});
    Tn v = c.input("value", {B, 4, d});
    nn::MultiHeadOptions<double> opt;
    opt.allowed_keys = Allowed::where(length_mask(kKeyLengths, 4));
    c.data("key_padding_mask", NpyArray(opt.allowed_keys->mask()));
    AttentionResult<double> r = m.forward(q, k, v, opt);
    c.output("output", r.output);
    c.output("weights", r.weights, /*differentiable=*/false);
    c.backward();
  }
}

nn::LayerConfig layer_config(bool norm_first, bool gelu) {
  nn::LayerConfig cfg;
  cfg.d_model = 8;
  cfg.heads = 2;
  cfg.d_ff = 16;
  cfg.dropout = 0.0;
  cfg.norm_first = norm_first;
  cfg.activation = gelu ? nn::Activation::GELU : nn::Activation::ReLU;
  cfg.eps = 1e-5;
  return cfg;
}

void layer_cfg(Case& c, const nn::LayerConfig& cfg) {
  c.cfg("d_model", double(cfg.d_model));
  c.cfg("heads", double(cfg.heads));
  c.cfg("d_ff", double(cfg.d_ff));
  c.cfg("gelu", cfg.activation == nn::Activation::GELU);
  c.cfg("eps", cfg.eps);
  c.cfg("norm_first", cfg.norm_first);
}

// Post-norm with ReLU and pre-norm with GELU: both placements, both activations.
void transformer_layer_cases(Npz& in, Npz& ours) {
  std::uint64_t seed = 71;
  for (bool norm_first : {false, true}) {
    const nn::LayerConfig cfg = layer_config(norm_first, /*gelu=*/norm_first);
    const std::string placement = norm_first ? " pre-norm GELU" : " post-norm ReLU";
    {
      Case c("EncoderLayer" + placement, in, ours, seed++);
      nn::EncoderLayer<double> m(cfg, c.gen());
      c.params(m);
      layer_cfg(c, cfg);
      Tn x = c.input("x", {2, 5, cfg.d_model});
      nn::MultiHeadOptions<double> opt;
      opt.allowed_keys = Allowed::where(length_mask({5, 3}, 5));
      c.data("key_padding_mask", NpyArray(opt.allowed_keys->mask()));
      c.output("output", m.forward(x, opt));
      c.backward();
    }
    {
      Case c("DecoderLayer" + placement, in, ours, seed++);
      nn::DecoderLayer<double> m(cfg, c.gen());
      c.params(m);
      layer_cfg(c, cfg);
      Tn x = c.input("x", {2, 4, cfg.d_model});
      Tn memory = c.input("memory", {2, 5, cfg.d_model});
      nn::MultiHeadOptions<double> self_opt, cross_opt;
      self_opt.allowed_keys = Allowed::where(length_mask({4, 2}, 4));
      self_opt.causal = true;
      cross_opt.allowed_keys = Allowed::where(length_mask({3, 5}, 5));
      c.data("target_mask", NpyArray(self_opt.allowed_keys->mask()));
      c.data("memory_mask", NpyArray(cross_opt.allowed_keys->mask()));
      c.output("output", m.forward(x, memory, self_opt, cross_opt));
      c.backward();
    }
  }
}

void cross_entropy_case(Npz& in, Npz& ours, const std::string& name, std::uint64_t seed,
                        const Shape& logits_shape, const CrossEntropyOptions& opt) {
  Case c(name, in, ours, seed);
  c.cfg("ignore_index", double(opt.ignore_index));
  c.cfg("label_smoothing", opt.label_smoothing);
  c.cfg("sum", opt.reduction == Reduction::Sum);
  Tn logits = c.input("logits", logits_shape, 2.0);
  const std::size_t C = logits_shape.back();
  Shape ts(logits_shape.begin(), logits_shape.end() - 1);
  IndexArray targets = xt::zeros<Index>(ts);
  for (std::size_t i = 0; i < targets.size(); ++i)
    targets.flat(i) = static_cast<Index>(c.gen().below(C));
  // Every third target is ignored (ignore_index -100 is outside [0, C); 0 is a real class).
  for (std::size_t i = 1; i < targets.size(); i += 3) targets.flat(i) = opt.ignore_index;
  c.data("targets", NpyArray(targets));
  c.output("loss", cross_entropy(logits, targets, opt));
  c.backward();
}

void cross_entropy_cases(Npz& in, Npz& ours) {
  CrossEntropyOptions plain;
  cross_entropy_case(in, ours, "cross_entropy mean", 81, {2, 4, 6}, plain);
  CrossEntropyOptions smooth;
  smooth.label_smoothing = 0.1;
  cross_entropy_case(in, ours, "cross_entropy label-smoothing ignore_index mean", 82, {2, 4, 6},
                     smooth);
  CrossEntropyOptions sum;
  sum.label_smoothing = 0.2;
  sum.ignore_index = 0;
  sum.reduction = Reduction::Sum;
  cross_entropy_case(in, ours, "cross_entropy label-smoothing ignore_index=0 sum", 83, {7, 5}, sum);
}

// Three steps, so the bias corrections and the moments' recursions are exercised; "b" has no
// gradient at step 0, so both sides must skip it and keep its own step count behind.
template <class Opt>
void optimizer_case(Npz& in, Npz& ours, const std::string& name, std::uint64_t seed) {
  Case c(name, in, ours, seed);
  const double lr = 0.05, beta1 = 0.8, beta2 = 0.95, eps = 1e-8, wd = 0.1;
  const int steps = 3;
  c.cfg("lr", lr);
  c.cfg("beta1", beta1);
  c.cfg("beta2", beta2);
  c.cfg("eps", eps);
  c.cfg("weight_decay", wd);
  c.cfg("steps", steps);
  const std::vector<std::pair<std::string, Shape>> shapes{{"w", {3, 4}}, {"b", {4}}, {"u", {2, 2, 3}}};
  std::vector<Tn> params;
  for (const auto& [n, s] : shapes) params.push_back(c.param(n, s));
  Opt opt(params, lr, beta1, beta2, eps, wd);
  for (int step = 0; step < steps; ++step) {
    opt.zero_grad();
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (step == 0 && shapes[i].first == "b") continue;
      Array<double> g = random_normal<double>(params[i].shape(), c.gen());
      c.data("grad" + std::to_string(step) + "." + shapes[i].first, NpyArray(g));
      params[i].node()->accumulate(std::move(g));
    }
    opt.step();
  }
  for (std::size_t i = 0; i < params.size(); ++i)
    c.output(shapes[i].first, params[i], /*differentiable=*/false);
  const Npz state = opt.state();
  for (const auto& [key, array] : state.entries())
    if (key.rfind("exp_avg", 0) == 0) c.output(key, Tn(array.template to<double>()), false);
}

// ---------------------------------------------------------------- running torch, comparing

struct Parity {
  Npz ours, torch;
  std::string error;  // why torch's results are missing; empty when they are here
  std::string log;    // the script's stdout and stderr
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Parity run_parity() {
  Parity p;
  Npz in;
  const auto t0 = std::chrono::steady_clock::now();
  linear_cases(in, p.ours);
  layer_norm_case(in, p.ours);
  gru_cases(in, p.ours);
  attention_cases(in, p.ours);
  mha_cases(in, p.ours);
  transformer_layer_cases(in, p.ours);
  cross_entropy_cases(in, p.ours);
  optimizer_case<nn::Adam<double>>(in, p.ours, "Adam weight_decay", 91);
  optimizer_case<nn::AdamW<double>>(in, p.ours, "AdamW weight_decay", 92);
  for (const auto& [key, array] : p.ours.entries()) in.add(key, array);  // ours too, for debugging
  const double ours_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const std::string script = std::string(ATTNLAB_SOURCE_DIR) + "/tests/parity/torch_parity.py";
  if (!std::filesystem::exists(script)) {
    p.error = "missing script " + script;
    return p;
  }
  char tmpl[] = "/tmp/attnlab_parity_XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    p.error = "cannot create a temporary folder under /tmp";
    return p;
  }
  const std::string dir = tmpl, in_path = dir + "/in.npz", out_path = dir + "/out.npz",
                    log_path = dir + "/log.txt";
  save_npz(in_path, in);
  const std::string cmd = std::string(kPython) + " '" + script + "' '" + in_path + "' '" +
                          out_path + "' > '" + log_path + "' 2>&1";
  const auto t1 = std::chrono::steady_clock::now();
  const int status = std::system(cmd.c_str());
  const double torch_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  p.log = slurp(log_path);
  const int code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  if (code == 3 || code == 126 || code == 127) {
    p.error = std::string(kPython) + " cannot import torch (exit " + std::to_string(code) +
              "); install PyTorch for it with: " + kInstallHint + "\n" + p.log;
  } else if (code != 0) {
    p.error = "torch_parity.py failed (exit " + std::to_string(code) + "):\n" + p.log;
  } else {
    try {
      p.torch = load_npz(out_path);
    } catch (const std::exception& e) {
      p.error = std::string("cannot read torch's results: ") + e.what();
    }
  }
  std::filesystem::remove_all(dir);
  std::printf("parity: our side %.2f s, torch_parity.py %.2f s (incl. import)\n%s", ours_s, torch_s,
              p.log.c_str());
  return p;
}

const Parity& parity() {
  static const Parity p = run_parity();
  return p;
}

// The first word of the case name in "<case>/<kind>/<name>".
std::string family_of(const std::string& key) {
  const std::string c = key.substr(0, key.find('/'));
  return c.substr(0, c.find(' '));
}

// Compare every quantity of the family's cases; print the worst difference of each.
void compare_family(const std::string& family) {
  const Parity& p = parity();
  REQUIRE_MESSAGE(p.error.empty(), "no results from torch (see \"parity: PyTorch runs the reference script\")");
  std::size_t compared = 0;
  double family_worst = 0.0;
  for (const auto& [key, ours_array] : p.ours.entries()) {
    if (family_of(key) != family) continue;
    ++compared;
    CAPTURE(key);
    REQUIRE_MESSAGE(p.torch.contains(key), "torch did not produce ", key);
    const Array<double> a = ours_array.to<double>(), b = p.torch.at(key).to<double>();
    REQUIRE_MESSAGE(shape_of(a) == shape_of(b), key, ": ours ", shape_str(a.shape()), " torch ",
                    shape_str(b.shape()));
    double worst = 0.0;
    bool finite = true;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const double x = a.flat(i), y = b.flat(i);
      finite = finite && std::isfinite(x) && std::isfinite(y);
      worst = std::max(worst, std::abs(x - y) / std::max(1.0, std::abs(y)));
    }
    if (!finite) worst = INFINITY;
    family_worst = std::max(family_worst, worst);
    const bool ok = worst <= kTolerance;
    std::printf("  %-62s %-12s %9.2e  %s\n", key.c_str(), shape_str(a.shape()).c_str(), worst,
                ok ? "OK" : "NOT OK");
    CHECK_MESSAGE(ok, key, ": worst |ours - torch| / max(1, |torch|) = ", worst);
  }
  for (const auto& [key, unused] : p.torch.entries())
    if (family_of(key) == family) CHECK_MESSAGE(p.ours.contains(key), "only torch has ", key);
  CHECK_MESSAGE(compared > 0, "no quantities for ", family);
  std::printf("parity %-20s %3zu quantities, worst relative difference %.2e\n", family.c_str(),
              compared, family_worst);
}

}  // namespace

TEST_CASE("parity: PyTorch runs the reference script") {
  const Parity& p = parity();
  REQUIRE_MESSAGE(p.error.empty(), p.error);
  CHECK(p.torch.size() == p.ours.size());
}

TEST_CASE("parity: Linear") { compare_family("Linear"); }
TEST_CASE("parity: LayerNorm") { compare_family("LayerNorm"); }
TEST_CASE("parity: GRU, bidirectional, packed") { compare_family("GRU"); }
TEST_CASE("parity: Attention additive, dot, scaled dot, general, concat") { compare_family("Attention"); }
TEST_CASE("parity: MultiHeadAttention vs nn.MultiheadAttention") {
  compare_family("MultiHeadAttention");
}
TEST_CASE("parity: EncoderLayer vs nn.TransformerEncoderLayer") { compare_family("EncoderLayer"); }
TEST_CASE("parity: DecoderLayer vs nn.TransformerDecoderLayer") { compare_family("DecoderLayer"); }
TEST_CASE("parity: cross_entropy vs F.cross_entropy") { compare_family("cross_entropy"); }
TEST_CASE("parity: Adam vs torch.optim.Adam") { compare_family("Adam"); }
TEST_CASE("parity: AdamW vs torch.optim.AdamW") { compare_family("AdamW"); }
