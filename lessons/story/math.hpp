// Formulas in prose. A lesson writes its formulas as TeX between dollar signs,
//
//   say("The weights are $A = \\mathrm{softmax}(QK^\\top / \\sqrt{d_k})$, one row per query.");
//
// and each reader gets them in its own form: the course book typesets them with KaTeX, report.md
// keeps the TeX (Markdown viewers render $...$), and the console shows plain_math()'s text:
// "A = softmax(QKᵀ / √d_k), one row per query." $$...$$ is a formula on a line of its own. A
// dollar sign that is not math is written \$.
#pragma once

#include <string>
#include <vector>

namespace attnlab::lessons {

// The text with every $...$ and $$...$$ formula turned into plain Unicode text: \sqrt{x} as √x,
// \frac{a}{b} as a/b, ^\top as ᵀ, Greek letters, \cdot, \le, \sum and friends as their symbols,
// \mathrm{...}, \text{...} and \operatorname{...} as their content; braces that only group are
// dropped. A macro it does not know is kept without its backslash. \$ becomes $.
std::string plain_math(const std::string& text);

// A text cut into its prose and its formulas, in order: what the course book needs to escape the
// prose and hand the formulas to KaTeX. Prose pieces have \$ turned into $; formula pieces hold
// the TeX between the dollar signs. std::invalid_argument naming the text when a $ is never closed.
struct TextPiece {
  enum Kind { prose, inline_math, display_math } kind;
  std::string content;
};
std::vector<TextPiece> split_math(const std::string& text);

}  // namespace attnlab::lessons
