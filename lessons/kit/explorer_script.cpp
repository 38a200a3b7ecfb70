#include "lessons/kit/explorer_script.hpp"

namespace attnlab::lessons {

namespace {

// Plain JavaScript over the inline data, drawing with SVG, canvas and tables.
constexpr const char* kScript = R"JS(
const data = JSON.parse(document.getElementById('attention-data').textContent);
const colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
const $ = (id) => document.getElementById(id);
const state = { input: 0, layer: 0, head: 0, focus: null, neuron: 0 };  // head -1: every head of the layer; neuron: its query

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
// Grouped-query attention: query head h reads key/value head kvOf(layer, h); groupOf lists the query
// heads of key/value head c. Without kv_heads, every head reads its own.
function groupSize(layer) { return layer.kv_heads ? layer.heads.length / layer.kv_heads : 1; }
function kvOf(layer, h) { return Math.floor(h / groupSize(layer)); }
function groupOf(layer, c) { const n = groupSize(layer); return layer.heads.map((_, h) => h).slice(c * n, (c + 1) * n); }
function span(heads) { return heads.length > 1 ? 'heads ' + (heads[0] + 1) + '\u2013' + (heads[heads.length - 1] + 1) : 'head ' + (heads[0] + 1); }
function fillHeads() {
  const layer = data.inputs[state.input].layers[state.layer], sel = $('head');
  sel.innerHTML = '';
  if (layer.kv_heads && groupSize(layer) > 1) {
    // One group of options per key/value head: its query heads, and all of them overlaid (value -2 - c).
    for (let c = 0; c < layer.kv_heads; ++c) {
      const g = document.createElement('optgroup'), heads = groupOf(layer, c);
      g.label = 'key/value head ' + (c + 1) + ', shared by ' + span(heads);
      heads.forEach((h) => option(g, h, 'head ' + (h + 1)));
      option(g, -2 - c, span(heads) + ' overlaid');
      sel.appendChild(g);
    }
  } else {
    layer.heads.forEach((_, h) => option(sel, h, 'head ' + (h + 1)));
  }
  if (layer.heads.length > 1) option(sel, -1, 'every head, overlaid');
  if (state.head >= layer.heads.length || (state.head <= -2 && !(layer.kv_heads && -2 - state.head < layer.kv_heads && groupSize(layer) > 1)))
    state.head = 0;
  sel.value = state.head;
  describeGroups();
}
function shownHeads() {
  const layer = data.inputs[state.input].layers[state.layer];
  if (state.head <= -2) return groupOf(layer, -2 - state.head);
  return state.head < 0 ? layer.heads.map((_, h) => h) : [state.head];
}
// The paragraph over the head view on a page with grouped heads: which query heads share which keys.
function describeGroups() {
  const box = $('kv-groups');
  if (!box) return;
  const layer = data.inputs[state.input].layers[state.layer], H = layer.heads.length;
  if (!layer.kv_heads) { box.textContent = ''; return; }
  if (groupSize(layer) === 1) {
    box.textContent = layer.name + ': ' + H + ' query heads, ' + H + ' key/value heads: each head scores its own ' +
                      'keys and averages its own values (multi-head attention).';
    return;
  }
  const groups = [];
  for (let c = 0; c < layer.kv_heads; ++c) groups.push(span(groupOf(layer, c)) + ' read key/value head ' + (c + 1));
  box.textContent = layer.name + ': ' + H + ' query heads share ' + layer.kv_heads + ' key/value ' +
                    (layer.kv_heads > 1 ? 'heads' : 'head') + ': ' + groups.join('; ') + '. The heads of a group ' +
                    'score the same keys with their own queries (the neuron view shows the same k for each) and ' +
                    'average the same values; the head selector, the readout and the model view group them so.';
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
    // Redrawn only when the focus moves: a redraw under a still pointer would enter the new text
    // again, and a click (mouse down, then up) would land on two different elements.
    t.addEventListener('mouseenter', () => {
      if (state.focus === Number(t.dataset.query)) return;
      state.focus = Number(t.dataset.query); drawHeadView(); readout();
    });
    t.addEventListener('click', () => { state.neuron = Number(t.dataset.query); fillNeuronQueries(); drawNeuronView(); });
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
  if (layer.kv_heads && groupSize(layer) > 1) {  // a row over the heads: the key/value head each reads
    let g = '<tr class="kv-row"><th></th>';
    heads.forEach((h, n) => {
      if (n > 0 && kvOf(layer, heads[n - 1]) === kvOf(layer, h)) return;
      const width = heads.filter((x) => kvOf(layer, x) === kvOf(layer, h)).length;
      g += '<th colspan="' + width + '" class="kv" data-kv="' + kvOf(layer, h) + '">kv head ' + (kvOf(layer, h) + 1) + '</th>';
    });
    s = s.replace('<table><tr><th>key</th>', '<table>' + g + '</tr><tr><th>key</th>');
  }
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
    // Grouped heads: each key/value head's query heads in one frame, captioned.
    const frames = [];
    if (layer.kv_heads && groupSize(layer) > 1)
      for (let c = 0; c < layer.kv_heads; ++c) {
        const f = document.createElement('div'); f.className = 'kv-group'; f.dataset.kv = c;
        const cap = document.createElement('div'); cap.className = 'kv-caption';
        cap.textContent = 'key/value head ' + (c + 1); f.appendChild(cap); row.appendChild(f); frames.push(f);
      }
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
        drawHeadView(); readout(); drawNeuronView(); $('head-view').scrollIntoView({ block: 'nearest' });
      });
      (frames.length ? frames[kvOf(layer, h)] : row).appendChild(c);
    });
    grid.appendChild(row);
  });
}

// Neuron view: one query's score for every key, term by term. Head h's q_i and k_j (d_k numbers
// each) as coloured cells, their products q_ic k_jc, the sum q.k, the score q.k * scale + bias and
// the softmax over the keys: the weight the head view draws (its bar: the share of the largest).
// Computed here from the page's data.
function diverging(v, top) {  // blue below zero, white at zero, red above, full colour at |v| = top
  const t = top > 0 ? Math.max(-1, Math.min(1, v / top)) : 0;
  const [r, g, b] = t >= 0 ? [178, 24, 43] : [33, 102, 172];
  const a = Math.abs(t), mix = (c) => Math.round(255 + (c - 255) * a);
  return 'rgb(' + mix(r) + ',' + mix(g) + ',' + mix(b) + ')';
}
function cells(values, top, cls, label) {
  // d_k = 32: 5 px a dimension; beyond 80 (lesson 04's 512) 1 px without the white edge, so that the
  // scores and weights stay within reach.
  // (d_k = 64, lesson 03's states: 2 px, so that the weights still fit beside them at ~900 px.)
  const width = values.length > 80 ? 1 : Math.max(values.length > 48 ? 2 : 3, Math.min(7, Math.floor(160 / values.length)));
  return '<td class="' + cls + '">' + values.map((v, c) =>
    '<span style="width:' + width + 'px;' + (width === 1 ? 'border-right:0;' : '') + 'background:' + diverging(v, top) + '" data-value="' + v + '" title="' + label + ' ' + (c + 1) + ': ' +
    v.toPrecision(4) + '"></span>').join('') + '</td>';
}
function fillNeuronQueries() {
  const inp = data.inputs[state.input], sel = $('neuron-query');
  if (sel.options.length !== inp.queries.length || sel.dataset.input !== String(state.input)) {
    sel.innerHTML = '';
    inp.queries.forEach((q, i) => option(sel, i, (i + 1) + ': ' + q));
    sel.dataset.input = state.input;
  }
  state.neuron = Math.min(state.neuron, inp.queries.length - 1);
  sel.value = state.neuron;
}
function neuronRows(p, i, keys) {
  const q = p.q[i];
  const rows = keys.map((key, j) => {
    const k = p.k[j], prod = q.map((x, c) => x * k[c]);
    const dot = prod.reduce((a, b) => a + b, 0);
    const masked = p.allowed !== undefined && p.allowed[i][j] === '0';
    const bias = p.bias !== undefined && !masked ? p.bias[i][j] : 0;
    return { key, k, prod, dot, bias, masked, score: masked ? -Infinity : dot * p.scale + bias };
  });
  const top = Math.max(...rows.map((r) => r.score));
  const e = rows.map((r) => (r.masked ? 0 : Math.exp(r.score - top)));
  const total = e.reduce((a, b) => a + b, 0);
  rows.forEach((r, j) => { r.weight = total > 0 ? e[j] / total : 0; });
  return rows;
}
function drawNeuronView() {
  drawGradientView();  // it follows the same query and head
  const inp = data.inputs[state.input], layer = inp.layers[state.layer], box = $('neuron-view');
  $('neuron-query').disabled = !layer.parts;
  if (!layer.parts) {
    box.innerHTML = '<p class="note">This page has no queries and keys for ' + esc(layer.name) + ' of this input: ' +
                    esc(layer.no_neuron_view || 'the neuron view needs query-key attention and its q and k.') + '</p>';
    return;
  }
  const h = state.head < 0 ? shownHeads()[0] : state.head, p = layer.parts[h], i = state.neuron;
  const rows = neuronRows(p, i, inp.keys);
  const vecTop = Math.max(...p.q[i].map(Math.abs), ...rows.map((r) => Math.max(...r.k.map(Math.abs))));
  const prodTop = Math.max(...rows.map((r) => Math.max(...r.prod.map(Math.abs))));
  const best = rows.reduce((b, r, j) => (r.weight > rows[b].weight ? j : b), 0), most = rows[best].weight;
  const hasBias = p.bias !== undefined || p.allowed !== undefined;  // a column for the bias or the mask
  const biasCell = (r) => (r.masked ? 'masked' : p.bias !== undefined ? r.bias.toFixed(3) : '');
  const shared = layer.kv_heads && groupSize(layer) > 1
                     ? ' (its keys: key/value head ' + (kvOf(layer, h) + 1) + ', shared by ' + span(groupOf(layer, kvOf(layer, h))) + ')' : '';
  let s = '<p>' + esc(layer.name) + ', head ' + (h + 1) + (state.head < 0 ? ' (the first of the overlaid heads)' : '') + shared +
          ', query <strong>' + esc(inp.queries[i]) + '</strong> (position ' + (i + 1) + '); d<sub>k</sub> = ' +
          p.q[i].length + ', scale = ' + p.scale.toPrecision(4) + '.</p><table class="neuron"><tr><th></th><th>' +
          'q<sub>i</sub> and each k<sub>j</sub></th><th>q<sub>i</sub> \u2299 k<sub>j</sub></th><th>q\u00b7k</th>' +
          '<th>\u00d7 scale</th>' + (hasBias ? '<th>' + (p.bias !== undefined ? '+ bias' : 'mask') + '</th>' : '') + '<th>score</th><th>weight</th></tr>';
  s += '<tr class="query-row"><td>query ' + esc(inp.queries[i]) + '</td>' + cells(p.q[i], vecTop, 'vec', 'q') +
       '<td colspan="' + (hasBias ? 6 : 5) + '"></td></tr>';
  rows.forEach((r, j) => {
    s += '<tr class="key-row' + (j === best && most > 0 ? ' best' : '') + (r.masked ? ' masked' : '') + '" data-key="' + j + '"><td>' +
         esc(r.key) + '</td>' + cells(r.k, vecTop, 'vec', 'k') + cells(r.prod, prodTop, 'prod', 'q\u00b7k term') +
         '<td class="dot" data-value="' + r.dot + '">' + r.dot.toFixed(3) + '</td><td>' + (r.dot * p.scale).toFixed(3) +
         '</td>' + (hasBias ? '<td class="bias">' + biasCell(r) + '</td>' : '') +
         '<td class="score" data-value="' + r.score + '">' + (r.masked ? '\u2212\u221e' : r.score.toFixed(3)) +
         '</td><td class="weight" data-value="' + r.weight + '">' + r.weight.toFixed(3) +
         '<span class="bar" style="width:' + Math.round(most > 0 ? 40 * r.weight / most : 0) + 'px"></span></td></tr>';
  });
  box.innerHTML = s + '</table>';
}
// Gradient view (pages with gradients: lesson 06): the backward through the softmax for the chosen
// query, from the page's A and dA: D = sum_j A_j dA_j and dS_j = A_j (dA_j - D), beside the dS the
// backward computed.
function drawGradientView() {
  const box = $('gradient-view');
  if (!box) return;
  const inp = data.inputs[state.input], layer = inp.layers[state.layer];
  if (!layer.grads) { box.innerHTML = '<p class="note">No gradients for ' + esc(layer.name) + ' of this input.</p>'; return; }
  const h = state.head < 0 ? 0 : state.head, i = state.neuron, g = layer.grads[h], A = layer.heads[h][i], dA = g.dA[i];
  const D = A.reduce((sum, a, j) => sum + a * dA[j], 0), dS = A.map((a, j) => a * (dA[j] - D));
  const top = Math.max(...dS.map(Math.abs), ...g.dS[i].map(Math.abs));
  const cell = (cls, v, style) => '<td class="' + cls + '" data-value="' + v + '"' + (style ? ' style="background:' + style + '"' : '') +
                                  '>' + v.toFixed(4) + '</td>';
  const shared = layer.kv_heads && groupSize(layer) > 1
                     ? ' (its keys: key/value head ' + (kvOf(layer, h) + 1) + ', shared by ' + span(groupOf(layer, kvOf(layer, h))) + ')' : '';
  let s = '<p>' + esc(layer.name) + ', head ' + (h + 1) + (state.head < 0 ? ' (the first of the overlaid heads)' : '') + shared +
          ', query <strong>' + esc(inp.queries[i]) + '</strong> (position ' + (i + 1) + '): D = \u2211<sub>j</sub> ' +
          'A<sub>j</sub> dA<sub>j</sub> = <span id="grad-d" data-value="' + D + '">' + D.toFixed(4) + '</span></p>' +
          '<table class="neuron gradient"><tr><th>key</th><th>A</th><th>dA</th><th>dA \u2212 D</th>' +
          '<th>dS = A (dA \u2212 D)</th><th>dS (backward)</th></tr>';
  inp.keys.forEach((k, j) => {
    s += '<tr class="grad-row" data-key="' + j + '"><td>' + esc(k) + '</td>' + cell('a', A[j]) + cell('da', dA[j]) +
         cell('centred', dA[j] - D) + cell('ds', dS[j], diverging(dS[j], top)) + cell('ds-given', g.dS[i][j]) + '</tr>';
  });
  box.innerHTML = s + '</table>';
}
function esc(s) { return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'); }
function redraw() { drawHeadView(); readout(); drawModelView(); fillNeuronQueries(); drawNeuronView(); }

fillInputs(); fillLayers();
$('input').addEventListener('change', () => { state.input = Number($('input').value); state.focus = null; fillLayers(); redraw(); });
$('layer').addEventListener('change', () => { state.layer = Number($('layer').value); state.focus = null; fillHeads(); redraw(); });
$('head').addEventListener('change', () => { state.head = Number($('head').value); state.focus = null; drawHeadView(); readout(); drawNeuronView(); });
$('neuron-query').addEventListener('change', () => { state.neuron = Number($('neuron-query').value); drawNeuronView(); });
redraw();
document.body.dataset.ready = 'yes';
)JS";

constexpr const char* kStyle = R"CSS(
body { font: 16px/1.45 system-ui, sans-serif; margin: 1rem; color: #222; max-width: 60rem; }
h1 { font-size: 1.3rem; margin: 0 0 .4rem; } .note { color: #555; margin: 0 0 .8rem; }
.controls label { margin-right: 1rem; } select { font: inherit; max-width: 100%; }
.views { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-start; }
#head-view { width: 420px; max-width: 100%; } #head-view text { font: 14px monospace; cursor: default; }
#head-view text.side { font: italic 13px system-ui, sans-serif; fill: #666; }
#head-view text.query { cursor: pointer; } #head-view text.focus { font-weight: bold; fill: #b3261e; }
#readout { min-width: 14rem; font-size: .9rem; overflow-y: auto; } #readout table { border-collapse: collapse; }
#readout td, #readout th { padding: 1px 8px; text-align: right; font-family: monospace; }
#readout th.kv { text-align: center; font-weight: normal; color: #555; border-bottom: 1px solid #999; }
.kv-group { display: flex; gap: 6px; align-items: flex-end; padding: 14px 4px 4px; border: 1px solid #999;
            border-radius: 4px; position: relative; }
.kv-caption { position: absolute; top: 0; left: 4px; font-size: .7rem; color: #555; }
.layer-row { display: flex; align-items: center; gap: 6px; margin: 4px 0; }
.layer-name { width: 9rem; font-size: .85rem; color: #555; }
canvas { border: 1px solid #ccc; cursor: pointer; image-rendering: pixelated; width: 120px; }
table.neuron { border-collapse: collapse; font-size: .85rem; } table.neuron th { font-weight: normal; color: #555; }
table.neuron td { padding: 0 6px; text-align: right; font-family: monospace; white-space: nowrap; }
table.neuron td.vec, table.neuron td.prod { padding: 0 4px; line-height: 0; }
table.neuron td.vec span, table.neuron td.prod span { display: inline-block; height: 13px; border-right: 1px solid #fff; }
#neuron-view { overflow-x: auto; }
table.neuron tr.best td { font-weight: bold; } table.neuron tr.masked td { color: #aaa; }
table.neuron tr.query-row td { padding-bottom: 4px; border-bottom: 1px solid #ccc; }
table.gradient th { padding: 0 6px; }
table.neuron span.bar { display: inline-block; height: 9px; margin-left: 4px; background: #1f77b4; }
)CSS";

}  // namespace

const char* explorer_script() { return kScript; }
const char* explorer_style() { return kStyle; }

}  // namespace attnlab::lessons
