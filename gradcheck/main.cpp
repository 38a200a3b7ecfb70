// build/bin/gradcheck: every op and module of attnlab, its hand-derived gradient checked
// against central finite differences in double precision. One row per case.
//
//   gradcheck                 run every case
//   gradcheck --filter TEXT   only the cases whose name contains TEXT
//   gradcheck --list          list the cases without running them
//   gradcheck --json FILE     also write the table as data (the course book's page of it)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gradcheck.hpp"
#include "io/files.hpp"
#include "io/program.hpp"

namespace {

constexpr const char* kUsage =
    "usage: gradcheck [--list] [--filter TEXT] [--json FILE] [--help] [--version]\n"
    "  --list          list the cases without running them\n"
    "  --filter TEXT   run only the cases whose name contains TEXT\n"
    "  --json FILE     also write the table to FILE as JSON (written whole, atomically)\n";

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}

std::string pad(const std::string& s, std::size_t w) {
  // Pad by display width: count UTF-8 code points, not bytes.
  std::size_t cps = 0;
  for (unsigned char c : s) cps += (c & 0xC0) != 0x80;
  return cps >= w ? s : s + std::string(w - cps, ' ');
}


int run(const std::vector<std::string>& args) {
  bool list = false;
  std::string filter, json_path;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--list") list = true;
    else if (args[i] == "--filter" && i + 1 < args.size()) filter = args[++i];
    else if (args[i] == "--json" && i + 1 < args.size()) json_path = args[++i];
    else throw attnlab::UsageError("unknown or incomplete argument '" + args[i] + "'");
  }

  auto cases = attnlab::gradcheck_registry();
  std::stable_sort(cases.begin(), cases.end(),
                   [](const auto& a, const auto& b) { return a.name < b.name; });
  cases.erase(std::remove_if(cases.begin(), cases.end(),
                             [&](const auto& c) { return c.name.find(filter) == std::string::npos; }),
              cases.end());
  if (cases.empty()) throw attnlab::UsageError("no case matches '" + filter + "'");
  std::size_t wn = 4, ws = 6;
  for (const auto& c : cases) {
    wn = std::max(wn, c.name.size());
    ws = std::max(ws, c.shapes.size());
  }
  if (list) {
    for (const auto& c : cases) std::cout << pad(c.name, wn) << "  " << c.shapes << "\n";
    std::cout << cases.size() << " cases\n";
    return 0;
  }

  const bool color = isatty(STDOUT_FILENO);
  const char* green = color ? "\033[32m" : "";
  const char* red = color ? "\033[31m" : "";
  const char* reset = color ? "\033[0m" : "";
  const std::string rule(wn + ws + 40, '-');
  std::cout << "attnlab gradcheck: analytic gradients against central differences, double precision\n"
            << "error = |analytic - numeric| / max(|analytic|, |numeric|, 1); OK below 1e-6\n\n"
            << pad("case", wn) << " | " << pad("shapes", ws) << " | max abs err | max rel err | result\n"
            << rule << "\n";
  int passed = 0, failed = 0;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& c : cases) {
    attnlab::GradcheckResult r;
    std::string error;
    try {
      r = c.run();
    } catch (const std::exception& e) {
      error = e.what();
    }
    const bool ok = error.empty() && r.ok;
    (ok ? passed : failed)++;
    std::cout << pad(c.name, wn) << " | " << pad(c.shapes, ws) << " | " << pad(sci(r.max_abs_error), 11)
              << " | " << pad(sci(r.max_rel_error), 11) << " | " << (ok ? green : red)
              << (ok ? "OK" : "FAIL") << reset << "\n";
    if (!error.empty()) std::cout << "    threw: " << error << "\n";
    else if (!ok) std::cout << "    " << r.detail << "\n";
    std::cout.flush();
    rows.push_back({{"name", c.name}, {"shapes", c.shapes}, {"max_abs_error", r.max_abs_error},
                    {"max_rel_error", r.max_rel_error}, {"ok", ok}, {"detail", error.empty() ? r.detail : "threw: " + error}});
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << rule << "\n" << passed << " passed, " << failed << " failed\n" << std::flush;
  std::cerr << "(" << cases.size() << " cases in " << secs << " s)\n";
  if (!json_path.empty()) {
    const nlohmann::ordered_json table = {{"passed", passed}, {"failed", failed}, {"cases", rows}};
    const auto slash = json_path.find_last_of('/');
    if (slash != std::string::npos && slash > 0) attnlab::make_dirs(json_path.substr(0, slash));
    attnlab::write_file_atomic(json_path, table.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return attnlab::run_program("gradcheck", kUsage, argc, argv, run); }
