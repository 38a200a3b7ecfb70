// The condition of a claim: a small arithmetic over named numbers, written as a person would
// write it and kept as text in story.json, so that any program can check it again from the
// numbers recorded beside it.
//
//   "test_acc_h4 >= 0.99 and test_acc_h1 <= test_acc_h4 - 0.2"
//   "abs(bleu_rope - bleu_gru) < 0.05 or bleu_rope > bleu_gru"
//
// Grammar (lowest precedence first):  or   and   not   comparison (< <= > >= == !=)   + -   * /
// unary -   then numbers (1, 0.5, 2e-3), names ([A-Za-z_][A-Za-z0-9_]*), f(...) for abs, min, max
// and sqrt, and parentheses. A comparison is 1 when true and 0 when false; `and`, `or` and `not`
// read 0 as false and anything else as true. There are no side effects and no loops: a condition
// is one expression.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attnlab::lessons {

// The value of a name, or nothing when the name is unknown.
using Lookup = std::function<std::optional<double>(const std::string& name)>;

// The condition's value. std::invalid_argument naming the condition and what is wrong with it: a
// syntax error (with the column), an unknown function, or a name `lookup` does not know.
double evaluate(const std::string& condition, const Lookup& lookup);

// Whether the condition holds (its value is not 0).
bool holds(const std::string& condition, const Lookup& lookup);

// The names a condition reads, each once, in the order they first appear (functions excluded).
// std::invalid_argument on a syntax error.
std::vector<std::string> names_in(const std::string& condition);

}  // namespace attnlab::lessons
