#include "core/allowed.hpp"

#include <xtensor/xoperation.hpp>

#include "core/broadcast.hpp"
#include "core/error.hpp"

namespace attnlab {

Allowed Allowed::where(Mask allowed) { return Allowed(std::move(allowed)); }

Allowed Allowed::except(const Mask& hidden) { return Allowed(Mask(!hidden)); }

Allowed Allowed::reshaped(const Shape& shape, const char* who) const {
  check(shape_size(shape) == allowed_.size(), who, "cannot reshape the allowed entries ",
        shape_str(this->shape()), " to ", shape_str(shape));
  Mask m = allowed_;
  m.reshape(shape);
  return Allowed(std::move(m));
}

Allowed operator&&(const Allowed& a, const Allowed& b) {
  broadcast_shapes("Allowed &&", a.shape(), b.shape());  // throws naming both shapes
  return Allowed(Mask(a.allowed_ && b.allowed_));
}

}  // namespace attnlab
