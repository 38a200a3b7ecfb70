// Solutions to exercises/05_positional_encoding.cpp, and the mistakes the grader must catch.
#include <cmath>

#include "exercises/grading/exercise.hpp"
#include "nn/positional/positional.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// w_i = 10000^(-2i/d); `exponent_step` 2 is right, 1 the mistake of dropping the 2.
double frequency(std::size_t i, std::size_t d, double exponent_step = 2.0) {
  return std::pow(10000.0, -exponent_step * double(i) / double(d));
}

Array<double> table(std::size_t n, std::size_t d, double exponent_step) {
  Array<double> pe = xt::zeros<double>({n, d});
  for (std::size_t p = 0; p < n; ++p)
    for (std::size_t i = 0; i < d / 2; ++i) {
      pe(p, 2 * i) = std::sin(double(p) * frequency(i, d, exponent_step));
      pe(p, 2 * i + 1) = std::cos(double(p) * frequency(i, d, exponent_step));
    }
  return pe;
}

Array<double> sinusoidal_encoding(std::size_t n, std::size_t d) { return table(n, d, 2.0); }
SOLUTION(sinusoidal_encoding);

Array<double> sinusoidal_encoding_no_two(std::size_t n, std::size_t d) { return table(n, d, 1.0); }
WRONG_ANSWER(sinusoidal_encoding, sinusoidal_encoding_no_two, "w_i = 10000^(-i/d): the frequencies fall half as fast");

// (sin, cos) at angle a -> at angle a + b: [[cos b, sin b], [-sin b, cos b]].
Array<double> rotation(std::size_t k, std::size_t d, double sign) {
  Array<double> M = xt::zeros<double>({d, d});
  for (std::size_t i = 0; i < d / 2; ++i) {
    const double b = sign * double(k) * frequency(i, d);
    M(2 * i, 2 * i) = std::cos(b);
    M(2 * i, 2 * i + 1) = std::sin(b);
    M(2 * i + 1, 2 * i) = -std::sin(b);
    M(2 * i + 1, 2 * i + 1) = std::cos(b);
  }
  return M;
}

Array<double> shift_rotation(std::size_t k, std::size_t d) { return rotation(k, d, 1.0); }
SOLUTION(shift_rotation);

Array<double> shift_rotation_backwards(std::size_t k, std::size_t d) { return rotation(k, d, -1.0); }
WRONG_ANSWER(shift_rotation, shift_rotation_backwards, "the signs of the sines swapped: it shifts by -k");

// pairs (2i, 2i+1) (interleaved) or (i, i + d/2) (the two halves, another convention)
Array<double> rotate(const Array<double>& x, std::size_t offset, bool interleaved) {
  const std::size_t L = x.shape()[0], d = x.shape()[1];
  Array<double> y = x;
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t i = 0; i < d / 2; ++i) {
      const double a = double(offset + l) * frequency(i, d);
      const std::size_t u = interleaved ? 2 * i : i, v = interleaved ? 2 * i + 1 : i + d / 2;
      y(l, u) = x(l, u) * std::cos(a) - x(l, v) * std::sin(a);
      y(l, v) = x(l, u) * std::sin(a) + x(l, v) * std::cos(a);
    }
  return y;
}

Array<double> rope(const Array<double>& x, std::size_t offset) { return rotate(x, offset, true); }
SOLUTION(rope);

Array<double> rope_halves(const Array<double>& x, std::size_t offset) { return rotate(x, offset, false); }
WRONG_ANSWER(rope, rope_halves, "pairs (i, i + d/2), another library's layout, not the lesson's (2i, 2i + 1)");

Array<double> rope_ignores_offset(const Array<double>& x, std::size_t offset) { return rotate(x, 0, true); }
WRONG_ANSWER(rope, rope_ignores_offset, "position l instead of offset + l");

// 05.4: RoPE, whose q . k sees only the offset j - i.
nn::Positional positions_for_longer_inputs() { return nn::Positional::Rotary; }
SOLUTION(positions_for_longer_inputs);

nn::Positional positions_for_longer_inputs_sinusoidal() { return nn::Positional::Sinusoidal; }
WRONG_ANSWER(positions_for_longer_inputs, positions_for_longer_inputs_sinusoidal,
             "sinusoidal: positions 16..31 are vectors the model never saw in training");

nn::Positional positions_for_longer_inputs_learned() { return nn::Positional::Learned; }
WRONG_ANSWER(positions_for_longer_inputs, positions_for_longer_inputs_learned,
             "a learned table: it has no row for position 16");

}  // namespace
