// Associative recall trained with a recipe: the task's data (nn/data/recall.hpp), the one-layer
// model with its attention swapped (nn/recall_model.hpp), trained by the kit's train() with the
// held-out accuracy after every epoch. Every attention starts from the same weights (one seed), so
// two runs differ only in the attention they use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "lessons/kit/train.hpp"
#include "nn/data/recall.hpp"
#include "nn/recall_model.hpp"

namespace attnlab::lessons {

struct RecallTask {
  nn::data::RecallConfig config;
  nn::data::Recall train, held_out;
  std::size_t band = 0;  // local attention's window and Linformer's rank
};

struct RecallRun {
  std::string name;
  nn::AttentionKind kind = nn::AttentionKind::exact;
  std::unique_ptr<nn::RecallModel> model;
  History history;                // validation score "accuracy", on the held-out set
  double accuracy = 0, half = 0;  // held-out accuracy at the end and after half the epochs
};

// The task: `train_count` training and then `held_out_count` held-out sequences of `config`, both
// drawn from one Generator(seed), in that order; `band` is local attention's window and
// Linformer's rank. std::invalid_argument naming make_recall_task for a band of 0 or longer than
// the sequences, or no sequences in either set.
RecallTask make_recall_task(const nn::data::RecallConfig& config, std::size_t train_count, std::size_t held_out_count,
                            std::size_t band, std::uint64_t seed);

// A RecallModel of `width` with attention `kind`, its weights drawn from Generator(init_seed),
// trained on task.train by `recipe` (its label and validate are set here). std::invalid_argument
// naming train_recall for a recipe of fewer than 2 epochs (there is no half way).
RecallRun train_recall(const RecallTask& task, const std::string& name, nn::AttentionKind kind, std::size_t width,
                       Recipe recipe, std::uint64_t init_seed);

}  // namespace attnlab::lessons
