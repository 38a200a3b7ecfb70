#include "lessons/story/reference.hpp"

#include <stdexcept>

#include "lessons/story/text.hpp"

namespace attnlab::lessons {

namespace {
nlohmann::ordered_json& stored() {
  static nlohmann::ordered_json r;  // null until set
  return r;
}
}  // namespace

void set_reference(const char* json) {
  try {
    stored() = nlohmann::ordered_json::parse(json);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("the lesson's reference file is not JSON: ") + e.what());
  }
}

const nlohmann::ordered_json& reference() { return stored(); }

std::string reference_text(const std::string& metric) {
  const auto& r = reference();
  if (!r.is_object() || !r.contains("metrics") || !r["metrics"].contains(metric)) return "";
  const auto& m = r["metrics"][metric];
  return plus_minus(m.value("mean", 0.0), m.value("sd", 0.0));
}

}  // namespace attnlab::lessons
