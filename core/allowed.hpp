// Allowed: which scores a softmax may use, the one masking convention of attnlab.
//
// A bare boolean array cannot say which way it points: PyTorch's key_padding_mask is true where a
// key is IGNORED, our padded batches are true where a token is REAL, masked_fill is true where it
// FILLS. So every mask a softmax or an attention takes is an Allowed, and an Allowed is made only
// by naming the direction at the call site:
//
//   Allowed::where(batch.real)       true = may be attended to
//   Allowed::except(own_position)    true = hidden
//
// An entry that is not allowed gets weight exactly 0 and gradient exactly 0 (it is left out of the
// softmax, not filled with -1e9 or -inf), and a row with nothing allowed is all zeros, never NaN.
#pragma once

#include "core/array.hpp"

namespace attnlab {

class Allowed {
 public:
  static Allowed where(Mask allowed);
  static Allowed except(const Mask& hidden);

  const Mask& mask() const { return allowed_; }  // true = allowed
  Shape shape() const { return shape_of(allowed_); }
  // The same entries in another shape of the same size, e.g. (B, Lk) -> (B, 1, Lk) so that one
  // row of keys serves every query. ShapeError naming `who` when the sizes differ.
  Allowed reshaped(const Shape& shape, const char* who = "Allowed") const;

  // Allowed by both (shapes broadcast, numpy style).
  friend Allowed operator&&(const Allowed& a, const Allowed& b);

 private:
  explicit Allowed(Mask allowed) : allowed_(std::move(allowed)) {}
  Mask allowed_;
};

}  // namespace attnlab
