// A recorded tape (core/tape_graph.hpp, describe_tape) as the tables lesson 06 shows: the nodes in
// topological order with their inputs, and after backward the norm of each node's gradient.
#pragma once

#include <string>
#include <vector>

#include "core/tape_graph.hpp"

namespace attnlab::lessons {

// One row per node, in the tape's order: number (from 1), name, op, shape, its inputs by name
// ("-" for none) and kind ("leaf, needs a gradient", "constant" or "op"). std::out_of_range naming
// tape_rows for an input index outside the graph.
std::vector<std::vector<std::string>> tape_rows(const TapeGraph& graph);

// One row per node: name, op, shape and ‖dL/d(node)‖ to 4 decimals, "none (constant)" where the
// node holds no gradient.
std::vector<std::vector<std::string>> tape_gradient_rows(const TapeGraph& graph);

// The two as tables in the lesson's report, with their headers.
void tape_table(const TapeGraph& graph);
void tape_gradient_table(const TapeGraph& graph);

}  // namespace attnlab::lessons
