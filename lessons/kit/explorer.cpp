#include "lessons/kit/explorer.hpp"

#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "io/files.hpp"
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
  }
  return {{"name", in.name}, {"queries", in.queries}, {"keys", in.keys}, {"layers", std::move(layers)}};
}

// The page's behaviour: plain JavaScript over the inline data, drawing with SVG and canvas.
constexpr const char* kScript = R"JS(
const data = JSON.parse(document.getElementById('attention-data').textContent);
const colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
const $ = (id) => document.getElementById(id);
const state = { input: 0, layer: 0, head: 0, focus: null };  // head -1: every head of the layer

function option(select, value, text) {
  const o = document.createElement('option'); o.value = value; o.textContent = text; select.appendChild(o);
}
function fillInputs() {
  data.inputs.forEach((inp, i) => option($('input'), i, inp.name));
}
function fillLayers() {
  const inp = data.inputs[state.input];
  $('layer').innerHTML = '';
  inp.layers.forEach((l, i) => option($('layer'), i, l.name));
  state.layer = Math.min(state.layer, inp.layers.length - 1);
  $('layer').value = state.layer;
  fillHeads();
}
function fillHeads() {
  const layer = data.inputs[state.input].layers[state.layer];
  $('head').innerHTML = '';
  layer.heads.forEach((_, h) => option($('head'), h, 'head ' + (h + 1)));
  if (layer.heads.length > 1) option($('head'), -1, 'every head, overlaid');
  if (state.head >= layer.heads.length) state.head = 0;
  $('head').value = state.head;
}
function shownHeads() {
  const layer = data.inputs[state.input].layers[state.layer];
  return state.head < 0 ? layer.heads.map((_, h) => h) : [state.head];
}

// Head view: keys on the left, queries on the right, one line per (query, key) pair.
function drawHeadView() {
  const inp = data.inputs[state.input], layer = inp.layers[state.layer];
  const n = Math.max(inp.queries.length, inp.keys.length);
  const rowH = Math.max(11, Math.min(22, Math.floor(520 / n))), top = 30, width = 420, left = 150, right = width - 150;
  const svg = $('head-view');
  svg.setAttribute('height', top + n * rowH + 10);
  // The readout beside it as tall as the view (scrolling when longer): hovering in and out of a query
  // must not move the model view below, under the pointer.
  $('readout').style.height = (top + n * rowH + 10) + 'px';
  svg.setAttribute('viewBox', '0 0 ' + width + ' ' + (top + n * rowH + 10));
  let s = '<text x="' + (left - 8) + '" y="16" text-anchor="end" class="side">' + esc(data.key_side) + '</text>' +
          '<text x="' + (right + 8) + '" y="16" class="side">' + esc(data.query_side) + '</text>';
  for (const h of shownHeads()) {
    const w = layer.heads[h];
    w.forEach((row, i) => row.forEach((v, j) => {
      if (v < 0.01 || (state.focus !== null && state.focus !== i)) return;
      s += '<line x1="' + left + '" y1="' + (top + j * rowH + 7) + '" x2="' + right + '" y2="' + (top + i * rowH + 7) +
           '" stroke="' + colors[h % colors.length] + '" stroke-width="' + (1 + 3 * v) + '" stroke-opacity="' + v + '"/>';
    }));
  }
  inp.keys.forEach((k, j) => {
    s += '<text x="' + (left - 8) + '" y="' + (top + j * rowH + 12) + '" text-anchor="end" class="key" data-key="' + j +
         '" style="font-size:' + Math.min(14, rowH - 1) + 'px">' + esc(k) + '</text>';
  });
  inp.queries.forEach((q, i) => {
    s += '<text x="' + (right + 8) + '" y="' + (top + i * rowH + 12) + '" class="query' + (state.focus === i ? ' focus' : '') +
         '" data-query="' + i + '" style="font-size:' + Math.min(14, rowH - 1) + 'px">' + esc(q) + '</text>';
  });
  svg.innerHTML = s;
  svg.querySelectorAll('text.query').forEach((t) => {
    t.addEventListener('mouseenter', () => { state.focus = Number(t.dataset.query); drawHeadView(); readout(); });
  });
  svg.onmouseleave = () => { state.focus = null; drawHeadView(); readout(); };
}

// The focused query's weights, head by head, as numbers.
function readout() {
  const inp = data.inputs[state.input], layer = inp.layers[state.layer];
  const box = $('readout');
  if (state.focus === null) { box.innerHTML = 'Hover a query on the right to read its weights.'; return; }
  let s = '<p>Query <strong>' + esc(inp.queries[state.focus]) + '</strong> (position ' + (state.focus + 1) + '), ' +
          esc(layer.name) + ':</p><table><tr><th>key</th>';
  const heads = shownHeads();
  heads.forEach((h) => { s += '<th style="color:' + colors[h % colors.length] + '">head ' + (h + 1) + '</th>'; });
  s += '</tr>';
  inp.keys.forEach((k, j) => {
    s += '<tr><td>' + esc(k) + '</td>';
    heads.forEach((h) => {
      const v = layer.heads[h][state.focus][j];
      s += '<td class="wt" data-head="' + h + '" data-key="' + j + '" data-value="' + v + '">' + v.toFixed(3) + '</td>';
    });
    s += '</tr>';
  });
  box.innerHTML = s + '</table>';
}

// Model view: every layer by every head, a heatmap each (rows queries, columns keys).
function drawModelView() {
  const inp = data.inputs[state.input];
  const grid = $('model-view');
  grid.innerHTML = '';
  inp.layers.forEach((layer, l) => {
    const row = document.createElement('div'); row.className = 'layer-row';
    const label = document.createElement('div'); label.className = 'layer-name'; label.textContent = layer.name;
    row.appendChild(label);
    layer.heads.forEach((w, h) => {
      const c = document.createElement('canvas');
      const cell = Math.max(2, Math.floor(120 / Math.max(inp.queries.length, inp.keys.length)));
      c.width = inp.keys.length * cell; c.height = inp.queries.length * cell;
      c.title = layer.name + ', head ' + (h + 1) + ': click to open';
      c.dataset.layer = l; c.dataset.head = h;
      const g = c.getContext('2d');
      w.forEach((r, i) => r.forEach((v, j) => {
        const shade = Math.round(255 * (1 - v));
        g.fillStyle = 'rgb(' + shade + ',' + shade + ',255)';
        g.fillRect(j * cell, i * cell, cell, cell);
      }));
      c.addEventListener('click', () => {
        state.layer = l; $('layer').value = l; fillHeads(); state.head = h; $('head').value = h; state.focus = null;
        drawHeadView(); readout(); $('head-view').scrollIntoView({ block: 'nearest' });
      });
      row.appendChild(c);
    });
    grid.appendChild(row);
  });
}
function esc(s) { return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'); }
function redraw() { drawHeadView(); readout(); drawModelView(); }

fillInputs(); fillLayers();
$('input').addEventListener('change', () => { state.input = Number($('input').value); state.focus = null; fillLayers(); redraw(); });
$('layer').addEventListener('change', () => { state.layer = Number($('layer').value); state.focus = null; fillHeads(); redraw(); });
$('head').addEventListener('change', () => { state.head = Number($('head').value); state.focus = null; drawHeadView(); readout(); });
redraw();
document.body.dataset.ready = 'yes';
)JS";

constexpr const char* kStyle = R"CSS(
body { font: 16px/1.45 system-ui, sans-serif; margin: 1rem; color: #222; max-width: 60rem; }
h1 { font-size: 1.3rem; margin: 0 0 .4rem; } .note { color: #555; margin: 0 0 .8rem; }
.controls label { margin-right: 1rem; } select { font: inherit; }
.views { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-start; }
#head-view { width: 420px; max-width: 100%; } #head-view text { font: 14px monospace; cursor: default; }
#head-view text.side { font: italic 13px system-ui, sans-serif; fill: #666; }
#head-view text.query { cursor: pointer; } #head-view text.focus { font-weight: bold; fill: #b3261e; }
#readout { min-width: 14rem; font-size: .9rem; overflow-y: auto; } #readout table { border-collapse: collapse; }
#readout td, #readout th { padding: 1px 8px; text-align: right; font-family: monospace; }
.layer-row { display: flex; align-items: center; gap: 6px; margin: 4px 0; }
.layer-name { width: 9rem; font-size: .85rem; color: #555; }
canvas { border: 1px solid #ccc; cursor: pointer; image-rendering: pixelated; width: 120px; }
)CSS";

}  // namespace

std::string explorer_html(const ExplorerPage& page) {
  if (page.inputs.empty()) throw std::invalid_argument("explorer: '" + page.title + "' has no inputs");
  Json inputs = Json::array();
  for (const AttentionInput& in : page.inputs) inputs.push_back(input_json(in));
  const Json data = {{"query_side", page.query_side}, {"key_side", page.key_side}, {"inputs", std::move(inputs)}};
  // Inline JSON may not close its <script>: "</" is written "<\/", which JSON reads as "</".
  std::string json = data.dump(-1, ' ', false, Json::error_handler_t::replace);  // broken UTF-8 shown as U+FFFD
  for (std::size_t at = json.find("</"); at != std::string::npos; at = json.find("</", at + 3)) json.insert(at + 1, "\\");
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" "
         "content=\"width=device-width, initial-scale=1\">\n<title>" + html_escape(page.title) + "</title>\n<style>" +
         kStyle + "</style></head>\n<body>\n<h1>" + html_escape(page.title) + "</h1>\n<p class=\"note\">" +
         html_escape(page.note) +
         "</p>\n<div class=\"controls\"><label>Input <select id=\"input\"></select></label>"
         "<label>Layer <select id=\"layer\"></select></label><label>Head <select id=\"head\"></select></label></div>\n"
         "<h2>Head view</h2>\n<div class=\"views\"><svg id=\"head-view\" xmlns=\"http://www.w3.org/2000/svg\"></svg>"
         "<div id=\"readout\"></div></div>\n<h2>Model view</h2>\n<p class=\"note\">Every layer by every head: rows are " +
         html_escape(page.query_side) + ", columns " + html_escape(page.key_side) +
         ", darker is more weight. Click one to open it above.</p>\n<div id=\"model-view\"></div>\n"
         "<script type=\"application/json\" id=\"attention-data\">" + json + "</script>\n<script>" + kScript +
         "</script>\n</body></html>\n";
}

void write_explorer(const std::string& path, const ExplorerPage& page) {
  write_file_atomic(path, explorer_html(page), "explorer");
}

void show_explorer(const ExplorerPage& page, const std::string& stem, const std::string& caption) {
  write_explorer(lesson().path(stem + ".html"), page);
  lesson().page(stem + ".html", caption);
}

}  // namespace attnlab::lessons
