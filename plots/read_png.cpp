#include "plots/read_png.hpp"

#include <xtensor/xbuilder.hpp>

#include "io/files.hpp"
#include "plots/cairo_handles.hpp"

namespace attnlab::plots {

xt::xarray<double> read_png_grey(const std::string& path) {
  // cairo opens the file itself and reports a missing one as a status; read_file first so that a
  // missing or unreadable file gets the same message as everywhere else.
  read_file(path, "read_png_grey");
  Surface png(cairo_image_surface_create_from_png(path.c_str()));
  if (const cairo_status_t st = cairo_surface_status(png.get()); st != CAIRO_STATUS_SUCCESS)
    throw IoError("read_png_grey: '" + path + "' is not a PNG cairo can read: " + cairo_status_to_string(st));
  const int w = cairo_image_surface_get_width(png.get()), h = cairo_image_surface_get_height(png.get());
  if (w <= 0 || h <= 0) throw IoError("read_png_grey: '" + path + "' has no pixels");
  // Whatever format cairo chose for the file, paint it over white into one 24-bit RGB surface.
  Surface rgb(cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h));
  if (cairo_surface_status(rgb.get()) != CAIRO_STATUS_SUCCESS)
    throw IoError("read_png_grey: '" + path + "': no memory for " + std::to_string(w) + " x " + std::to_string(h) + " pixels");
  {
    const Context cr = context_on(rgb);
    cairo_set_source_rgb(cr.get(), 1, 1, 1);
    cairo_paint(cr.get());
    cairo_set_source_surface(cr.get(), png.get(), 0, 0);
    cairo_paint(cr.get());
  }
  cairo_surface_flush(rgb.get());
  const unsigned char* data = cairo_image_surface_get_data(rgb.get());
  const int stride = cairo_image_surface_get_stride(rgb.get());
  xt::xarray<double> grey = xt::zeros<double>({std::size_t(h), std::size_t(w)});
  for (int y = 0; y < h; ++y) {
    const auto* row = reinterpret_cast<const std::uint32_t*>(data + std::size_t(y) * std::size_t(stride));
    for (int x = 0; x < w; ++x) {
      const std::uint32_t p = row[x];  // native-endian xRGB
      const double r = double((p >> 16) & 0xff), g = double((p >> 8) & 0xff), b = double(p & 0xff);
      grey(std::size_t(y), std::size_t(x)) = (0.299 * r + 0.587 * g + 0.114 * b) / 255.0;
    }
  }
  return grey;
}

}  // namespace attnlab::plots
