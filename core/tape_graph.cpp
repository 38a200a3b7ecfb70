// The tape as a graph description and as DOT text (core/tape_graph.hpp says why and how).
#include "core/tape_graph.hpp"

#include <cmath>
#include <cstdio>
#include <unordered_map>

namespace attnlab {

std::size_t TapeGraph::edge_count() const {
  std::size_t n = 0;
  for (const TapeNode& node : nodes) n += node.inputs.size();
  return n;
}

namespace {

// Every node behind root, inputs before consumers: an iterative depth-first post-order (the same
// order backward() walks in reverse), following every input, constants included.
template <class T>
std::vector<Node<T>*> nodes_in_order(const Tensor<T>& root, std::unordered_map<const Node<T>*, std::size_t>& index) {
  if (!root.defined()) throw GraphError("describe_tape: the root is an empty tensor handle");
  std::vector<Node<T>*> order;
  std::vector<std::pair<Node<T>*, std::size_t>> stack{{root.node().get(), 0}};
  std::unordered_map<const Node<T>*, bool> seen{{root.node().get(), true}};
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->parents.size()) {
      Node<T>* p = node->parents[next++].get();
      if (seen.emplace(p, true).second) stack.push_back({p, 0});
    } else {
      index[node] = order.size();
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

template <class T>
double l2(const Array<T>& a) {
  double s = 0;
  for (const T& x : a) s += double(x) * double(x);
  return std::sqrt(s);
}

// A DOT string literal (plots::dot_quote lives above core; this is the same few lines).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out + "\"";
}

std::string short_sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}

}  // namespace

template <class T>
TapeGraph describe_tape(const Tensor<T>& root, const TapeNames<T>& names) {
  std::unordered_map<const Node<T>*, std::size_t> index;
  const std::vector<Node<T>*> order = nodes_in_order(root, index);
  TapeGraph g;
  g.nodes.resize(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Node<T>& n = *order[i];
    TapeNode& t = g.nodes[i];
    t.op = n.op;
    t.shape = shape_of(n.value);
    t.leaf = n.is_leaf();
    t.requires_grad = n.requires_grad;
    t.freed = n.graph_freed;
    if (n.has_grad) t.grad_norm = l2(n.grad);
    for (const NodePtr<T>& p : n.parents) t.inputs.push_back(index.at(p.get()));
  }
  for (const auto& [tensor, name] : names) {
    if (!tensor.defined()) continue;
    const auto it = index.find(tensor.node().get());
    if (it != index.end()) g.nodes[it->second].name = name;
  }
  return g;
}

template <class T>
void retain_tape_grads(const Tensor<T>& root) {
  std::unordered_map<const Node<T>*, std::size_t> index;
  for (Node<T>* n : nodes_in_order(root, index)) n->retains_grad = true;
}

std::string to_dot(const TapeGraph& graph, const std::string& title) {
  std::string dot = "digraph tape {\n  rankdir=TB; nodesep=0.35; ranksep=0.45;\n";
  if (!title.empty()) dot += "  labelloc=t; fontsize=18; fontname=\"Helvetica\"; label=" + quoted(title) + ";\n";
  dot += "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#fff6d5\", fontname=\"Helvetica\", fontsize=12];\n"
         "  edge [color=\"#555555\", arrowsize=0.7, fontname=\"Helvetica\", fontsize=10, fontcolor=\"#777777\"];\n";
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const TapeNode& n = graph.nodes[i];
    // "S = matmul" for an op, "Q (leaf)" for a leaf, "G (constant)" for a leaf needing no gradient.
    const std::string kind = n.leaf ? (n.requires_grad ? "leaf" : "constant") : n.op;
    std::string label = n.name.empty() ? kind : n.leaf ? n.name + " (" + kind + ")" : n.name + " = " + kind;
    label += "\n" + shape_str(n.shape);
    if (n.grad_norm) label += "\n‖grad‖ = " + short_sci(*n.grad_norm);
    if (n.freed) label += "\n(freed by backward)";
    std::string style;
    if (n.leaf && n.requires_grad) style = ", fillcolor=\"#d5e8fb\"";
    else if (!n.requires_grad) style = ", style=\"rounded,dashed\", fontcolor=\"#666666\"";
    if (i + 1 == graph.nodes.size()) style += ", penwidth=2.2";
    dot += "  n" + std::to_string(i) + " [label=" + quoted(label) + style + "];\n";
  }
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const auto& in = graph.nodes[i].inputs;
    for (std::size_t s = 0; s < in.size(); ++s) {
      dot += "  n" + std::to_string(in[s]) + " -> n" + std::to_string(i);
      if (in.size() > 1) dot += " [label=\" " + std::to_string(s) + "\"]";
      dot += ";\n";
    }
  }
  return dot + "}\n";
}

template TapeGraph describe_tape(const Tensor<float>&, const TapeNames<float>&);
template TapeGraph describe_tape(const Tensor<double>&, const TapeNames<double>&);
template void retain_tape_grads(const Tensor<float>&);
template void retain_tape_grads(const Tensor<double>&);

}  // namespace attnlab
