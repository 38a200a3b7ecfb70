#include "core/broadcast.hpp"

#include <xtensor/xreducer.hpp>

#include "core/error.hpp"

namespace attnlab {

Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b) {
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const std::size_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      fail(op, "shapes ", shape_str(a), " and ", shape_str(b), " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const std::size_t lead = to.size() - from.size();
  for (std::size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[lead + i]) return false;
  return true;
}

std::vector<std::ptrdiff_t> broadcast_strides(const Shape& from, const Shape& to) {
  std::vector<std::ptrdiff_t> s(to.size(), 0);
  const std::size_t lead = to.size() - from.size();
  std::ptrdiff_t stride = 1;
  for (std::size_t i = from.size(); i-- > 0;) {
    s[lead + i] = from[i] == 1 ? 0 : stride;
    stride *= static_cast<std::ptrdiff_t>(from[i]);
  }
  return s;
}

template <class T>
Array<T> reduce_to_shape(Array<T>&& g, const Shape& target) {
  const Shape gs = shape_of(g);
  if (gs == target) return std::move(g);
  const std::size_t lead = gs.size() - target.size();
  std::vector<std::size_t> axes;
  for (std::size_t i = 0; i < gs.size(); ++i)
    if (i < lead || (target[i - lead] == 1 && gs[i] != 1)) axes.push_back(i);
  Array<T> r = xt::sum(g, axes, xt::evaluation_strategy::immediate);
  r.reshape(target);
  return r;
}

template Array<float> reduce_to_shape<float>(Array<float>&&, const Shape&);
template Array<double> reduce_to_shape<double>(Array<double>&&, const Shape&);

}  // namespace attnlab
