// Figure::save: one drawing routine, three cairo surfaces, and an atomic write.
// The file is first written to ".<name>.tmp-XXXXXX" in the destination folder (mkstemp), then
// renamed over the destination, which POSIX makes atomic within one file system: readers see the
// old file or the new one, never half of one, and a failure removes the temporary.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <sys/stat.h>
#include <unistd.h>

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

// The temporary file and its clean-up on every failure path.
class TempFile {
 public:
  explicit TempFile(const std::string& path) : dest_(path) {
    const auto slash = path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    require(!base.empty(), "Figure::save", "no file name in \"", path, "\"");
    name_ = dir + "/." + base + ".tmp-XXXXXX";
    const int fd = mkstemp(name_.data());
    if (fd < 0) fail("Figure::save", "cannot write \"", path, "\": ", std::strerror(errno));
    fchmod(fd, 0644);  // mkstemp creates 0600; figures are meant to be shared
    file_ = fdopen(fd, "wb");
    if (!file_) {
      const int err = errno;
      close(fd);
      std::remove(name_.c_str());
      fail("Figure::save", "cannot write \"", path, "\": ", std::strerror(err));
    }
  }
  ~TempFile() {
    if (file_) std::fclose(file_);
    if (!committed_) std::remove(name_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  static cairo_status_t write(void* closure, const unsigned char* data, unsigned int length) {
    auto* self = static_cast<TempFile*>(closure);
    if (std::fwrite(data, 1, length, self->file_) != length) {
      self->errno_ = errno;
      return CAIRO_STATUS_WRITE_ERROR;
    }
    return CAIRO_STATUS_SUCCESS;
  }

  void commit(cairo_status_t status) {
    if (status != CAIRO_STATUS_SUCCESS)
      fail("Figure::save", "cannot write \"", dest_, "\": ",
           errno_ ? std::strerror(errno_) : cairo_status_to_string(status));
    FILE* f = file_;
    file_ = nullptr;
    if (std::fflush(f) != 0 || fsync(fileno(f)) != 0) {
      const int err = errno;
      std::fclose(f);
      fail("Figure::save", "cannot write \"", dest_, "\": ", std::strerror(err));
    }
    if (std::fclose(f) != 0) fail("Figure::save", "cannot write \"", dest_, "\": ", std::strerror(errno));
    if (std::rename(name_.c_str(), dest_.c_str()) != 0)
      fail("Figure::save", "cannot rename the temporary file onto \"", dest_, "\": ", std::strerror(errno));
    committed_ = true;
  }

 private:
  std::string dest_, name_;
  FILE* file_ = nullptr;
  int errno_ = 0;
  bool committed_ = false;
};

// Renders onto a fresh vector surface and returns the status once the surface is finished
// (cairo writes SVG and PDF output on finish).
cairo_status_t render_vector(const Figure& fig, cairo_surface_t* surface) {
  cairo_t* cr = cairo_create(surface);
  fig.render(cr);
  cairo_status_t st = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_finish(surface);
  if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(surface);
  cairo_surface_destroy(surface);
  return st;
}

}  // namespace

void Figure::save(const std::string& path) const {
  const std::string ext = extension_of(path);
  require(ext == "png" || ext == "svg" || ext == "pdf", "Figure::save", "unknown format of \"", path,
          "\": the extension must be .png, .svg or .pdf");
  TempFile tmp(path);
  cairo_status_t st;
  if (ext == "png") {
    cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width_px_, height_px_);
    cairo_t* cr = cairo_create(s);
    cairo_scale(cr, scale_, scale_);
    render(cr);
    st = cairo_status(cr);
    cairo_destroy(cr);
    if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_write_to_png_stream(s, &TempFile::write, &tmp);
    cairo_surface_destroy(s);
  } else if (ext == "svg") {
    cairo_surface_t* s = cairo_svg_surface_create_for_stream(&TempFile::write, &tmp, width(), height());
    cairo_svg_surface_set_document_unit(s, CAIRO_SVG_UNIT_PX);
    st = render_vector(*this, s);
  } else {
    st = render_vector(*this, cairo_pdf_surface_create_for_stream(&TempFile::write, &tmp, width(), height()));
  }
  tmp.commit(st);
}

}  // namespace attnlab::plots
