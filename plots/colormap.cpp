#include "plots/colormap.hpp"

#include <algorithm>
#include <cmath>

#include "plots/colormap_tables.hpp"
#include "plots/error.hpp"

namespace attnlab::plots {

Colormap::Colormap(std::string name, std::vector<Color> table, bool diverging)
    : name_(std::move(name)), table_(std::move(table)), diverging_(diverging) {
  require(table_.size() >= 2, "Colormap", "\"", name_, "\" needs at least 2 colors, got ", table_.size());
}

// Entry k sits at t = k / (n - 1); between entries, linear interpolation in sRGB as matplotlib's
// LinearSegmentedColormap does for the ColorBrewer maps.
Color Colormap::operator()(double t) const {
  if (std::isnan(t)) return nan_color();
  t = std::clamp(t, 0.0, 1.0);
  const double pos = t * double(table_.size() - 1);
  const std::size_t k = std::min(std::size_t(pos), table_.size() - 2);
  const double f = pos - double(k);
  const Color& a = table_[k];
  const Color& b = table_[k + 1];
  return {a.r + f * (b.r - a.r), a.g + f * (b.g - a.g), a.b + f * (b.b - a.b), 1.0};
}

Color Colormap::at(double v, double vmin, double vmax) const {
  if (std::isnan(v)) return nan_color();
  if (!(vmax > vmin)) return (*this)(0.5);  // a constant matrix: the middle color, not a division by 0
  return (*this)((v - vmin) / (vmax - vmin));
}

Colormap Colormap::reversed() const {
  std::vector<Color> t(table_.rbegin(), table_.rend());
  const bool ends_r = name_.size() > 2 && name_.compare(name_.size() - 2, 2, "_r") == 0;
  return Colormap(ends_r ? name_.substr(0, name_.size() - 2) : name_ + "_r", std::move(t), diverging_);
}

static std::vector<Color> from_hex(std::initializer_list<const char*> hexes) {
  std::vector<Color> out;
  for (const char* h : hexes) out.push_back(Color::hex(h));
  return out;
}

Colormap Colormap::viridis() {
  std::vector<Color> t;
  t.reserve(detail::kViridisSize);
  for (const auto& e : detail::kViridis) t.push_back({e[0], e[1], e[2], 1.0});
  return Colormap("viridis", std::move(t), false);
}

Colormap Colormap::reds() {
  return Colormap("Reds",
                  from_hex({"#fff5f0", "#fee0d2", "#fcbba1", "#fc9272", "#fb6a4a", "#ef3b2c", "#cb181d",
                            "#a50f15", "#67000d"}),
                  false);
}

Colormap Colormap::blues() {
  return Colormap("Blues",
                  from_hex({"#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5",
                            "#08519c", "#08306b"}),
                  false);
}

Colormap Colormap::rdbu() {
  // ColorBrewer RdBu-11 runs red -> blue; reversed so that positive values are warm.
  return Colormap("RdBu",
                  from_hex({"#67001f", "#b2182b", "#d6604d", "#f4a582", "#fddbc7", "#f7f7f7", "#d1e5f0",
                            "#92c5de", "#4393c3", "#2166ac", "#053061"}),
                  true)
      .reversed();
}

Colormap Colormap::by_name(const std::string& name) {
  if (name == "viridis") return viridis();
  if (name == "Reds") return reds();
  if (name == "Blues") return blues();
  if (name == "RdBu_r") return rdbu();
  if (name == "RdBu") return rdbu().reversed();
  fail("Colormap::by_name", "unknown colormap \"", name, "\" (known: viridis, Reds, Blues, RdBu, RdBu_r)");
}

}  // namespace attnlab::plots
