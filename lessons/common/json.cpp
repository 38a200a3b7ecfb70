#include "lessons/common/json.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace attnlab::lessons {

Json Json::array(std::vector<Json> items) {
  Json j;
  j.kind_ = Kind::Array;
  j.items_ = std::move(items);
  return j;
}

Json Json::object() {
  Json j;
  j.kind_ = Kind::Object;
  return j;
}

namespace {
[[noreturn]] void type_error(const char* want) {
  throw std::runtime_error(std::string("json: value is not ") + want);
}
}  // namespace

bool Json::as_bool() const {
  if (kind_ != Kind::Bool) type_error("a boolean");
  return bool_;
}
double Json::as_number() const {
  if (kind_ != Kind::Number) type_error("a number");
  return number_;
}
const std::string& Json::as_string() const {
  if (kind_ != Kind::String) type_error("a string");
  return string_;
}
const std::vector<Json>& Json::items() const {
  if (kind_ != Kind::Array) type_error("an array");
  return items_;
}
const std::vector<std::pair<std::string, Json>>& Json::members() const {
  if (kind_ != Kind::Object) type_error("an object");
  return members_;
}

Json& Json::set(const std::string& key, Json value) {
  if (kind_ != Kind::Object) type_error("an object");
  for (auto& [k, v] : members_)
    if (k == key) return v = std::move(value);
  members_.emplace_back(key, std::move(value));
  return members_.back().second;
}

bool Json::has(const std::string& key) const {
  if (kind_ != Kind::Object) return false;
  for (auto& m : members_)
    if (m.first == key) return true;
  return false;
}

const Json& Json::operator[](const std::string& key) const {
  for (auto& m : members())
    if (m.first == key) return m.second;
  throw std::runtime_error("json: no key \"" + key + "\"");
}

Json& Json::push(Json value) {
  if (kind_ != Kind::Array) type_error("an array");
  items_.push_back(std::move(value));
  return items_.back();
}

bool Json::operator==(const Json& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::Null: return true;
    case Kind::Bool: return bool_ == o.bool_;
    case Kind::Number: return number_ == o.number_ || (std::isnan(number_) && std::isnan(o.number_));
    case Kind::String: return string_ == o.string_;
    case Kind::Array: return items_ == o.items_;
    case Kind::Object: return members_ == o.members_;
  }
  return false;
}

namespace {

void dump_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void dump_number(std::string& out, double v) {
  if (!std::isfinite(v)) {  // JSON has no NaN or inf: write null, never an unreadable file
    out += "null";
    return;
  }
  char buf[40];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  out += buf;
}

}  // namespace

void Json::dump_to(std::string& out, int indent, int depth) const {
  const std::string pad(static_cast<std::size_t>(indent * (depth + 1)), ' ');
  const std::string close_pad(static_cast<std::size_t>(indent * depth), ' ');
  switch (kind_) {
    case Kind::Null: out += "null"; break;
    case Kind::Bool: out += bool_ ? "true" : "false"; break;
    case Kind::Number: dump_number(out, number_); break;
    case Kind::String: dump_string(out, string_); break;
    case Kind::Array: {
      bool flat = true;  // short arrays of scalars stay on one line
      for (auto& i : items_) flat = flat && i.kind_ != Kind::Array && i.kind_ != Kind::Object;
      out += '[';
      for (std::size_t i = 0; i < items_.size(); ++i) {
        if (i) out += flat ? ", " : ",";
        if (!flat) out += "\n" + pad;
        items_[i].dump_to(out, indent, depth + 1);
      }
      if (!flat && !items_.empty()) out += "\n" + close_pad;
      out += ']';
      break;
    }
    case Kind::Object: {
      out += '{';
      for (std::size_t i = 0; i < members_.size(); ++i) {
        out += i ? ",\n" : "\n";
        out += pad;
        dump_string(out, members_[i].first);
        out += ": ";
        members_[i].second.dump_to(out, indent, depth + 1);
      }
      if (!members_.empty()) out += "\n" + close_pad;
      out += '}';
      break;
    }
  }
}

std::string Json::dump(int indent) const {
  std::string out;
  dump_to(out, indent, 0);
  return out + "\n";
}

// ---------------------------------------------------------------- parser

namespace {

struct Parser {
  const std::string& s;
  std::size_t i = 0;

  [[noreturn]] void error(const std::string& what) const {
    throw std::runtime_error("json: " + what + " at offset " + std::to_string(i));
  }
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
  }
  bool eat(const char* lit) {
    std::size_t n = std::char_traits<char>::length(lit);
    if (s.compare(i, n, lit) == 0) {
      i += n;
      return true;
    }
    return false;
  }
  std::string string() {
    if (s[i] != '"') error("expected a string");
    ++i;
    std::string out;
    while (i < s.size() && s[i] != '"') {
      char c = s[i++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i >= s.size()) error("unterminated escape");
      char e = s[i++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          if (i + 4 > s.size()) error("short \\u escape");
          unsigned cp = static_cast<unsigned>(std::stoul(s.substr(i, 4), nullptr, 16));
          i += 4;
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default: error("bad escape");
      }
    }
    if (i >= s.size()) error("unterminated string");
    ++i;
    return out;
  }
  Json value() {
    ws();
    if (i >= s.size()) error("unexpected end");
    const char c = s[i];
    if (c == '{') {
      ++i;
      Json obj = Json::object();
      ws();
      if (i < s.size() && s[i] == '}') {
        ++i;
        return obj;
      }
      while (true) {
        ws();
        std::string key = string();
        ws();
        if (i >= s.size() || s[i] != ':') error("expected ':'");
        ++i;
        obj.set(key, value());
        ws();
        if (i < s.size() && s[i] == ',') {
          ++i;
          continue;
        }
        if (i < s.size() && s[i] == '}') {
          ++i;
          return obj;
        }
        error("expected ',' or '}'");
      }
    }
    if (c == '[') {
      ++i;
      Json arr = Json::array();
      ws();
      if (i < s.size() && s[i] == ']') {
        ++i;
        return arr;
      }
      while (true) {
        arr.push(value());
        ws();
        if (i < s.size() && s[i] == ',') {
          ++i;
          continue;
        }
        if (i < s.size() && s[i] == ']') {
          ++i;
          return arr;
        }
        error("expected ',' or ']'");
      }
    }
    if (c == '"') return Json(string());
    if (eat("true")) return Json(true);
    if (eat("false")) return Json(false);
    if (eat("null")) return Json();
    const char* begin = s.c_str() + i;
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end == begin) error("unexpected character");
    i += static_cast<std::size_t>(end - begin);
    return Json(v);
  }
};

}  // namespace

Json Json::parse(const std::string& text) {
  Parser p{text};
  Json v = p.value();
  p.ws();
  if (p.i != text.size()) p.error("trailing characters");
  return v;
}

}  // namespace attnlab::lessons
