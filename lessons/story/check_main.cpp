// lesson_check: the smoke check ctest runs on a lesson's output folder.
//
//   lesson_check DIR [--same-as DIR2] [METRIC>=VALUE | METRIC<=VALUE ...]
//
// Checks that report.md exists, metrics.json parses, every figure it lists exists and is a
// valid PNG (chunk walk with CRCs) or well-formed SVG, every metric bound holds, and, with
// --same-as, that the two runs' metrics.json agree on everything but the timings.
#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/files.hpp"
#include "io/program.hpp"

using namespace attnlab;
using Json = nlohmann::ordered_json;

namespace {

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | p[3];
}

// Empty string if valid, else what is wrong.
std::string png_problem(const std::string& bytes) {
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  if (bytes.size() < 8 || std::memcmp(bytes.data(), sig, 8) != 0) return "no PNG signature";
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t at = 8;
  bool first = true;
  while (at + 12 <= bytes.size()) {
    const std::uint32_t len = be32(p + at);
    if (at + 12 + len > bytes.size()) return "truncated chunk";
    const std::string type(bytes, at + 4, 4);
    if (first && (type != "IHDR" || len != 13)) return "first chunk is not IHDR";
    if (first && (be32(p + at + 8) == 0 || be32(p + at + 12) == 0)) return "zero-size image";
    first = false;
    const uLong crc = crc32(crc32(0L, Z_NULL, 0), p + at + 4, len + 4);
    if (crc != be32(p + at + 8 + len)) return "bad CRC in " + type;
    if (type == "IEND") return at + 12 + len == bytes.size() ? "" : "data after IEND";
    at += 12 + len;
  }
  return "no IEND chunk";
}

std::string svg_problem(const std::string& text) {
  if (text.find("<svg") == std::string::npos) return "no <svg> element";
  const auto end = text.find_last_not_of(" \n\r\t");
  if (end == std::string::npos || text.compare(end - 5, 6, "</svg>") != 0) return "does not end with </svg>";
  return "";
}


constexpr const char* kUsage =
    "usage: lesson_check DIR [--same-as DIR2] [METRIC>=VALUE | METRIC<=VALUE ...] [--help] [--version]\n";

struct Bound {
  std::string text, metric;
  double value;
  bool at_least;  // >= (else <=)
};

Bound parse_bound(const std::string& arg) {
  const auto ge = arg.find(">="), le = arg.find("<=");
  const auto at = ge != std::string::npos ? ge : le;
  char* end = nullptr;
  const double value = at == std::string::npos ? 0.0 : std::strtod(arg.c_str() + at + 2, &end);
  if (at == std::string::npos || at == 0 || end == arg.c_str() + at + 2 || *end != '\0')
    throw UsageError("bad bound '" + arg + "' (METRIC>=VALUE or METRIC<=VALUE)");
  return {arg, arg.substr(0, at), value, ge != std::string::npos};
}

int check(const std::vector<std::string>& args) {
  if (args.empty() || args[0].rfind("--", 0) == 0) throw UsageError("missing DIR");
  const std::string dir = args[0];
  std::string same_as;
  std::vector<Bound> bounds;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--same-as") {
      if (i + 1 >= args.size()) throw UsageError("--same-as needs a folder");
      same_as = args[++i];
    } else {
      bounds.push_back(parse_bound(args[i]));
    }
  }

  int failures = 0;
  auto problem = [&](const std::string& what) {
    std::cerr << "lesson_check: " << dir << ": " << what << "\n";
    ++failures;
  };
  try {
    const std::string report = read_file(dir + "/report.md");
    if (report.size() < 200) problem("report.md is nearly empty");
    const Json m = Json::parse(read_file(dir + "/metrics.json"));
    for (const char* key : {"lesson", "seed", "configuration", "metrics", "figures", "timings"})
      if (!m.contains(key)) problem(std::string("metrics.json lacks \"") + key + "\"");
    if (m.value("figures", Json::array()).empty()) problem("no figures listed");
    for (const Json& f : m.value("figures", Json::array())) {
      const std::string name = f.get<std::string>();
      std::string bytes;
      try {
        bytes = read_file(dir + "/" + name);
      } catch (const std::exception& e) {
        problem(e.what());
        continue;
      }
      const bool png = name.size() > 4 && name.compare(name.size() - 4, 4, ".png") == 0;
      const std::string why = png ? png_problem(bytes) : svg_problem(bytes);
      if (!why.empty()) problem(name + ": " + why);
      if (report.find(name) == std::string::npos && png) problem(name + " is not shown in report.md");
    }
    if (!same_as.empty()) {
      Json a = m, b = Json::parse(read_file(same_as + "/metrics.json"));
      a.erase("timings");
      b.erase("timings");
      if (a != b) problem("metrics.json differs from " + same_as + " (same seed, other numbers)");
    }
    for (const Bound& bound : bounds) {
      if (!m["metrics"].contains(bound.metric)) {
        problem("metric " + bound.metric + " missing");
        continue;
      }
      const double v = m["metrics"][bound.metric].get<double>();
      const bool ok = bound.at_least ? v >= bound.value : v <= bound.value;
      std::cout << "  " << bound.metric << " = " << v << (ok ? "  ok (" : "  FAILS (") << bound.text << ")\n";
      if (!ok) problem("metric " + bound.text + " does not hold: " + std::to_string(v));
    }
  } catch (const std::exception& e) {
    problem(e.what());
  }
  std::cout << (failures ? "lesson_check: FAILED\n" : "lesson_check: all checks passed\n");
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) { return run_program("lesson_check", kUsage, argc, argv, check); }
