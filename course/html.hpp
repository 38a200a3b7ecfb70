// The little HTML the course book needs: escaping, and the page every book page is written in.
//
// Escaping: text goes into elements and attribute values through escape(), which replaces all
// five characters that can end or open markup (& < > " '), so a story's text can never become
// markup, whatever it quotes ("<eos>", "a < b", "Q & K"). A URL from a file name goes through
// url() as well, which also percent-encodes what a path may not hold.
#pragma once

#include <string>
#include <vector>

namespace attnlab::course {

std::string escape(const std::string& text);

// Prose as markup: the text escaped, each $...$ formula a <span class="math"> and each $$...$$ a
// <div class="math display"> holding its TeX in data-tex (KaTeX typesets it in the browser) and
// its plain form (lessons/story/math.hpp) as the text a browser without KaTeX shows. A text
// whose $ is never closed is shown escaped, as written.
std::string prose_html(const std::string& text);
// A relative URL for a file name: letters, digits and -._~/ as they are, the rest %XX (UTF-8 bytes).
std::string url(const std::string& path);

struct Page {
  std::string title;     // <title>, escaped here
  std::string heading;   // the <h1>, escaped here
  std::string nav;       // markup: the links above the heading
  std::string body;      // markup
  bool math = false;     // load katex/ (beside the page) to typeset the formulas of prose_html
};

// A whole document: inline CSS (no network, no fonts but the system's; readable from a phone to a
// projector), and an inline script that, once every image has loaded or failed, records the count
// on <body data-images="loaded/total"> and names any image that failed in a visible warning and in
// data-missing (what the browser test reads).
// With page.math, the page also loads katex/katex.min.css and katex/katex.min.js and typesets
// every formula; it records "typeset/total" on <body data-math>, and on <body data-raw-tex> the
// number of visible text elements that still show TeX ($ or a \macro): what the browser test reads.
std::string document(const Page& page);

// The inline script document() runs on a page with math: KaTeX typesets every .math element once
// the DOM is ready and the page records data-math and data-raw-tex (above). For other pages that
// load KaTeX themselves (the slides, course/slides.hpp).
std::string math_script();

// Copies KaTeX from Debian's libjs-katex (/usr/share/javascript/katex: the script, the style and
// its fonts) into folder/katex, so the book typesets offline. Returns false, copying nothing, when
// the package is not installed (the formulas then read as plain text).
bool copy_katex(const std::string& folder);

// <table> with a header row; cells are prose (prose_html: escaped, formulas typeset). Cells that read as numbers are right
// aligned. Wrapped in a scrolling box so that a wide table never widens the page on a phone.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

bool looks_numeric(const std::string& cell);

}  // namespace attnlab::course
