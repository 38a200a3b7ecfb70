#include "course/markdown.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

#include "course/html.hpp"

namespace attnlab::course {

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// Inline markup over escaped text: `code` first (its inside left as written), then links, bold, emphasis.
std::string inline_html(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '`') {
      const auto end = text.find('`', i + 1);
      if (end != std::string::npos) {
        out += "<code>" + escape(text.substr(i + 1, end - i - 1)) + "</code>";
        i = end + 1;
        continue;
      }
    } else if (c == '[') {
      const auto close = text.find("](", i);
      const auto end = close == std::string::npos ? close : text.find(')', close);
      if (end != std::string::npos) {
        const std::string label = inline_html(text.substr(i + 1, close - i - 1)), target = text.substr(close + 2, end - close - 2);
        const bool other_doc = target.size() > 3 && target.compare(target.size() - 3, 3, ".md") == 0;
        out += other_doc ? label : "<a href=\"" + escape(target) + "\">" + label + "</a>";
        i = end + 1;
        continue;
      }
    } else if (c == '*' && i + 1 < text.size() && text[i + 1] == '*') {
      const auto end = text.find("**", i + 2);
      if (end != std::string::npos) {
        out += "<strong>" + inline_html(text.substr(i + 2, end - i - 2)) + "</strong>";
        i = end + 2;
        continue;
      }
    } else if (c == '*') {
      const auto end = text.find('*', i + 1);
      if (end != std::string::npos && end > i + 1) {
        out += "<em>" + inline_html(text.substr(i + 1, end - i - 1)) + "</em>";
        i = end + 1;
        continue;
      }
    }
    out += escape(std::string(1, c));
    ++i;
  }
  return out;
}

std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::string r = trim(row);
  if (starts_with(r, "|")) r = r.substr(1);
  if (!r.empty() && r.back() == '|') r.pop_back();
  std::stringstream s(r);
  std::string cell;
  while (std::getline(s, cell, '|')) out.push_back(trim(cell));
  return out;
}

}  // namespace

std::string markdown_html(const std::string& markdown) {
  std::vector<std::string> lines;
  std::stringstream in(markdown);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out, paragraph;
  auto flush = [&] {
    if (!trim(paragraph).empty()) out += "<p>" + inline_html(trim(paragraph)) + "</p>\n";
    paragraph.clear();
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string line = lines[i], t = trim(line);
    if (t.empty()) {
      flush();
    } else if (starts_with(t, "#")) {
      flush();
      const auto level = t.find_first_not_of('#');
      const std::string n = std::to_string(std::min<std::size_t>(level, 3));
      out += "<h" + n + ">" + inline_html(trim(t.substr(level))) + "</h" + n + ">\n";
    } else if (starts_with(t, "|") && i + 1 < lines.size() && starts_with(trim(lines[i + 1]), "| ---")) {
      flush();
      std::vector<std::vector<std::string>> rows;
      const std::vector<std::string> header = cells(t);
      for (i += 2; i < lines.size() && starts_with(trim(lines[i]), "|"); ++i) rows.push_back(cells(lines[i]));
      --i;
      out += "<div class=\"scroll\"><table>\n<thead><tr>";
      for (const std::string& h : header) out += "<th>" + inline_html(h) + "</th>";
      out += "</tr></thead>\n<tbody>\n";
      for (const auto& r : rows) {
        out += "<tr>";
        for (const std::string& c : r) out += "<td>" + inline_html(c) + "</td>";
        out += "</tr>\n";
      }
      out += "</tbody></table></div>\n";
    } else if (starts_with(t, "- ") || (std::isdigit(static_cast<unsigned char>(t[0])) && t.find(". ") != std::string::npos &&
                                        t.find_first_not_of("0123456789") == t.find(". "))) {
      flush();
      const bool numbered = !starts_with(t, "- ");
      out += numbered ? "<ol>\n" : "<ul>\n";
      std::string item;
      auto item_start = [&](const std::string& s) {
        return numbered ? (std::isdigit(static_cast<unsigned char>(s[0])) && s.find_first_not_of("0123456789") == s.find(". "))
                        : starts_with(s, "- ");
      };
      for (; i < lines.size() && !trim(lines[i]).empty(); ++i) {
        const std::string s = trim(lines[i]);
        if (item_start(s)) {
          if (!item.empty()) out += "<li>" + inline_html(trim(item)) + "</li>\n";
          item = s.substr(numbered ? s.find(". ") + 2 : 2);
        } else {
          item += " " + s;  // a continuation line of the item
        }
      }
      if (!item.empty()) out += "<li>" + inline_html(trim(item)) + "</li>\n";
      out += numbered ? "</ol>\n" : "</ul>\n";
    } else {
      paragraph += " " + t;
    }
  }
  flush();
  return out;
}

}  // namespace attnlab::course
