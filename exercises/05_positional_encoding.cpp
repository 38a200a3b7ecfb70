// Exercises for lesson 05, positional encoding. Grade them with build/bin/grade 05.
//
// Write each function in plain xtensor (loops, std::sin, std::pow ...), not with the engine's ops.
#include <cmath>
#include <sstream>
#include <string>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "lessons/kit/tagging.hpp"
#include "lessons/kit/train.hpp"
#include "nn/data/tagged.hpp"
#include "nn/data/tasks.hpp"
#include "nn/data/vocab.hpp"
#include "nn/positional/positional.hpp"
#include "nn/positional/rotary.hpp"
#include "nn/positional/sinusoidal.hpp"
#include "nn/transformer/encoder_model.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 05.1 The sinusoidal table ------------------------------------------------------------------
// Return the (n, d) table, d even, of positions p = 0 .. n-1:
//     PE(p, 2i) = sin(p w_i),  PE(p, 2i+1) = cos(p w_i),  w_i = 10000^(-2i/d).
Array<double> sinusoidal_encoding(std::size_t n, std::size_t d) {
  not_attempted();  // delete this line and write your answer
}

// ---- 05.2 The rotation that shifts every position by k --------------------------------------------
// For each offset k there is one (d, d) matrix M_k with PE(p + k) = M_k PE(p) for every p: moving
// every position by k is one linear map, the same for every p. Return it. (Look at one pair of
// columns (sin, cos) of one frequency as a point that moves as p grows: where is it at p + k?)
Array<double> shift_rotation(std::size_t k, std::size_t d) {
  not_attempted();  // delete this line and write your answer
}

// ---- 05.3 Rotary position embedding (RoPE) ----------------------------------------------------
// x (L, d), d even: row l is a query or key at position p = offset + l. Rotate each pair
// (x[2i], x[2i+1]) by the angle p theta_i, theta_i = 10000^(-2i/d):
//     y[2i] = x[2i] cos a - x[2i+1] sin a,   y[2i+1] = x[2i] sin a + x[2i+1] cos a.
// Then <rope(q at p), rope(k at s)> depends on s - p only: attention sees offsets.
Array<double> rope(const Array<double>& x, std::size_t offset) {
  not_attempted();  // delete this line and write your answer
}

// ---- 05.4 Experiment: positions for inputs longer than any in training --------------------------
// The lesson's shift task: tag every position i of a string of digits with the digit 3 places to
// its left ('_' for the first 3). Choose the positional method (nn::Positional: None, Sinusoidal,
// Learned, RelativeBias, Rotary or ALiBi) of an encoder that is trained on strings of 16 and must
// then tag strings of 32. The grader trains the lesson's encoder (quick size: 2 pre-norm layers,
// d = 32, 4 heads) with your method on 2000 strings of length 16, on two seeds, and measures the
// per-token accuracy on 300 new strings of length 32. Target: at least 0.9 on both seeds. Decide
// before you run anything: which methods can know what position 20 is, never having seen it?
nn::Positional positions_for_longer_inputs() {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against nn/positional.
namespace {

void grade_sinusoidal_encoding(const std::function<Array<double>(std::size_t, std::size_t)>& answer, Grader& g) {
  g.close("n = 10, d = 8 against nn::sinusoidal_table", answer(10, 8), nn::sinusoidal_table<double>(10, 8), 1e-12,
          "pair i uses one frequency w_i = 10000^(-2i/d) for both its sin (column 2i) and its cos (column 2i + 1)");
  g.close("n = 50, d = 32", answer(50, 32), nn::sinusoidal_table<double>(50, 32), 1e-12,
          "pair i uses one frequency w_i = 10000^(-2i/d) for both its sin (column 2i) and its cos (column 2i + 1)");
}

void grade_shift_rotation(const std::function<Array<double>(std::size_t, std::size_t)>& answer, Grader& g) {
  for (std::size_t k : {1, 5}) {
    const std::size_t d = 16, n = 40;
    const Array<double> M = answer(k, d);
    if (!g.check(shape_of(M) == Shape{d, d}, "k = " + std::to_string(k) + ": M_k is (d, d)",
                 "shape " + shape_str(shape_of(M))))
      continue;
    // PE(p + k) for p = 0 .. n-1 is the table from offset k; M_k PE(p) for every p is PE M_k^T.
    const Array<double> table = nn::sinusoidal_table<double>(n, d);
    const Array<double> moved = matmul(Tensor<double>(table), Tensor<double>(M), false, true).value();
    g.close("k = " + std::to_string(k) + ": M_k PE(p) = PE(p + k) for p = 0 .. 39", moved,
            nn::sinusoidal_table<double>(n, d, k), 1e-10,
            "each (sin, cos) pair moves on its own, by the angle k w_i of its frequency: check which entries "
            "and which signs");
    const Array<double> MtM = matmul(Tensor<double>(M), Tensor<double>(M), true, false).value();
    g.close("k = " + std::to_string(k) + ": M_k is a rotation, M_k^T M_k = I", MtM, xt::eye<double>(d), 1e-10);
  }
}

void grade_rope(const std::function<Array<double>(const Array<double>&, std::size_t)>& answer, Grader& g) {
  const Array<double> x = random_array({6, 8}, 61);
  for (std::size_t offset : {0, 9})
    g.close("L = 6, d = 8, offset " + std::to_string(offset) + " against nn::rotary", answer(x, offset),
            nn::rotary(Tensor<double>(x), offset).value(), 1e-12,
            "row l is at position offset + l; pair i turns by (offset + l) theta_i");
  // Scores depend on the offset alone: shifting both the queries and the keys changes nothing.
  const Array<double> q = random_array({5, 8}, 62), k = random_array({5, 8}, 63);
  const auto scores = [&](std::size_t shift) {
    return matmul(Tensor<double>(answer(q, shift)), Tensor<double>(answer(k, shift)), false, true).value();
  };
  g.close("<rope(q), rope(k)> unchanged when every position moves by 7", scores(7), scores(0), 1e-10,
          "a rotation by p theta_i for the query and s theta_i for the key leaves (s - p) theta_i in their dot product");
}


// 05.4: the lesson's shift task and encoder (lessons/05_positional_encoding.cpp at its quick size).
constexpr std::size_t kShift = 3, kShortLength = 16, kLongLength = 32;

nn::data::Tagged shifted_strings(std::size_t n, std::size_t length, const nn::data::Vocab& vocab, Generator& gen) {
  nn::data::SeqTaskConfig cfg{nn::data::SeqTask::shift};
  cfg.min_len = cfg.max_len = length, cfg.shift = kShift;
  return nn::data::tag_pairs(nn::data::make_seq_task(cfg, n, gen), vocab);
}

// The per-token accuracy at length 32 after training at length 16; -1 when the model cannot run there.
double long_accuracy(nn::Positional method, std::uint64_t seed, std::string& failure) {
  nn::data::Vocab vocab;
  for (const char* c : {"_", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}) vocab.add(c);
  Generator gen(seed);
  const nn::data::Tagged train_set = shifted_strings(2000, kShortLength, vocab, gen);
  const nn::data::Tagged test = shifted_strings(300, kLongLength, vocab, gen);
  nn::EncoderModelConfig c;
  c.vocab = c.num_classes = vocab.size(), c.num_layers = 2, c.max_length = kShortLength;
  c.layer = nn::LayerConfig{32, 4, 64, 0.0, /*norm_first=*/true, nn::Activation::ReLU, 1e-5};
  c.positional = method, c.pooling = nn::Pooling::None, c.pad_id = nn::data::Vocab::pad;
  nn::EncoderModel<float> model(c, gen);
  lessons::Recipe r;
  r.label = nn::positional_name(method), r.epochs = 8, r.batch = 32, r.lr = 1e-2, r.warmup = 0.05, r.floor = 0.05;
  r.seed = seed;
  lessons::train(model, train_set.size(), [&](const std::vector<std::size_t>& rows) {
    const nn::data::Tagged b = train_set.rows(rows);
    return cross_entropy(model.forward(b.inputs), b.targets);
  }, r);
  model.eval();
  try {
    return lessons::evaluate_tagger([&](const IndexArray& x) { return model.forward(x); }, test, 64).token;
  } catch (const ShapeError& e) {  // the learned table has no row for position 16
    failure = e.what();
    return -1.0;
  }
}

void grade_positions_for_longer_inputs(const std::function<nn::Positional()>& answer, Grader& g) {
  const nn::Positional method = answer();
  for (std::uint64_t seed : {501, 502}) {
    std::string failure;
    const double acc = long_accuracy(method, seed, failure);
    std::ostringstream detail;
    detail.precision(3);
    if (acc < 0) detail << "the model cannot run at length 32: " << failure;
    else detail << "measured per-token accuracy at length 32: " << acc << "; target at least 0.9 (a guess: 0.1)";
    g.check(acc >= 0.9, nn::positional_name(method) + ", trained at length 16 on seed " + std::to_string(seed),
            detail.str(), "what does each method give attention: the position of a token, or its offset from the query?");
  }
}

}  // namespace

EXERCISE(sinusoidal_encoding, "The sinusoidal table", grade_sinusoidal_encoding);
EXERCISE(shift_rotation, "The rotation M_k with PE(p + k) = M_k PE(p)", grade_shift_rotation);
HINT(shift_rotation,
     "sin(a + b) = sin a cos b + cos a sin b and cos(a + b) = cos a cos b - sin a sin b with a = p w_i, b = k w_i: "
     "M_k is block diagonal, block i = [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]] on the pair (sin, cos).");
EXERCISE(rope, "Rotary position embedding", grade_rope);
EXERCISE(positions_for_longer_inputs, "Experiment: positions for inputs longer than any in training",
         grade_positions_for_longer_inputs);
HINT(positions_for_longer_inputs,
     "The task needs the offset -3, never the absolute position. A learned table has no row for position 16; a "
     "sinusoidal model has never seen the vectors of positions 16..31 and guesses there. Methods that act on the "
     "offset j - i inside attention can: RoPE rotates q and k so that q . k depends on j - i alone, and passes "
     "here. (The relative bias, also by offset, measured about 0.7 at this budget; ALiBi cannot tell left from right "
     "in an encoder, lesson 05 shows why.)");
