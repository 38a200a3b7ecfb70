// The shape checks every attention op makes on Q (..., Lq, d), K (..., Lk, d), V (..., Lk, dv),
// once (internal to core/ops): scaled_dot_product_attention, tiled and local attention, linear
// attention.
#pragma once

#include <cstddef>
#include <string>

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

}  // namespace attnlab::detail
