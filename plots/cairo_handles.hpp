// cairo's surfaces and contexts owned like any C++ value: destroyed when they go out of scope, so
// an exception thrown while drawing (a PlotError from a legend, say) leaks neither.
#pragma once

#include <memory>

#include <cairo.h>

namespace attnlab::plots {

struct SurfaceCloser {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct ContextCloser {
  void operator()(cairo_t* cr) const { cairo_destroy(cr); }
};
using Surface = std::unique_ptr<cairo_surface_t, SurfaceCloser>;
using Context = std::unique_ptr<cairo_t, ContextCloser>;

// A context drawing onto s.
inline Context context_on(const Surface& s) { return Context(cairo_create(s.get())); }

}  // namespace attnlab::plots
