#include "lessons/kit/hand_gradients_figure.hpp"

#include <stdexcept>

#include <xtensor/xmath.hpp>

#include "core/array.hpp"
#include "plots/heatmap.hpp"

namespace attnlab::lessons {

plots::Figure hand_gradients_figure(const std::string& title, const std::vector<HandGradient>& gradients) {
  if (gradients.empty()) throw std::invalid_argument("hand_gradients_figure: no gradients to draw");
  for (const HandGradient& g : gradients)
    if (g.hand.shape() != g.differences.shape())
      throw std::invalid_argument("hand_gradients_figure: " + g.name + " by hand is " + shape_str(g.hand.shape()) +
                                  " but by differences " + shape_str(g.differences.shape()));
  const int n = int(gradients.size());
  plots::Figure fig(1500, 520 * n, n, 2);
  fig.title(title);
  for (int i = 0; i < n; ++i) {
    const HandGradient& g = gradients[std::size_t(i)];
    plots::HeatmapOptions left;
    left.cmap = plots::Colormap::rdbu(), left.y_labels = g.rows, left.x_labels = g.columns;
    plots::heatmap(fig.panel(i, 0).title(g.name), g.hand, left);
    plots::HeatmapOptions right = left;
    right.cmap = plots::Colormap::viridis(), right.vmin = 0.0, right.colorbar_label = "× 1e-12";
    plots::heatmap(fig.panel(i, 1).title("|" + g.name + " − differences|"), xt::abs(g.hand - g.differences) * 1e12, right);
  }
  return fig;
}

}  // namespace attnlab::lessons
