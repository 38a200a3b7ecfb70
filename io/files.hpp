// Files that are never half-written. Every file attnlab writes (checkpoints, .npy/.npz arrays,
// figures, reports, metrics, the course's program logs) goes through AtomicFile:
//
//   1. the bytes go to a temporary file beside the target, created exclusively (mkostemp, O_EXCL)
//      under a hidden name that carries the writer's process id: .<name>.tmp-<pid>-XXXXXX;
//   2. commit() flushes it to disk (fsync), renames it over the target, which POSIX makes atomic
//      within one file system (a reader sees the old file or the new one, never half of one),
//      and fsyncs the folder so that the rename itself survives a crash;
//   3. a failure, or an AtomicFile destroyed before commit(), removes the temporary.
//
// A process killed in the middle cannot clean up after itself; the next write to the same target
// removes the temporaries whose writer no longer runs, so they never pile up.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace attnlab {

// A file that cannot be read or written, or whose contents are not what they claim to be.
struct IoError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class AtomicFile {
 public:
  // `who` starts every error message: "save_npz: cannot write 'ckpt.npz': write: File too large
  // (the previous file, if any, is unchanged)".
  explicit AtomicFile(std::string path, std::string who = "write_file_atomic");
  ~AtomicFile();  // removes the temporary unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, std::size_t size);
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
  void commit();

  const std::string& path() const { return path_; }
  // The temporary's descriptor, for bytes another process writes: a program's output, dup2'ed
  // onto its stdout (course/process). -1 after commit(). Closed on exec in the writer's children.
  int descriptor() const { return fd_; }

 private:
  [[noreturn]] void fail(const char* step, int err);
  std::string path_, who_, temp_;
  int fd_ = -1;
  bool committed_ = false;
};

// The whole of `bytes` to `path`, atomically (AtomicFile).
void write_file_atomic(const std::string& path, std::string_view bytes,
                       const char* who = "write_file_atomic");

// The whole of a regular file; IoError "<who>: cannot open 'path': <reason>", or "<who>: cannot
// read 'path': it is a directory" (or a device, a pipe, a socket: those may never end).
std::string read_file(const std::string& path, const char* who = "read_file");

// mkdir -p; IoError "cannot create the folder 'path': <why>" when it cannot, the why naming the
// part at fault: "'/dev/null' is not a folder", "cannot create '/proc/x': No such file or directory".
void make_dirs(const std::string& path);
// The same, returning the why instead of throwing: "" when the folder exists (or was made).
std::string make_dirs_or_why(const std::string& path);

}  // namespace attnlab
