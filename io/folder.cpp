#include "io/folder.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2 (glibc 2.28 and later)
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "io/files.hpp"
#include "io/orphans.hpp"

namespace attnlab {

namespace fs = std::filesystem;

namespace {

// "out/04_x/" -> "out", "04_x"; "04_x" -> ".", "04_x".
std::pair<std::string, std::string> parent_and_name(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const fs::path p(path);
  const std::string parent = p.parent_path().string();
  return {parent.empty() ? "." : parent, p.filename().string()};
}

void sync_folder(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

StagedFolder::StagedFolder(std::string target, std::string marker, std::string who)
    : target_(std::move(target)), who_(std::move(who)) {
  const auto [parent, name] = parent_and_name(target_);
  // "--out '/dev/null/x': '/dev/null' is not a folder": the user's path, and what is wrong with it.
  const auto fail = [&](const std::string& why) { return IoError(who_ + " '" + target_ + "': " + why); };
  if (name.empty() || name == "." || name == "..") throw fail("it names no folder of its own");
  const std::string why = make_dirs_or_why(parent);  // the folder it goes into, made if need be
  if (!why.empty()) throw fail(why);
  std::error_code ec;
  if (fs::exists(target_, ec)) {
    if (!fs::is_directory(target_, ec)) throw fail("it is a file, not a folder");
    if (!fs::is_empty(target_, ec) && !fs::exists(fs::path(target_) / marker, ec))
      throw fail("it holds files but no " + marker + ", so it is not an earlier output to replace; "
                 "choose another folder or empty it");
  }

  const std::string prefix = "." + name + ".partial-";
  for (const std::string& stale : orphans(parent, prefix)) fs::remove_all(stale, ec);
  // The pid says whose it is (for the cleanup above); the count keeps two in one process apart.
  static std::atomic<unsigned> count{0};
  staging_ = parent + "/" + prefix + std::to_string(::getpid()) + "-" + std::to_string(count++);
  if (::mkdir(staging_.c_str(), 0755) != 0) {
    const int err = errno;
    staging_.clear();
    throw fail(std::string("cannot make a staging folder beside it: ") + std::strerror(err));
  }
}

StagedFolder::~StagedFolder() {
  std::error_code ec;
  if (!published_ && !staging_.empty()) fs::remove_all(staging_, ec);
}

void StagedFolder::publish() {
  if (published_) return;
  const auto fail = [&](const char* step, int err) {
    return IoError(who_ + ": cannot publish '" + target_ + "': " + step + ": " + std::strerror(err) +
                   " (the previous folder, if any, is unchanged)");
  };
  std::error_code ec;
  if (!fs::exists(target_, ec)) {
    if (::rename(staging_.c_str(), target_.c_str()) != 0) throw fail("rename", errno);
  } else if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) != 0) {
    // A file system without the exchange (EINVAL): the old folder steps aside first, so for a
    // moment the target is missing, but never half-written.
    if (errno != EINVAL && errno != ENOSYS) throw fail("exchange", errno);
    const std::string old = staging_ + "-old";
    if (::rename(target_.c_str(), old.c_str()) != 0) throw fail("rename", errno);
    if (::rename(staging_.c_str(), target_.c_str()) != 0) {
      const int err = errno;
      ::rename(old.c_str(), target_.c_str());
      throw fail("rename", err);
    }
    fs::remove_all(old, ec);
  }
  published_ = true;
  fs::remove_all(staging_, ec);  // after the exchange, the previous folder
  sync_folder(parent_and_name(target_).first);
}

}  // namespace attnlab
