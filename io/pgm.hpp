// Netpbm's grey map (PGM), read without a library: what `inspect vit` accepts beside PNG.
//
//   P5 (binary) or P2 (plain text), then width, height and maxval (1 to 65535) as decimal
//   numbers separated by whitespace, any of them followed by "# comments" to the end of the line;
//   after maxval one whitespace character (P5) and the width x height samples row by row: one byte
//   each when maxval < 256, two (most significant first) otherwise; in P2, decimal numbers.
//
// The image comes back as (height, width) grey levels sample / maxval in [0, 1]. Everything is
// checked before it is used: a bad magic number, a missing or non-numeric field, a size of 0 or
// past kPgmMaxSide, a sample above maxval, missing or extra data each throw IoError naming the
// file (or `what`) and the fault; nothing is allocated from a size before it is checked.
#pragma once

#include <cstddef>
#include <string>

#include "core/array.hpp"

namespace attnlab {

inline constexpr std::size_t kPgmMaxSide = 16384;  // a grey map this wide or tall is not a picture to scale to 28 x 28

// The image in `bytes`; `what` names it in messages ("read_pgm: 'shirt.pgm'").
Array<double> pgm_decode(const std::string& bytes, const std::string& what);

// The file at `path`: IoError naming it when it cannot be read or is not a PGM as above.
Array<double> read_pgm(const std::string& path);

}  // namespace attnlab
