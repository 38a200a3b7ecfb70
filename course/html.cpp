#include "course/html.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "io/files.hpp"
#include "lessons/story/book_layout.hpp"
#include "lessons/story/math.hpp"

namespace attnlab::course {

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string url(const std::string& path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += char(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

std::string prose_html(const std::string& text) {
  std::vector<lessons::TextPiece> pieces;
  try {
    pieces = lessons::split_math(text);
  } catch (const std::invalid_argument&) {
    return escape(text);
  }
  std::string out;
  for (const lessons::TextPiece& p : pieces) {
    if (p.kind == lessons::TextPiece::prose) {
      out += escape(p.content);
      continue;
    }
    const bool display = p.kind == lessons::TextPiece::display_math;
    const std::string plain = escape(lessons::plain_math("$" + p.content + "$"));
    out += display ? "<div class=\"math display\" data-tex=\"" + escape(p.content) + "\">" + plain + "</div>"
                   : "<span class=\"math\" data-tex=\"" + escape(p.content) + "\">" + plain + "</span>";
  }
  return out;
}

namespace {

// Sizes grow with the window: 16 px text on a phone, about 24 px on a projector's wide screen.
constexpr const char* kStyle = R"(
:root { --ink: #1d1d1f; --muted: #5a5f66; --rule: #d9d9de; --accent: #1a56b0; --soft: #f3f4f6; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0 auto; color: var(--ink); background: #fff;
       font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", Roboto, sans-serif; line-height: 1.55; }
nav { display: flex; flex-wrap: wrap; gap: .4rem 1.2rem; font-size: .9rem; margin-bottom: .6rem; }
a { color: var(--accent); }
h1 { font-size: 1.9rem; line-height: 1.2; margin: .4rem 0 .3rem; }
h2 { font-size: 1.4rem; line-height: 1.25; margin: 2.4rem 0 .6rem; padding-top: .6rem; border-top: 1px solid var(--rule); }
p { margin: .7rem 0; max-width: 48rem; }
.summary { color: var(--muted); font-style: italic; }
.badge { display: inline-block; font-size: .8rem; padding: .05rem .55rem; border-radius: .7rem; background: var(--soft); }
.toc ul { list-style: none; padding-left: 0; columns: 2 20rem; margin: .3rem 0; }
figure { margin: 1.6rem 0; }
figure img { display: block; margin: 0 auto;
             border: 1px solid var(--rule); background: #fff; }
figcaption { color: var(--muted); font-size: .9rem; margin-top: .4rem; }
pre { background: var(--soft); padding: .8rem 1rem; overflow-x: auto; font-size: .8rem; line-height: 1.4; }
pre, code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.scroll { overflow-x: auto; margin: 1rem 0; max-width: 100%; }
table { border-collapse: collapse; font-size: .88rem; }
th, td { padding: .3rem .7rem; border-bottom: 1px solid var(--rule); text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.matrix td { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.matrix-name { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .9rem; margin-bottom: .3rem; }
.ok { color: #137333; font-weight: 600; }
.failed { color: #b3261e; font-weight: 600; }
.missing { background: #fce8e6; color: #b3261e; padding: .6rem 1rem; font-weight: 600; }
tr.headline td { font-weight: 700; background: #eef4fc; }
.math.display { display: block; margin: .8rem 0; overflow-x: auto; text-align: center; }
.math-error { color: #b3261e; }
.claim { margin: .7rem 0; max-width: 48rem; border-left: 4px solid #2e7d32; padding: .1rem 0 .1rem .8rem; }
.claim.unseen { border-left-color: #c62828; background: #fdf3f2; }
.claim.either { border-left-color: #8a6d00; }
.claim.fullrun { border-left-color: #9e9e9e; }
.claim p { margin: .2rem 0; }
ol.questions li { margin: .6rem 0; max-width: 48rem; }
ol.questions li p { margin: .2rem 0; }
details.answer { font-size: .9rem; color: var(--muted); border-left: 4px solid var(--rule); padding-left: .8rem; }
details.answer summary { cursor: pointer; }
figure.page iframe { width: 100%; height: 900px; border: 1px solid #ddd; border-radius: 4px; }
.claim details { font-size: .8rem; color: var(--muted); }
.claim summary { cursor: pointer; }
.claim .verdict { font-weight: 600; }
.claim.held .verdict { color: #2e7d32; } .claim.unseen .verdict { color: #c62828; } .claim.either .verdict { color: #8a6d00; } .claim.fullrun .verdict { color: var(--muted); }
.ref { color: var(--muted); font-size: .85rem; }
.run-kind { display: inline-block; font-size: .75rem; padding: 0 .45rem; border-radius: .6rem; background: #fff4d6; color: #6b4e00; }
.run-kind.full { background: #e5f3e6; color: #1e5a22; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(19rem, 1fr)); gap: 1.2rem; margin: 1.2rem 0; }
.card { border: 1px solid var(--rule); border-radius: .5rem; padding: .8rem; }
.card img { width: 100%; height: 11rem; object-fit: contain; background: #fff; display: block; }
.card h3 { font-size: 1.05rem; margin: .5rem 0 .2rem; }
.card p { font-size: .88rem; margin: .3rem 0; }
@media (max-width: 40rem) {
  body { padding: .75rem .8rem 3rem; }
  h1 { font-size: 1.5rem; }
  h2 { font-size: 1.2rem; }
  .toc ul { columns: 1; }
}
@media print { nav, .toc { display: none; } }
)";

// Runs once everything has loaded (or failed): counts the images that have pixels.
constexpr const char* kImageCheck = R"(
window.addEventListener("load", function () {
  var images = document.images, loaded = 0, missing = [];
  for (var i = 0; i < images.length; i++) {
    if (images[i].complete && images[i].naturalWidth > 0) loaded++;
    else missing.push(images[i].getAttribute("src"));
    images[i].setAttribute("data-shown-width", images[i].width);  // what lessons/story/book_layout.hpp predicts
  }
  document.body.setAttribute("data-images", loaded + "/" + images.length);
  if (missing.length) {
    document.body.setAttribute("data-missing", missing.join(" "));
    var note = document.createElement("p");
    note.className = "missing";
    note.textContent = missing.length + " figure(s) did not load: " + missing.join(", ");
    document.body.insertBefore(note, document.body.firstChild);
  }
});
)";

// Typesets every formula with KaTeX (loaded with defer, so it has run by DOMContentLoaded), then
// counts what a reader would still see as TeX in the prose.
constexpr const char* kMath = R"(
document.addEventListener("DOMContentLoaded", function () {
  var spans = document.querySelectorAll(".math"), typeset = 0;
  for (var i = 0; i < spans.length && window.katex; i++) {
    var el = spans[i];
    try {
      katex.render(el.getAttribute("data-tex"), el, {displayMode: el.classList.contains("display"), throwOnError: true});
      typeset++;
    } catch (e) {
      el.classList.add("math-error");
      el.title = String(e.message || e);
    }
  }
  document.body.setAttribute("data-math", typeset + "/" + spans.length);
  var raw = 0, texts = document.querySelectorAll("p, li, h1, h2, h3, figcaption, td, th, summary");
  for (var j = 0; j < texts.length; j++) {
    var clone = texts[j].cloneNode(true), typesetIn = clone.querySelectorAll(".katex");
    for (var k = 0; k < typesetIn.length; k++) typesetIn[k].remove();
    if (/\$|\\[A-Za-z]+/.test(clone.textContent)) raw++;
  }
  document.body.setAttribute("data-raw-tex", String(raw));
});
)";

constexpr const char* kKatexSource = "/usr/share/javascript/katex";

}  // namespace

std::string document(const Page& page) {
  const std::string math = page.math ? std::string("<link rel=\"stylesheet\" href=\"katex/katex.min.css\">\n"
                                                   "<script defer src=\"katex/katex.min.js\"></script>\n<script>") +
                                           kMath + "</script>\n"
                                     : std::string();
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
         escape(page.title) + "</title>\n<style>" + attnlab::lessons::book::root_css() + kStyle +
         "</style>\n<script>" + kImageCheck + "</script>\n" + math +
         "</head>\n<body>\n<nav>" + page.nav + "</nav>\n<h1>" + prose_html(page.heading) + "</h1>\n" + page.body +
         "</body>\n</html>\n";
}

std::string math_script() { return kMath; }

bool copy_katex(const std::string& folder) {
  namespace fs = std::filesystem;
  const fs::path source(kKatexSource);
  if (!fs::exists(source / "katex.min.js")) return false;
  make_dirs(folder + "/katex/fonts");
  for (const char* f : {"katex.min.js", "katex.min.css"})
    write_file_atomic(folder + "/katex/" + f, read_file((source / f).string()));
  for (const auto& font : fs::directory_iterator(source / "fonts"))
    write_file_atomic(folder + "/katex/fonts/" + font.path().filename().string(), read_file(font.path().string()));
  return true;
}

bool looks_numeric(const std::string& cell) {
  if (cell.empty()) return false;
  std::size_t digits = 0;
  for (unsigned char c : cell) {
    if (std::isdigit(c)) ++digits;
    // signs, points, exponents, percent, "1.6x", and the bytes of "±" (C2 B1) and "×" (C3 97)
    else if (!std::strchr("+-.,eE %x", c) && c != 0xC2 && c != 0xB1 && c != 0xC3 && c != 0x97) return false;
  }
  return digits > 0;
}

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string h = "<div class=\"scroll\"><table>\n<thead><tr>";
  for (const std::string& c : header) h += "<th>" + prose_html(c) + "</th>";
  h += "</tr></thead>\n<tbody>\n";
  for (const auto& r : rows) {
    h += "<tr>";
    for (std::size_t c = 0; c < header.size(); ++c) {
      const std::string cell = c < r.size() ? r[c] : "";
      h += (looks_numeric(cell) ? "<td class=\"num\">" : "<td>") + prose_html(cell) + "</td>";
    }
    h += "</tr>\n";
  }
  return h + "</tbody></table></div>\n";
}

}  // namespace attnlab::course
