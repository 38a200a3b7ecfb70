// A PNG file as grey levels, read with cairo (the library the figures are drawn with): any PNG
// cairo reads (grey, RGB, palette, with or without alpha, 8 or 16 bits) comes back as (height,
// width) values in [0, 1]. A transparent pixel is composited over white, as an image viewer shows
// it; the grey level of a colour is its luma, 0.299 R + 0.587 G + 0.114 B (ITU-R BT.601).
#pragma once

#include <string>

#include <xtensor/xarray.hpp>

namespace attnlab::plots {

// IoError (io/files.hpp) naming the file and cairo's reason when it cannot be read as a PNG.
xt::xarray<double> read_png_grey(const std::string& path);

}  // namespace attnlab::plots
