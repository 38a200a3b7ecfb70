// Graphs laid out by Graphviz (libgvc): a DOT description in, a PNG, SVG or PDF file out. For the
// diagrams of the course: the tensors flowing through a module, the tape of a computation.
//
//   save_graph("digraph { x -> y; }", "flow.svg");
//
// The file is written atomically (io/files.hpp), as every figure.
#pragma once

#include <string>

namespace attnlab::plots {

// Lays out `dot` with the dot engine and writes it in the format of the path's extension (.png,
// .svg, .pdf); PNG at `dpi` dots per inch. PlotError when the text is not DOT, the format is
// unknown or the file cannot be written.
void save_graph(const std::string& dot, const std::string& path, double dpi = 192);

// A DOT string literal: the text in quotes, with quotes, backslashes and newlines escaped ("\n"
// starts a new line inside a node's label).
std::string dot_quote(const std::string& text);

}  // namespace attnlab::plots
