// Image panels: a grayscale (H, W) or RGB (H, W, 3) image with values in [0, 1], scaled up with
// nearest-neighbour sampling (each pixel a crisp square, as on a slide about patches), optionally
// with a heatmap overlaid (e.g. a 7x7 patch-attention map over a 28x28 image), also nearest.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "plots/color.hpp"
#include "plots/colormap.hpp"
#include "plots/figure.hpp"

namespace attnlab::plots {

struct ImageOptions {
  std::string caption;                       // drawn under the image
  std::optional<xt::xarray<double>> overlay;  // 2-D map stretched over the whole image
  Colormap overlay_cmap = Colormap::viridis();
  double overlay_alpha = 0.5;
  std::optional<double> overlay_vmin, overlay_vmax;  // default: the overlay's own range
  std::size_t grid = 0;                       // lines every `grid` image pixels (the patches of a ViT); 0: none
  Color grid_color = Color{1.0, 0.55, 0.0};
};

// Throws PlotError on an empty image, a shape other than (H, W) or (H, W, 3), a non-finite pixel,
// an empty or non-2-D overlay, an alpha outside [0, 1], or a grid that does not divide the image.
// Values outside [0, 1] are clamped.
void image(Panel& p, const xt::xarray<double>& img, const ImageOptions& o = {});

struct ImageGridOptions {
  int cols = 4;
  std::string title;
  int width_px = 1600, height_px = 1000;
  double scale = 2.0;
};

// One image panel per entry; captions and overlays, when given, have one entry per image
// (a default-constructed or empty overlay array means none for that image).
Figure image_grid(const std::vector<xt::xarray<double>>& images, const std::vector<std::string>& captions,
                  const std::vector<xt::xarray<double>>& overlays, const ImageOptions& style,
                  const ImageGridOptions& grid = {});

}  // namespace attnlab::plots
