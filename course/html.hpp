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
// A relative URL for a file name: letters, digits and -._~/ as they are, the rest %XX (UTF-8 bytes).
std::string url(const std::string& path);

struct Page {
  std::string title;     // <title>, escaped here
  std::string heading;   // the <h1>, escaped here
  std::string nav;       // markup: the links above the heading
  std::string body;      // markup
};

// A whole document: inline CSS (no network, no fonts but the system's; readable from a phone to a
// projector), and an inline script that, once every image has loaded or failed, records the count
// on <body data-images="loaded/total"> and names any image that failed in a visible warning and in
// data-missing (what the browser test reads).
std::string document(const Page& page);

// <table> with a header row; cells are text (escaped here). Cells that read as numbers are right
// aligned. Wrapped in a scrolling box so that a wide table never widens the page on a phone.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

bool looks_numeric(const std::string& cell);

}  // namespace attnlab::course
