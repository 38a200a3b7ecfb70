#include "plots/image.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "plots/error.hpp"
#include "plots/heatmap.hpp"

namespace attnlab::plots {

namespace {

constexpr double kCaptionGap = 5;

std::uint32_t argb(const Color& c) {
  auto b8 = [](double v) { return std::uint32_t(std::lround(std::clamp(v, 0.0, 1.0) * 255.0)); };
  return 0xff000000u | (b8(c.r) << 16) | (b8(c.g) << 8) | b8(c.b);
}

// A cairo surface with one device pixel per array element, filled by color_of(i, j).
template <class F>
cairo_surface_t* make_surface(std::size_t h, std::size_t w, F color_of) {
  cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, int(w), int(h));
  cairo_surface_flush(s);
  unsigned char* data = cairo_image_surface_get_data(s);
  const int stride = cairo_image_surface_get_stride(s);
  for (std::size_t i = 0; i < h; ++i) {
    auto* row = reinterpret_cast<std::uint32_t*>(data + std::ptrdiff_t(i) * stride);
    for (std::size_t j = 0; j < w; ++j) row[j] = argb(color_of(i, j));
  }
  cairo_surface_mark_dirty(s);
  return s;
}

// Paints surface s (w x h elements) stretched over d, nearest-neighbour, with the given alpha.
// cairo 1.16 writes no "image-rendering" hint into SVG, so a viewer would smooth a 28x28 image
// into a blur; on vector surfaces the pixels are therefore replicated into k x k blocks first,
// which leaves any smoothing only a 1/k-pixel fringe.
void paint_nearest(cairo_t* cr, cairo_surface_t* s, const Rect& d, double alpha) {
  const int sw = cairo_image_surface_get_width(s), sh = cairo_image_surface_get_height(s);
  cairo_surface_t* src = cairo_surface_reference(s);
  if (cairo_surface_get_type(cairo_get_target(cr)) != CAIRO_SURFACE_TYPE_IMAGE) {
    const int k = std::clamp(int(std::ceil(2 * d.w / sw)), 1, 16);
    if (k > 1) {
      cairo_surface_destroy(src);
      src = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, sw * k, sh * k);
      cairo_t* up = cairo_create(src);
      cairo_scale(up, k, k);
      cairo_set_source_surface(up, s, 0, 0);
      cairo_pattern_set_filter(cairo_get_source(up), CAIRO_FILTER_NEAREST);
      cairo_paint(up);
      cairo_destroy(up);
    }
  }
  const double uw = cairo_image_surface_get_width(src), uh = cairo_image_surface_get_height(src);
  cairo_save(cr);
  cairo_rectangle(cr, d.x, d.y, d.w, d.h);
  cairo_clip(cr);
  cairo_translate(cr, d.x, d.y);
  cairo_scale(cr, d.w / uw, d.h / uh);
  cairo_set_source_surface(cr, src, 0, 0);
  cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
  cairo_paint_with_alpha(cr, alpha);
  cairo_restore(cr);
  cairo_surface_destroy(src);
}

class ImagePlot : public Plot {
 public:
  ImagePlot(xt::xarray<double> img, ImageOptions o, double lo, double hi)
      : img_(std::move(img)), o_(std::move(o)), lo_(lo), hi_(hi) {}

  std::size_t h() const { return img_.shape()[0]; }
  std::size_t w() const { return img_.shape()[1]; }

  Margins margins(Canvas& c, const Rect&, const TickLabelsShown&) const override {
    Margins m;
    if (!o_.caption.empty()) {
      c.font(font_size::axis_label);
      m.bottom = kCaptionGap + c.line_height();
    }
    return m;
  }

  Rect fit(const Rect& area) const override {  // square pixels
    const double s = std::min(area.w / double(w()), area.h / double(h()));
    const double fw = s * double(w()), fh = s * double(h());
    return {area.x + (area.w - fw) / 2, area.y + (area.h - fh) / 2, fw, fh};
  }

  void draw(Canvas& c, const Rect& d, const TickLabelsShown&) const override {
    const bool rgb = img_.dimension() == 3;
    cairo_surface_t* s = make_surface(h(), w(), [&](std::size_t i, std::size_t j) {
      return rgb ? Color{img_(i, j, 0), img_(i, j, 1), img_(i, j, 2)} : Color{img_(i, j), img_(i, j), img_(i, j)};
    });
    paint_nearest(c.cr(), s, d, 1.0);
    cairo_surface_destroy(s);
    if (o_.overlay) {
      const auto& ov = *o_.overlay;
      cairo_surface_t* so = make_surface(ov.shape()[0], ov.shape()[1], [&](std::size_t i, std::size_t j) {
        return o_.overlay_cmap.at(ov(i, j), lo_, hi_);
      });
      paint_nearest(c.cr(), so, d, o_.overlay_alpha);
      cairo_surface_destroy(so);
    }
    if (o_.grid > 0) {  // the patch boundaries, between the image's pixels
      const double px = d.w / double(w()), py = d.h / double(h());
      for (std::size_t j = o_.grid; j < w(); j += o_.grid) c.line(d.x + double(j) * px, d.y, d.x + double(j) * px, d.bottom(), o_.grid_color, 1.2);
      for (std::size_t i = o_.grid; i < h(); i += o_.grid) c.line(d.x, d.y + double(i) * py, d.right(), d.y + double(i) * py, o_.grid_color, 1.2);
    }
    c.stroke_rect(d, ink::axis, 0.8);
    if (!o_.caption.empty()) {
      c.font(font_size::axis_label);
      c.set_color(ink::text);
      c.text(o_.caption, d.cx(), d.bottom() + kCaptionGap, HAlign::center, VAlign::top);
    }
  }

 private:
  xt::xarray<double> img_;
  ImageOptions o_;
  double lo_, hi_;
};

}  // namespace

void image(Panel& p, const xt::xarray<double>& img, const ImageOptions& o) {
  const bool gray = img.dimension() == 2, rgb = img.dimension() == 3 && img.shape()[2] == 3;
  require(gray || rgb, "image", "expected a (H, W) grayscale or (H, W, 3) RGB image, got shape ",
          shape_text(img.shape()));
  require(img.size() > 0, "image", "empty image of shape ", shape_text(img.shape()));
  for (std::size_t k = 0; k < img.size(); ++k)
    require(std::isfinite(img.data()[k]), "image", "pixel value ", img.data()[k], " at flat index ", k,
            " of an image of shape ", shape_text(img.shape()), " is not finite");
  require(o.overlay_alpha >= 0 && o.overlay_alpha <= 1, "image", "overlay_alpha must be in [0, 1], got ",
          o.overlay_alpha);
  require(o.grid == 0 || (img.shape()[0] % o.grid == 0 && img.shape()[1] % o.grid == 0), "image", "a grid of ",
          o.grid, " pixels does not divide the image of shape ", shape_text(img.shape()));
  double lo = 0, hi = 1;
  if (o.overlay) {
    require(o.overlay->dimension() == 2 && o.overlay->size() > 0, "image",
            "the overlay must be a non-empty 2-D map, got shape ", shape_text(o.overlay->shape()));
    HeatmapOptions ho;
    ho.cmap = o.overlay_cmap;
    ho.vmin = o.overlay_vmin;
    ho.vmax = o.overlay_vmax;
    std::tie(lo, hi) = heatmap_range(*o.overlay, ho);
  }
  p.set_plot(std::make_shared<ImagePlot>(img, o, lo, hi));
}

Figure image_grid(const std::vector<xt::xarray<double>>& images, const std::vector<std::string>& captions,
                  const std::vector<xt::xarray<double>>& overlays, const ImageOptions& style,
                  const ImageGridOptions& g) {
  require(!images.empty(), "image_grid", "no images");
  require(captions.empty() || captions.size() == images.size(), "image_grid", captions.size(), " captions for ",
          images.size(), " images");
  require(overlays.empty() || overlays.size() == images.size(), "image_grid", overlays.size(), " overlays for ",
          images.size(), " images");
  require(g.cols > 0, "image_grid", "cols must be positive, got ", g.cols);
  const int cols = int(std::min<std::size_t>(images.size(), std::size_t(g.cols)));
  const int rows = int((images.size() + std::size_t(cols) - 1) / std::size_t(cols));
  Figure fig(g.width_px, g.height_px, rows, cols, g.scale);
  fig.title(g.title);
  for (std::size_t k = 0; k < images.size(); ++k) {
    ImageOptions o = style;
    if (!captions.empty()) o.caption = captions[k];
    if (!overlays.empty() && overlays[k].dimension() > 0 && overlays[k].size() > 0) o.overlay = overlays[k];
    image(fig.panel(int(k)), images[k], o);
  }
  return fig;
}

}  // namespace attnlab::plots
