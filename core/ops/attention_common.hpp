// What the attention ops share, in one place (internal to core/ops): scaled_dot_product_attention
// and the multi-head forms (attention.cpp), tiled and local attention (tiled_attention.cpp), linear
// attention (linear_attention.cpp).
//
//   attention_shapes   the checks every op makes on Q (..., Lq, d), K (..., Lk, d), V (..., Lk, dv)
//   allowed_map        where each entry of a mask sits in the scores
//   attention_scale    the factor on Q K^T: the caller's, else 1 / sqrt(d)
//   InputGradients     one gradient buffer per input that needs one, added to the node at the end
//   softmax_backward_row   the softmax rule of every exact attention's backward:
//                      dS = P * (dP - D) * scale, D = rowsum(dP * P) = dO_i . O_i
//
// The rule's derivation, step by step and checked three ways, is lesson 06
// (lessons/06_attention_backward.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/allowed.hpp"
#include "core/array.hpp"
#include "core/broadcast.hpp"
#include "core/error.hpp"
#include "core/ops/broadcast_map.hpp"
#include "core/tensor.hpp"

namespace attnlab::detail {

struct AttentionShapes {
  Shape lead;                                          // the leading dims, the same for Q, K, V
  std::size_t B = 0, Lq = 0, Lk = 0, d = 0, dv = 0;    // B: the leading dims flattened
  std::string text;                                    // "Q (2,3,4), K (2,5,4), V (2,5,2)"
  Shape scores() const { return with(Lq, Lk); }        // (..., Lq, Lk)
  Shape output() const { return with(Lq, dv); }        // (..., Lq, dv)

 private:
  Shape with(std::size_t a, std::size_t b) const {
    Shape s = lead;
    s.insert(s.end(), {a, b});
    return s;
  }
};

// ShapeError naming `op` and the three shapes unless Q, K, V are defined, of one rank >= 2 with
// the same leading dims, Q and K share d and K and V share Lk.
template <class T>
AttentionShapes attention_shapes(const char* op, const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v) {
  need(op, q, "query");
  need(op, k, "key");
  need(op, v, "value");
  const Shape qs = q.shape(), ks = k.shape(), vs = v.shape();
  AttentionShapes s;
  s.text = "Q " + shape_str(qs) + ", K " + shape_str(ks) + ", V " + shape_str(vs);
  check(qs.size() >= 2 && ks.size() >= 2 && vs.size() >= 2, op, "Q, K and V need rank >= 2 (..., L, d): ", s.text);
  const std::size_t rank = qs.size();
  s.lead = Shape(qs.begin(), qs.end() - 2);
  check(ks.size() == rank && vs.size() == rank && Shape(ks.begin(), ks.end() - 2) == s.lead &&
            Shape(vs.begin(), vs.end() - 2) == s.lead,
        op, "leading dims of Q, K and V differ: ", s.text);
  s.Lq = qs[rank - 2];
  s.d = qs[rank - 1];
  s.Lk = ks[rank - 2];
  s.dv = vs[rank - 1];
  check(ks[rank - 1] == s.d, op, "d of Q and K differ: ", s.text);
  check(vs[rank - 2] == s.Lk, op, "Lk of K and V differ: ", s.text);
  s.B = shape_size(s.lead);
  return s;
}

// Where each entry of `allowed` sits in the scores (..., Lq, Lk); ShapeError naming `op` and the
// operands' shapes (`shapes`) unless it broadcasts to them.
inline BroadcastMap allowed_map(const char* op, const Allowed& allowed, const Shape& scores, const std::string& shapes) {
  check(broadcasts_to(allowed.shape(), scores), op, "allowed entries of shape ", shape_str(allowed.shape()),
        " do not broadcast to the scores ", shape_str(scores), " (", shapes, ")");
  return broadcast_map(allowed.shape(), scores);
}

// The factor on Q K^T: `scale` when the caller gave one, else 1 / sqrt(d) (1 for d = 0).
inline double attention_scale(const std::optional<double>& scale, std::size_t d) {
  return scale ? *scale : 1.0 / std::sqrt(double(std::max<std::size_t>(d, 1)));
}

// The gradients of a node's first `count` inputs, each allocated in its input's shape only when
// that input needs one; ptr(i) is null otherwise, so a kernel skips it. add_to() hands them over.
template <class T>
class InputGradients {
 public:
  InputGradients(const Node<T>& n, std::size_t count) : grads_(count), wanted_(count, false) {
    for (std::size_t i = 0; i < count; ++i)
      if (n.needs_grad(i)) {
        wanted_[i] = true;
        grads_[i] = Array<T>::from_shape(shape_of(n.input(i)));
      }
  }
  T* ptr(std::size_t i) { return wanted_[i] ? grads_[i].data() : nullptr; }
  void zero() {
    for (std::size_t i = 0; i < grads_.size(); ++i)
      if (wanted_[i]) grads_[i].fill(T(0));
  }
  void add_to(Node<T>& n) {
    for (std::size_t i = 0; i < grads_.size(); ++i)
      if (wanted_[i]) n.add_grad(i, std::move(grads_[i]));
  }

 private:
  std::vector<Array<T>> grads_;
  std::vector<bool> wanted_;
};

// One row of the softmax backward: ds holds dP on entry and dS = p * (dP - D) * scale on exit,
// over n keys. p is the row of weights (0 wherever a key was hidden, so dS is exactly 0 there),
// D = rowsum(dP * p), which equals dO_i . O_i (the tiled backward's form, with no P stored).
template <class T>
inline void softmax_backward_row(T* ds, const T* p, T D, T scale, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) ds[j] = p[j] * (ds[j] - D) * scale;
}

}  // namespace attnlab::detail
