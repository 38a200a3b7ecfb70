#include "io/orphans.hpp"

#include <dirent.h>
#include <signal.h>

#include <cerrno>
#include <cstdlib>

namespace attnlab {

std::vector<std::string> orphans(const std::string& folder, const std::string& prefix) {
  std::vector<std::string> out;
  DIR* dir = ::opendir(folder.c_str());
  if (!dir) return out;
  while (const dirent* e = ::readdir(dir)) {
    const std::string entry = e->d_name;
    if (entry.compare(0, prefix.size(), prefix) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(entry.c_str() + prefix.size(), &end, 10);
    if (pid <= 0 || (*end != '\0' && *end != '-')) continue;
    // kill(pid, 0) sends nothing: it only asks whether the process exists.
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) out.push_back(folder + "/" + entry);
  }
  ::closedir(dir);
  return out;
}

}  // namespace attnlab
