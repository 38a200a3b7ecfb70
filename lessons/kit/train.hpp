// The one training loop of every lesson. A lesson states its recipe in a few lines and says how
// to compute the loss of a batch (given the rows of its training set that make the batch):
//
//   Recipe r;
//   r.label = "GPT";  r.epochs = 8;  r.batch = 64;
//   r.lr = 3e-3;  r.weight_decay = 0.1;  r.warmup = 0.1;  r.floor = 0.05;
//   r.checkpoint = "gpt.npz";          // saved at the end; --from DIR starts from DIR/gpt.npz
//   r.validate = [&] { return Scores{{"loss", held_out_loss(model)}}; };
//   const History h = train(model, examples, batch_loss, r);
//   say("Training: ", describe(r, fit_steps(examples, r)), ".");
//
// and train() does the rest the same way everywhere: AdamW (Adam when the weight decay is 0)
// with the recipe's betas, the learning-rate schedule (a linear warm-up, then constant, a cosine
// decay to floor * lr, or the inverse square root of "Attention Is All You Need"), and the loop
//
//   for each epoch e: the rows in the order nn::data::epoch_order(examples, seed, e), cut into
//   batches; per batch: zero the gradients, loss, backward, clip the global norm, set the lr of
//   the schedule, step the optimizer; then the held-out scores (in eval mode, no tape);
//
// with a progress bar and a History (lessons/kit/history.hpp) of every step and epoch for the
// figures; and the checkpoint: loaded from --from when given (weights and optimizer state; the
// schedule starts afresh), written into the output folder at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "lessons/kit/history.hpp"
#include "lessons/kit/in_batches.hpp"
#include "nn/module.hpp"
#include "nn/schedule.hpp"

namespace attnlab::lessons {

enum class Decay {
  constant,      // the peak after the warm-up, to the end
  cosine,        // half a cosine from the peak down to floor * lr at the last step
  inverse_sqrt,  // Noam: lr * min(step / warmup, sqrt(warmup / step)), the peak at the warm-up's end
  // Noam without its warm-up (lesson 10's ablation): lr * min(1, sqrt(warmup / step)), the peak
  // from the first step to step `warmup`, then the same decay as inverse_sqrt.
  inverse_sqrt_no_warmup,
};

struct Recipe {
  std::string label = "train";  // the progress bar's, and the checkpoint's messages
  int epochs = 1;
  std::size_t batch = 32;       // examples per step; 0: all of them
  double lr = 1e-3;             // the peak learning rate
  double weight_decay = 0.0;    // AdamW's decoupled decay; 0: plain Adam
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double warmup = 0.0;          // steps of linear warm-up; a value below 1 is that share of all steps
  Decay decay = Decay::cosine;
  double floor = 0.0;           // cosine: the last step's lr as a share of the peak
  double clip = 1.0;            // global gradient-norm clip; 0: none
  std::uint64_t seed = 0;       // the batch order of epoch e is a function of (seed, e)
  bool shuffle = true;
  // A file name in the output folder for the trained weights and optimizer state, one of the
  // LessonInfo::checkpoints; --from DIR then starts from DIR/<checkpoint>. Empty: none.
  std::string checkpoint = "";
  std::function<Scores()> validate;                  // after every epoch (eval mode, no tape)
  std::function<void(std::size_t step)> after_step;  // e.g. a snapshot early in training
};

// The loss of the batch made of these rows of the training set.
using BatchLoss = std::function<Tensor<float>(const std::vector<std::size_t>& rows)>;

// The steps train(model, examples, loss, r) takes: ceil(examples / batch) per epoch (the last
// batch of an epoch may be short; batch 0: one step), times epochs. A schedule that is to end
// where training ends runs over this many steps.
long fit_steps(std::size_t examples, const Recipe& r);

// The warm-up of a recipe in steps, for a run of `total` steps.
long warmup_steps(const Recipe& r, long total);

// The learning rate of each step (1-based) of a run of `total` steps.
nn::Schedule schedule_of(const Recipe& r, long total);

// The recipe in words, for the lesson's prose: "AdamW (peak learning rate 0.003, weight decay
// 0.1, betas 0.9 and 0.99), a linear warm-up over 100 steps then a cosine decay to 1/20 of the
// peak, gradients clipped at norm 1, batches of 64, 1000 steps".
std::string describe(const Recipe& r, long total);

// Trains the model's parameters as the recipe says (see the top of this file). std::invalid_argument
// naming the recipe's label for a recipe that cannot run (no examples, epochs below 1, a negative
// rate or share); an IoError naming --from and the file when the checkpoint cannot be read, and a
// ShapeError listing the mismatches when it belongs to another model. The model is in training mode
// during the steps and in eval mode when train returns.
History train(nn::Module<float>& model, std::size_t examples, const BatchLoss& loss, const Recipe& r);

}  // namespace attnlab::lessons
