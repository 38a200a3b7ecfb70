// Exercises for lesson 08, the Transformer trained to translate. Grade them with build/bin/grade 08.
//
// Write each function in plain C++ and xtensor (loops, std::exp, std::log ...), not with the
// engine's ops or nn/: these are the learning-rate schedule, the loss and the alignment score
// the lesson uses, done by hand.
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "nn/alignment.hpp"
#include "nn/schedule.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 08.1 The Noam learning rate ------------------------------------------------------------
// "Attention Is All You Need", section 5.3: the learning rate of (1-based) step `step` is
//     lr = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5).
// It rises linearly for `warmup` steps, peaks at step == warmup, and then decays as 1/sqrt(step).
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

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against nn::noam_lr, the engine's
// cross-entropy and its backward, and nn/alignment.
namespace {

template <class... Parts>
std::string text_of(const Parts&... parts) {
  std::ostringstream os;
  os.precision(10);
  (os << ... << parts);
  return os.str();
}

void grade_noam_rate(const std::function<double(double, double, double)>& answer, Grader& g) {
  for (const auto& [d, warmup] : {std::pair{512.0, 4000.0}, std::pair{64.0, 400.0}}) {
    const nn::Schedule engine = nn::noam_lr(d, long(warmup));
    const std::vector<double> steps = {1, warmup / 4, warmup - 1, warmup, warmup + 1, 3 * warmup, 100000};
    Array<double> got = xt::zeros<double>({steps.size()}), want = got;
    for (std::size_t i = 0; i < steps.size(); ++i) got(i) = answer(d, warmup, steps[i]), want(i) = engine(long(steps[i]));
    g.close(text_of("d = ", d, ", warm-up ", warmup, ": steps 1, w/4, w-1, w, w+1, 3w, 100000"), got, want, 1e-12,
            "the smaller of step^-0.5 and step warmup^-1.5, times d^-0.5: both terms equal warmup^-0.5 at "
            "step == warmup");
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
    g.check(std::abs(got - want) <= 1e-12, what, text_of("yours ", got, ", expected ", want), hint);
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

}  // namespace

EXERCISE(noam_rate, "The Noam learning rate", grade_noam_rate);
EXERCISE(alignment_error_rate, "Alignment error rate of an attention map", grade_alignment_error_rate);
