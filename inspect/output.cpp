// What every model of inspect does alike: check its options, refuse what it cannot read, write
// its figures and its explorer page (inspect/inspect.hpp).
#include <cmath>
#include <iostream>

#include "inspect/inspect.hpp"
#include "io/files.hpp"
#include "io/program.hpp"
#include "lessons/kit/self_attention_input.hpp"
#include "lessons/story/text.hpp"

namespace attnlab::inspect {

void refuse_unknown(const std::vector<std::string>& chars, const nn::data::Vocab& v, const std::string& lesson) {
  const std::vector<std::string> unknown = unknown_characters(chars, v);
  if (!unknown.empty())
    throw UsageError("not in the vocabulary of " + lesson + "'s model (the characters of its training text): " +
                     lessons::listing(unknown));
}

double real_option(const Request& r, const std::string& flag, double fallback, double lo, double hi) {
  const auto it = r.options.find(flag);
  if (it == r.options.end()) return fallback;
  std::size_t used = 0;
  double v = std::nan("");
  try {
    v = std::stod(it->second, &used);
  } catch (const std::exception&) {
  }
  if (used != it->second.size() || !(v >= lo && v <= hi))
    throw UsageError(flag + " needs a number from " + lessons::text(lo) + " to " + lessons::text(hi) + ", got '" +
                     it->second + "'");
  return v;
}

long long integer_option(const Request& r, const std::string& flag, long long fallback, long long lo, long long hi) {
  const auto it = r.options.find(flag);
  return it == r.options.end() ? fallback : integer_argument(flag, it->second, lo, hi);
}

std::vector<std::pair<std::string, plots::Figure>> head_figures(const lessons::AttentionInput& in, std::size_t around,
                                                                std::size_t numbered_from, const std::string& title) {
  const std::size_t tokens = in.queries.size(), n = std::min<std::size_t>(24, tokens);
  const std::size_t first = std::min(tokens - n, around > n / 2 ? around - n / 2 : 0);
  const std::size_t x = numbered_from + first;
  const std::vector<plots::Figure> grids = lessons::layer_head_grids(
      lessons::self_attention_span(in, first, n), lessons::text(title, " (characters ", x, "-", x + n - 1, ")"));
  std::vector<std::pair<std::string, plots::Figure>> out;
  for (std::size_t l = 0; l < grids.size(); ++l) out.emplace_back(lessons::text("heads_layer_", l + 1), grids[l]);
  return out;
}

void write_outputs(const std::string& out, const std::vector<std::pair<std::string, plots::Figure>>& figures,
                   const lessons::ExplorerPage& page) {
  const std::string html = lessons::explorer_html(page);
  const std::string why = make_dirs_or_why(out);
  if (!why.empty()) throw std::runtime_error("--out '" + out + "': " + why);
  for (const auto& [name, fig] : figures) fig.save(out + "/" + name + ".png");  // Figure::save is atomic
  write_file_atomic(out + "/explorer.html", html, "inspect");
  std::cout << "Wrote " << figures.size() << " figure" << (figures.size() == 1 ? "" : "s") << " and explorer.html to "
            << out << "/.\n";
}

}  // namespace attnlab::inspect
