#include "io/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "io/orphans.hpp"

namespace attnlab {

namespace {

struct PathParts {
  std::string folder, name;  // "a/b.txt" -> "a", "b.txt"; "b.txt" -> ".", "b.txt"
};

PathParts split_path(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// ".<name>.tmp-" : every temporary of one target starts so; the writer's pid follows.
std::string temp_prefix(const std::string& name) { return "." + name + ".tmp-"; }

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string who) : path_(std::move(path)), who_(std::move(who)) {
  const PathParts p = split_path(path_);
  if (p.name.empty()) fail("no file name", EISDIR);
  // The temporaries of writers killed mid-write (a live writer's, this one's included, stay).
  for (const std::string& stale : orphans(p.folder, temp_prefix(p.name))) ::unlink(stale.c_str());
  temp_ = p.folder + "/" + temp_prefix(p.name) + std::to_string(::getpid()) + "-XXXXXX";
  fd_ = ::mkostemp(temp_.data(), O_CLOEXEC);  // a program this process starts does not inherit it
  if (fd_ < 0) {
    const int err = errno;
    temp_.clear();
    fail("creating a temporary file", err);
  }
  ::fchmod(fd_, 0644);  // mkstemp makes 0600; what attnlab writes is meant to be read by others
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

void AtomicFile::fail(const char* step, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
  throw IoError(who_ + ": cannot write '" + path_ + "': " + step + ": " + std::strerror(err) +
                " (the previous file, if any, is unchanged)");
}

void AtomicFile::write(const void* data, std::size_t size) {
  if (fd_ < 0) fail("write after commit", EBADF);
  const char* bytes = static_cast<const char*>(data);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd_, bytes + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write", n == 0 ? EIO : errno);
    done += static_cast<std::size_t>(n);
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) fail("commit twice", EBADF);
  if (::fsync(fd_) != 0) fail("fsync", errno);
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) fail("close", errno);
  if (::rename(temp_.c_str(), path_.c_str()) != 0) fail("rename", errno);
  committed_ = true;
  // Make the rename itself durable. Some file systems refuse fsync on a folder: not an error.
  const int dir = ::open(split_path(path_).folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void write_file_atomic(const std::string& path, std::string_view bytes, const char* who) {
  AtomicFile f(path, who);
  f.write(bytes);
  f.commit();
}

std::string read_file(const std::string& path, const char* who) {
  const auto error = [&](const std::string& why) {
    return IoError(std::string(who) + ": cannot read '" + path + "': " + why);
  };
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever before fstat can
  // refuse it. It changes nothing for a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw IoError(std::string(who) + ": cannot open '" + path + "': " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  // Only regular files: a device such as /dev/zero never ends (the read would fill memory), a
  // pipe may never end, and a folder reads as nothing, which the callers would misreport.
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw error(std::string("fstat: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw error("it is a directory");
  if (!S_ISREG(st.st_mode)) {
    const mode_t m = st.st_mode;
    const char* kind = S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
                       : S_ISFIFO(m) ? "a pipe" : S_ISSOCK(m) ? "a socket" : "a special file";
    throw error(std::string("not a regular file (") + kind + ")");
  }
  std::string out;
  out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw error(std::string("read: ") + std::strerror(errno));
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::string make_dirs_or_why(const std::string& path) {
  if (path.empty()) return "";
  // Each prefix in turn: one that exists must be a folder; one that does not is made.
  std::string partial = path[0] == '/' ? "/" : "";
  std::stringstream parts(path);
  std::string part;
  while (std::getline(parts, part, '/')) {
    if (part.empty()) continue;
    partial += (partial.empty() || partial.back() == '/' ? "" : "/") + part;
    struct stat st {};
    if (::stat(partial.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return "'" + partial + "' is not a folder";
      continue;
    }
    if (errno == ENOTDIR) return "a part of '" + partial + "' is not a folder";
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      return "cannot create '" + partial + "': " + std::strerror(errno);
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "'" + path + "' is not a folder";
  return "";
}

void make_dirs(const std::string& path) {
  const std::string why = make_dirs_or_why(path);
  if (!why.empty()) throw IoError("cannot create the folder '" + path + "': " + why);
}

}  // namespace attnlab
