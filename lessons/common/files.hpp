// Files that are never half-written: write to a temporary name beside the target, then rename.
#pragma once

#include <string>

namespace attnlab::lessons {

// Write `content` to `path` atomically; throws std::runtime_error naming the path on failure,
// leaving neither a partial file nor the temporary behind.
void write_file_atomic(const std::string& path, const std::string& content);

// mkdir -p; throws std::runtime_error naming the path on failure.
void make_dirs(const std::string& path);

std::string read_file(const std::string& path);

}  // namespace attnlab::lessons
