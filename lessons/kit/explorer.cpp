#include "lessons/kit/explorer.hpp"

#include <algorithm>
#include <limits>

#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "io/files.hpp"
#include "lessons/kit/explorer_script.hpp"
#include "lessons/story/lesson.hpp"

namespace attnlab::lessons {

namespace {

using Json = nlohmann::ordered_json;

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// v to four significant digits: the page's q, k and bias (their products are recomputed in the page).
// The power of ten it scales by is exact, so the result is the double nearest the rounded decimal,
// which the JSON writes in full as that decimal ("-0.1191", not "-0.11910000000000001").
double four_digits(double v) {
  if (v == 0.0 || !std::isfinite(v)) return v;
  const int e = int(std::floor(std::log10(std::abs(v)))) - 3;
  const double p = std::pow(10.0, std::abs(e));
  return e < 0 ? std::round(v * p) / p : std::round(v / p) * p;
}

std::string shape_of(const xt::xarray<double>& a) {
  if (a.dimension() != 2) return "(not 2-D)";
  return "(" + std::to_string(a.shape(0)) + ", " + std::to_string(a.shape(1)) + ")";
}

// Layer l's queries, keys and bias for the neuron view, per head: {"q": rows, "k": rows, "scale",
// "bias": rows (only with a finite nonzero entry), "allowed": a string of 0 and 1 per query (only
// with a masked key)}. Before anything is written, the softmax of the scores they make is checked
// against the head's weights: a neuron view that explains other weights than the head view's
// would teach the wrong thing.
template <class Fail>
Json parts_json(const AttentionInput& in, std::size_t l, const Fail& fail) {
  const std::size_t H = in.heads[l].size(), n = in.queries.size(), m = in.keys.size();
  if (in.q[l].size() != H || in.k[l].size() != H || (!in.bias.empty() && in.bias[l].size() != H))
    fail("layer '" + in.layers[l] + "': queries, keys and bias for " + std::to_string(in.q[l].size()) + ", " +
         std::to_string(in.k[l].size()) + " and " + std::to_string(in.bias.empty() ? 0 : in.bias[l].size()) +
         " heads of " + std::to_string(H));
  Json parts = Json::array();
  for (std::size_t h = 0; h < H; ++h) {
    const std::string where = "layer '" + in.layers[l] + "', head " + std::to_string(h + 1);
    const xt::xarray<double>&q = in.q[l][h], &k = in.k[l][h];
    const std::size_t dk = q.dimension() == 2 ? q.shape(1) : 0;
    if (q.dimension() != 2 || k.dimension() != 2 || q.shape(0) != n || k.shape(0) != m || dk == 0 || k.shape(1) != dk)
      fail(where + ": queries " + shape_of(q) + " and keys " + shape_of(k) + " for " + std::to_string(n) + " queries and " +
           std::to_string(m) + " keys (each (tokens, d_k), one d_k)");
    if (!xt::all(xt::isfinite(q)) || !xt::all(xt::isfinite(k))) fail(where + ": a query or key value is not finite");
    const bool has_bias = !in.bias.empty();
    if (has_bias && (in.bias[l][h].dimension() != 2 || in.bias[l][h].shape(0) != n || in.bias[l][h].shape(1) != m))
      fail(where + ": bias " + shape_of(in.bias[l][h]) + " for " + std::to_string(n) + " queries and " + std::to_string(m) +
           " keys");
    const double scale = !in.layer_scale.empty() ? in.layer_scale[l]
                         : in.scale > 0.0        ? in.scale
                                                 : 1.0 / std::sqrt(double(dk));
    auto bias = [&](std::size_t i, std::size_t j) { return has_bias ? in.bias[l][h](i, j) : 0.0; };
    bool masked = false, biased = false;
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<double> score(m);
      double top = -std::numeric_limits<double>::infinity(), total = 0.0;
      for (std::size_t j = 0; j < m; ++j) {
        const double b = bias(i, j);
        if (std::isnan(b) || b == std::numeric_limits<double>::infinity())
          fail(where + ": bias (" + std::to_string(i) + ", " + std::to_string(j) + ") = " + std::to_string(b) +
               " (a bias is finite, or -inf for a masked key)");
        masked = masked || std::isinf(b), biased = biased || (std::isfinite(b) && b != 0.0);
        score[j] = double(xt::sum(xt::row(q, long(i)) * xt::row(k, long(j)))()) * scale + b;
        top = std::max(top, score[j]);
      }
      for (double& s : score) total += s = std::isinf(s) ? 0.0 : std::exp(s - top);
      for (std::size_t j = 0; j < m; ++j) {
        const double rebuilt = total > 0.0 ? score[j] / total : 0.0, weight = in.heads[l][h](i, j);
        if (std::abs(rebuilt - weight) > 1e-3)
          fail(where + ": the softmax of q.k * scale + bias gives " + std::to_string(rebuilt) + " at (" + std::to_string(i) +
               ", " + std::to_string(j) + "), the weights say " + std::to_string(weight));
      }
    }
    auto rows = [](const xt::xarray<double>& a) {
      Json out = Json::array();
      for (std::size_t i = 0; i < a.shape(0); ++i) {
        Json row = Json::array();
        for (std::size_t c = 0; c < a.shape(1); ++c) row.push_back(four_digits(a(i, c)));
        out.push_back(std::move(row));
      }
      return out;
    };
    Json part = {{"q", rows(q)}, {"k", rows(k)}, {"scale", scale}};
    if (biased) {
      Json b = Json::array();
      for (std::size_t i = 0; i < n; ++i) {
        Json row = Json::array();
        for (std::size_t j = 0; j < m; ++j) row.push_back(std::isinf(bias(i, j)) ? 0.0 : four_digits(bias(i, j)));
        b.push_back(std::move(row));
      }
      part["bias"] = std::move(b);
    }
    if (masked) {
      Json allowed = Json::array();
      for (std::size_t i = 0; i < n; ++i) {
        std::string row(m, '1');
        for (std::size_t j = 0; j < m; ++j)
          if (std::isinf(bias(i, j))) row[j] = '0';
        allowed.push_back(std::move(row));
      }
      part["allowed"] = std::move(allowed);
    }
    parts.push_back(std::move(part));
  }
  return parts;
}

// Layer l's gradients for the gradient view, per head: {"dA": rows, "dS": rows}, in full precision
// (the page recomputes dS = A (dA - D) from its A and dA and sets it beside this dS). Checked first:
// a dS that is not the softmax backward of this dA and these weights would teach the wrong rule.
template <class Fail>
Json grads_json(const AttentionInput& in, std::size_t l, const Fail& fail) {
  const std::size_t H = in.heads[l].size(), n = in.queries.size(), m = in.keys.size();
  if (in.weight_grad[l].size() != H || in.score_grad[l].size() != H)
    fail("layer '" + in.layers[l] + "': dA and dS for " + std::to_string(in.weight_grad[l].size()) + " and " +
         std::to_string(in.score_grad[l].size()) + " heads of " + std::to_string(H));
  auto rows = [](const xt::xarray<double>& a) {
    Json out = Json::array();
    for (std::size_t i = 0; i < a.shape(0); ++i) {
      Json row = Json::array();
      for (std::size_t j = 0; j < a.shape(1); ++j) row.push_back(a(i, j));
      out.push_back(std::move(row));
    }
    return out;
  };
  Json grads = Json::array();
  for (std::size_t h = 0; h < H; ++h) {
    const std::string where = "layer '" + in.layers[l] + "', head " + std::to_string(h + 1);
    const xt::xarray<double>&A = in.heads[l][h], &dA = in.weight_grad[l][h], &dS = in.score_grad[l][h];
    for (const xt::xarray<double>* g : {&dA, &dS})
      if (g->dimension() != 2 || g->shape(0) != n || g->shape(1) != m || !xt::all(xt::isfinite(*g)))
        fail(where + ": " + (g == &dA ? "dA " : "dS ") + shape_of(*g) + " for " + std::to_string(n) + " queries and " +
             std::to_string(m) + " keys, every value finite");
    for (std::size_t i = 0; i < n; ++i) {
      double D = 0.0, top = 0.0;  // D = sum_j A_ij dA_ij; top = max_j |dA_ij|
      for (std::size_t j = 0; j < m; ++j) D += A(i, j) * dA(i, j), top = std::max(top, std::abs(dA(i, j)));
      for (std::size_t j = 0; j < m; ++j)
        if (std::abs(A(i, j) * (dA(i, j) - D) - dS(i, j)) > 1e-6 * top + 1e-9)
          fail(where + ": A (dA - D) = " + std::to_string(A(i, j) * (dA(i, j) - D)) + " at (" + std::to_string(i) + ", " +
               std::to_string(j) + "), dS says " + std::to_string(dS(i, j)));
    }
    grads.push_back({{"dA", rows(dA)}, {"dS", rows(dS)}});
  }
  return grads;
}

// Layer l's key/value heads g (grouped-query attention), checked: g divides the heads, and the heads
// of one group, when the page has their keys, have the same keys: a page that says they share one
// key head must show one.
template <class Fail>
std::size_t kv_heads_of(const AttentionInput& in, std::size_t l, bool without_parts, const Fail& fail) {
  const std::size_t g = in.kv_heads[l], H = in.heads[l].size();
  if (g == 0 || H % g != 0)
    fail("layer '" + in.layers[l] + "': " + std::to_string(g) + " key/value heads for " + std::to_string(H) +
         " query heads (a divisor of them)");
  if (in.q.empty() || without_parts) return g;
  for (std::size_t h = 0; h < H; ++h) {
    const std::size_t first = h / (H / g) * (H / g);  // the group's first head
    if (!(in.k[l][h] == in.k[l][first]))
      fail("layer '" + in.layers[l] + "': heads " + std::to_string(first + 1) + " and " + std::to_string(h + 1) +
           " share key/value head " + std::to_string(h / (H / g) + 1) + " but their keys differ");
  }
  return g;
}

// Every matrix checked against its tokens before anything is written: a page that draws the
// wrong rows is worse than no page.
Json input_json(const AttentionInput& in) {
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("explorer: input '" + in.name + "': " + what);
  };
  if (in.queries.empty() || in.keys.empty()) fail("no queries or no keys");
  if (in.layers.size() != in.heads.size())
    fail(std::to_string(in.layers.size()) + " layer names for " + std::to_string(in.heads.size()) + " layers");
  if (in.heads.empty()) fail("no layers");
  if (!in.q.empty() || !in.k.empty() || !in.bias.empty()) {
    if (in.q.size() != in.heads.size() || in.k.size() != in.heads.size() || (!in.bias.empty() && in.bias.size() != in.heads.size()))
      fail("queries, keys and bias given for " + std::to_string(in.q.size()) + ", " + std::to_string(in.k.size()) + " and " +
           std::to_string(in.bias.size()) + " layers of " + std::to_string(in.heads.size()));
  }
  if (!in.layer_scale.empty()) {
    if (in.layer_scale.size() != in.heads.size())
      fail(std::to_string(in.layer_scale.size()) + " layer scales for " + std::to_string(in.heads.size()) + " layers");
    for (double s : in.layer_scale)
      if (!(std::isfinite(s) && s > 0.0)) fail("a layer scale of " + std::to_string(s) + " (a scale is positive and finite)");
  }
  if (!in.kv_heads.empty() && in.kv_heads.size() != in.heads.size())
    fail(std::to_string(in.kv_heads.size()) + " key/value head counts for " + std::to_string(in.heads.size()) + " layers");
  if (!in.no_neuron_view.empty() && in.no_neuron_view.size() != in.heads.size())
    fail(std::to_string(in.no_neuron_view.size()) + " reasons for no neuron view for " + std::to_string(in.heads.size()) +
         " layers");
  if ((!in.weight_grad.empty() || !in.score_grad.empty()) &&
      (in.weight_grad.size() != in.heads.size() || in.score_grad.size() != in.heads.size()))
    fail("dA and dS given for " + std::to_string(in.weight_grad.size()) + " and " + std::to_string(in.score_grad.size()) +
         " layers of " + std::to_string(in.heads.size()));
  Json layers = Json::array();
  for (std::size_t l = 0; l < in.heads.size(); ++l) {
    if (in.heads[l].empty()) fail("layer '" + in.layers[l] + "' has no heads");
    Json heads = Json::array();
    for (std::size_t h = 0; h < in.heads[l].size(); ++h) {
      const xt::xarray<double>& w = in.heads[l][h];
      const std::string where = "layer '" + in.layers[l] + "', head " + std::to_string(h + 1);
      if (w.dimension() != 2 || w.shape(0) != in.queries.size() || w.shape(1) != in.keys.size())
        fail(where + ": weights of shape (" +
             (w.dimension() == 2 ? std::to_string(w.shape(0)) + ", " + std::to_string(w.shape(1)) : "not 2-D") +
             ") for " + std::to_string(in.queries.size()) + " queries and " + std::to_string(in.keys.size()) + " keys");
      Json rows = Json::array();
      for (std::size_t i = 0; i < w.shape(0); ++i) {
        Json row = Json::array();
        for (std::size_t j = 0; j < w.shape(1); ++j) {
          const double v = w(i, j);
          if (!std::isfinite(v) || v < -1e-9 || v > 1 + 1e-9)
            fail(where + ": weight (" + std::to_string(i) + ", " + std::to_string(j) + ") = " + std::to_string(v) +
                 " is not a weight in [0, 1]");
          row.push_back(std::round(v * 1e6) / 1e6);  // six decimals: what the page shows and the test reads
        }
        rows.push_back(std::move(row));
      }
      heads.push_back(std::move(rows));
    }
    layers.push_back({{"name", in.layers[l]}, {"heads", std::move(heads)}});
    const bool says_why = !in.no_neuron_view.empty() && !in.no_neuron_view[l].empty();
    if (says_why) {
      if (!in.q.empty() && (!in.q[l].empty() || !in.k[l].empty()))
        fail("layer '" + in.layers[l] + "' has queries and keys and a reason for having no neuron view");
      layers.back()["no_neuron_view"] = in.no_neuron_view[l];
    } else if (!in.q.empty()) {
      layers.back()["parts"] = parts_json(in, l, fail);
    }
    if (!in.kv_heads.empty()) layers.back()["kv_heads"] = kv_heads_of(in, l, says_why, fail);
    if (!in.weight_grad.empty()) layers.back()["grads"] = grads_json(in, l, fail);
  }
  return {{"name", in.name}, {"queries", in.queries}, {"keys", in.keys}, {"layers", std::move(layers)}};
}

// The gradient view's heading and note, on a page with gradients only.
constexpr const char* kGradientSection =
    "<h2>Gradient view</h2>\n<p class=\"note\">The backward through the softmax for the query and head chosen above "
    "(click a query in the head view or choose it in the neuron view). For each key: its weight A, the gradient of the "
    "loss in that weight dA, and dA minus D = \u2211<sub>j</sub> A<sub>j</sub> dA<sub>j</sub>, the row's average of dA "
    "under its own weights; the gradient in the score is dS = A (dA \u2212 D), worked out here from the A and dA "
    "shown, and beside it the dS the backward computed. Red: raising that score would raise the loss; blue: lower it. "
    "A key with no weight (masked) gets dS = 0, whatever its dA.</p>\n<div id=\"gradient-view\"></div>\n";

}  // namespace

std::string explorer_html(const ExplorerPage& page) {
  if (page.inputs.empty()) throw std::invalid_argument("explorer: '" + page.title + "' has no inputs");
  Json inputs = Json::array();
  for (const AttentionInput& in : page.inputs) inputs.push_back(input_json(in));
  const bool with_gradients = std::any_of(page.inputs.begin(), page.inputs.end(),
                                          [](const AttentionInput& in) { return !in.weight_grad.empty(); });
  const bool with_groups = std::any_of(page.inputs.begin(), page.inputs.end(),
                                       [](const AttentionInput& in) { return !in.kv_heads.empty(); });
  const Json data = {{"query_side", page.query_side}, {"key_side", page.key_side}, {"inputs", std::move(inputs)}};
  // Inline JSON may not close its <script>: "</" is written "<\/", which JSON reads as "</".
  std::string json = data.dump(-1, ' ', false, Json::error_handler_t::replace);  // broken UTF-8 shown as U+FFFD
  for (std::size_t at = json.find("</"); at != std::string::npos; at = json.find("</", at + 3)) json.insert(at + 1, "\\");
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" "
         "content=\"width=device-width, initial-scale=1\">\n<title>" + html_escape(page.title) + "</title>\n<style>" +
         explorer_style() + "</style></head>\n<body>\n<h1>" + html_escape(page.title) + "</h1>\n<p class=\"note\">" +
         html_escape(page.note) +
         "</p>\n<div class=\"controls\"><label>Input <select id=\"input\"></select></label>"
         "<label>Layer <select id=\"layer\"></select></label><label>Head <select id=\"head\"></select></label></div>\n"
         "<h2>Head view</h2>\n" + (with_groups ? "<p class=\"note\" id=\"kv-groups\"></p>\n" : "") + "<div class=\"views\"><svg id=\"head-view\" xmlns=\"http://www.w3.org/2000/svg\"></svg>"
         "<div id=\"readout\"></div></div>\n<h2>Model view</h2>\n<p class=\"note\">Every layer by every head: rows are " +
         html_escape(page.query_side) + ", columns " + html_escape(page.key_side) +
         ", darker is more weight. Click one to open it above.</p>\n<div id=\"model-view\"></div>\n"
         "<h2>Neuron view</h2>\n<p class=\"note\">One query's score for every key, term by term: the query q and each "
         "key k of the chosen head as cells (red above zero, blue below), their products dimension by dimension, whose "
         "sum is q\u00b7k; the score is q\u00b7k times the scale plus any bias, and the softmax of the scores over the "
         "keys is the weight. The products show which dimensions make a key win. Click a query in the head view or "
         "choose it here.</p>\n<div class=\"controls\"><label>Query <select id=\"neuron-query\"></select></label>"
         "</div>\n<div id=\"neuron-view\"></div>\n" + (with_gradients ? kGradientSection : "") +
         "<script type=\"application/json\" id=\"attention-data\">" + json + "</script>\n<script>" + explorer_script() +
         "</script>\n</body></html>\n";
}

void write_explorer(const std::string& path, const ExplorerPage& page) {
  write_file_atomic(path, explorer_html(page), "explorer");
}

AttentionInput side_by_side(const std::string& name, const std::vector<std::pair<std::string, AttentionInput>>& models) {
  if (models.empty()) throw std::invalid_argument("side_by_side: no models for '" + name + "'");
  const AttentionInput& first = models.front().second;
  AttentionInput in{name, first.queries, first.keys, {}, {}};
  in.scale = first.scale;
  for (const auto& [model, m] : models) {
    if (m.queries != first.queries || m.keys != first.keys || m.scale != first.scale || m.q.empty() != first.q.empty() ||
        m.bias.empty() != first.bias.empty() || m.layer_scale.empty() != first.layer_scale.empty())
      throw std::invalid_argument("side_by_side: '" + model + "' differs from '" + models.front().first +
                                  "' in its queries, keys, scale or neuron view, for '" + name + "'");
    for (std::size_t l = 0; l < m.layers.size(); ++l) in.layers.push_back(model + ": " + m.layers[l]);
    in.heads.insert(in.heads.end(), m.heads.begin(), m.heads.end());
    in.q.insert(in.q.end(), m.q.begin(), m.q.end());
    in.k.insert(in.k.end(), m.k.begin(), m.k.end());
    in.bias.insert(in.bias.end(), m.bias.begin(), m.bias.end());
    in.layer_scale.insert(in.layer_scale.end(), m.layer_scale.begin(), m.layer_scale.end());
  }
  // Grouped heads and reasons for no neuron view, where some model gives them: the others' layers
  // read a key head each and have a neuron view.
  const auto given = [&](auto field) {
    return std::any_of(models.begin(), models.end(), [&](const auto& m) { return !(m.second.*field).empty(); });
  };
  if (given(&AttentionInput::kv_heads))
    for (const auto& [model, m] : models)
      for (std::size_t l = 0; l < m.layers.size(); ++l) in.kv_heads.push_back(m.kv_heads.empty() ? m.heads[l].size() : m.kv_heads[l]);
  if (given(&AttentionInput::no_neuron_view))
    for (const auto& [model, m] : models)
      for (std::size_t l = 0; l < m.layers.size(); ++l) in.no_neuron_view.push_back(m.no_neuron_view.empty() ? "" : m.no_neuron_view[l]);
  return in;
}

void show_explorer(const ExplorerPage& page, const std::string& stem, const std::string& caption) {
  write_explorer(lesson().path(stem + ".html"), page);
  lesson().page(stem + ".html", caption);
}

}  // namespace attnlab::lessons
