#include "plots/canvas.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab::plots {

void TextLog::record(double size) {
  smallest = drawn == 0 ? size : std::min(smallest, size);
  ++drawn;
}

void Canvas::font(double size, bool bold) {
  cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr_, size);
}

double Canvas::text_width(const std::string& s) const {
  cairo_text_extents_t e;
  cairo_text_extents(cr_, s.c_str(), &e);
  return e.x_advance;
}

double Canvas::line_height() const {
  cairo_font_extents_t f;
  cairo_font_extents(cr_, &f);
  return f.ascent + f.descent;
}

void Canvas::text(const std::string& s, double x, double y, HAlign h, VAlign v, double angle_deg) {
  cairo_font_extents_t f;
  cairo_font_extents(cr_, &f);
  const double w = text_width(s);
  double dx = h == HAlign::left ? 0 : h == HAlign::center ? -w / 2 : -w;
  // Offsets from the anchor to the baseline (cairo's y grows downwards).
  double dy = 0;
  switch (v) {
    case VAlign::top: dy = f.ascent; break;
    case VAlign::middle: dy = (f.ascent - f.descent) / 2; break;
    case VAlign::baseline: dy = 0; break;
    case VAlign::bottom: dy = -f.descent; break;
  }
  if (log_ && !s.empty()) {
    cairo_matrix_t m;
    cairo_get_font_matrix(cr_, &m);  // the size set by font(): a scale, unrotated (rotation is the context's)
    log_->record(std::hypot(m.xx, m.yx));
  }
  cairo_save(cr_);
  cairo_translate(cr_, x, y);
  if (angle_deg != 0) cairo_rotate(cr_, -angle_deg * M_PI / 180.0);
  cairo_move_to(cr_, dx, dy);
  cairo_show_text(cr_, s.c_str());
  cairo_new_path(cr_);
  cairo_restore(cr_);
}

void Canvas::set_color(const Color& c) { cairo_set_source_rgba(cr_, c.r, c.g, c.b, c.a); }

void Canvas::fill_rect(const Rect& r, const Color& c) {
  set_color(c);
  cairo_rectangle(cr_, r.x, r.y, r.w, r.h);
  cairo_fill(cr_);
}

void Canvas::stroke_rect(const Rect& r, const Color& c, double width) {
  set_color(c);
  cairo_set_line_width(cr_, width);
  cairo_rectangle(cr_, r.x, r.y, r.w, r.h);
  cairo_stroke(cr_);
}

void Canvas::line(double x0, double y0, double x1, double y1, const Color& c, double width) {
  set_color(c);
  cairo_set_line_width(cr_, width);
  cairo_move_to(cr_, x0, y0);
  cairo_line_to(cr_, x1, y1);
  cairo_stroke(cr_);
}

}  // namespace attnlab::plots
