// The attention explorer (lessons/kit/explorer.hpp) for associative recall: on one held-out
// sequence, each question (the queries) against every token (the keys), one "layer" per trained
// attention, each of one head: where exact attention, the window, the sparse patterns and linear
// attention look when they are asked for a fact.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lessons/kit/explorer.hpp"
#include "lessons/kit/recall_training.hpp"

namespace attnlab::lessons {

// A token as the page shows it: "k12=v3" for a fact, "k12?" for a question, "·" for a filler.
std::string recall_token(const nn::data::RecallConfig& config, const nn::data::Recall& set, std::size_t sequence,
                         std::size_t position);

// The page for held-out sequence `sequence` of task.held_out: the weights of each run's model
// (nn::RecallModel::attention_weights) on the rows of the asked positions. std::invalid_argument
// naming recall_explorer for no runs or a sequence out of range; std::logic_error for a Linformer
// run (its weights are not over the tokens).
ExplorerPage recall_explorer(const RecallTask& task, const std::vector<const RecallRun*>& runs, std::size_t sequence);

}  // namespace attnlab::lessons
