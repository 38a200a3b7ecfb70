// Checkpoints: one .npz with a key per parameter, named hierarchically as the Module reports it
// ("encoder.layers.0.self_attn.w_q.weight"), and the optimizer's state under "optim/" (for
// example "optim/exp_avg.3"). numpy reads them directly: np.load("ckpt.npz")["embed.weight"].
//
// Saving is atomic (io/npz.hpp): a crash mid-save leaves the previous checkpoint intact.
// Loading checks every name and shape before it changes anything; on a mismatch it throws one
// ShapeError listing the missing names, the unexpected names, and the shapes that differ.
// Float parameters load from float or double arrays (and the reverse), converting.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/tensor.hpp"
#include "nn/optim.hpp"

namespace attnlab::nn {

template <class T>
using NamedParameters = std::vector<std::pair<std::string, Tensor<T>>>;

inline constexpr const char* kOptimizerPrefix = "optim/";

template <class T>
void save_checkpoint(const std::string& path, const NamedParameters<T>& params,
                     const Optimizer<T>* optimizer = nullptr);

// With an optimizer, the file must hold its state; without one, any "optim/" keys are ignored
// (loading weights for evaluation).
template <class T>
void load_checkpoint(const std::string& path, const NamedParameters<T>& params,
                     Optimizer<T>* optimizer = nullptr);
// The same from arrays already read (load_npz, npz_decode); `source` names them in messages.
template <class T>
void load_checkpoint(const Npz& file, const std::string& source, const NamedParameters<T>& params,
                     Optimizer<T>* optimizer = nullptr);

}  // namespace attnlab::nn
