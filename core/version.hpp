// attnlab's version, the one place it is written: CMake's project() reads it from this line, every
// program prints it for --version, and the installed package carries it (attnlabConfigVersion).
#pragma once

namespace attnlab {
inline constexpr const char* kVersion = "0.1.0";
}
