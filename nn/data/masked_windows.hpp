// Masked-language-model examples over a token stream, and the counted baselines they are scored
// against (BERT's cloze task, lessons 14 and 15).
//
// A window is [CLS] and then up to context - 1 tokens of a stream (one long sequence of token ids:
// entries one after the other, each ended by a separator), masked by BERT's 80/10/10 rule
// (nn/data/masking.hpp). A batch of windows carries, for every target, its flat place b * L + l in
// the batch (what MaskedLM::forward gathers), the true token, what the rule did to it, and its
// place in the stream (what the neighbour counts read).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/allowed.hpp"
#include "core/array.hpp"
#include "core/random.hpp"
#include "nn/data/masking.hpp"

namespace attnlab::nn::data {

// The ids a masked window needs: [CLS], [MASK], and the maskable tokens [first, end).
struct ClozeIds {
  Index cls = 0, mask = 0, first = 0, end = 0;
};

struct MaskedWindows {
  IndexArray ids;                    // (B, L): [CLS], the tokens as masked, padding (id 0) after a short row
  std::optional<Allowed> real;       // set when some row is padded
  IndexArray positions, targets;     // (N): the flat places to predict and the true tokens
  std::vector<MaskChoice> choices;   // (N)
  std::vector<std::size_t> at;       // (N): the target's place in the stream
  std::size_t size() const { return targets.size(); }
};

// One window per start (stream[start], ... up to context - 1 tokens), each masked with `gen`.
// std::invalid_argument naming masked_windows and the values when the context is below 2, a start
// lies at or past the stream's end, or the ids are inconsistent (first >= end, or [CLS] or [MASK]
// inside [first, end)).
MaskedWindows masked_windows(const ClozeIds& ids, const std::vector<Index>& stream, const std::vector<std::size_t>& starts,
                             std::size_t context, Generator& gen);

// Held-out windows side by side from the start of a stream (at most `limit` of them, context - 1
// tokens apart), in batches of `batch`, masked once with a generator seeded by `mask_seed`: every
// run and every model is scored on the very same targets.
std::vector<MaskedWindows> held_out_windows(const ClozeIds& ids, const std::vector<Index>& stream, std::size_t context,
                                            std::size_t limit, std::size_t batch, std::uint64_t mask_seed);

// `n` window starts drawn uniformly from the places where a whole window fits.
std::vector<std::size_t> random_starts(std::size_t n, std::size_t stream_size, std::size_t context, Generator& gen);

std::size_t count_targets(const std::vector<MaskedWindows>& set);

// `n` windows of the stream read as it is, no masks, for measuring what a model attends to: window
// w is [CLS] and then the context - 1 tokens from place w (context - 1), wrapping around at the
// stream's end, (n, context). std::invalid_argument naming reading_windows for an empty stream,
// no windows or a context below 2.
IndexArray reading_windows(Index cls, const std::vector<Index>& stream, std::size_t n, std::size_t context);

// BERT's rule measured on windows of a stream: the share of the tokens the rule may choose (all but
// [CLS], <eos> and padding) that were chosen as targets, and of the chosen, the shares replaced by
// [MASK], by a random token, and kept.
struct MaskingShares {
  double chosen = 0, masked = 0, random = 0, kept = 0;
};

// Over `windows` windows of `context` tokens, each drawn at a random place with random_starts(1, ...)
// and masked by masked_windows, one after the other with `gen`. std::invalid_argument naming
// measure_masking when windows is 0 (and masked_windows' own for a bad context or ids).
MaskingShares measure_masking(const ClozeIds& ids, const std::vector<Index>& stream, std::size_t context,
                              std::size_t windows, Generator& gen);

// Scores of masked-token predictions: mean cross-entropy (nats), accuracy, and accuracy by what
// the rule did to the target (indexed by MaskChoice; none unused).
struct ClozeScores {
  double loss = 0, accuracy = 0;
  std::array<double, 4> accuracy_by_choice{};
  std::array<std::size_t, 4> count_by_choice{};
  double accuracy_on(MaskChoice c) const { return accuracy_by_choice[std::size_t(c)]; }
};

// Running sums of predictions; scores() turns them into means (zeros when nothing was added).
class ClozeTally {
 public:
  void add(double log_p, bool hit, MaskChoice choice);
  ClozeScores scores() const;

 private:
  double nll_ = 0;
  std::size_t n_ = 0;
  std::array<std::size_t, 4> hits_{}, count_{};
};

// Two baselines counted on a training stream, for tokens in [first, end):
//   unigram:    p(c), the tokens' frequencies (one pseudo-count each): always guesses the most
//               frequent one;
//   neighbours: p(c | the token before, the token after), counted and shrunk towards the unigram
//               with a pseudo-count alpha: (n(l c r) + alpha p(c)) / (n(l . r) + alpha). It reads
//               the true neighbours in the stream even where a model's input has them masked.
// Every id of the streams must be below `end` (specials below first are allowed as neighbours).
class CountedCloze {
 public:
  // std::invalid_argument naming CountedCloze when first >= end or a training id is negative or >= end.
  CountedCloze(const std::vector<Index>& train, Index first, Index end);

  Index most_frequent() const { return best_; }
  double unigram(Index c) const;
  // p(c | left, right) as above.
  double neighbours(Index left, Index c, Index right, double alpha) const;
  ClozeScores score_unigram(const std::vector<MaskedWindows>& set) const;
  // The windows' targets, each between its true neighbours in `stream` (the stream the windows were cut from).
  ClozeScores score_neighbours(const std::vector<MaskedWindows>& set, const std::vector<Index>& stream, double alpha) const;
  // The alpha among `alphas` with the lowest neighbour loss on `set`.
  double best_alpha(const std::vector<MaskedWindows>& set, const std::vector<Index>& stream,
                    const std::vector<double>& alphas) const;

 private:
  std::size_t key(Index l, Index r) const { return std::size_t(l) * std::size_t(end_) + std::size_t(r); }
  Index first_, end_;
  std::vector<double> unigram_;
  Index best_ = 0;
  std::unordered_map<std::size_t, std::map<Index, std::size_t>> triple_;
  std::unordered_map<std::size_t, std::size_t> pair_;
};

}  // namespace attnlab::nn::data
