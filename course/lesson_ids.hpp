// Lessons by name: a lesson's id is its program's and its output folder's name, NN_name.
#pragma once

#include <string>
#include <vector>

namespace attnlab::course {

// "04_scaled_dot_product": two digits, an underscore, a name.
bool is_lesson_id(const std::string& name);

// The value of --only, "01,04" -> {"01", "04"} (empty items dropped); UsageError when it names
// none (",": an empty selection would run every lesson).
std::vector<std::string> only_list(const std::string& value);

// The ids named by `only` (each a prefix: "04" names 04_scaled_dot_product), in the order given;
// all of `ids` when `only` is empty. UsageError naming the one not found in `where`.
std::vector<std::string> select_lessons(const std::vector<std::string>& ids, const std::vector<std::string>& only,
                                        const std::string& where);

}  // namespace attnlab::course
