// What every harness checks beyond "no crash, no leak, no undefined behaviour": an input a reader
// refuses throws the reader's own error type (any other exception escapes and libFuzzer reports
// it), and the message names the input, so that a user can tell which file is at fault.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace attnlab::fuzz {

// The name each harness gives its input, as a path would appear in a message.
inline const std::string kSource = "fuzz-input";

inline std::string bytes_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Aborts, which libFuzzer records as a finding, when a condition the reader promises fails.
inline void require(bool ok, const char* what, const std::string& detail = "") {
  if (ok) return;
  std::fprintf(stderr, "broken promise: %s %s\n", what, detail.c_str());
  std::abort();
}

inline void require_named(const char* message) {
  require(std::string(message).find(kSource) != std::string::npos,
          "the error message does not name the input:", message);
}

}  // namespace attnlab::fuzz
