// Gradients computed by hand beside their distance from central differences, one row of panels
// per gradient: lesson 06 draws dV, dA, dS, dQ and dK this way.
#pragma once

#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "plots/figure.hpp"

namespace attnlab::lessons {

struct HandGradient {
  std::string name;                              // "dQ"
  xt::xarray<double> hand, differences;          // the same shape: by hand, and by central differences
  std::vector<std::string> rows, columns;        // tick labels ("q1", ..., "c1", ...)
};

// Left: the hand gradient (red-blue, centred on 0); right: |hand - differences| scaled by 1e12
// (viridis from 0, its colour bar labelled "× 1e-12"). 1500 px wide, 520 px per gradient.
// std::invalid_argument naming hand_gradients_figure for no gradients or a gradient whose two
// matrices differ in shape; the plots library names tick labels that do not fit.
plots::Figure hand_gradients_figure(const std::string& title, const std::vector<HandGradient>& gradients);

}  // namespace attnlab::lessons
