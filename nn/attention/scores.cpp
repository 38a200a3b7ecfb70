#include "nn/attention/scores.hpp"

#include <cmath>

namespace attnlab::nn {

template <class T>
Score<T>::Score(std::string name, std::string formula, std::size_t query_size, std::size_t key_size)
    : name_(std::move(name)), formula_(std::move(formula)), dq_(query_size), dk_(key_size) {
  check(dq_ > 0 && dk_ > 0, "Score " + name_, "sizes must be positive, got query ", dq_, ", key ", dk_);
}

template <class T>
std::vector<ScoreStep<T>> Score<T>::steps(const Tensor<T>& q, const Tensor<T>& k) const {
  return {{"scores " + formula_, (*this)(q, k)}};
}

// ---------------------------------------------------------------- additive

template <class T>
AdditiveScore<T>::AdditiveScore(std::size_t query_size, std::size_t key_size, std::size_t hidden,
                                Generator& gen, bool bias)
    : Score<T>("additive", "v^T tanh(W_q q + W_k k)", query_size, key_size),
      w_q(query_size, hidden, gen, bias), w_k(key_size, hidden, gen, bias), v(hidden, 1, gen, bias) {
  this->register_module("w_q", w_q);
  this->register_module("w_k", w_k);
  this->register_module("v", v);
}

// s[b, i, j] = v . tanh(W_q q[b, i] + W_k k[b, j]): project once, (B, Lq, H) and (B, Lk, H), then
// broadcast to (B, Lq, Lk, H) instead of projecting every (i, j) pair.
template <class T>
std::vector<ScoreStep<T>> AdditiveScore<T>::steps(const Tensor<T>& q, const Tensor<T>& k) const {
  const Tensor<T> pq = w_q(q), pk = w_k(k);
  const Tensor<T> features = attnlab::tanh(add(unsqueeze(pq, 2), unsqueeze(pk, 1)));
  return {{"W_q q", pq}, {"W_k k", pk}, {"tanh(W_q q + W_k k)", features}, {"v^T tanh(...)", squeeze(v(features), -1)}};
}

// The broadcast, the tanh and v^T of steps() as one node (core/ops/additive_score.hpp).
template <class T>
Tensor<T> AdditiveScore<T>::compare(const Tensor<T>& q, const Tensor<T>& read) const {
  const Tensor<T> s = additive_score(w_q(q), read, v.weight);
  return v.bias.defined() ? add(s, v.bias) : s;
}

// ---------------------------------------------------------------- dot and scaled dot

template <class T>
DotScore<T>::DotScore(std::size_t size, bool scaled)
    : Score<T>(scaled ? "scaled dot" : "dot", scaled ? "q^T k / sqrt(d)" : "q^T k", size, size),
      scale_(scaled ? 1.0 / std::sqrt(double(size)) : 1.0) {}

template <class T>
Tensor<T> DotScore<T>::compare(const Tensor<T>& q, const Tensor<T>& k) const {
  const Tensor<T> s = matmul(q, k, false, true);  // (B, Lq, d) x (B, Lk, d)^T
  return scale_ == 1.0 ? s : mul(s, T(scale_));
}

// ---------------------------------------------------------------- general

template <class T>
GeneralScore<T>::GeneralScore(std::size_t query_size, std::size_t key_size, Generator& gen)
    : Score<T>("general", "q^T W k", query_size, key_size), w(key_size, query_size, gen, false) {
  this->register_module("w", w);
}

// s = q (W k)^T = q W k^T per (i, j); read_keys made W k.
template <class T>
Tensor<T> GeneralScore<T>::compare(const Tensor<T>& q, const Tensor<T>& read) const {
  return matmul(q, read, false, true);
}

// ---------------------------------------------------------------- concat

template <class T>
ConcatScore<T>::ConcatScore(std::size_t query_size, std::size_t key_size, std::size_t hidden, Generator& gen)
    : Score<T>("concat", "v^T tanh(W [q; k])", query_size, key_size),
      w(query_size + key_size, hidden, gen, false), v(hidden, 1, gen, false) {
  this->register_module("w", w);
  this->register_module("v", v);
}

// W [q; k] = W[:, :dq] q + W[:, dq:] k: two projections broadcast over (i, j) rather than Lq * Lk
// concatenated pairs, which makes concat the additive score with W_q, W_k the two halves of one
// weight. Slicing the weight keeps one parameter, as the formula has.
template <class T>
Tensor<T> ConcatScore<T>::read_keys(const Tensor<T>& k) const {
  const long dq = static_cast<long>(this->query_size()), d = dq + static_cast<long>(this->key_size());
  return linear(k, slice(w.weight, 1, dq, d));  // (B, Lk, H)
}

template <class T>
Tensor<T> ConcatScore<T>::compare(const Tensor<T>& q, const Tensor<T>& read) const {
  const long dq = static_cast<long>(this->query_size());
  return additive_score(linear(q, slice(w.weight, 1, 0, dq)), read, v.weight);
}

// ---------------------------------------------------------------- by name

template <class T>
std::unique_ptr<Score<T>> make_score(const std::string& name, std::size_t query_size,
                                     std::size_t key_size, Generator& gen, std::size_t hidden) {
  const std::string who = "make_score";
  if (name == "dot" || name == "scaled dot") {
    check(query_size == key_size, who, name, " score needs equal query and key sizes, got ", query_size,
          " and ", key_size);
    return std::make_unique<DotScore<T>>(query_size, name == "scaled dot");
  }
  if (name == "general") return std::make_unique<GeneralScore<T>>(query_size, key_size, gen);
  if (name == "additive" || name == "concat") {
    check(hidden > 0, who, name, " score needs a hidden size > 0");
    if (name == "additive") return std::make_unique<AdditiveScore<T>>(query_size, key_size, hidden, gen);
    return std::make_unique<ConcatScore<T>>(query_size, key_size, hidden, gen);
  }
  fail(who, "unknown score '", name, "' (expected additive, dot, scaled dot, general or concat)");
}

#define ATTNLAB_INSTANTIATE(T)                                                                   \
  template class Score<T>;                                                                      \
  template class AdditiveScore<T>;                                                              \
  template class DotScore<T>;                                                                   \
  template class GeneralScore<T>;                                                               \
  template class ConcatScore<T>;                                                                \
  template std::unique_ptr<Score<T>> make_score<T>(const std::string&, std::size_t, std::size_t,  \
                                                   Generator&, std::size_t);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab::nn
