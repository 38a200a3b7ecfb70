// Exercises graded by the engine. A lesson's exercises are one file, exercises/NN_name.cpp (the
// lesson's own name, so that `grade NN` finds it), in two parts:
//
//   1. the functions the student writes, each a stub that compiles and calls not_attempted():
//
//        // 04.1 A causal mask. allowed(i, j) is true when query i may attend to key j ...
//        Mask causal_mask(std::size_t n) {
//          not_attempted();  // delete this line and write your answer
//        }
//
//   2. how each is graded: a function that calls the answer and checks what it returns with the
//      Grader below (against the engine's own ops and modules, and for a backward with the
//      gradient check the engine uses, core/gradcheck), then one line that registers the pair:
//
//        void grade_causal_mask(const std::function<Mask(std::size_t)>& answer, Grader& g) {
//          g.mask("n = 5", answer(5), reference_causal_mask(5), "query i sees keys 0..i");
//        }
//        EXERCISE(causal_mask, "A causal mask", grade_causal_mask);
//
// An answer's signature uses types that the solutions file names the same way (Array<double>,
// Mask, std::tuple of them, plain numbers): a struct defined inside the exercise file would be
// another type in the solutions file.
//
// The solutions live apart, in exercises/solutions/NN_name.cpp (a teacher hands out the stubs
// alone): the same functions written out, each registered with SOLUTION(name), and for every
// exercise at least one plausible mistake registered with WRONG_ANSWER(name, function, what).
// build/bin/grade_solutions proves the checks: every shipped stub says "not attempted", every
// solution passes, every wrong answer is caught. The lesson is the file's name, so nothing else
// needs to know a new file exists (CMake globs exercises/[0-9][0-9]_*.cpp).
#pragma once

#include <any>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/array.hpp"
#include "core/gradcheck.hpp"
#include "core/random.hpp"
#include "core/tensor.hpp"

namespace attnlab::exercises {

// Thrown by a stub: the exercise is reported "not attempted", not failed.
struct NotAttempted {};
[[noreturn]] void not_attempted();

// One check of an answer, as the student reads it.
struct Check {
  bool ok = false;
  std::string what;    // "n = 5: the allowed pattern"
  std::string detail;  // what was measured: "3 of 25 entries differ: [0, 1] yours 1, expected 0 ..."
  std::string hint;    // shown when it fails: where to look
};

// A hand-written backward: the gradient of every input, given the inputs and dL/d(output).
using Backward = std::function<std::vector<Array<double>>(const std::vector<Array<double>>& inputs,
                                                          const Array<double>& upstream)>;
// The engine's forward of the same function, on tensors (the reference, and what the central
// differences of the gradient check perturb).
using EngineForward = std::function<Tensor<double>(const std::vector<Tensor<double>>& inputs)>;

class Grader {
 public:
  // A check that passes when ok; detail says what was measured.
  bool check(bool ok, const std::string& what, const std::string& detail = "", const std::string& hint = "");
  // got against expected: the shapes first, then every entry, |got - expected| <= tol max(1, |expected|).
  // On failure the detail lists the entries that differ (index, yours, expected), up to five.
  bool close(const std::string& what, const Array<double>& got, const Array<double>& expected, double tol = 1e-9,
             const std::string& hint = "");
  // Two masks, entry by entry.
  bool mask(const std::string& what, const Mask& got, const Mask& expected, const std::string& hint = "");
  // A hand-written backward, two ways: against the engine's own backward of `forward` (each
  // gradient by name, the entries that differ listed), and by core/gradcheck, central differences
  // of the engine's forward with a random upstream gradient, the check every op of the engine
  // passes (`names` are the inputs' names: "Q", "K", "V" give checks of dQ, dK, dV).
  bool backward(const std::string& what, const EngineForward& forward, const Backward& answer,
                const std::vector<Array<double>>& inputs, const std::vector<std::string>& names,
                const std::string& hint = "");

  const std::vector<Check>& checks() const { return checks_; }
  bool passed() const;

 private:
  std::vector<Check> checks_;
};

// The plain matrix product a b of (n, k) and (k, m), by loops: for answers that need one (the
// exercises are written without the engine), and for the solutions. ShapeError on other shapes.
Array<double> product(const Array<double>& a, const Array<double>& b);
// a^T, copied.
Array<double> transposed(const Array<double>& a);

// A seeded random array, uniform in [lo, hi): the inputs of a check.
Array<double> random_array(const Shape& shape, std::uint64_t seed, double lo = -1.0, double hi = 1.0);
// The parts streamed into one string, numbers with `digits` significant digits: what a check
// measured, for its detail ("accuracy 0.8495 on seed 701").
template <class... Parts>
std::string with_digits(int digits, const Parts&... parts) {
  std::ostringstream os;
  os.precision(digits);
  (os << ... << parts);
  return os.str();
}
// "[1, 2]": an entry's index, for messages.
std::string index_str(const Shape& shape, std::size_t flat);

// ------------------------------------------------------------------ the registry behind grade

struct Exercise {
  std::string lesson;  // the file's name without .cpp: "04_scaled_dot_product"
  std::string name;    // the function: "causal_mask"
  std::string title;   // "A causal mask"
  std::any stub;       // std::function<Signature>: the student's function
  std::function<void(const std::any& answer, Grader&)> grade;  // casts the answer, runs the checks
};

// An answer from the solutions folder: the solution itself (what is empty) or a wrong one.
struct Answer {
  std::string lesson, exercise, function, what;
  std::any fn;  // std::function<Signature>
};

// A worked hint (the formula, the derivation's key step), kept apart from the stub so the stub does
// not give the answer away: `grade NN --hint` shows it for an exercise whose attempt failed.
struct Hint {
  std::string lesson, exercise, text;
};

std::vector<Exercise>& exercise_registry();
std::vector<Answer>& answer_registry();
std::vector<Hint>& hint_registry();
// The hint of an exercise, or "" when it has none.
std::string hint_of(const Exercise& exercise);

// "exercises/04_scaled_dot_product.cpp" -> "04_scaled_dot_product"
std::string lesson_of(const char* file);

template <class R, class... Args>
struct RegisterExercise {
  RegisterExercise(const char* file, const char* name, const char* title, R (*student)(Args...),
                   void (*grade)(const std::function<R(Args...)>&, Grader&)) {
    exercise_registry().push_back({lesson_of(file), name, title, std::function<R(Args...)>(student),
                                   [grade](const std::any& answer, Grader& g) {
                                     grade(std::any_cast<const std::function<R(Args...)>&>(answer), g);
                                   }});
  }
};

template <class R, class... Args>
struct RegisterAnswer {
  RegisterAnswer(const char* file, const char* exercise, const char* function, const char* what, R (*fn)(Args...)) {
    answer_registry().push_back({lesson_of(file), exercise, function, what, std::function<R(Args...)>(fn)});
  }
};

struct RegisterHint {
  RegisterHint(const char* file, const char* exercise, const char* text) {
    hint_registry().push_back({lesson_of(file), exercise, text});
  }
};

#define ATTNLAB_EX_CAT2(a, b) a##b
#define ATTNLAB_EX_CAT(a, b) ATTNLAB_EX_CAT2(a, b)
// EXERCISE(causal_mask, "A causal mask", grade_causal_mask): the student's function, its title and
// its grading function, in the lesson's exercise file. Exercises are numbered in file order.
#define EXERCISE(function, title, grader)                                                          \
  static ::attnlab::exercises::RegisterExercise ATTNLAB_EX_CAT(attnlab_exercise_, __COUNTER__)( \
      __FILE__, #function, title, &function, &grader)
// HINT(causal_mask, "allowed(i, j) = j <= i"): what `grade NN --hint` reveals after a failed
// attempt, in the lesson's exercise file below its EXERCISE line. The stub's comment states the
// task; the formula that answers it goes here.
#define HINT(exercise, text)                                                                     \
  static ::attnlab::exercises::RegisterHint ATTNLAB_EX_CAT(attnlab_hint_, __COUNTER__)(__FILE__, #exercise, text)
// SOLUTION(causal_mask): the reference answer, in exercises/solutions/NN_name.cpp.
#define SOLUTION(function)                                                                       \
  static ::attnlab::exercises::RegisterAnswer ATTNLAB_EX_CAT(attnlab_answer_, __COUNTER__)(      \
      __FILE__, #function, #function, "", &function)
// WRONG_ANSWER(causal_mask, causal_mask_sees_ahead, "lets a query see the keys after it"): a
// plausible mistake the checks must catch, in the solutions file.
#define WRONG_ANSWER(exercise, function, what)                                                   \
  static ::attnlab::exercises::RegisterAnswer ATTNLAB_EX_CAT(attnlab_answer_, __COUNTER__)(      \
      __FILE__, #exercise, #function, what, &function)

}  // namespace attnlab::exercises
