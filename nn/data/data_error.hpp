// A data file that is missing, truncated or corrupt: a problem with the machine or the
// download, not with the caller's arguments (those stay attnlab::ShapeError).
#pragma once

#include <stdexcept>

namespace attnlab::nn::data {

struct DataError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace attnlab::nn::data
