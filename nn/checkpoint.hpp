// Checkpoints: one .npz with a key per parameter, named hierarchically as the Module reports it
// ("encoder.layers.0.self_attn.in_proj_weight", PyTorch's names: a state_dict saved with np.savez
// loads here, and these files load into PyTorch with load_state_dict(strict=True)), and the
// optimizer's state under "optim/", keyed by the same names: "optim/lr", "optim/step",
// "optim/exp_avg/encoder.layers.0.linear1.weight", "optim/step/<name>" (Optimizer::state).
// The optimizer's parameters are named by matching their tensors with the named parameters, so
// its state follows each parameter even if the optimizer lists them in another order. Files
// written before (position keys, "optim/exp_avg.3") are refused with a message: load the
// weights alone and start the optimizer afresh. numpy reads checkpoints directly:
// np.load("ckpt.npz")["embed.weight"].
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
