// Everything of the figures library in one include.
#pragma once

#include "plots/bar.hpp"
#include "plots/color.hpp"
#include "plots/colormap.hpp"
#include "plots/error.hpp"
#include "plots/figure.hpp"
#include "plots/graph.hpp"
#include "plots/heatmap.hpp"
#include "plots/image.hpp"
#include "plots/line.hpp"
#include "plots/ticks.hpp"
