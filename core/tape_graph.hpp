// The tape as a graph: a plain description of the nodes recorded behind a tensor, and its DOT text.
//
// core stays free of dependencies: it describes the graph (nodes, their inputs, shapes, gradient
// norms) and writes DOT, a few lines of text; plots/graph.hpp lays it out with Graphviz. Drawing
// the tape of any computation of your own is one call:
//
//   plots::save_graph(tape_dot(loss), "tape.png");
//
// Gradients after backward. backward() drops every intermediate gradient once it has been passed
// on, and (without retain_graph) cuts each node from its inputs, so a description taken after a
// plain backward() shows a lone root marked "freed". The engine already has the two knobs this
// needs, so the tape gains no hook: retain_tape_grads(root) asks every node behind root to keep
// its gradient (retain_grad() on each), and backward(true) keeps the links. Then
//
//   retain_tape_grads(loss);
//   loss.backward(/*retain_graph=*/true);
//   plots::save_graph(tape_dot(loss), "tape_after.png");   // every box shows ‖dL/dnode‖
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.hpp"

namespace attnlab {

struct TapeNode {
  std::string op;                   // the op that made it; "leaf" for a tensor you created
  std::string name;                 // the caller's name for it (TapeNames), or empty
  Shape shape;
  bool leaf = false;                // no inputs (and not freed): a tensor you created
  bool requires_grad = false;       // false: a constant the graph reads but never differentiates
  bool freed = false;               // backward already ran through it and cut its inputs
  std::optional<double> grad_norm;  // ‖gradient‖ (L2 over all entries), if it holds one now
  std::vector<std::size_t> inputs;  // indices into TapeGraph::nodes, in the op's argument order;
                                    // a tensor used twice appears twice
};

struct TapeGraph {
  std::vector<TapeNode> nodes;  // topological order: each node after all its inputs, the root last
  std::size_t edge_count() const;
};

// Names for some tensors of the graph (Q, K, V, the loss), shown in their boxes.
template <class T>
using TapeNames = std::vector<std::pair<Tensor<T>, std::string>>;

// Walks the graph behind root (iteratively: a tape may be thousands of nodes deep). Throws
// GraphError naming describe_tape when root is an empty handle.
template <class T>
TapeGraph describe_tape(const Tensor<T>& root, const TapeNames<T>& names = {});

// Every node behind root keeps its gradient after backward (retain_grad() on each).
template <class T>
void retain_tape_grads(const Tensor<T>& root);

// DOT text: one box per node (name, op, shape, ‖grad‖ when present), leaves filled blue, constants
// dashed, the root bold; one edge per input, numbered when an op has several.
std::string to_dot(const TapeGraph& graph, const std::string& title = "");

template <class T>
std::string tape_dot(const Tensor<T>& root, const TapeNames<T>& names = {}, const std::string& title = "") {
  return to_dot(describe_tape(root, names), title);
}

}  // namespace attnlab
