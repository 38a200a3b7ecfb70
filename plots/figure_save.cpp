// Figure::save: one drawing routine, three cairo surfaces, and an atomic write (io/files.hpp):
// readers see the old file or the new one, never half of one, and a failure leaves neither a
// partial file nor the temporary.
#include <algorithm>
#include <string>

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>

#include "io/files.hpp"
#include "plots/cairo_handles.hpp"
#include "plots/error.hpp"
#include "plots/figure.hpp"

namespace attnlab::plots {

namespace {

std::string extension_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
  return ext;
}

// cairo's write callback: each chunk of the encoded file goes into the AtomicFile. A failed write
// is remembered and reported as cairo's write error; the temporary is removed with the AtomicFile.
struct Sink {
  AtomicFile& file;
  std::string error;
  static cairo_status_t write(void* closure, const unsigned char* data, unsigned int length) {
    auto* self = static_cast<Sink*>(closure);
    try {
      self->file.write(data, length);
      return CAIRO_STATUS_SUCCESS;
    } catch (const IoError& e) {
      self->error = e.what();
      return CAIRO_STATUS_WRITE_ERROR;
    }
  }
};

// Renders onto a fresh vector surface and returns the status once the surface is finished
// (cairo writes SVG and PDF output on finish).
cairo_status_t render_vector(const Figure& fig, Surface surface, TextLog* log) {
  cairo_status_t st;
  {
    const Context cr = context_on(surface);
    fig.render(cr.get(), log);
    st = cairo_status(cr.get());
  }
  cairo_surface_finish(surface.get());
  if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(surface.get());
  return st;
}

}  // namespace

void Figure::save(const std::string& path, TextLog* log) const {
  const std::string ext = extension_of(path);
  require(ext == "png" || ext == "svg" || ext == "pdf", "Figure::save", "unknown format of \"", path,
          "\": the extension must be .png, .svg or .pdf");
  try {
    AtomicFile file(path, "Figure::save");
    Sink sink{file, ""};
    cairo_status_t st;
    if (ext == "png") {
      const Surface s(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width_px_, height_px_));
      {
        const Context cr = context_on(s);
        cairo_scale(cr.get(), scale_, scale_);
        render(cr.get(), log);
        st = cairo_status(cr.get());
      }
      if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_write_to_png_stream(s.get(), &Sink::write, &sink);
    } else if (ext == "svg") {
      Surface s(cairo_svg_surface_create_for_stream(&Sink::write, &sink, width(), height()));
      cairo_svg_surface_set_document_unit(s.get(), CAIRO_SVG_UNIT_PX);
      st = render_vector(*this, std::move(s), log);
    } else {
      st = render_vector(*this, Surface(cairo_pdf_surface_create_for_stream(&Sink::write, &sink, width(), height())), log);
    }
    if (!sink.error.empty()) throw IoError(sink.error);
    if (st != CAIRO_STATUS_SUCCESS) fail("Figure::save", "cannot draw \"", path, "\": ", cairo_status_to_string(st));
    file.commit();
  } catch (const IoError& e) {
    throw PlotError(e.what());  // as every other failure of the figures library
  }
}

}  // namespace attnlab::plots
