// A small JSON value: enough to write metrics.json and to read it back in tests and checks.
// Objects keep their keys in insertion order, so the files diff cleanly between runs.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attnlab::lessons {

class Json {
 public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool b) : kind_(Kind::Bool), bool_(b) {}
  Json(double v) : kind_(Kind::Number), number_(v) {}
  Json(int v) : Json(static_cast<double>(v)) {}
  Json(long v) : Json(static_cast<double>(v)) {}
  Json(long long v) : Json(static_cast<double>(v)) {}
  Json(unsigned long v) : Json(static_cast<double>(v)) {}
  Json(unsigned long long v) : Json(static_cast<double>(v)) {}
  Json(const char* s) : kind_(Kind::String), string_(s) {}
  Json(std::string s) : kind_(Kind::String), string_(std::move(s)) {}

  static Json array(std::vector<Json> items = {});
  static Json object();

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }
  bool as_bool() const;
  double as_number() const;
  const std::string& as_string() const;
  const std::vector<Json>& items() const;
  const std::vector<std::pair<std::string, Json>>& members() const;

  // Object access: set (replace or append) and lookup.
  Json& set(const std::string& key, Json value);
  bool has(const std::string& key) const;
  const Json& operator[](const std::string& key) const;  // throws if missing
  Json& push(Json value);                                  // append to an array

  // Pretty-printed with two-space indents; numbers in the shortest form that reads back exactly.
  std::string dump(int indent = 2) const;
  static Json parse(const std::string& text);  // throws std::runtime_error with the offset

  bool operator==(const Json& other) const;
  bool operator!=(const Json& other) const { return !(*this == other); }

 private:
  void dump_to(std::string& out, int indent, int depth) const;
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  double number_ = 0.0;
  std::string string_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

}  // namespace attnlab::lessons
