#include "lessons/kit/offset_profile.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <xtensor/xview.hpp>

#include "core/error.hpp"
#include "lessons/kit/heads.hpp"

namespace attnlab::lessons {

double OffsetProfile::at(std::size_t head, long offset) const {
  const long L = long(length);
  if (head >= weight.shape()[0] || offset <= -L || offset >= L)
    throw std::out_of_range("OffsetProfile::at: head " + std::to_string(head) + " at offset " + std::to_string(offset) +
                            " is outside " + std::to_string(weight.shape()[0]) + " heads and offsets -" +
                            std::to_string(L - 1) + " .. " + std::to_string(L - 1));
  return weight(head, std::size_t(offset + L - 1));
}

std::pair<long, double> OffsetProfile::peak(std::size_t head) const {
  const xt::xarray<double> r = xt::view(weight, head);
  const std::size_t at = std::size_t(std::max_element(r.begin(), r.end()) - r.begin());
  return {long(at) - long(length) + 1, r(at)};
}

std::size_t OffsetProfile::offsets_peaked(const std::vector<std::size_t>& offsets) const {
  std::size_t n = 0;
  for (std::size_t o : offsets) {
    bool some = false;
    for (std::size_t h = 0; h < weight.shape()[0]; ++h) some = some || peak(h).first == long(o);
    n += some;
  }
  return n;
}

std::size_t OffsetProfile::offsets_above(const std::vector<std::size_t>& offsets, double share) const {
  std::size_t n = 0;
  for (std::size_t o : offsets) {
    bool some = false;
    for (std::size_t h = 0; h < weight.shape()[0]; ++h) some = some || at(h, long(o)) > share;
    n += some;
  }
  return n;
}

std::vector<std::string> OffsetProfile::offset_labels(std::size_t every) const {
  std::vector<std::string> out;
  for (long o = -long(length) + 1; o < long(length); ++o)
    out.push_back(every > 0 && o % long(every) == 0 ? std::to_string(o) : "");
  return out;
}

OffsetProfile offset_profile(const Array<float>& w) {
  check(w.dimension() == 4 && w.shape()[2] == w.shape()[3], "offset_profile", "weights must be (B, h, L, L), got ",
        shape_str(w.shape()));
  const std::size_t heads = w.shape()[1], L = w.shape()[2];
  OffsetProfile p{xt::zeros<double>({heads, 2 * L - 1}), L};
  for (long o = -long(L) + 1; o < long(L); ++o) {
    const std::vector<double> mass = offset_mass(w, o);
    for (std::size_t h = 0; h < heads; ++h) p.weight(h, std::size_t(o + long(L) - 1)) = mass[h];
  }
  return p;
}

}  // namespace attnlab::lessons
