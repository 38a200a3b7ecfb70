// Where a model's parameters are: the count of every sub-module down to a depth, in registration
// order, each module's count including everything under it -- the "parameters per block" of a
// model summary (Module::summary lists every tensor instead):
//
//   src_embed              29,056    depth 1
//   encoder                83,200    depth 1
//   encoder.layers.0       41,536    depth 2
//   ...
//   output_bias               394    depth 1: a parameter the model itself holds
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "nn/module.hpp"

namespace attnlab::nn {

struct ParameterBlock {
  std::string name;        // the sub-module's (or a root parameter's) hierarchical name
  std::size_t depth = 1;   // 1: a child of the model; 2: a child of a child; ...
  std::size_t parameters = 0;
};

// The model's sub-modules of depth 1..max_depth (a stack's "layers.0" counts as one level below the
// stack), pre-order, and the model's own parameters as depth-1 rows. Tied tensors are counted in
// every block that holds them; Module::parameter_count() counts them once. ShapeError for max_depth 0.
template <class T>
std::vector<ParameterBlock> parameter_blocks(const Module<T>& model, std::size_t max_depth);

}  // namespace attnlab::nn
