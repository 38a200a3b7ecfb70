// The model of the kill-mid-save test: two tensors of 1 MB each, every entry equal to `version`,
// so a file that mixed two saves would show.
#pragma once

#include "core/tensor.hpp"
#include "nn/checkpoint.hpp"

namespace attnlab::testing {

inline nn::NamedParameters<float> kill_save_model(float version) {
  return {{"encoder.weight", Tensor<float>::full({512, 512}, version)},
          {"decoder.weight", Tensor<float>::full({256, 1024}, version)}};
}

}  // namespace attnlab::testing
