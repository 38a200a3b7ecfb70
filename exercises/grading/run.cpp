#include "exercises/grading/run.hpp"

#include <algorithm>
#include <map>

#include "io/program.hpp"

namespace attnlab::exercises {

std::vector<Exercise>& exercise_registry() {
  static std::vector<Exercise> all;
  return all;
}

std::vector<Answer>& answer_registry() {
  static std::vector<Answer> all;
  return all;
}

std::vector<Hint>& hint_registry() {
  static std::vector<Hint> all;
  return all;
}

std::string hint_of(const Exercise& exercise) {
  for (const Hint& h : hint_registry())
    if (h.lesson == exercise.lesson && h.exercise == exercise.name) return h.text;
  return "";
}

std::string lesson_of(const char* file) {
  std::string name(file);
  const auto slash = name.find_last_of('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  const auto dot = name.find('.');
  return dot == std::string::npos ? name : name.substr(0, dot);
}

Outcome run_exercise(const Exercise& exercise, const std::any& answer) {
  Outcome out;
  Grader g;
  try {
    exercise.grade(answer, g);
    out.verdict = g.passed() ? Verdict::passed : Verdict::failed;
  } catch (const NotAttempted&) {
    out.verdict = Verdict::not_attempted;
  } catch (const std::bad_any_cast&) {
    out.error = "this answer's signature is not the exercise's";
  } catch (const std::exception& e) {
    out.error = std::string("your function threw: ") + e.what();
  }
  out.checks = g.checks();
  return out;
}

std::vector<Numbered> select_exercises(const std::vector<std::string>& lessons) {
  std::vector<const Exercise*> all;
  for (const Exercise& e : exercise_registry()) all.push_back(&e);
  std::stable_sort(all.begin(), all.end(), [](const Exercise* a, const Exercise* b) { return a->lesson < b->lesson; });
  std::vector<Numbered> out;
  std::map<std::string, int> count;
  for (const Exercise* e : all) {
    const std::string number = e->lesson.substr(0, 2) + "." + std::to_string(++count[e->lesson]);
    const bool wanted = lessons.empty() || std::any_of(lessons.begin(), lessons.end(), [&](const std::string& l) {
                          return l == e->lesson || l == e->lesson.substr(0, 2);
                        });
    if (wanted) out.push_back({number, e});
  }
  for (const std::string& l : lessons)
    if (std::none_of(out.begin(), out.end(),
                     [&](const Numbered& n) { return l == n.exercise->lesson || l == n.exercise->lesson.substr(0, 2); }))
      throw UsageError("no exercises for lesson '" + l + "' (exercises/NN_name.cpp)");
  return out;
}

void print_outcome(std::ostream& os, const Numbered& n, const Outcome& outcome, bool color, bool all_checks) {
  const char* green = color ? "\033[32m" : "";
  const char* red = color ? "\033[31m" : "";
  const char* gray = color ? "\033[90m" : "";
  const char* reset = color ? "\033[0m" : "";
  const std::string head = n.number + " " + n.exercise->name + ": " + n.exercise->title;
  const std::string dots(head.size() < 70 ? 72 - head.size() : 2, '.');
  os << head << " " << gray << dots << reset << " ";
  switch (outcome.verdict) {
    case Verdict::passed: os << green << "PASS" << reset << "\n"; break;
    case Verdict::failed: os << red << "FAIL" << reset << "\n"; break;
    case Verdict::not_attempted:
      os << "not attempted\n    write " << n.exercise->name << " in exercises/" << n.exercise->lesson
         << ".cpp (the stub still calls not_attempted())\n";
      return;
  }
  for (const Check& c : outcome.checks) {
    if (c.ok && !all_checks) continue;
    os << "    " << (c.ok ? green : red) << (c.ok ? "ok  " : "FAIL") << reset << "  " << c.what;
    if (!c.detail.empty()) os << ": " << c.detail;
    os << "\n";
    if (!c.ok && !c.hint.empty()) os << "          hint: " << c.hint << "\n";
  }
  if (!outcome.error.empty()) os << "    " << red << "FAIL" << reset << "  " << outcome.error << "\n";
}

}  // namespace attnlab::exercises
