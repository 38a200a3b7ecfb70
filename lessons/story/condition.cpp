#include "lessons/story/condition.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace attnlab::lessons {

namespace {

// Recursive descent, one function per precedence level, evaluating as it parses. With `names`
// set it only collects the names it meets (every name reads as 1).
class Parser {
 public:
  Parser(const std::string& text, const Lookup* lookup, std::vector<std::string>* names)
      : s_(text), lookup_(lookup), names_(names) {}

  double whole() {
    const double v = disjunction();
    skip_space();
    if (at_ < s_.size()) fail("unexpected '" + s_.substr(at_, 1) + "'");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw std::invalid_argument("condition \"" + s_ + "\": " + why + " at column " + std::to_string(at_ + 1));
  }

  void skip_space() {
    while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
  }

  // Consumes `op` when it comes next; a word operator (and, or, not) only as a whole word.
  bool take(const std::string& op) {
    skip_space();
    if (s_.compare(at_, op.size(), op) != 0) return false;
    const bool word = std::isalpha(static_cast<unsigned char>(op[0]));
    const std::size_t end = at_ + op.size();
    if (word && end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_')) return false;
    at_ = end;
    return true;
  }

  static bool truth(double v) { return v != 0.0; }

  double disjunction() {
    double v = conjunction();
    while (take("or")) {
      const double r = conjunction();
      v = truth(v) || truth(r);
    }
    return v;
  }

  double conjunction() {
    double v = negation();
    while (take("and")) {
      const double r = negation();
      v = truth(v) && truth(r);
    }
    return v;
  }

  double negation() {
    if (take("not")) return !truth(negation());
    return comparison();
  }

  double comparison() {
    const double a = sum();
    // Two-character operators first, so that "<=" is not read as "<".
    for (const char* op : {"<=", ">=", "==", "!=", "<", ">"}) {
      if (!take(op)) continue;
      const double b = sum();
      const std::string o = op;
      if (o == "<=") return a <= b;
      if (o == ">=") return a >= b;
      if (o == "==") return a == b;
      if (o == "!=") return a != b;
      if (o == "<") return a < b;
      return a > b;
    }
    return a;
  }

  double sum() {
    double v = product();
    for (;;) {
      if (take("+")) v += product();
      else if (take("-")) v -= product();
      else return v;
    }
  }

  double product() {
    double v = unary();
    for (;;) {
      if (take("*")) v *= unary();
      else if (take("/")) v /= unary();
      else return v;
    }
  }

  double unary() {
    if (take("-")) return -unary();
    return primary();
  }

  double primary() {
    skip_space();
    if (at_ >= s_.size()) fail("the condition ends early");
    if (take("(")) {
      const double v = disjunction();
      if (!take(")")) fail("missing ')'");
      return v;
    }
    const char c = s_[at_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const char* begin = s_.c_str() + at_;
      char* end = nullptr;
      const double v = std::strtod(begin, &end);
      if (end == begin) fail("bad number");
      at_ += static_cast<std::size_t>(end - begin);
      return v;
    }
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_') fail("unexpected '" + std::string(1, c) + "'");
    const std::size_t start = at_;
    while (at_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[at_])) || s_[at_] == '_')) ++at_;
    const std::string name = s_.substr(start, at_ - start);
    if (name == "and" || name == "or" || name == "not") {
      at_ = start;
      fail("'" + name + "' where a value belongs");
    }
    if (take("(")) return call(name, start);
    return value_of(name, start);
  }

  double call(const std::string& f, std::size_t start) {
    std::vector<double> args{disjunction()};
    while (take(",")) args.push_back(disjunction());
    if (!take(")")) fail("missing ')' after the arguments of " + f);
    auto arity = [&](std::size_t n) {
      if (args.size() != n) {
        at_ = start;
        fail(f + " takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s"));
      }
    };
    if (f == "abs") return arity(1), std::fabs(args[0]);
    if (f == "sqrt") return arity(1), std::sqrt(args[0]);
    if (f == "min") return *std::min_element(args.begin(), args.end());
    if (f == "max") return *std::max_element(args.begin(), args.end());
    at_ = start;
    fail("unknown function '" + f + "' (abs, min, max and sqrt are known)");
  }

  double value_of(const std::string& name, std::size_t start) {
    if (names_) {
      if (std::find(names_->begin(), names_->end(), name) == names_->end()) names_->push_back(name);
      return 1.0;
    }
    const std::optional<double> v = (*lookup_)(name);
    if (!v) {
      at_ = start;
      fail("no number named '" + name + "'");
    }
    return *v;
  }

  const std::string& s_;
  const Lookup* lookup_;
  std::vector<std::string>* names_;
  std::size_t at_ = 0;
};

}  // namespace

double evaluate(const std::string& condition, const Lookup& lookup) {
  return Parser(condition, &lookup, nullptr).whole();
}

bool holds(const std::string& condition, const Lookup& lookup) { return evaluate(condition, lookup) != 0.0; }

std::vector<std::string> names_in(const std::string& condition) {
  std::vector<std::string> names;
  Parser(condition, nullptr, &names).whole();
  return names;
}

}  // namespace attnlab::lessons
