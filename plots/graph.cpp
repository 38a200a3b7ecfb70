#include "plots/graph.hpp"

#include <graphviz/gvc.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "io/files.hpp"
#include "plots/error.hpp"

namespace attnlab::plots {

namespace {

// The messages Graphviz would print to stderr, kept for the error we throw.
std::string g_graphviz_errors;
int keep_error(char* message) {
  g_graphviz_errors += message;
  return 0;
}

// One Graphviz context for the life of the process, never freed. Graphviz 2.42's pango plugin
// keeps a pointer to the last font name in a static; the name belongs to the context's font
// table, so after gvFreeContext the next layout compares against freed memory
// (AddressSanitizer found it: heap-use-after-free in textspan_size, the second save_graph of a
// process). Graphviz is not thread-safe either: one call at a time.
GVC_t* graphviz() {
  static GVC_t* const gvc = gvContext();
  return gvc;
}
std::mutex g_graphviz_mutex;

}  // namespace

void save_graph(const std::string& dot, const std::string& path, double dpi) {
  const auto dot_at = path.find_last_of('.');
  std::string format = dot_at == std::string::npos ? "" : path.substr(dot_at + 1);
  std::transform(format.begin(), format.end(), format.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  require(format == "png" || format == "svg" || format == "pdf", "save_graph", "unknown format of \"", path,
          "\": the extension must be .png, .svg or .pdf");
  const std::lock_guard<std::mutex> one_at_a_time(g_graphviz_mutex);
  g_graphviz_errors.clear();
  agseterrf(keep_error);
  GVC_t* const gvc = graphviz();
  const std::unique_ptr<Agraph_t, int (*)(Agraph_t*)> g(agmemread(dot.c_str()), agclose);
  if (!g) fail("save_graph", "the text is not a DOT graph: ", g_graphviz_errors.empty() ? dot.substr(0, 60) : g_graphviz_errors);
  agsafeset(g.get(), const_cast<char*>("dpi"), const_cast<char*>(std::to_string(format == "png" ? dpi : 72.0).c_str()),
            const_cast<char*>(""));
  if (gvLayout(gvc, g.get(), "dot") != 0) fail("save_graph", "Graphviz cannot lay out the graph: ", g_graphviz_errors);
  char* data = nullptr;
  unsigned int length = 0;
  const int rc = gvRenderData(gvc, g.get(), format.c_str(), &data, &length);
  gvFreeLayout(gvc, g.get());
  if (rc != 0 || !data) fail("save_graph", "Graphviz cannot render ", format, ": ", g_graphviz_errors);
  const std::string bytes(data, length);
  gvFreeRenderData(data);
  try {
    write_file_atomic(path, bytes, "save_graph");
  } catch (const IoError& e) {
    throw PlotError(e.what());
  }
}

std::string dot_quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out + "\"";
}

}  // namespace attnlab::plots
