// Exercises for lesson 08, the Transformer trained to translate. Grade them with build/bin/grade 08.
//
// Write each function in plain C++ and xtensor (loops, std::exp, std::log ...), not with the
// engine's ops or nn/: these are the learning-rate schedule, the loss and the alignment score
// the lesson uses, done by hand; the last is an experiment the grader runs.
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "lessons/kit/train.hpp"
#include "nn/alignment.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/tasks.hpp"
#include "nn/schedule.hpp"
#include "nn/transformer/seq2seq.hpp"
#include "nn/translate.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 08.1 The Noam learning rate ------------------------------------------------------------
// "Attention Is All You Need", section 5.3: the learning rate of (1-based) step `step` rises in
// proportion to the step for `warmup` steps, peaks at step == warmup at d_model^-0.5 warmup^-0.5,
// and then decays in proportion to 1/sqrt(step), one formula without a jump. Write it as the
// paper does, in one line (read section 5.3, or build it from the two pieces that meet at the peak).
double noam_rate(double d_model, double warmup, double step) {
  not_attempted();  // delete this line and write your answer
}

// ---- 08.2 Alignment error rate of an attention map ------------------------------------------
// attention (T, S + 1): row j is where the decoder looked while it wrote target word j, over the
// S source words and, last, the source's <eos>. alignment (T): alignment[j] is the source word
// target word j truly translates. Link every row to its largest weight (the first one on ties);
// a row whose largest weight is on <eos> links to no word. With A the links you made and S the
// true ones, return AER = 1 - 2 |A and S| / (|A| + |S|) (Och & Ney 2003, with every true link sure).
double alignment_error_rate(const Array<double>& attention, const std::vector<Index>& alignment) {
  not_attempted();  // delete this line and write your answer
}

// ---- 08.4 Experiment: predict where the decoder looks ----------------------------------------
// A small encoder-decoder Transformer (one layer each, d = 32, one head) learns to REVERSE strings
// of digits: "31415" -> "51413". Before it trains, predict its cross-attention: for a source of
// `length` characters, return links (length): links[j] is the source position (0-based) that the
// row writing target character j (0-based) looks at most. The grader trains the model on 3000
// strings of 4 to 8 digits (two seeds), then scores its cross-attention as an aligner against your
// links on 200 more strings of 8, teacher-forced, by the alignment error rate of 08.3 (lesson 08's
// scoring, nn::score_heads_as_aligners). Target: an AER of at most 0.3 on both seeds (0: every
// row's peak where you said; 1: none).
std::vector<Index> predicted_links(std::size_t length) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against nn::noam_lr, the engine's
// cross-entropy and its backward, and nn/alignment.
namespace {

void grade_noam_rate(const std::function<double(double, double, double)>& answer, Grader& g) {
  for (const auto& [d, warmup] : {std::pair{512.0, 4000.0}, std::pair{64.0, 400.0}}) {
    const nn::Schedule engine = nn::noam_lr(d, long(warmup));
    const std::vector<double> steps = {1, warmup / 4, warmup - 1, warmup, warmup + 1, 3 * warmup, 100000};
    Array<double> got = xt::zeros<double>({steps.size()}), want = got;
    for (std::size_t i = 0; i < steps.size(); ++i) got(i) = answer(d, warmup, steps[i]), want(i) = engine(long(steps[i]));
    g.close(with_digits(10, "d = ", d, ", warm-up ", warmup, ": steps 1, w/4, w-1, w, w+1, 3w, 100000"), got, want, 1e-12,
            "check the peak (step == warmup), a step in the rise and one in the decay: the two pieces must meet "
            "at the peak");
  }
}

double engine_aer(const Array<double>& attention, const std::vector<Index>& alignment) {
  const std::size_t words = attention.shape()[1] - 1;
  Mask truth = xt::zeros<bool>({alignment.size(), words});
  for (std::size_t j = 0; j < alignment.size(); ++j) truth(j, std::size_t(alignment[j])) = true;
  return nn::count_links(nn::peak_links(attention, words), truth, truth).error_rate();
}

void grade_alignment_error_rate(const std::function<double(const Array<double>&, const std::vector<Index>&)>& answer,
                                Grader& g) {
  auto one = [&](const std::string& what, const Array<double>& attention, const std::vector<Index>& alignment,
                 const std::string& hint) {
    const double got = answer(attention, alignment), want = engine_aer(attention, alignment);
    g.check(std::abs(got - want) <= 1e-12, what, with_digits(10, "yours ", got, ", expected ", want), hint);
  };
  // Target word j translates source word alignment[j]: a mirrored noun phrase and a verb last.
  const std::vector<Index> truth = {2, 1, 0, 3};
  Array<double> right = xt::zeros<double>({4, 5});
  for (std::size_t j = 0; j < 4; ++j) right(j, std::size_t(truth[j])) = 0.7, right(j, 4) = 0.3;
  one("every row peaks on its true word", right, truth, "a perfect map scores 0");
  Array<double> crossed = right;
  crossed(0, 2) = 0.1, crossed(0, 0) = 0.6;  // row 0 looks at word 0 instead of word 2
  crossed(3, 3) = 0.2, crossed(3, 4) = 0.8;  // row 3 looks at <eos>: no link
  one("one wrong link and one row on <eos>", crossed, truth,
      "|A| counts the links you made (3 here: the <eos> row makes none), |S| the true ones (4)");
  Array<double> tie = right;
  tie(1, 3) = 0.7;  // row 1: word 1 and word 3 tie; the first wins
  one("a tie: the first largest weight wins", tie, truth, "take the first maximum of the row, as std::max_element does");
  one("random maps, 6 target words over 6 source words", random_array({6, 7}, 83, 0, 1), {5, 4, 3, 0, 2, 1},
      "rows are target words: take each ROW's largest weight, not each column's");
}


// 08.4: a one-layer encoder-decoder Transformer trained to reverse strings of digits.
std::vector<nn::data::Pair> digit_strings(std::size_t n, std::size_t min_len, std::size_t max_len, Generator& gen) {
  nn::data::SeqTaskConfig cfg{nn::data::SeqTask::reverse};
  cfg.min_len = min_len, cfg.max_len = max_len;
  return nn::data::make_seq_task(cfg, n, gen);
}

struct ReversalRun {
  nn::HeadAlignment heads;  // one layer, one head
  double token_accuracy = 0;  // teacher-forced, on the test strings: did it learn the task?
};

ReversalRun train_reversal(const std::vector<Index>& links, std::uint64_t seed) {
  Generator gen(seed);
  const std::vector<nn::data::Pair> train_pairs = digit_strings(3000, 4, 8, gen);
  const std::vector<nn::data::Pair> test_pairs = digit_strings(200, 8, 8, gen);
  const auto chars = nn::data::Tokenizer::chars;
  const nn::data::PairVocabs v = nn::data::build_vocabs(train_pairs, chars, chars);
  const nn::data::EncodedPairs train_set = nn::data::encode_pairs(train_pairs, v.source, chars, v.target, chars);
  const nn::data::EncodedPairs test = nn::data::encode_pairs(test_pairs, v.source, chars, v.target, chars);
  nn::Seq2SeqConfig c;
  c.src_vocab = v.source.size(), c.tgt_vocab = v.target.size(), c.encoder_layers = c.decoder_layers = 1;
  c.layer = nn::LayerConfig{32, 1, 64, 0.0, /*norm_first=*/true, nn::Activation::ReLU, 1e-5};
  c.pad_id = nn::data::Vocab::pad;
  nn::Seq2SeqTransformer<float> model(c, gen);
  lessons::Recipe r;
  r.label = "reverse", r.epochs = 6, r.batch = 32, r.lr = 3e-3, r.warmup = 0.05, r.floor = 0.05, r.seed = seed + 1;
  CrossEntropyOptions ce;
  ce.ignore_index = nn::data::Vocab::pad;
  lessons::train(model, train_set.size(), [&](const std::vector<std::size_t>& rows) {
    const nn::data::Seq2SeqBatch b = nn::data::make_seq2seq_batch(train_set, rows, /*source_eos=*/false);
    return cross_entropy(model.forward(b.source.ids, b.decoder_input.ids, b.source.allowed(), b.decoder_input.allowed()),
                         b.decoder_target.ids, ce);
  }, r);
  Mask truth = xt::zeros<bool>({std::size_t(8), std::size_t(8)});
  for (std::size_t j = 0; j < 8; ++j) truth(j, std::size_t(links[j])) = true;
  return {nn::score_heads_as_aligners(model, test, std::vector<Mask>(test.size(), truth)),
          nn::teacher_forced_scores(model, test).accuracy};
}

void grade_predicted_links(const std::function<std::vector<Index>(std::size_t)>& answer, Grader& g) {
  const std::vector<Index> links = answer(8);
  bool in_range = links.size() == 8;
  for (Index l : links) in_range = in_range && l >= 0 && l < 8;
  if (!g.check(in_range, "8 links into a source of 8 characters", "yours has " + std::to_string(links.size()) + " links",
               "one source position 0 .. 7 for each target character 0 .. 7"))
    return;
  for (std::uint64_t seed : {801, 811}) {
    const ReversalRun run = train_reversal(links, seed);
    const double aer = run.heads.at_output[0][0].error_rate();
    std::ostringstream detail;
    detail.precision(3);
    detail << "measured AER of the cross-attention against your links: " << aer << "; target at most 0.3 (the "
           << "model, teacher-forced, gets " << run.token_accuracy << " of the test characters right)";
    g.check(aer <= 0.3, "your links against the model trained on seed " + std::to_string(seed), detail.str(),
            "to write target character j, which source character must the decoder fetch?");
  }
}

}  // namespace

EXERCISE(noam_rate, "The Noam learning rate", grade_noam_rate);
EXERCISE(alignment_error_rate, "Alignment error rate of an attention map", grade_alignment_error_rate);
EXERCISE(predicted_links, "Experiment: predict where the decoder looks", grade_predicted_links);
HINT(predicted_links,
     "Target character j of the reversal is source character length - 1 - j: the row that writes it must fetch it "
     "there, so links[j] = length - 1 - j (not j, the same order, and not length - j, one off).");
HINT(noam_rate,
     "lr = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5): both terms equal warmup^-0.5 at step == warmup.");
