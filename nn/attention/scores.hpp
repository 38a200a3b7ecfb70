// Score functions: how a query is compared with a key. The attention families of the course differ
// in this alone (nn/attention/attention.hpp does the rest the same way for all of them):
//
//   additive     v^T tanh(W_q q + W_k k)     Bahdanau et al. 2015    w_q (H, dq), w_k (H, dk), v (1, H)
//   dot          q^T k                       Luong et al. 2015       no parameters (dq == dk)
//   scaled dot   q^T k / sqrt(d)             Vaswani et al. 2017     no parameters (dq == dk)
//   general      q^T W k                     Luong et al. 2015       w (dq, dk), stored as Linear(dk -> dq)
//   concat       v^T tanh(W [q; k])          Luong et al. 2015       w (H, dq + dk), v (1, H)
//
// Every score maps q (B, Lq, dq) and k (B, Lk, dk) to s (B, Lq, Lk). No biases (the papers have
// none) unless asked for. Additive with H = dq = dk = 64: 4,096 + 4,096 + 64 = 8,256 parameters;
// general with 64: 4,096.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nn/layers.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// One named intermediate of a score, for lessons that print what a computation makes.
template <class T>
struct ScoreStep {
  std::string name;
  Tensor<T> value;
};

template <class T>
class Score : public Module<T> {
 public:
  // q (B, Lq, dq), k (B, Lk, dk) -> scores (B, Lq, Lk). Attention checks the shapes first.
  Tensor<T> operator()(const Tensor<T>& q, const Tensor<T>& k) const { return compare(q, read_keys(k)); }
  // What the score makes of the keys alone: W_k k (additive), W k (general), the keys' half of
  // W [q; k] (concat), k itself (dot). No query enters it, so a decoder that asks one query per
  // step of the same keys reads them once (Attention::memory), not once per step; Bahdanau et al.
  // 2015 (appendix A) precompute their U_a h_j for the same reason.
  virtual Tensor<T> read_keys(const Tensor<T>& k) const { return k; }
  // The scores of queries q (B, Lq, dq) against keys already read: s (B, Lq, Lk).
  virtual Tensor<T> compare(const Tensor<T>& q, const Tensor<T>& read) const = 0;
  // The intermediates of operator(), in order; the last one is the scores.
  virtual std::vector<ScoreStep<T>> steps(const Tensor<T>& q, const Tensor<T>& k) const;
  // For a dot-product score c q^T k, the factor c: Attention then runs the fused
  // scaled_dot_product_attention op, the same computation as one node with a hand-derived backward.
  virtual std::optional<double> dot_product_scale() const { return std::nullopt; }

  const std::string& name() const { return name_; }        // "additive", "dot", ...
  const std::string& formula() const { return formula_; }  // "v^T tanh(W_q q + W_k k)"
  std::size_t query_size() const { return dq_; }
  std::size_t key_size() const { return dk_; }

 protected:
  Score(std::string name, std::string formula, std::size_t query_size, std::size_t key_size);

 private:
  std::string name_, formula_;
  std::size_t dq_, dk_;
};

template <class T>
class AdditiveScore : public Score<T> {
 public:
  AdditiveScore(std::size_t query_size, std::size_t key_size, std::size_t hidden, Generator& gen,
                bool bias = false);
  Tensor<T> read_keys(const Tensor<T>& k) const override { return w_k(k); }
  Tensor<T> compare(const Tensor<T>& q, const Tensor<T>& read) const override;
  // The same scores op by op (W_q q, W_k k, the broadcast tanh, v^T), for the lessons to show.
  std::vector<ScoreStep<T>> steps(const Tensor<T>& q, const Tensor<T>& k) const override;

  Linear<T> w_q, w_k, v;
};

template <class T>
class DotScore : public Score<T> {
 public:
  // scaled: divide by sqrt(d), Vaswani et al.'s fix for the variance d of q^T k (lesson 04).
  DotScore(std::size_t size, bool scaled);
  Tensor<T> compare(const Tensor<T>& q, const Tensor<T>& k) const override;
  std::optional<double> dot_product_scale() const override { return scale_; }

 private:
  double scale_;
};

template <class T>
class GeneralScore : public Score<T> {
 public:
  GeneralScore(std::size_t query_size, std::size_t key_size, Generator& gen);
  Tensor<T> read_keys(const Tensor<T>& k) const override { return w(k); }
  Tensor<T> compare(const Tensor<T>& q, const Tensor<T>& read) const override;

  Linear<T> w;  // W k = w(k): Linear(dk -> dq), weight (dq, dk)
};

template <class T>
class ConcatScore : public Score<T> {
 public:
  ConcatScore(std::size_t query_size, std::size_t key_size, std::size_t hidden, Generator& gen);
  Tensor<T> read_keys(const Tensor<T>& k) const override;
  Tensor<T> compare(const Tensor<T>& q, const Tensor<T>& read) const override;

  Linear<T> w, v;  // w: Linear(dq + dk -> H), v: Linear(H -> 1)
};

// A score by its name: "additive", "dot", "scaled dot", "general" or "concat" (hidden is H of the
// additive and concat scores). ShapeError on another name or on sizes the score cannot take.
template <class T>
std::unique_ptr<Score<T>> make_score(const std::string& name, std::size_t query_size,
                                     std::size_t key_size, Generator& gen, std::size_t hidden = 0);

}  // namespace attnlab::nn
