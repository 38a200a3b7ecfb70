// Parity with PyTorch 1.13 (float64), module by module, both ways.
//
// Ours first: each case builds one of our modules with seeded random weights, runs it on seeded
// random inputs and backpropagates a seeded random upstream gradient g (loss = sum <y, g> over the
// differentiable outputs). Weights (under their named_parameters() names, which are PyTorch's),
// inputs, masks, g, our outputs and all our gradients go into one .npz;
// tests/parity/torch_parity.py rebuilds every case in PyTorch (the torch module where one exists,
// loaded with load_state_dict(strict=True); the paper's formula otherwise) and writes torch's
// outputs and gradients back.
//
// PyTorch first: torch_parity.py --state-dicts builds nn.MultiheadAttention, the Transformer
// layers, stacks and nn.Transformer with a fixed seed and saves each state_dict as a user would
// (np.savez of {k: v.detach().double().numpy()}), with an input and its output. We load each file
// by name (load_checkpoint), run the input ("<case>/from_torch/<name>" against torch's output),
// export (save_checkpoint), and the second python run loads the export with strict=True, checks
// it holds the very values it saved, and runs the input again ("<case>/reloaded/<name>").
//
// The Case these are written with, and the cases of the later lessons' variants (grouped-query,
// local, graph, sparse and hard attention, the captioner): tests/parity/case.hpp,
// tests/parity/variant_cases.cpp.
//
// Every array must agree to |ours - torch| <= 1e-9 * max(1, |torch|); the worst difference of
// each quantity is printed. Two python processes in all (importing torch costs more than the
// cases themselves).
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
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "io/npz.hpp"
#include "core/ops.hpp"
#include "nn/attention/attention.hpp"
#include "nn/attention/multi_head.hpp"
#include "nn/checkpoint.hpp"
#include "nn/gru.hpp"
#include "nn/layers.hpp"
#include "nn/optim.hpp"
#include "nn/positional/shaw.hpp"
#include "nn/transformer/transformer.hpp"
#include "tests/parity/case.hpp"

using namespace attnlab;
using parity_cases::Case;
using parity_cases::length_mask;
using Tn = Tensor<double>;

namespace {

constexpr double kTolerance = 1e-9;
const char* const kPython = "/usr/bin/python3";
const char* const kInstallHint = "apt-get install python3-torch";

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

// Shaw et al.'s relative positions in self-attention: torch's own nn.MultiheadAttention with our
// weights, the position term q_i . w_{clip(j - i)} / sqrt(d_k) written with einsum from the table
// (and torch's own q) and passed as a float attn_mask, which torch adds after its scaling.
void shaw_cases(Npz& in, Npz& ours) {
  const std::size_t d = 8, h = 2, B = 2;
  for (bool causal : {false, true}) {
    Case c(causal ? "ShawRelativePosition self-attention causal" : "ShawRelativePosition self-attention", in, ours,
           causal ? 72 : 71);
    nn::MultiHeadAttention<double> m(d, h, c.gen());
    nn::ShawRelativePosition<double> shaw(d / h, 2, c.gen());  // K = 2 < L - 1: the edge rows are shared
    c.params(m);
    c.params(shaw);
    c.cfg("d_model", double(d));
    c.cfg("heads", double(h));
    c.cfg("max_distance", 2);
    c.cfg("causal", causal);
    Tn x = c.input("x", {B, 6, d});
    nn::MultiHeadOptions<double> opt;
    opt.causal = causal;
    opt.query_bias = [&shaw](const Tn& q) { return shaw.forward(q, q.dim(1)); };
    AttentionResult<double> r = m.forward(x, opt);
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
  std::vector<std::string> names;
  for (const auto& [n, s] : shapes) names.push_back(n);
  const Npz state = opt.state(names);  // "exp_avg/w", "exp_avg_sq/b", ...
  for (const auto& [key, array] : state.entries())
    if (key.rfind("exp_avg", 0) == 0) c.output(key, Tn(array.template to<double>()), false);
}

// ---------------------------------------------------------------- PyTorch first: state_dicts by name

// One case as torch_parity.py --state-dicts wrote it: the "<case>/<kind>/<name>" arrays of
// from_torch.npz, and its state_dict beside it in <stem>.npz.
struct TorchCase {
  std::string name, family, stem;
  std::map<std::string, NpyArray> cfg, input, data, output;

  const NpyArray& at(const std::map<std::string, NpyArray>& m, const std::string& k) const {
    const auto it = m.find(k);
    check(it != m.end(), name, "from_torch.npz has no '", k, "'");
    return it->second;
  }
  double num(const std::string& k, double otherwise) const {
    return cfg.count(k) ? cfg.at(k).to<double>()() : otherwise;
  }
  bool flag(const std::string& k) const { return num(k, 0.0) != 0.0; }
  std::size_t size(const std::string& k) const { return static_cast<std::size_t>(num(k, 0.0)); }
  Tn in(const std::string& k) const { return Tn(at(input, k).to<double>()); }
  Allowed real(const std::string& k) const { return Allowed::where(at(data, k).get<bool>()); }
  nn::LayerConfig layer() const {
    return {size("d_model"), size("heads"), size("d_ff"), 0.0, flag("norm_first"),
            flag("gelu") ? nn::Activation::GELU : nn::Activation::ReLU, num("eps", 1e-5)};
  }
};

using Outputs = std::vector<std::pair<std::string, Tn>>;

// The README's round trip: a PyTorch state_dict in, by name (a missing, unexpected or mis-shaped
// key is an error naming it), the case's forward, our weights out under the same names.
template <class M, class Run>
Outputs load_run_export(M& m, const TorchCase& c, Run run) {
  nn::load_checkpoint(c.stem + ".npz", m.named_parameters());
  m.eval();
  Outputs out = run();
  nn::save_checkpoint(c.stem + ".export.npz", m.named_parameters());
  return out;
}

// The attnlab module each torch.nn module of the script maps to, on the case's inputs and masks.
// The generator only fills weights the state_dict then replaces.
Outputs run_torch_case(const TorchCase& c) {
  Generator gen(1);
  const nn::LayerConfig cfg = c.layer();
  if (c.family == "nn.MultiheadAttention") {
    nn::MultiHeadAttention<double> m(cfg.d_model, cfg.heads, gen, 0.0, c.flag("bias"));
    return load_run_export(m, c, [&] {
      nn::MultiHeadOptions<double> o;
      o.allowed_keys = c.real("key_padding_mask");
      o.causal = c.flag("causal");
      // Self-attention passes one tensor: the packed in_proj_weight path.
      const AttentionResult<double> r = c.flag("self")
          ? m.forward(c.in("x"), o) : m.forward(c.in("query"), c.in("key"), c.in("value"), o);
      return Outputs{{"output", r.output}, {"weights", r.weights}};
    });
  }
  if (c.family == "nn.TransformerEncoderLayer" || c.family == "nn.TransformerEncoder") {
    nn::MultiHeadOptions<double> o;
    o.allowed_keys = c.real("key_padding_mask");
    o.causal = c.flag("causal");
    if (c.family == "nn.TransformerEncoderLayer") {
      nn::EncoderLayer<double> m(cfg, gen);
      return load_run_export(m, c, [&] { return Outputs{{"output", m.forward(c.in("x"), o)}}; });
    }
    nn::Encoder<double> m(c.size("num_layers"), cfg, gen, c.flag("final_norm"));
    return load_run_export(m, c, [&] { return Outputs{{"output", m.forward(c.in("x"), o)}}; });
  }
  if (c.family == "nn.TransformerDecoderLayer") {
    nn::DecoderLayer<double> m(cfg, gen);
    return load_run_export(m, c, [&] {
      nn::MultiHeadOptions<double> self_opt, cross_opt;
      self_opt.allowed_keys = c.real("target_mask");
      self_opt.causal = true;
      cross_opt.allowed_keys = c.real("memory_mask");
      return Outputs{{"output", m.forward(c.in("x"), c.in("memory"), self_opt, cross_opt)}};
    });
  }
  if (c.family == "nn.TransformerDecoder") {
    nn::Decoder<double> m(c.size("num_layers"), cfg, gen, c.flag("final_norm"));
    return load_run_export(m, c, [&] {
      return Outputs{{"output", m.forward(c.in("x"), c.in("memory"), c.real("target_mask"),
                                          c.real("memory_mask"), /*causal=*/true)}};
    });
  }
  if (c.family == "nn.Transformer") {
    nn::Transformer<double> m({c.size("encoder_layers"), c.size("decoder_layers"), cfg}, gen);
    return load_run_export(m, c, [&] {
      return Outputs{{"output", m.forward(c.in("src"), c.in("tgt"), c.real("src_mask"),
                                          c.real("tgt_mask"))}};
    });
  }
  fail("parity", "no attnlab module for ", c.family);
}

// ---------------------------------------------------------------- running torch, comparing

struct Parity {
  Npz ours, torch;
  std::string error;  // why torch's results are missing; empty when they are here
  std::string log;    // the scripts' stdout and stderr
  std::map<std::string, std::string> family_errors;  // a PyTorch-first case we could not run
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs the script with args (already quoted); returns why it failed, or "" on success.
std::string run_script(const std::string& script, const std::string& args, const std::string& dir,
                       Parity& p) {
  const std::string log_path = dir + "/log.txt";
  const std::string cmd = std::string(kPython) + " '" + script + "' " + args + " > '" + log_path +
                          "' 2>&1";
  const int status = std::system(cmd.c_str());
  const std::string log = slurp(log_path);
  p.log += log;
  const int code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  if (code == 3 || code == 126 || code == 127)
    return std::string(kPython) + " cannot import torch (exit " + std::to_string(code) +
           "); install PyTorch for it with: " + kInstallHint + "\n" + log;
  if (code != 0) return "torch_parity.py " + args + " failed (exit " + std::to_string(code) + "):\n" + log;
  return "";
}

// Reads from_torch.npz, runs every case through load_run_export; ours and torch's original
// outputs go under "<case>/from_torch/<name>", ours again under "<case>/reloaded/<name>" (torch's
// reloaded outputs come from the second python run).
void from_torch_cases(const std::string& dir, Parity& p, Npz& torch_side) {
  std::map<std::string, TorchCase> cases;
  const Npz file = load_npz(dir + "/from_torch.npz");  // a named local: entries() refers into it
  for (const auto& [key, array] : file.entries()) {
    const std::size_t a = key.find('/'), b = key.find('/', a + 1);
    const std::string name = key.substr(0, a), kind = key.substr(a + 1, b - a - 1);
    TorchCase& c = cases[name];
    c.name = name;
    c.family = name.substr(0, name.find(' '));
    c.stem = dir + "/" + name;
    std::replace(c.stem.begin() + static_cast<long>(dir.size()), c.stem.end(), ' ', '_');
    std::map<std::string, NpyArray>& group =
        kind == "cfg" ? c.cfg : kind == "input" ? c.input : kind == "data" ? c.data : c.output;
    group.emplace(key.substr(b + 1), array);
  }
  for (const auto& [name, c] : cases) {
    try {
      for (const auto& [out, y] : run_torch_case(c)) {
        p.ours.add(name + "/from_torch/" + out, NpyArray(y.value()));
        p.ours.add(name + "/reloaded/" + out, NpyArray(y.value()));
        torch_side.add(name + "/from_torch/" + out, c.at(c.output, out));
      }
    } catch (const std::exception& e) {
      p.family_errors[c.family] += name + ": " + e.what() + "\n";
    }
  }
}

Parity run_parity() {
  Parity p;
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
  const std::string dir = tmpl, in_path = dir + "/in.npz", out_path = dir + "/out.npz";
  const auto t0 = std::chrono::steady_clock::now();
  p.error = run_script(script, "--state-dicts '" + dir + "'", dir, p);
  if (!p.error.empty()) {
    std::filesystem::remove_all(dir);
    return p;
  }
  const auto t1 = std::chrono::steady_clock::now();
  Npz in, from_torch;
  linear_cases(in, p.ours);
  layer_norm_case(in, p.ours);
  gru_cases(in, p.ours);
  attention_cases(in, p.ours);
  mha_cases(in, p.ours);
  transformer_layer_cases(in, p.ours);
  cross_entropy_cases(in, p.ours);
  shaw_cases(in, p.ours);
  optimizer_case<nn::Adam<double>>(in, p.ours, "Adam weight_decay", 91);
  optimizer_case<nn::AdamW<double>>(in, p.ours, "AdamW weight_decay", 92);
  parity_cases::variant_cases(in, p.ours);
  for (const auto& [key, array] : p.ours.entries()) in.add(key, array);  // ours too, for debugging
  save_npz(in_path, in);
  from_torch_cases(dir, p, from_torch);  // after in.npz: the script reads these from the exports
  const auto t2 = std::chrono::steady_clock::now();
  p.error = run_script(script, "'" + in_path + "' '" + out_path + "' '" + dir + "'", dir, p);
  const auto t3 = std::chrono::steady_clock::now();
  if (p.error.empty()) {
    try {
      p.torch = load_npz(out_path);
      for (const auto& [key, array] : from_torch.entries()) p.torch.add(key, array);
    } catch (const std::exception& e) {
      p.error = std::string("cannot read torch's results: ") + e.what();
    }
  }
  std::filesystem::remove_all(dir);
  const auto seconds = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  std::printf("parity: our side %.2f s, torch_parity.py %.2f s + %.2f s (incl. imports)\n%s",
              seconds(t1, t2), seconds(t0, t1), seconds(t2, t3), p.log.c_str());
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
  const auto failed = p.family_errors.find(family);
  CHECK_MESSAGE(failed == p.family_errors.end(), "cases we could not run:\n",
                failed == p.family_errors.end() ? "" : failed->second);
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
    std::printf("  %-72s %-12s %9.2e  %s\n", key.c_str(), shape_str(a.shape()).c_str(), worst,
                ok ? "OK" : "NOT OK");
    CHECK_MESSAGE(ok, key, ": worst |ours - torch| / max(1, |torch|) = ", worst);
  }
  for (const auto& [key, unused] : p.torch.entries())
    if (family_of(key) == family) CHECK_MESSAGE(p.ours.contains(key), "only torch has ", key);
  CHECK_MESSAGE(compared > 0, "no quantities for ", family);
  std::printf("parity %-25s %3zu quantities, worst relative difference %.2e\n", family.c_str(),
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
TEST_CASE("parity: ShawRelativePosition vs nn.MultiheadAttention with the term as attn_mask") {
  compare_family("ShawRelativePosition");
}
TEST_CASE("parity: Adam vs torch.optim.Adam") { compare_family("Adam"); }
TEST_CASE("parity: AdamW vs torch.optim.AdamW") { compare_family("AdamW"); }

// The later lessons' variants (tests/parity/variant_cases.cpp), each against its paper's formula.
TEST_CASE("parity: grouped-query and multi-query attention (kv_heads 2 and 1 of 4)") {
  compare_family("GroupedQueryAttention");
}
TEST_CASE("parity: repeat_heads vs repeat_interleave") { compare_family("repeat_heads"); }
TEST_CASE("parity: Luong's local-p attention") { compare_family("LocalPAttention"); }
TEST_CASE("parity: Luong's local-m attention") { compare_family("local_m_attention"); }
TEST_CASE("parity: GraphAttention (GAT), several heads, masked by adjacency") { compare_family("GraphAttention"); }
TEST_CASE("parity: MeanAggregation (mean over neighbourhoods)") { compare_family("MeanAggregation"); }
TEST_CASE("parity: sparse_attention vs a dense mask of the same pattern") { compare_family("sparse_attention"); }
TEST_CASE("parity: log_of_chosen vs Categorical.log_prob") { compare_family("log_of_chosen"); }
TEST_CASE("parity: doubly_stochastic_penalty (Show, Attend and Tell)") {
  compare_family("doubly_stochastic_penalty");
}
TEST_CASE("parity: Captioner soft and hard, PatchEncoder, reinforce_loss") { compare_family("Captioner"); }

// PyTorch first: its state_dict loads by name, runs equal, and our export loads back strictly.
TEST_CASE("state_dict both ways: nn.MultiheadAttention") { compare_family("nn.MultiheadAttention"); }
TEST_CASE("state_dict both ways: nn.TransformerEncoderLayer") {
  compare_family("nn.TransformerEncoderLayer");
}
TEST_CASE("state_dict both ways: nn.TransformerDecoderLayer") {
  compare_family("nn.TransformerDecoderLayer");
}
TEST_CASE("state_dict both ways: nn.TransformerEncoder") { compare_family("nn.TransformerEncoder"); }
TEST_CASE("state_dict both ways: nn.TransformerDecoder") { compare_family("nn.TransformerDecoder"); }
TEST_CASE("state_dict both ways: nn.Transformer") { compare_family("nn.Transformer"); }
