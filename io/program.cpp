#include "io/program.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <thread>

#include "core/version.hpp"
#include "io/files.hpp"

namespace attnlab {

int run_program(const std::string& name, const std::string& usage, int argc, const char* const* argv,
                const std::function<int(const std::vector<std::string>& args)>& body) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      std::cout << usage;
      return 0;
    }
    if (a == "--version") {
      std::cout << name << " " << kVersion << "\n";
      return 0;
    }
  }
  try {
    return body(args);
  } catch (const UsageError& e) {
    std::cout.flush();
    std::cerr << name << ": " << e.what() << "\n" << usage;
    return 2;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "\n" << name << ": error: " << e.what() << "\n";
    return 1;
  } catch (...) {
    std::cout.flush();
    std::cerr << "\n" << name << ": error: an exception that is not a std::exception\n";
    return 1;
  }
}

long long integer_argument(const std::string& flag, const std::string& text, long long lo, long long hi) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi)
    throw UsageError(flag + " needs an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                     ", got '" + text + "'");
  return v;
}

std::string machine_name() {
  std::string model = "an unknown CPU";
  try {
    const std::string info = read_file("/proc/cpuinfo");
    // The first CPU's value of a field, or "".
    auto field = [&](const std::string& name) -> std::string {
      for (std::size_t at = info.find(name); at != std::string::npos; at = info.find(name, at + 1)) {
        const auto colon = info.find(':', at), end = info.find('\n', at);
        if ((at == 0 || info[at - 1] == '\n') && colon < end && info.find_first_not_of(" \t", at + name.size()) == colon)
          return info.substr(colon + 2, end - colon - 2);
      }
      return "";
    };
    // "AMD EPYC" alone names a whole range of processors: the family and model say which.
    if (const std::string name = field("model name"); !name.empty())
      model = name + " (family " + field("cpu family") + ", model " + field("model") + ")";
  } catch (const std::exception&) {
  }
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  return model + ", " + std::to_string(cpus) + (cpus == 1 ? " CPU" : " CPUs");
}

std::string today_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

}  // namespace attnlab
