#include "course/lesson_ids.hpp"

#include <algorithm>
#include <cctype>

#include "io/program.hpp"

namespace attnlab::course {

bool is_lesson_id(const std::string& name) {
  return name.size() > 3 && std::isdigit(static_cast<unsigned char>(name[0])) &&
         std::isdigit(static_cast<unsigned char>(name[1])) && name[2] == '_';
}

std::vector<std::string> only_list(const std::string& value) {
  std::vector<std::string> out;
  std::string list = value + ",";
  for (std::size_t at; (at = list.find(',')) != std::string::npos; list.erase(0, at + 1))
    if (at > 0) out.push_back(list.substr(0, at));
  if (out.empty()) throw UsageError("--only names no lesson in '" + value + "' (say which: --only 01,04)");
  return out;
}

std::vector<std::string> select_lessons(const std::vector<std::string>& ids, const std::vector<std::string>& only,
                                        const std::string& where) {
  if (only.empty()) return ids;
  std::vector<std::string> kept;
  for (const std::string& n : only) {
    const auto it = std::find_if(ids.begin(), ids.end(), [&](const std::string& id) { return id.rfind(n, 0) == 0; });
    if (it == ids.end()) throw UsageError("--only: no lesson '" + n + "' in " + where);
    kept.push_back(*it);
  }
  return kept;
}

}  // namespace attnlab::course
