#include "lessons/kit/offset_profile.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <xtensor/xview.hpp>

#include "core/error.hpp"
#include "lessons/kit/figures.hpp"
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

plots::Figure offset_profiles_figure(const std::vector<OffsetProfile>& profiles, const std::vector<std::string>& head_labels,
                                     const std::string& title, std::size_t every, int width, int height) {
  std::size_t rows = 0;
  for (const OffsetProfile& p : profiles) {
    if (p.length != profiles.front().length)
      throw std::invalid_argument("offset_profiles_figure: profiles of lengths " + std::to_string(profiles.front().length) +
                                  " and " + std::to_string(p.length) + " in '" + title + "'");
    rows += p.weight.shape()[0];
  }
  if (profiles.empty() || head_labels.size() != rows)
    throw std::invalid_argument("offset_profiles_figure: " + std::to_string(head_labels.size()) + " labels for " +
                                std::to_string(rows) + " heads in " + std::to_string(profiles.size()) +
                                " profiles of '" + title + "'");
  xt::xarray<double> all = xt::zeros<double>({rows, profiles.front().weight.shape()[1]});
  std::size_t row = 0;
  for (const OffsetProfile& p : profiles)
    for (std::size_t h = 0; h < p.weight.shape()[0]; ++h, ++row) xt::view(all, row) = xt::view(p.weight, h);
  plots::Figure fig(width, height);
  fig.title(title);
  plots::HeatmapOptions o = attention_style(profiles.front().offset_labels(every), head_labels);
  o.colorbar = true, o.colorbar_label = "mean attention weight", o.square_cells = false;
  plots::heatmap(fig.panel(0).xlabel("offset i − j (keys to the left: i − j > 0)").ylabel("model and head"), all, o);
  return fig;
}

}  // namespace attnlab::lessons
