#include "lessons/story/math.hpp"

#include <cctype>
#include <map>
#include <stdexcept>

namespace attnlab::lessons {

std::vector<TextPiece> split_math(const std::string& text) {
  std::vector<TextPiece> pieces;
  std::string prose;
  auto flush = [&] {
    if (!prose.empty()) pieces.push_back({TextPiece::prose, prose});
    prose.clear();
  };
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, 2, "\\$") == 0) {
      prose += '$';
      i += 2;
      continue;
    }
    if (text[i] != '$') {
      prose += text[i++];
      continue;
    }
    const bool display = text.compare(i, 2, "$$") == 0;
    const std::string fence = display ? "$$" : "$";
    const std::size_t begin = i + fence.size();
    std::size_t end = begin;
    // The closing fence: the next $ (or $$) that is not escaped.
    while (end < text.size() && (text.compare(end, fence.size(), fence) != 0 || text[end - 1] == '\\')) ++end;
    if (end >= text.size())
      throw std::invalid_argument("a formula opened by " + fence + " at character " + std::to_string(i + 1) +
                                  " is never closed in: \"" + text + "\"");
    flush();
    pieces.push_back({display ? TextPiece::display_math : TextPiece::inline_math, text.substr(begin, end - begin)});
    i = end + fence.size();
  }
  flush();
  return pieces;
}

namespace {

const std::map<std::string, std::string>& symbols() {
  static const std::map<std::string, std::string> s = {
      {"alpha", "α"}, {"beta", "β"}, {"gamma", "γ"}, {"delta", "δ"}, {"epsilon", "ε"}, {"varepsilon", "ε"},
      {"zeta", "ζ"}, {"eta", "η"}, {"theta", "θ"}, {"iota", "ι"}, {"kappa", "κ"}, {"lambda", "λ"}, {"mu", "μ"},
      {"nu", "ν"}, {"xi", "ξ"}, {"pi", "π"}, {"rho", "ρ"}, {"sigma", "σ"}, {"tau", "τ"}, {"phi", "φ"},
      {"varphi", "φ"}, {"chi", "χ"}, {"psi", "ψ"}, {"omega", "ω"}, {"Gamma", "Γ"}, {"Delta", "Δ"},
      {"Theta", "Θ"}, {"Lambda", "Λ"}, {"Pi", "Π"}, {"Sigma", "Σ"}, {"Phi", "Φ"}, {"Psi", "Ψ"}, {"Omega", "Ω"},
      {"cdot", "·"}, {"times", "×"}, {"le", "≤"}, {"leq", "≤"}, {"ge", "≥"}, {"geq", "≥"}, {"ne", "≠"},
      {"neq", "≠"}, {"approx", "≈"}, {"sim", "~"}, {"propto", "∝"}, {"in", "∈"}, {"sum", "Σ"}, {"prod", "∏"},
      {"infty", "∞"}, {"to", "→"}, {"rightarrow", "→"}, {"leftarrow", "←"}, {"mapsto", "↦"}, {"partial", "∂"},
      {"nabla", "∇"}, {"odot", "⊙"}, {"otimes", "⊗"}, {"oplus", "⊕"}, {"ell", "ℓ"}, {"ldots", "…"},
      {"dots", "…"}, {"cdots", "…"}, {"pm", "±"}, {"top", "ᵀ"}, {"quad", "  "}, {"qquad", "    "}, {",", " "},
      {";", " "}, {":", " "}, {"!", ""}, {" ", " "}, {"|", "‖"}, {"lVert", "‖"}, {"rVert", "‖"}, {"Vert", "‖"},
      {"{", "{"}, {"}", "}"}, {"$", "$"}, {"%", "%"}, {"_", "_"}, {"langle", "⟨"}, {"rangle", "⟩"},
      {"mid", "|"}, {"lvert", "|"}, {"rvert", "|"}, {"left", ""}, {"right", ""}, {"big", ""}, {"Big", ""},
      {"forall", "∀"}, {"exists", "∃"}, {"cap", "∩"}, {"cup", "∪"}, {"subset", "⊂"}, {"lfloor", "⌊"},
      {"rfloor", "⌋"}, {"lceil", "⌈"}, {"rceil", "⌉"}, {"star", "⋆"}, {"circ", "∘"}, {"equiv", "≡"},
      {"log", "log"}, {"exp", "exp"}, {"max", "max"}, {"min", "min"}, {"sin", "sin"}, {"cos", "cos"},
      {"arg", "arg"}, {"argmax", "argmax"}, {"operatorname*", ""}, {"displaystyle", ""}, {"limits", ""}};
  return s;
}

// Superscript forms where Unicode has them: x^2 as x², Q^\top as Qᵀ.
const std::map<std::string, std::string>& superscripts() {
  static const std::map<std::string, std::string> s = {
      {"0", "⁰"}, {"1", "¹"}, {"2", "²"}, {"3", "³"}, {"4", "⁴"}, {"5", "⁵"}, {"6", "⁶"}, {"7", "⁷"},
      {"8", "⁸"}, {"9", "⁹"}, {"+", "⁺"}, {"-", "⁻"}, {"n", "ⁿ"}, {"i", "ⁱ"}, {"T", "ᵀ"}, {"ᵀ", "ᵀ"}};
  return s;
}

class Plain {
 public:
  explicit Plain(const std::string& tex) : s_(tex) {}
  std::string all() {
    std::string out;
    while (at_ < s_.size()) out += atom();
    return out;
  }

 private:
  // A braced group's content, or the next single atom when there is no brace.
  std::string argument() {
    skip_space();
    if (at_ < s_.size() && s_[at_] == '{') return group();
    return atom();
  }

  std::string group() {  // at '{'
    ++at_;
    std::string out;
    while (at_ < s_.size() && s_[at_] != '}') out += atom();
    if (at_ < s_.size()) ++at_;
    return out;
  }

  void skip_space() {
    while (at_ < s_.size() && s_[at_] == ' ') ++at_;
  }

  static bool compound(const std::string& x) {
    for (const char c : x)
      if (c == ' ' || c == '+' || c == '-' || c == '/' || c == '*') return true;
    return false;
  }
  static std::string wrap(const std::string& x) { return compound(x) ? "(" + x + ")" : x; }

  std::string atom() {
    const char c = s_[at_];
    if (c == '{') return group();
    if (c == '^' || c == '_') {
      ++at_;
      const std::string x = argument();
      if (c == '_') return "_" + (x.size() > 1 && compound(x) ? "(" + x + ")" : x);
      std::string sup;
      for (std::size_t i = 0; i < x.size();) {  // the whole exponent in superscripts, if Unicode has them all
        const std::size_t n = x.compare(i, 3, "ᵀ") == 0 ? 3 : 1;
        const auto it = superscripts().find(x.substr(i, n));
        if (it == superscripts().end()) return "^" + wrap(x);
        sup += it->second;
        i += n;
      }
      return sup;
    }
    if (c != '\\') {
      ++at_;
      return std::string(1, c);
    }
    // A macro: a run of letters (or one other character) after the backslash.
    std::size_t end = at_ + 1;
    while (end < s_.size() && std::isalpha(static_cast<unsigned char>(s_[end]))) ++end;
    if (end == at_ + 1 && end < s_.size()) ++end;
    std::string name = s_.substr(at_ + 1, end - at_ - 1);
    at_ = end;
    if (name == "operatorname" && at_ < s_.size() && s_[at_] == '*') ++at_;
    if (name == "frac" || name == "tfrac" || name == "dfrac") {
      const std::string a = argument(), b = argument();
      return wrap(a) + "/" + wrap(b);
    }
    if (name == "sqrt") return "√" + wrap(argument());
    if (name == "mathrm" || name == "text" || name == "operatorname" || name == "mathbf" || name == "mathit" ||
        name == "boldsymbol" || name == "mathcal" || name == "mathsf" || name == "texttt" || name == "mathbb")
      return argument();
    if (name == "hat") return argument() + "\u0302";
    if (name == "tilde") return argument() + "\u0303";
    if (name == "bar" || name == "overline") return argument() + "\u0304";
    if (name == "vec") return argument();
    const auto it = symbols().find(name);
    if (it != symbols().end()) return it->second;
    return name;
  }

  const std::string& s_;
  std::size_t at_ = 0;
};

}  // namespace

std::string plain_math(const std::string& text) {
  std::string out;
  for (const TextPiece& p : split_math(text)) {
    if (p.kind == TextPiece::prose) out += p.content;
    else out += Plain(p.content).all();
  }
  return out;
}

}  // namespace attnlab::lessons
