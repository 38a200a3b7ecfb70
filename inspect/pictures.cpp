// Pictures and test-set indices as the image models of inspect read them (inspect/inspect.hpp).
#include <algorithm>

#include "inspect/inspect.hpp"
#include "io/files.hpp"
#include "io/pgm.hpp"
#include "io/program.hpp"
#include "lessons/story/text.hpp"
#include "plots/read_png.hpp"

namespace attnlab::inspect {

xt::xarray<double> read_picture(const std::string& path, const std::string& who) {
  const std::string head = read_file(path, who.c_str()).substr(0, 8);
  if (head.rfind("\x89PNG", 0) == 0) return plots::read_png_grey(path);
  if (head.size() >= 2 && head[0] == 'P' && head[1] >= '1' && head[1] <= '7') return read_pgm(path);
  throw IoError(who + ": '" + path + "' is neither a PNG nor a PGM file (convert it first, e.g. "
                "convert '" + path + "' picture.png)");
}

lessons::Invert invert_option(const Request& r) {
  const auto it = r.options.find("--invert");
  if (it == r.options.end() || it->second == "auto") return lessons::Invert::automatic;
  if (it->second == "yes") return lessons::Invert::always;
  if (it->second == "no") return lessons::Invert::never;
  throw UsageError("--invert takes auto, yes or no, got '" + it->second + "'");
}

std::string how_prepared(const xt::xarray<double>& grey, const lessons::PreparedImage& p, std::size_t side) {
  using lessons::text;
  std::string s = text(grey.shape()[1], " x ", grey.shape()[0], " pixels");
  if (grey.shape()[0] != grey.shape()[1])
    s += text(", padded to ", p.padded_width, " x ", p.padded_height, " with its border's grey");
  s += text(", area-averaged to ", side, " x ", side, ", ", p.inverted ? "inverted" : "not inverted",
            " (its border's grey: ", lessons::fixed(p.border, 2), ")");
  return s;
}

std::vector<std::size_t> indices_option(const Request& r, std::size_t count, const std::string& what) {
  std::vector<std::size_t> out;
  const auto it = r.options.find("--index");
  if (it == r.options.end()) return out;
  const std::string& s = it->second;
  const std::string digits = std::to_string(count - 1);
  for (std::size_t start = 0; start <= s.size();) {
    const std::size_t comma = std::min(s.find(',', start), s.size());
    const std::string one = s.substr(start, comma - start);
    if (one.empty() || one.size() > digits.size() || one.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(one) >= count)
      throw UsageError("--index takes " + what + " from 0 to " + digits + " (several: 3,17,42), got '" + s + "'");
    out.push_back(std::stoul(one));
    start = comma + 1;
  }
  return out;
}

}  // namespace attnlab::inspect
