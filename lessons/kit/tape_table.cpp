#include "lessons/kit/tape_table.hpp"

#include <stdexcept>

#include "lessons/story/lesson.hpp"
#include "lessons/story/text.hpp"

namespace attnlab::lessons {

std::vector<std::vector<std::string>> tape_rows(const TapeGraph& graph) {
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const TapeNode& n = graph.nodes[i];
    std::vector<std::string> in;
    for (std::size_t j : n.inputs) {
      if (j >= graph.nodes.size())
        throw std::out_of_range(text("tape_rows: node ", i + 1, " (", n.op, ") names input ", j, " of a graph of ",
                                     graph.nodes.size(), " nodes"));
      in.push_back(graph.nodes[j].name);
    }
    rows.push_back(row(i + 1, n.name, n.op, shape_str(n.shape), in.empty() ? "-" : listing(in),
                       n.leaf ? (n.requires_grad ? "leaf, needs a gradient" : "constant") : "op"));
  }
  return rows;
}

std::vector<std::vector<std::string>> tape_gradient_rows(const TapeGraph& graph) {
  std::vector<std::vector<std::string>> rows;
  for (const TapeNode& n : graph.nodes)
    rows.push_back(row(n.name, n.op, shape_str(n.shape), n.grad_norm ? fixed(*n.grad_norm, 4) : "none (constant)"));
  return rows;
}

void tape_table(const TapeGraph& graph) {
  table({"#", "tensor", "op", "shape", "inputs", "kind"}, tape_rows(graph));
}

void tape_gradient_table(const TapeGraph& graph) {
  table({"tensor", "op", "shape", "$\\lVert \\partial L / \\partial\\,\\mathrm{tensor} \\rVert$"}, tape_gradient_rows(graph));
}

}  // namespace attnlab::lessons
