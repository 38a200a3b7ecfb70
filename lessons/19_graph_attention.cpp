// Lesson 19: attention on graphs.
//
// A graph says who may look at whom. Graph attention (Velickovic et al., 2018) is the attention of
// the earlier lessons with the graph as its mask: node i's query scores only its neighbours j,
// e_ij = LeakyReLU(a_q . W x_i + a_k . W x_j), a softmax over the neighbourhood turns the scores into
// weights, and i reads the weighted mean of its neighbours' W x_j. Averaging the neighbours with
// equal weights (a graph convolution) is the same with every score equal. We make a graph in which
// some neighbours are worth reading and some are noise, train a model that ignores the graph, one
// that averages over it and one that attends over it, on graphs it never sees again, and look at
// where the attention goes.
#include <algorithm>
#include <cmath>

#include <xtensor/xview.hpp>

#include "lessons/kit/explorer.hpp"
#include "lessons/kit/kit.hpp"
#include "nn/data/graph_task.hpp"
#include "nn/graph/graph_attention.hpp"
#include "nn/layers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

using Tns = Tensor<float>;

struct Graphs {
  data::GraphTaskOptions options;
  std::vector<data::Graph> train, validation, test;
  double same_class_edges = 0, reliable_edges = 0;  // shares of the test graphs' edges
};

// ---------------------------------------------------------------------------------------------
// 1. A graph in which some neighbours lie

Graphs the_task() {
  Graphs g;
  const std::size_t train = full_or_quick(48, 8), held_out = full_or_quick(16, 4);
  g.train = data::make_graphs(g.options, train, 3 * seed() + 1);
  g.validation = data::make_graphs(g.options, held_out, 3 * seed() + 2);
  g.test = data::make_graphs(g.options, held_out, 3 * seed() + 3);
  config({{"nodes", g.options.nodes}, {"classes", g.options.classes}, {"train_graphs", train}, {"held_out_graphs", held_out}});
  const data::GraphTaskOptions& o = g.options;
  say("Every node has one of ", o.classes, " classes. Its features are its class as a one-hot vector plus Gaussian "
      "noise: small for a reliable node (sd ", fixed(o.reliable_noise, 1), "), large for an unreliable one (sd ",
      fixed(o.unreliable_noise, 1), ", ", percent(o.unreliable_share, 0), " of the nodes), and one more feature says "
      "which kind the node is; ", o.noise_features, " features are pure noise. Each node is joined to ", o.same_class,
      " random nodes of its own class and ", o.other_class, " of other classes. A node alone is easy to classify when "
      "it is reliable and hard when it is not; its neighbours know its class, if the reader knows whom to believe.");
  double degree = 0, same = 0, reliable = 0;
  for (const data::Graph& x : g.test) {
    degree += 2.0 * double(x.edges.size()) / double(o.nodes);
    const data::EdgeShares s = data::edge_shares(x);
    same += s.same_class, reliable += s.reliable_source;
  }
  const double n = double(g.test.size());
  g.same_class_edges = same / n, g.reliable_edges = reliable / n;
  metric("mean_degree", degree / n);
  metric("same_class_edge_share", same / n);
  metric("reliable_edge_share", reliable / n);
  say(g.train.size(), " graphs of ", o.nodes, " nodes to train on, ", g.validation.size(), " for validation and ",
      g.test.size(), " to test, each drawn afresh: no test node or edge was seen in training. On the test graphs a "
      "node has ", fixed(degree / n, 1), " neighbours on average; ", percent(same / n, 0), " of the edges join two "
      "nodes of one class, and ", percent(reliable / n, 0), " come from a reliable node.");
  return g;
}

// A small graph of the same kind, drawn: classes as colours, unreliable nodes dashed.
void draw_graph(const data::Graph& g, const std::vector<double>* edge_weight, const std::string& stem,
                const std::string& caption) {
  static const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"};
  std::string dot = "graph G { layout=neato; overlap=false; splines=true; bgcolor=white; "
                    "node [shape=circle, width=0.32, fixedsize=true, fontsize=10, fontname=\"DejaVu Sans\", style=filled, "
                    "fontcolor=white];\n";
  for (std::size_t i = 0; i < g.unreliable.size(); ++i)
    dot += text("  n", i, " [label=", i, ", fillcolor=\"", colours[g.labels(i) % 6], "\"",
                g.unreliable[i] ? ", style=\"filled,dashed\", penwidth=2.5, color=black, fillcolor=\"#bbbbbb\", "
                                  "fontcolor=black" : "",
                "];\n");
  for (std::size_t e = 0; e < g.edges.size(); ++e) {
    const auto [a, b] = g.edges[e];
    const double w = edge_weight ? (*edge_weight)[e] : 0.35;
    dot += text("  n", a, " -- n", b, " [penwidth=", fixed(0.3 + 8.0 * w, 2), ", color=\"#333333",
                edge_weight ? "" : "80", "\"];\n");
  }
  save_diagram(dot + "}\n", stem, caption);
}

// ---------------------------------------------------------------------------------------------
// 2. Three readers of one graph

// A node classifier: the node's own features through one linear layer, plus (for the two that read
// the graph) what the node reads from its neighbourhood, a ReLU, and a linear layer to the classes.
// The node keeps its own reading beside its neighbours' (as GraphSAGE does), so reading the graph
// can only add to reading the node.
enum class Reader { none, mean, attention };

struct NodeClassifier : nn::Module<float> {
  static constexpr std::size_t kHidden = 32, kHeads = 4;
  Reader reader;
  nn::Linear<float> self;
  std::unique_ptr<nn::MeanAggregation<float>> mean;
  std::unique_ptr<nn::GraphAttention<float>> attention;
  nn::Linear<float> classify;

  NodeClassifier(Reader r, std::size_t features, std::size_t classes, Generator& gen)
      : reader(r), self(features, kHidden, gen), classify(kHidden, classes, gen) {
    register_module("self", self);
    if (r == Reader::mean) {
      mean = std::make_unique<nn::MeanAggregation<float>>(features, kHidden, gen);
      register_module("mean", *mean);
    } else if (r == Reader::attention) {
      attention = std::make_unique<nn::GraphAttention<float>>(features, kHidden / kHeads, kHeads, gen);
      register_module("attention", *attention);
    }
    register_module("classify", classify);
  }
  // Logits (nodes, classes); the attention weights (heads, nodes, nodes) into *weights if asked.
  Tns forward(const data::Graph& g, const Allowed& adjacency, Tns* weights = nullptr) const {
    const Tns x(xt::cast<float>(g.features));
    Tns h = self.forward(x);
    if (reader == Reader::mean) h = add(h, mean->forward(x, adjacency));
    if (reader == Reader::attention) h = add(h, attention->forward(x, adjacency, weights));
    return classify.forward(relu(h));
  }
};

struct Trained {
  std::string name;
  History history;
  double test_accuracy = 0, reliable_accuracy = 0, unreliable_accuracy = 0;
};

// Held-out accuracy over graphs, overall and on the reliable and unreliable nodes apart.
Trained score(const NodeClassifier& model, const std::vector<data::Graph>& graphs, const std::vector<Allowed>& adjacency) {
  NoGrad off;
  double right = 0, all = 0, rel_right = 0, rel = 0, unrel_right = 0, unrel = 0;
  for (std::size_t k = 0; k < graphs.size(); ++k) {
    const IndexArray predicted = nn::argmax_last(model.forward(graphs[k], adjacency[k]).value());
    for (std::size_t i = 0; i < predicted.size(); ++i) {
      const bool ok = predicted(i) == graphs[k].labels(i);
      right += ok, all += 1;
      (graphs[k].unreliable[i] ? unrel_right : rel_right) += ok;
      (graphs[k].unreliable[i] ? unrel : rel) += 1;
    }
  }
  return {"", {}, right / all, rel_right / std::max(rel, 1.0), unrel_right / std::max(unrel, 1.0)};
}

std::vector<Allowed> adjacencies(const std::vector<data::Graph>& graphs, std::size_t nodes) {
  std::vector<Allowed> out;
  for (const data::Graph& g : graphs) out.push_back(nn::neighbourhoods(nodes, g.edges));
  return out;
}

// One recipe for the three: AdamW, a short warm-up, a cosine decay; two graphs a step.
Recipe recipe_for(const std::string& name) {
  Recipe r;
  r.label = name, r.epochs = epochs(60, 60), r.batch = 2, r.lr = 1e-2, r.weight_decay = 5e-4, r.warmup = 0.05;
  r.floor = 0.1, r.seed = seed() + 5;
  return r;
}

Trained train_one(NodeClassifier& model, const std::string& name, const Graphs& g) {
  const std::size_t n = g.options.nodes;
  const std::vector<Allowed> train_adj = adjacencies(g.train, n), val_adj = adjacencies(g.validation, n),
                             test_adj = adjacencies(g.test, n);
  Recipe r = recipe_for(name);
  r.validate = [&] { return Scores{{"accuracy", score(model, g.validation, val_adj).test_accuracy}}; };
  const History h = train(model, g.train.size(), [&](const std::vector<std::size_t>& rows) {
    Tns loss = cross_entropy(model.forward(g.train[rows[0]], train_adj[rows[0]]), g.train[rows[0]].labels);
    for (std::size_t k = 1; k < rows.size(); ++k)
      loss = add(loss, cross_entropy(model.forward(g.train[rows[k]], train_adj[rows[k]]), g.train[rows[k]].labels));
    return div(loss, float(rows.size()));  // the mean over the batch's graphs of each graph's mean over nodes
  }, r);
  Trained t = score(model, g.test, test_adj);
  t.name = name, t.history = h;
  return t;
}

std::vector<Trained> three_readers(const Graphs& g, NodeClassifier& gat) {
  const std::size_t features = g.options.classes + 1 + g.options.noise_features;
  Generator gen_none(seed() + 11), gen_mean(seed() + 12);
  NodeClassifier alone(Reader::none, features, g.options.classes, gen_none);
  NodeClassifier mean(Reader::mean, features, g.options.classes, gen_mean);
  say("Three models with the same hidden width (", NodeClassifier::kHidden, ") and the same recipe. Each reads the "
      "node's own features, $U x_i$; the first reads nothing else (", alone.parameter_count(), " parameters), the "
      "second adds the mean of the node's neighbourhood, itself included, $W \\frac{1}{|N(i)|}\\sum_{j \\in N(i)} "
      "x_j$ (", mean.parameter_count(), "), the third adds graph attention with ", NodeClassifier::kHeads, " heads of ",
      NodeClassifier::kHidden / NodeClassifier::kHeads, " features each, concatenated (", gat.parameter_count(),
      "). A head reads");
  say("$$e_{ij} = \\mathrm{LeakyReLU}(a_q^\\top W x_i + a_k^\\top W x_j),\\qquad \\alpha_{ij} = "
      "\\frac{\\exp e_{ij}}{\\sum_{l \\in N(i)} \\exp e_{il}},\\qquad h_i = \\sum_{j \\in N(i)} \\alpha_{ij} W x_j.$$");
  say("The softmax runs over the neighbourhood only: it is lesson 04's masked softmax, the graph's adjacency matrix "
      "(with self-loops) as the mask.");
  std::vector<Trained> runs;
  runs.push_back(train_one(alone, "each node alone", g));
  runs.push_back(train_one(mean, "mean of neighbours", g));
  runs.push_back(train_one(gat, "graph attention", g));
  say("Each trained the same way: ", describe(recipe_for(""), fit_steps(g.train.size(), recipe_for(""))), ".");
  return runs;
}

void results(const std::vector<Trained>& runs, double unreliable_noise) {
  const Trained &alone = runs[0], &mean = runs[1], &gat = runs[2];
  std::vector<std::vector<std::string>> rows;
  for (const Trained& t : runs)
    rows.push_back(row(t.name, fixed(t.test_accuracy, 3), fixed(t.reliable_accuracy, 3), fixed(t.unreliable_accuracy, 3)));
  table({"model", "test accuracy", "reliable nodes", "unreliable nodes"}, rows);
  metric("test_acc_alone", alone.test_accuracy);
  metric("test_acc_mean", mean.test_accuracy);
  metric("test_acc_attention", gat.test_accuracy);
  metric("test_acc_unreliable_alone", alone.unreliable_accuracy);
  metric("test_acc_unreliable_mean", mean.unreliable_accuracy);
  metric("test_acc_unreliable_attention", gat.unreliable_accuracy);
  claim({"attention_reads_the_graph", "test_acc_attention >= test_acc_alone + 0.05",
         text("Attention over the neighbours helps: the test accuracy is ", fixed(gat.test_accuracy, 3), " against ",
              fixed(alone.test_accuracy, 3), " for a node read alone."),
         text("Attention over the neighbours did not clearly help in this run: ", fixed(gat.test_accuracy, 3),
              " against ", fixed(alone.test_accuracy, 3), " for a node read alone.")});
  claim({"mean_helps", "test_acc_mean >= test_acc_alone + 0.05",
         text("The plain mean helps too (", fixed(mean.test_accuracy, 3), ")."),
         text("The plain mean helps little (", fixed(mean.test_accuracy, 3), " against ", fixed(alone.test_accuracy, 3),
              "): it averages every neighbour with the same weight, so the unreliable ones' noise (sd ",
              fixed(unreliable_noise, 1), ") comes in with the reliable ones' signal."),
         Expect::either_way});
  claim({"attention_beats_mean", "test_acc_attention >= test_acc_mean + 0.02",
         text("Attention beats the plain mean (", fixed(gat.test_accuracy, 3), " against ", fixed(mean.test_accuracy, 3),
              "): the mean reads every neighbour alike, the unreliable ones' noise included."),
         text("Attention did not beat the plain mean in this run (", fixed(gat.test_accuracy, 3), " against ",
              fixed(mean.test_accuracy, 3), ").")});
  claim({"neighbours_rescue_unreliable", "test_acc_unreliable_attention >= test_acc_unreliable_alone + 0.15",
         text("The unreliable nodes gain most: alone they are classified ", percent(alone.unreliable_accuracy, 0),
              " right, by attention over their neighbours ", percent(gat.unreliable_accuracy, 0), "."),
         text("The unreliable nodes gain little from attention (", percent(alone.unreliable_accuracy, 0), " alone, ",
              percent(gat.unreliable_accuracy, 0), " with attention).")});
  std::vector<Run> curves;
  for (const Trained& t : runs) curves.push_back({t.name, &t.history});
  ScoreFigureOptions style{"Held-out accuracy while training"};
  style.chance = 0.25;
  save_figure(score_against_cost(curves, style), "training",
              "Validation accuracy after every epoch of the three models, against steps and against CPU seconds");
  plots::Figure fig(1800, 900);
  fig.title("Test accuracy on graphs never seen in training");
  bar_panel(fig.panel(0).xlabel("nodes").ylabel("accuracy"), {"all", "reliable", "unreliable"},
            {{alone.name, {alone.test_accuracy, alone.reliable_accuracy, alone.unreliable_accuracy}},
             {mean.name, {mean.test_accuracy, mean.reliable_accuracy, mean.unreliable_accuracy}},
             {gat.name, {gat.test_accuracy, gat.reliable_accuracy, gat.unreliable_accuracy}}},
            2, 1.15);
  save_figure(fig, "accuracy", "Test accuracy of the three readers, on every node and on the reliable and unreliable "
                               "nodes apart");
}

// ---------------------------------------------------------------------------------------------
// 3. Where the attention goes

void where_attention_goes(const NodeClassifier& gat, const Graphs& g) {
  NoGrad off;
  // Over the test graphs, the attention each node gives its neighbours (itself left out), split by
  // what the neighbour is: reliable or not, same class or not.
  double on_reliable = 0, on_same = 0, total = 0, max_outside = 0;
  for (const data::Graph& x : g.test) {
    const Allowed adj = nn::neighbourhoods(g.options.nodes, x.edges);
    Tns w;
    gat.forward(x, adj, &w);
    const Array<float>& a = w.value();  // (heads, nodes, nodes)
    for (std::size_t h = 0; h < a.shape(0); ++h)
      for (std::size_t i = 0; i < a.shape(1); ++i)
        for (std::size_t j = 0; j < a.shape(2); ++j) {
          if (!adj.mask()(i, j)) {
            max_outside = std::max(max_outside, double(a(h, i, j)));
            continue;
          }
          if (i == j) continue;
          total += a(h, i, j);
          on_reliable += x.unreliable[j] ? 0.0 : a(h, i, j);
          on_same += x.labels(i) == x.labels(j) ? a(h, i, j) : 0.0;
        }
  }
  metric("attention_outside_graph_max", max_outside);
  metric("attention_on_reliable", on_reliable / total);
  metric("attention_on_same_class", on_same / total);
  claim({"attention_stays_on_graph", "attention_outside_graph_max == 0",
         "No head gives any weight to a node outside the neighbourhood: the masked softmax puts exact zeros there.",
         text("Some weight (", sci(max_outside, 1), ") falls outside the neighbourhood.")});
  claim({"attention_prefers_reliable", "attention_on_reliable >= reliable_edge_share + 0.1",
         text("The heads learned whom to believe: ", percent(on_reliable / total, 0), " of the attention a node gives its "
              "neighbours goes to reliable ones, which are ", percent(g.reliable_edges, 0),
              " of the edges."),
         text("The heads give reliable neighbours ", percent(on_reliable / total, 0), " of their attention, close to "
              "their share of the edges (", percent(g.reliable_edges, 0), ").")});
  claim({"static_attention", "attention_on_same_class <= same_class_edge_share + 0.1",
         text("But they hardly prefer neighbours of the reader's own class: ", percent(on_same / total, 0),
              " of the attention goes there, against ", percent(g.same_class_edges, 0),
              " of the edges. The score $a_q^\\top W x_i + a_k^\\top W x_j$ is a sum of a term for the reader and a term "
              "for the neighbour, so every node ranks its neighbours the same way: it can learn who is reliable, "
              "not who is like itself (GATv2, Brody et al. 2022, moves the nonlinearity inside to allow that)."),
         text(percent(on_same / total, 0), " of the attention goes to neighbours of the reader's own class, more than "
              "their share of the edges (", percent(g.same_class_edges, 0),
              "): through the reliable neighbours, which share the class more often than noise would."),
         Expect::either_way});
  // A small graph of the same kind, never seen, with the first head's attention on its edges.
  data::GraphTaskOptions small = g.options;
  small.nodes = 24, small.same_class = 2, small.other_class = 1;
  const data::Graph x = data::make_graph(small, 3 * seed() + 7);
  const Allowed adj = nn::neighbourhoods(small.nodes, x.edges);
  Tns w;
  gat.forward(x, adj, &w);
  const Array<float> mean_heads = xt::mean(w.value(), {0});
  std::vector<double> weight;
  for (const auto& [a, b] : x.edges) weight.push_back(0.5 * (mean_heads(a, b) + mean_heads(b, a)));
  // The same weights in the attention explorer: every head, every node's row over its neighbours.
  ExplorerPage page;
  page.title = "Lesson 19: graph attention on a small graph never seen in training";
  page.query_side = "reading node", page.key_side = "neighbour";
  page.note = "Each node (right) reads its neighbours (left); a label is the node, its class and, for an unreliable "
              "node, a '?'. Hover a node to read its weights; every head in the model view.";
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < small.nodes; ++i)
    labels.push_back(text(i, " c", x.labels(i), x.unreliable[i] ? " ?" : ""));
  std::vector<xt::xarray<double>> heads;
  for (std::size_t h = 0; h < w.value().shape(0); ++h) heads.push_back(xt::cast<double>(xt::view(w.value(), h)));
  page.inputs.push_back({"24 nodes", labels, labels, {"graph attention"}, {heads}});
  show_explorer(page, "explorer", "The attention explorer on the small graph: hover a node to see how much each neighbour "
                                  "gets; an unreliable neighbour ('?') gets little from every reader");
  draw_graph(x, nullptr, "small_graph", "A small graph of the task: colour is the class, grey dashed nodes are unreliable");
  draw_graph(x, &weight, "attention_on_edges",
             "The same graph, each edge as thick as the attention the trained model's heads give it (both directions, "
             "mean over heads)");
}

}  // namespace

int main(int argc, char** argv) {
  return run_lesson({"19_graph_attention", "Attention on graphs",
                     "Graph attention against a mean over neighbours and against no graph, on graphs where some "
                     "neighbours are noise, and where the attention goes",
                     "test_acc_attention", "accuracy"},
                    argc, argv, [] {
                      section("1. A graph in which some neighbours lie");
                      const Graphs g = the_task();
                      Generator gen(seed() + 13);
                      NodeClassifier gat(Reader::attention, g.options.classes + 1 + g.options.noise_features,
                                         g.options.classes, gen);
                      section("2. Three readers of one graph");
                      const std::vector<Trained> runs = three_readers(g, gat);
                      section("3. Held-out results");
                      results(runs, g.options.unreliable_noise);
                      section("4. Where the attention goes");
                      where_attention_goes(gat, g);
                    });
}
