#include "plots/legend.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "plots/error.hpp"

namespace attnlab::plots {

namespace {
constexpr double kSample = 22, kPad = 7, kGap = 6, kInset = 8, kRowPitch = 1.25;
}

LegendPlacement place_legend(Canvas& c, const Rect& d, const std::vector<LegendEntry>& entries, const Points& points) {
  c.font(font_size::legend);
  const double h = c.line_height();
  double w = 0;
  for (const auto& e : entries) w = std::max(w, c.text_width(e.name));
  const double bw = kPad + kSample + kGap + w + kPad;
  const double bh = kPad + h * kRowPitch * double(entries.size()) - h * (kRowPitch - 1) + kPad;
  const Rect corners[4] = {{d.right() - kInset - bw, d.y + kInset, bw, bh},
                           {d.x + kInset, d.y + kInset, bw, bh},
                           {d.right() - kInset - bw, d.bottom() - kInset - bh, bw, bh},
                           {d.x + kInset, d.bottom() - kInset - bh, bw, bh}};
  for (const Rect& r : corners) {
    if (r.w > d.w - 2 * kInset || r.h > d.h - 2 * kInset) break;
    const bool hides = std::any_of(points.begin(), points.end(), [&](const auto& p) {
      return p.first >= r.x - 5 && p.first <= r.right() + 5 && p.second >= r.y - 5 && p.second <= r.bottom() + 5;
    });
    if (!hides) return {false, r};
  }
  return {true, {d.right() + kLegendOutsideGap, d.y, bw, bh}};
}

namespace {
bool drawn_alike(const LegendEntry& a, const LegendEntry& b) {
  const auto rgb = [](const Color& c) { return std::array<long, 4>{std::lround(c.r * 255), std::lround(c.g * 255),
                                                                   std::lround(c.b * 255), std::lround(c.a * 255)}; };
  return rgb(a.color) == rgb(b.color) && a.line == b.line && (!a.line || (a.marker == b.marker && a.dashed == b.dashed));
}
}  // namespace

void draw_legend(Canvas& c, const Rect& box, const std::vector<LegendEntry>& entries) {
  if (entries.empty()) return;
  // A legend whose entries look the same names nothing: the reader cannot tell which is which.
  for (std::size_t i = 0; i < entries.size(); ++i)
    for (std::size_t j = i + 1; j < entries.size(); ++j)
      if (drawn_alike(entries[i], entries[j]))
        fail("legend", "entries \"", entries[i].name, "\" and \"", entries[j].name,
             "\" are drawn alike (one color, one line style): give one another color, a dash or markers");
  c.font(font_size::legend);
  const double h = c.line_height();
  c.fill_rect(box, Color{1, 1, 1, 0.9});
  c.stroke_rect(box, Color{0.8, 0.8, 0.8}, 0.8);
  cairo_t* cr = c.cr();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    const double cy = box.y + kPad + h * kRowPitch * double(i) + h / 2;
    const double x0 = box.x + kPad;
    if (e.line) {
      cairo_save(cr);
      if (e.dashed) {
        const double dash[] = {5, 3};
        cairo_set_dash(cr, dash, 2, 0);
      }
      c.line(x0, cy, x0 + kSample, cy, e.color, 2.0);
      cairo_restore(cr);
      if (e.marker) {
        c.set_color(e.color);
        cairo_arc(cr, x0 + kSample / 2, cy, 3.2, 0, 2 * M_PI);
        cairo_fill(cr);
      }
    } else {
      c.fill_rect({x0 + kSample / 2 - h * 0.4, cy - h * 0.4, h * 0.8, h * 0.8}, e.color);
    }
    c.set_color(ink::text);
    c.text(e.name, x0 + kSample + kGap, cy, HAlign::left, VAlign::middle);
  }
}

}  // namespace attnlab::plots
