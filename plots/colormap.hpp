// Colormaps sampled from published tables, linearly interpolated between evenly spaced entries:
//   viridis  matplotlib's 256-entry table (van der Walt and Smith, 2015), sequential
//   Reds, Blues  ColorBrewer 9-class sequential schemes (Brewer, colorbrewer2.org)
//   RdBu     ColorBrewer 11-class diverging scheme; rdbu() runs blue (low) -> white -> red (high)
// A diverging map is meant for data centred on zero: heatmaps give it a symmetric range.
#pragma once

#include <string>
#include <vector>

#include "plots/color.hpp"

namespace attnlab::plots {

class Colormap {
 public:
  Colormap(std::string name, std::vector<Color> table, bool diverging);

  // t in [0,1] (clamped); NaN -> nan_color().
  Color operator()(double t) const;
  // v mapped linearly from [vmin, vmax] to [0,1].
  Color at(double v, double vmin, double vmax) const;

  const std::string& name() const { return name_; }
  bool diverging() const { return diverging_; }
  Colormap reversed() const;

  static Colormap viridis();
  static Colormap reds();
  static Colormap blues();
  static Colormap rdbu();  // blue for negative, red for positive (matplotlib's "RdBu_r")
  // "viridis", "Reds", "Blues", "RdBu" (red low) or "RdBu_r" (blue low); anything else throws.
  static Colormap by_name(const std::string& name);

 private:
  std::string name_;
  std::vector<Color> table_;
  bool diverging_;
};

// Fill for NaN cells (hatched in heatmaps so it cannot be mistaken for a value).
inline Color nan_color() { return ink::nan_fill; }

}  // namespace attnlab::plots
