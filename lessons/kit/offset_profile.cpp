#include "lessons/kit/offset_profile.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <xtensor/xview.hpp>

#include "core/error.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/kit/heads.hpp"

namespace attnlab::lessons {

double OffsetProfile::at(std::size_t head, long offset) const {
  const long L = long(length);
  if (head >= weight.shape()[0] || offset <= -L || offset >= L)
    throw std::out_of_range("OffsetProfile::at: head " + std::to_string(head) + " at offset " + std::to_string(offset) +
                            " is outside " + std::to_string(weight.shape()[0]) + " heads and offsets -" +
                            std::to_string(L - 1) + " .. " + std::to_string(L - 1));
  return weight(head, std::size_t(offset + L - 1));
}

std::pair<long, double> OffsetProfile::peak(std::size_t head) const {
  const xt::xarray<double> r = xt::view(weight, head);
  const std::size_t at = std::size_t(std::max_element(r.begin(), r.end()) - r.begin());
  return {long(at) - long(length) + 1, r(at)};
}

std::size_t OffsetProfile::offsets_peaked(const std::vector<std::size_t>& offsets) const {
  std::size_t n = 0;
  for (std::size_t o : offsets) {
    bool some = false;
    for (std::size_t h = 0; h < weight.shape()[0]; ++h) some = some || peak(h).first == long(o);
    n += some;
  }
  return n;
}

std::size_t OffsetProfile::offsets_above(const std::vector<std::size_t>& offsets, double share) const {
  std::size_t n = 0;
  for (std::size_t o : offsets) {
    bool some = false;
    for (std::size_t h = 0; h < weight.shape()[0]; ++h) some = some || at(h, long(o)) > share;
    n += some;
  }
  return n;
}

std::vector<std::string> OffsetProfile::offset_labels(std::size_t every) const {
  std::vector<std::string> out;
  for (long o = -long(length) + 1; o < long(length); ++o)
    out.push_back(every > 0 && o % long(every) == 0 ? std::to_string(o) : "");
  return out;
}

OffsetProfile offset_profile(const Array<float>& w) {
  check(w.dimension() == 4 && w.shape()[2] == w.shape()[3], "offset_profile", "weights must be (B, h, L, L), got ",
        shape_str(w.shape()));
  const std::size_t heads = w.shape()[1], L = w.shape()[2];
  OffsetProfile p{xt::zeros<double>({heads, 2 * L - 1}), L};
  for (long o = -long(L) + 1; o < long(L); ++o) {
    const std::vector<double> mass = offset_mass(w, o);
    for (std::size_t h = 0; h < heads; ++h) p.weight(h, std::size_t(o + long(L) - 1)) = mass[h];
  }
  return p;
}

plots::Figure offset_profiles_figure(const std::vector<OffsetProfile>& profiles, const std::vector<std::string>& head_labels,
                                     const std::string& title, std::size_t every, int width, int height) {
  std::size_t rows = 0;
  for (const OffsetProfile& p : profiles) {
    if (p.length != profiles.front().length)
      throw std::invalid_argument("offset_profiles_figure: profiles of lengths " + std::to_string(profiles.front().length) +
                                  " and " + std::to_string(p.length) + " in '" + title + "'");
    rows += p.weight.shape()[0];
  }
  if (profiles.empty() || head_labels.size() != rows)
    throw std::invalid_argument("offset_profiles_figure: " + std::to_string(head_labels.size()) + " labels for " +
                                std::to_string(rows) + " heads in " + std::to_string(profiles.size()) +
                                " profiles of '" + title + "'");
  xt::xarray<double> all = xt::zeros<double>({rows, profiles.front().weight.shape()[1]});
  std::size_t row = 0;
  for (const OffsetProfile& p : profiles)
    for (std::size_t h = 0; h < p.weight.shape()[0]; ++h, ++row) xt::view(all, row) = xt::view(p.weight, h);
  plots::Figure fig(width, height);
  fig.title(title);
  plots::HeatmapOptions o = attention_style(profiles.front().offset_labels(every), head_labels);
  o.colorbar = true, o.colorbar_label = "mean attention weight", o.square_cells = false;
  plots::heatmap(fig.panel(0).xlabel("offset i − j (keys to the left: i − j > 0)").ylabel("model and head"), all, o);
  return fig;
}

double NearOffsets::at(std::size_t row, long offset) const {
  if (row >= weight.shape()[0] || offset < -reach || offset > reach)
    throw std::out_of_range("NearOffsets::at: row " + std::to_string(row) + " at offset " + std::to_string(offset) +
                            " is outside " + std::to_string(weight.shape()[0]) + " rows and offsets -" +
                            std::to_string(reach) + " .. " + std::to_string(reach));
  return weight(row, std::size_t(offset + reach));
}

std::size_t NearOffsets::sharpest(long offset) const {
  std::size_t best = 0;
  for (std::size_t k = 0; k < weight.shape()[0]; ++k)
    if (at(k, offset) > at(best, offset)) best = k;
  return best;
}

std::vector<std::string> NearOffsets::offset_labels() const {
  std::vector<std::string> out;
  for (long o = -reach; o <= reach; ++o) out.push_back(o > 0 ? "+" + std::to_string(o) : std::to_string(o));
  return out;
}

NearOffsets near_offsets(const std::vector<Tensor<float>>& layers, long reach) {
  if (layers.empty() || reach < 1)
    throw std::invalid_argument("near_offsets: " + std::to_string(layers.size()) + " layers at reach " +
                                std::to_string(reach) + " (need a layer and a reach of 1 or more)");
  const std::size_t L = layers.size(), H = layers[0].value().dimension() == 4 ? layers[0].value().shape()[1] : 0;
  NearOffsets n{xt::zeros<double>({L * H, std::size_t(2 * reach + 1)}), {}, reach};
  for (std::size_t l = 0; l < L; ++l) {
    const Array<float>& w = layers[l].value();
    check(w.dimension() == 4 && w.shape()[2] == w.shape()[3] && w.shape()[1] == H, "near_offsets", "layer ", l + 1,
          "'s weights must be (B, ", H, ", L, L), got ", shape_str(w.shape()));
    for (long o = -reach; o <= reach; ++o) {
      // offset_mass counts keys `offset` places to the left of the query; the table puts the left
      // (earlier tokens) at negative offsets.
      const std::vector<double> m = offset_mass(w, -o);
      for (std::size_t h = 0; h < H; ++h) n.weight(l * H + h, std::size_t(o + reach)) = m[h];
    }
    for (std::size_t h = 0; h < H; ++h) n.heads.push_back("layer " + std::to_string(l + 1) + ", head " + std::to_string(h + 1));
  }
  return n;
}

plots::Figure near_offsets_figure(const NearOffsets& near, const std::string& title) {
  plots::HeatmapOptions ho;
  ho.x_labels = near.offset_labels();
  ho.y_labels = near.heads;
  ho.vmin = 0.0;
  ho.colorbar_label = "mean attention weight";
  ho.square_cells = false;
  ho.annotate = true;
  HeatmapFigureOptions hs;
  hs.title = title;
  hs.xlabel = "key position minus query position (negative: to the left)";
  hs.width = 1900;
  hs.height = int(250 + 95 * near.heads.size());
  return heatmap_figure(near.weight, ho, hs);
}

}  // namespace attnlab::lessons
