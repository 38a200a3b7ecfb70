#include "course/slides.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "course/book.hpp"
#include "course/html.hpp"
#include "course/process.hpp"
#include "io/files.hpp"
#include "lessons/story/math.hpp"
#include "lessons/story/text.hpp"

namespace attnlab::course {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

// A slide is 1280 x 720 CSS px, printed as one 16:9 page. Text is sized for the back of a room:
// 28 px body text on a 1280 px slide is about 2.2 % of the screen's width, as 40 pt on a 1920 px
// projector. Figures take whatever height the title and caption leave.
constexpr const char* kStyle = R"(
@page { size: 1280px 720px; margin: 0; }
* { box-sizing: border-box; }
html, body { margin: 0; padding: 0; }
body { background: #777; font-family: "DejaVu Sans", system-ui, sans-serif; color: #1d1d1f;
       -webkit-print-color-adjust: exact; print-color-adjust: exact; }
.slide { width: 1280px; height: 720px; padding: 40px 60px 46px; background: #fff; position: relative;
         overflow: hidden; display: flex; flex-direction: column; font-size: 28px; line-height: 1.35;
         break-after: page; page-break-after: always; }
.slide:last-child { break-after: auto; page-break-after: auto; }
@media screen { .slide { margin: 0 auto 16px; } body.only .slide { display: none; margin: 0; }
                body.only .slide.shown { display: flex; } }
.slide h2 { font-size: 42px; line-height: 1.15; margin: 0 0 18px; color: #1a56b0; flex: none; }
.slide .body { flex: 1; min-height: 0; overflow: hidden; display: flex; flex-direction: column; }
.slide p { margin: 0 0 16px; }
.slide footer { position: absolute; left: 60px; right: 60px; bottom: 12px; display: flex;
                justify-content: space-between; font-size: 17px; color: #6b6f76; }
.title-slide, .idea .body { justify-content: center; }
.title-slide .kicker { font-size: 30px; color: #6b6f76; margin-bottom: 8px; }
.title-slide h1 { font-size: 60px; line-height: 1.1; margin: 0 0 28px; color: #1a56b0; }
.title-slide .summary { font-size: 32px; font-style: italic; color: #3c4046; }
.title-slide .run { font-size: 24px; color: #3c4046; margin-top: 28px; }
.run-kind { display: inline-block; padding: 2px 12px; border-radius: 14px; background: #fff4d6; color: #6b4e00; }
.run-kind.full { background: #e5f3e6; color: #1e5a22; }
.formula { font-size: 34px; text-align: center; margin: 18px 0; overflow: hidden; }
.formula .katex-display { margin: 0; }
.slide.figure { padding-top: 26px; }
.slide.figure h2 { font-size: 34px; margin-bottom: 10px; }
.fig { flex: 1; min-height: 0; display: flex; justify-content: center; }
.fig img { width: 100%; height: 100%; object-fit: contain; }
.figure.tall .body { flex-direction: row; gap: 28px; }
.figure.tall figcaption { flex: 0 0 300px; align-self: center; margin: 0; }
figcaption { flex: none; font-size: 20px; line-height: 1.3; color: #4b4f56; margin-top: 10px; }
ul.claims, ol.questions { margin: 0; padding-left: 0; list-style: none; }
ol.questions { padding-left: 44px; list-style: decimal; }
ul.claims li { margin: 0 0 16px; padding-left: 44px; text-indent: -44px; }
ol.questions li { margin: 0 0 16px; }
.mark { display: inline-block; width: 44px; text-indent: 0; font-weight: 700; }
.held .mark { color: #2e7d32; } .unseen .mark { color: #c62828; } .either .mark { color: #8a6d00; }
.fullrun .mark { color: #8a8f96; } .fullrun { color: #5a5f66; }
.legend { flex: none; font-size: 18px; color: #6b6f76; margin-top: auto; }
.math-error { color: #b3261e; }
)";

// After the formulas are set and the figures loaded: a slide whose body overflows has its text
// made smaller, a pixel at a time down to 22 px, and a formula wider than the slide is shrunk until
// it fits. What still overflows is named on <body data-overflow>, and <body data-images> counts the
// figures loaded of all. `?slide=N` on screen shows slide N alone (its screenshot is that slide at
// 1280 x 720).
constexpr const char* kFit = R"(
window.addEventListener("load", function () {
  var slides = document.querySelectorAll(".slide"), over = [];
  // (a few pixels of slack: KaTeX's struts, a root sign's top, may reach past the line box unseen)
  function full(el) { return el.scrollHeight > el.clientHeight + 6 || el.scrollWidth > el.clientWidth + 6; }
  for (var i = 0; i < slides.length; i++) {
    var s = slides[i], body = s.querySelector(".body");
    var formulas = s.querySelectorAll(".formula");
    for (var f = 0; f < formulas.length; f++) {
      var size = 34;
      var wide = function (el) { return el.scrollWidth > el.clientWidth + 1; };  // KaTeX's struts may pass its height
      while (wide(formulas[f]) && size > 16) formulas[f].style.fontSize = (--size) + "px";
    }
    var px = 28;
    while (body && full(body) && px > 22) s.style.fontSize = (--px) + "px";
    if (body && full(body)) over.push(s.id);
  }
  var images = document.images, loaded = 0;
  for (var k = 0; k < images.length; k++) if (images[k].complete && images[k].naturalWidth > 0) loaded++;
  document.body.setAttribute("data-images", loaded + "/" + images.length);
  document.body.setAttribute("data-slides", String(slides.length));
  document.body.setAttribute("data-overflow", over.join(" "));
  var m = /[?&]slide=(\d+)/.exec(location.search);
  if (m) {
    document.body.classList.add("only");
    var shown = document.getElementById("slide-" + m[1]);
    if (shown) shown.classList.add("shown");
  }
});
)";

Json read_json(const std::string& path) {
  try {
    return Json::parse(read_file(path, "course_slides"));
  } catch (const Json::exception& e) {
    throw std::runtime_error("course_slides: '" + path + "' is not JSON: " + e.what());
  }
}

// "3. Training a ViT" -> "Training a ViT": a slide's title needs no section number.
std::string unnumbered(const std::string& title) {
  std::size_t i = 0;
  while (i < title.size() && std::isdigit(static_cast<unsigned char>(title[i]))) ++i;
  return i > 0 && title.compare(i, 2, ". ") == 0 ? title.substr(i + 2) : title;
}

// The pieces back as TeX prose: what prose_html reads.
std::string joined(const std::vector<lessons::TextPiece>& pieces) {
  std::string s;
  for (const lessons::TextPiece& p : pieces) {
    if (p.kind == lessons::TextPiece::prose) {
      for (char c : p.content) s += c == '$' ? std::string("\\$") : std::string(1, c);
    } else {
      s += "$" + p.content + "$";
    }
  }
  return s;
}

// Where sentences start in TeX prose: after ". " or "? " outside formulas.
std::vector<std::size_t> sentence_starts(const std::string& text) {
  std::vector<std::size_t> at = {0};
  bool math = false;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '\\') { ++i; continue; }
    if (text[i] == '$') math = !math;
    else if (!math && (text[i] == '.' || text[i] == '?') && text[i + 1] == ' ') at.push_back(i + 2);
  }
  return at;
}

// The last whole sentences of `text` that fit in `limit` characters (at least the last one).
std::string last_sentences(const std::string& text, std::size_t limit) {
  const std::vector<std::size_t> starts = sentence_starts(text);
  for (std::size_t s : starts)
    if (text.size() - s <= limit) return text.substr(s);
  return text.substr(starts.back());
}

// The first whole sentences of `text` that fit in `limit` characters (at least the first one).
std::string first_sentences(const std::string& text, std::size_t limit) {
  std::vector<std::size_t> starts = sentence_starts(text);
  starts.push_back(text.size());
  std::size_t end = starts.size() > 1 ? starts[1] : text.size();
  for (std::size_t s : starts)
    if (s <= limit) end = std::max(end, s);
  return text.substr(0, end);
}

struct Slide {
  std::string kind;  // a class: "title-slide", "idea", "figure", "claims", "questions"
  std::string title, body;
};

// The idea: a displayed formula with the sentences that lead to it, from up to two sections.
std::vector<Slide> idea_slides(const Json& blocks) {
  std::vector<Slide> out;
  std::string section, previous_text, first_text, first_section, last_used_section = "\x01";
  for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
    const Json& b = blocks[bi];
    const std::string kind = b.value("kind", "");
    if (kind == "section") {
      section = b.value("title", "");
      previous_text.clear();
      continue;
    }
    if (kind != "text") continue;
    const std::string text = b.value("text", "");
    // without a displayed formula: the first paragraph with a formula, else the first paragraph
    const bool with_math = text.find('$') != std::string::npos;
    if (first_text.empty() || (with_math && first_text.find('$') == std::string::npos)) {
      first_text = text;
      first_section = section;
    }
    std::vector<lessons::TextPiece> pieces;
    try {
      pieces = lessons::split_math(text);
    } catch (const std::invalid_argument&) {
      continue;
    }
    const auto display = std::find_if(pieces.begin(), pieces.end(),
                                      [](const lessons::TextPiece& p) { return p.kind == lessons::TextPiece::display_math; });
    if (display == pieces.end() || section == last_used_section || out.size() == 2) {
      previous_text = text;
      continue;
    }
    std::string lead = joined({pieces.begin(), display});
    if (lead.find_first_not_of(" \n") == std::string::npos) lead = previous_text;  // the formula stands alone
    lead = last_sentences(lead, 380);
    // and the rest of the sentence the formula stands in, when it is short
    const auto next = std::find_if(display + 1, pieces.end(),
                                   [](const lessons::TextPiece& p) { return p.kind == lessons::TextPiece::display_math; });
    std::string after = joined({display + 1, next});
    if (after.find_first_not_of(" \n") == std::string::npos && next == pieces.end() && bi + 1 < blocks.size() &&
        blocks[bi + 1].value("kind", "") == "text")
      after = blocks[bi + 1].value("text", "");  // the sentence goes on in the next paragraph
    std::string tail = first_sentences(after, 0);
    if (tail.size() > 260 || tail.find_first_not_of(" \n.,") == std::string::npos) tail.clear();
    out.push_back({"idea", unnumbered(section),
                   "<p>" + prose_html(lead) + "</p><div class=\"formula math display\" data-tex=\"" +
                       escape(display->content) + "\">" + escape(lessons::plain_math("$" + display->content + "$")) +
                       "</div>" + (tail.empty() ? "" : "<p>" + prose_html(tail) + "</p>")});
    last_used_section = section;
    previous_text = text;
  }
  if (out.empty() && !first_text.empty())
    out.push_back({"idea", unnumbered(first_section), "<p>" + prose_html(first_sentences(first_text, 520)) + "</p>"});
  return out;
}

// A figure block's PNG (else its first file).
std::string shown_file(const Json& b) {
  std::string shown;
  for (const Json& f : b.at("files")) {
    const std::string file = f.get<std::string>();
    const bool png = file.size() > 4 && file.compare(file.size() - 4, 4, ".png") == 0;
    if (shown.empty() || png) shown = file;
  }
  return shown;
}

// Width over height of a PNG, from its header (bytes 16 to 23: width and height, big-endian);
// 0 when the file is not a PNG that can be read.
double png_aspect(const std::string& path) {
  std::string head;
  try {
    head = read_file(path, "course_slides").substr(0, 24);
  } catch (const IoError&) {
    return 0.0;
  }
  if (head.size() < 24 || head.compare(1, 3, "PNG") != 0) return 0.0;
  auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(head[at + i]);
    return double(v);
  };
  return be32(20) > 0 ? be32(16) / be32(20) : 0.0;
}

// A figure no wider than this (width / height) fills the slide's height and leaves its sides
// empty: its caption goes beside it instead of below, and it is not chosen unless it leads.
constexpr double kTall = 1.3;

Slide figure_slide(const std::string& folder, const std::string& id, const std::string& section, const Json& b) {
  const std::string shown = shown_file(b), caption = b.value("caption", "");
  std::string alt = caption;
  try {
    alt = lessons::plain_math(caption);
  } catch (const std::invalid_argument&) {
  }
  const bool tall = png_aspect(folder + "/" + id + "/" + shown) < kTall;
  return {tall ? "figure tall" : "figure", unnumbered(section),
          "<div class=\"fig\"><img src=\"" + url("../" + id + "/" + shown) + "\" alt=\"" + escape(alt) +
              "\"></div><figcaption>" + prose_html(caption) + "</figcaption>"};
}

// The lead figure, then the first wide figure of each other section, in the story's order (tall
// ones only when there are too few wide ones).
std::vector<Slide> figure_slides(const std::string& folder, const std::string& id, const Json& story,
                                 std::size_t most) {
  const std::string lead = story.value("lead_figure", "");
  std::vector<std::pair<std::string, const Json*>> firsts;  // (section, figure)
  std::string section, taken_section = "\x01";
  const Json* lead_block = nullptr;
  std::string lead_section;
  std::map<std::string, const Json*> talls;  // a section's first tall figure
  for (const Json& b : story.at("blocks")) {
    const std::string kind = b.value("kind", "");
    if (kind == "section") section = b.value("title", "");
    if (kind != "figure" || b.at("files").empty()) continue;
    if (!lead_block && (lead.empty() || b.value("stem", "") == lead)) {
      lead_block = &b;
      lead_section = section;
    } else if (section != taken_section && png_aspect(folder + "/" + id + "/" + shown_file(b)) >= kTall) {
      firsts.push_back({section, &b});
      taken_section = section;
    } else if (section != taken_section && !talls.count(section)) {
      talls[section] = &b;
    }
  }
  // Too few wide figures: the sections' tall ones too, caption beside.
  for (const auto& [s, b] : talls)
    if (firsts.size() + 1 < 3 && s != lead_section &&
        std::none_of(firsts.begin(), firsts.end(), [&](const auto& f) { return f.first == s; }))
      firsts.push_back({s, b});
  std::vector<Slide> out;
  if (lead_block) out.push_back(figure_slide(folder, id, lead_section, *lead_block));
  for (const auto& [s, b] : firsts) {
    if (out.size() >= most) break;
    if (s == lead_section) continue;  // the lead speaks for its section
    out.push_back(figure_slide(folder, id, s, *b));
  }
  return out;
}

// Items of a list in order, cut into the fewest slides that greedy filling needs when a slide holds
// `most`, and spread evenly over them: how many items go on each slide. An item costs its
// characters and 60 more (its line break and spacing).
std::vector<std::size_t> balanced_groups(const std::vector<std::size_t>& costs, std::size_t most) {
  auto groups_at = [&](std::size_t capacity) {
    std::vector<std::size_t> sizes;
    std::size_t filled = 0;
    for (std::size_t c : costs) {
      if (sizes.empty() || filled + c > capacity) sizes.push_back(0), filled = 0;
      ++sizes.back();
      filled += c;
    }
    return sizes;
  };
  const std::size_t needed = groups_at(most).size();
  // The smallest capacity that still needs no more slides.
  std::size_t lo = *std::max_element(costs.begin(), costs.end()), hi = std::max(lo, most);
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (groups_at(mid).size() <= needed) hi = mid;
    else lo = mid + 1;
  }
  return groups_at(lo);
}

// A slide holds about this many characters of list at 28 px (the slide's script shrinks the text a
// little when they run long).
constexpr std::size_t kListChars = 1050;

// Every claim, marked as it went, a few per slide (balanced_groups).
std::vector<Slide> claim_slides(const Json& story) {
  const bool quick = story.value("quick", false);
  std::vector<std::string> kinds, items;
  std::vector<std::size_t> costs;
  for (const Json& b : story.at("blocks")) {
    if (b.value("kind", "") != "claim") continue;
    const std::string kind = claim_outcome(b.value("held", false), b.value("expect", "every_run"), quick);
    const std::string mark = kind == "held" ? "✓" : kind == "either" ? "↔" : kind == "fullrun" ? "◦" : "✗";
    const std::string text = b.value("text", "");
    kinds.push_back(kind);
    items.push_back("<li class=\"" + kind + "\"><span class=\"mark\">" + mark + "</span>" + prose_html(text) + "</li>");
    costs.push_back(lessons::plain_math(text).size() + 60);
  }
  std::vector<Slide> out;
  if (items.empty()) return out;
  std::size_t i = 0;
  for (std::size_t count : balanced_groups(costs, kListChars)) {
    std::string list;
    std::set<std::string> on_slide;
    for (std::size_t end = i + count; i < end; ++i) {
      list += items[i];
      on_slide.insert(kinds[i]);
    }
    std::string legend;  // the marks of this slide
    for (const auto& [kind, meaning] : std::vector<std::pair<std::string, std::string>>{
             {"held", "✓ measured in this run"},
             {"fullrun", "◦ shown by the full run (this quick run is too small)"},
             {"either", "↔ went the other way (an outcome that varies with the seed)"},
             {"unseen", "✗ not seen in this run"}})
      if (on_slide.count(kind)) legend += (legend.empty() ? "" : " · ") + meaning;
    out.push_back({"claims", "What this run measured",
                   "<ul class=\"claims\">" + list + "</ul><div class=\"legend\">" + escape(legend) + "</div>"});
  }
  if (out.size() > 1)
    for (std::size_t k = 0; k < out.size(); ++k)
      out[k].title += " (" + std::to_string(k + 1) + "/" + std::to_string(out.size()) + ")";
  return out;
}

// The questions to think about, numbered on, a few per slide; never their answers.
std::vector<Slide> question_slides(const std::vector<Question>& questions) {
  std::vector<Slide> out;
  if (questions.empty()) return out;
  std::vector<std::size_t> costs;
  for (const Question& q : questions) costs.push_back(lessons::plain_math(q.text).size() + 60);
  std::size_t i = 0;
  for (std::size_t count : balanced_groups(costs, kListChars)) {
    std::string list;
    for (std::size_t end = i + count; i < end; ++i) list += "<li>" + prose_html(questions[i].text) + "</li>";
    out.push_back({"questions", "Questions to think about",
                   "<ol class=\"questions\" start=\"" + std::to_string(i - count + 1) + "\">" + list + "</ol>"});
  }
  return out;
}

Slide title_slide(const std::string& id, const Json& story, const Json& metrics) {
  const bool quick = story.value("quick", false);
  std::string run = std::string("<span class=\"run-kind") + (quick ? "" : " full") + "\">" +
                    (quick ? "quick run" : "full run") + ", seed " + story["seed"].dump() + "</span>";
  const std::string headline = metrics.value("headline", "");
  if (!headline.empty() && metrics["metrics"].contains(headline)) {
    run += " &nbsp; " + escape(headline) + " = <strong>" + escape(metric_text(metrics["metrics"][headline].get<double>())) +
           "</strong>";
    const Json& ref = story.value("reference", Json());
    if (ref.is_object() && ref.contains("metrics") && ref["metrics"].contains(headline)) {
      const Json& m = ref["metrics"][headline];
      std::string seeds;
      for (const Json& s : ref.value("seeds", Json::array())) seeds += (seeds.empty() ? "" : ", ") + s.dump();
      run += "; full run " + escape(lessons::plus_minus(m.value("mean", 0.0), m.value("sd", 0.0))) +
             " (mean ± sd over seeds " + escape(seeds) + ")";
    }
  }
  return {"title-slide", "",
          "<div class=\"kicker\">attnlab · lesson " + escape(id.substr(0, 2)) + "</div><h1>" +
              prose_html(story.value("title", id)) + "</h1><p class=\"summary\">" +
              prose_html(story.value("summary", "")) + "</p><p class=\"run\">" + run + "</p>"};
}

std::string deck_html(const std::string& id, const Json& story, const std::vector<Slide>& slides) {
  const std::string title = story.value("title", id);
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + escape(id) +
                  ": " + escape(lessons::plain_math(title)) + " (slides)</title>\n<style>" + kStyle +
                  "</style>\n<link rel=\"stylesheet\" href=\"../katex/katex.min.css\">\n"
                  "<script defer src=\"../katex/katex.min.js\"></script>\n<script>" +
                  math_script() + "</script>\n<script>" + kFit + "</script>\n</head>\n<body>\n";
  for (std::size_t k = 0; k < slides.size(); ++k) {
    const Slide& s = slides[k];
    h += "<section class=\"slide " + s.kind + "\" id=\"slide-" + std::to_string(k + 1) + "\">";
    if (!s.title.empty()) h += "<h2>" + prose_html(s.title) + "</h2>";
    h += s.kind == "title-slide" ? s.body : "<div class=\"body\">" + s.body + "</div>";
    h += "<footer><span>" + escape(id.substr(0, 2)) + " · " + prose_html(title) + "</span><span>" +
         std::to_string(k + 1) + " / " + std::to_string(slides.size()) + "</span></footer></section>\n";
  }
  return h + "</body>\n</html>\n";
}

}  // namespace

Deck write_slides(const std::string& folder, const std::string& id, const BookSources& sources) {
  const std::string dir = folder + "/" + id;
  if (!fs::exists(dir + "/story.json"))
    throw std::runtime_error("course_slides: no '" + dir + "/story.json': run the lesson first (build/bin/" + id +
                             " --out " + dir + ")");
  const Json story = read_json(dir + "/story.json"), metrics = read_json(dir + "/metrics.json");
  std::vector<Slide> slides = {title_slide(id, story, metrics)};
  for (std::vector<Slide> part : {idea_slides(story.at("blocks")), figure_slides(folder, id, story, 4), claim_slides(story)})
    slides.insert(slides.end(), part.begin(), part.end());
  for (const Slide& q : question_slides(read_questions({sources.questions, ""}, id)))  // "": never the answers
    slides.push_back(q);
  make_dirs(folder + "/slides");
  copy_katex(folder);
  Deck deck{folder + "/slides/" + id + ".html", "", slides.size()};
  write_file_atomic(deck.html, deck_html(id, story, slides));
  return deck;
}

Deck make_deck(const std::string& folder, const std::string& id, const BookSources& sources, bool pdf) {
  Deck deck = write_slides(folder, id, sources);
  if (!pdf) return deck;
  const std::string chromium = chromium_path();
  if (chromium.empty())
    throw std::runtime_error("course_slides: printing slides needs Debian's chromium (scripts/setup.sh --slides "
                             "installs it); --html-only writes the slides' pages without it");
  make_dirs(folder + "/logs");
  deck.pdf = folder + "/slides/" + id + ".pdf";
  print_pdf(chromium, deck.html, deck.pdf, deck.slides, folder + "/logs/slides_" + id + ".log");
  return deck;
}

std::string chromium_path() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (::access(p, X_OK) == 0) return p;
  return "";
}

std::size_t pdf_page_count(const std::string& pdf) {
  std::size_t n = 0;
  for (std::size_t at = 0; (at = pdf.find("/Type", at)) != std::string::npos;) {
    at += 5;
    std::size_t i = at;
    while (i < pdf.size() && (pdf[i] == ' ' || pdf[i] == '\n' || pdf[i] == '\r')) ++i;
    if (pdf.compare(i, 5, "/Page") == 0 && (i + 5 >= pdf.size() || !std::isalpha(static_cast<unsigned char>(pdf[i + 5]))))
      ++n;
  }
  return n;
}

void print_pdf(const std::string& chromium, const std::string& html, const std::string& pdf, std::size_t pages,
               const std::string& log) {
  const fs::path out = fs::absolute(pdf);
  const std::string printing = (out.parent_path() / ("." + out.filename().string() + ".printing-" +
                                                    std::to_string(::getpid()))).string();
  const std::string profile = (fs::temp_directory_path() / ("attnlab-slides-" + std::to_string(::getpid()))).string();
  const ProcessResult r = run_logged(
      {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
       "--disable-component-update", "--disable-sync", "--no-pdf-header-footer", "--virtual-time-budget=20000",
       "--run-all-compositor-stages-before-draw", "--user-data-dir=" + profile, "--print-to-pdf=" + printing,
       "file://" + fs::absolute(html).string()},
      log, 180.0);
  std::error_code ec;
  fs::remove_all(profile, ec);
  if (!r.ok || !fs::exists(printing)) {
    fs::remove(printing, ec);
    throw std::runtime_error("course_slides: Chromium did not print '" + html + "' (" + r.status + "): see " + log);
  }
  const std::string bytes = read_file(printing, "course_slides");
  fs::remove(printing, ec);
  const std::size_t n = pdf_page_count(bytes);
  if (n != pages)
    throw std::runtime_error("course_slides: '" + html + "' has " + std::to_string(pages) + " slides but printed as " +
                             std::to_string(n) + " pages: a slide spilled over its page");
  write_file_atomic(pdf, bytes, "course_slides");
}

}  // namespace attnlab::course
