// What both files of the PyTorch parity test share (tests/test_parity_torch.cpp runs it; the cases
// of the later lessons' variants are in tests/parity/variant_cases.cpp): a Case, which records one
// computation of ours for tests/parity/torch_parity.py to rebuild in torch, and the masks the cases
// pad with. The conventions ("<case>/<kind>/<name>" keys, the first word a family) are in
// test_parity_torch.cpp's header comment.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/ops.hpp"
#include "io/npz.hpp"
#include "nn/module.hpp"

namespace attnlab::parity_cases {

using Tn = Tensor<double>;

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
  // prefix goes before each name, for a module that is not the case's only one ("score.").
  void params(const nn::Module<double>& m, double std = 0.5, const std::string& prefix = "") {
    NoGrad no_grad;
    for (const auto& [name, t] : m.named_parameters()) {
      t.mutable_value() = random_normal<double>(t.shape(), gen_, 0.0, std);
      in_.add(key("param", prefix + name), NpyArray(t.value()));
      params_.emplace_back(prefix + name, t);
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
inline Mask length_mask(const std::vector<std::size_t>& lengths, std::size_t L) {
  Mask m = xt::zeros<bool>({lengths.size(), L});
  for (std::size_t b = 0; b < lengths.size(); ++b)
    for (std::size_t t = 0; t < lengths[b] && t < L; ++t) m(b, t) = true;
  return m;
}

// The cases of the variants the later lessons added (grouped-query, local, graph, sparse and hard
// attention, the captioner and its coverage penalty): tests/parity/variant_cases.cpp.
void variant_cases(Npz& in, Npz& ours);

}  // namespace attnlab::parity_cases
