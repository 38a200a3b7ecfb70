#include "lessons/kit/gradcheck_table.hpp"

#include <algorithm>
#include <cmath>

#include "lessons/story/lesson.hpp"
#include "lessons/story/text.hpp"

namespace attnlab::lessons {

NamedCheck named_check(const std::string& name, const std::string& shapes, const GradFn& f,
                       std::vector<Tensor<double>> inputs) {
  return {name, shapes, gradcheck(f, std::move(inputs))};
}

void gradcheck_table(const std::vector<NamedCheck>& checks) {
  std::vector<std::vector<std::string>> rows;
  for (const NamedCheck& c : checks)
    rows.push_back(row(c.name, c.shapes, sci(c.result.max_abs_error, 2), sci(c.result.max_rel_error, 2),
                       c.result.ok ? "OK" : "FAIL"));
  table({"case", "shapes", "max abs err", "max rel err", "result"}, rows);
  for (const NamedCheck& c : checks)
    if (!c.result.ok) say("FAIL ", c.name, ": ", c.result.detail);
}

std::size_t failed_count(const std::vector<NamedCheck>& checks) {
  std::size_t n = 0;
  for (const NamedCheck& c : checks) n += c.result.ok ? 0 : 1;
  return n;
}

double digits_of_agreement(const GradcheckResult& result) {
  return std::max(-std::log10(std::max(result.max_rel_error, 1e-17)), 0.0);
}

}  // namespace attnlab::lessons
