// Everything a lesson uses, in one include: the story (lessons/story: say, section, table,
// metric, ...), the training loop (train) and the figures. Lessons write `using namespace
// attnlab::lessons;` and tell their story.
//
// What else the kit offers, each header one idea (include it where it is needed):
//   training     train (the one loop, from a Recipe: AdamW, warm-up, schedule, clipping, --from),
//                history (what a run records), in_batches (evaluation a batch at a time), seq2seq
//                (the recurrent encoder-decoder), window_training (a language model on a stream of
//                text), recall_training, encoder_tagger, linear_probe, kv_sharing,
//                fortunes_gpt (lessons 11 and 12: the corpus split and the GPT), late_change
//                (what a series still moved over its last tenth: has a run settled?)
//   reading      heads (weight by offset, far, left and right), offset_profile, tagging (scores
//   attention    per token), alignment_grid, attention_spectra, spectrum, self_attention_input,
//                point_attention (keys per query; points on a line in the explorer)
//   explorers    explorer (the page) and explorer_script, causal_lm_explorer (and the causal
//                mask as a figure), recall_explorer,
//                scored_heads (single heads side by side, each at its own scale, with gradients)
//   timing       timing (interleaved medians, the cost harness), forward_backward_time,
//                step_profile (op by op, GFLOP/s), generation_speed
//   models as    model_card (the shared card), transformer_card (GPT, BERT), translation_model,
//   files        vit_model (with its figures), bert (lessons 14 and 15's pieces), caption_model (20)
//   one lesson   approximations (18), translators (08), pixel_mlp (16), image_classifier (16: its
//                classifiers trained, scored and tabled), garment_pairs (16: the relational task's
//                models), caption_views (20)
//   two lessons  translation_setup (08 and 09: the task, the Transformer and the GRU they share)
//                decoded_attention (02 and 03: a decoded date's attention as a map, explorer input, figure)
//   checks       gradcheck_table (a lesson's gradient checks as a table), plain_matrices
//                (double-precision references without the tape), tape_table (a recorded tape as
//                tables), hand_gradients_figure (gradients by hand beside their error)
#pragma once

#include "core/ops.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/kit/history.hpp"
#include "lessons/kit/in_batches.hpp"
#include "lessons/kit/heads.hpp"
#include "lessons/kit/tagging.hpp"
#include "lessons/kit/timing.hpp"
#include "lessons/kit/train.hpp"
#include "lessons/story/clock.hpp"
#include "lessons/story/lesson.hpp"
#include "lessons/story/stats.hpp"
#include "lessons/story/text.hpp"
#include "nn/metrics.hpp"
#include "nn/optim.hpp"
#include "plots/plots.hpp"
