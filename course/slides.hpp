// A lesson as a slide deck, written offline from what its run recorded (OUT/NN_name/story.json,
// metrics.json and figures), to project in a lecture:
//
//   1  title        the lesson, its summary, this run's kind and headline beside the full run's
//   2  the idea     the section that first states the lesson's formula: its lead-in and the
//                   formula (a second one when another section states one); a lesson without a
//                   displayed formula gets its opening paragraph
//   3  figures      the lead figure, then the first figure of other sections (4 in all at most)
//   4  claims       every claim of the run, marked as it went (✓ measured, ◦ left to the full run,
//                   ↔ went the other way, ✗ not seen), a few per slide
//   5  questions    the lesson's questions to think about (never their answers)
//
// OUT/slides/NN_name.html is one 1280 x 720 px page per slide (16:9, CSS @page), formulas set by
// KaTeX (OUT/katex/, copied from libjs-katex as the book does), figures read from ../NN_name/.
// Headless Chromium prints it to OUT/slides/NN_name.pdf, one PDF page per slide. Before printing,
// the page's script shrinks the text of a slide that would overflow, down to a floor, and names on
// <body data-overflow> any slide still too full; <body data-slides> holds the count and
// <body data-images> the figures loaded of all ("4/4").
#pragma once

#include <cstddef>
#include <string>

#include "course/questions.hpp"

namespace attnlab::course {

struct Deck {
  std::string html;      // OUT/slides/NN_name.html
  std::string pdf;       // OUT/slides/NN_name.pdf, "" when not printed
  std::size_t slides = 0;
};

// Writes OUT/slides/NN_name.html (and OUT/katex/) from `folder`/`id`/. std::runtime_error when the
// lesson has no story.json there; IoError when a file cannot be written.
Deck write_slides(const std::string& folder, const std::string& id, const BookSources& sources);

// write_slides, then (with `pdf`) print_pdf to OUT/slides/NN_name.pdf, Chromium's output in
// OUT/logs/slides_NN_name.log. std::runtime_error when Chromium is not installed.
Deck make_deck(const std::string& folder, const std::string& id, const BookSources& sources, bool pdf);

// Debian's headless Chromium (/usr/bin/chromium or chromium-browser), "" when not installed.
std::string chromium_path();

// Prints `html` to `pdf` (written to a temporary name, renamed when complete) with Chromium,
// its output in `log`. std::runtime_error naming the log when Chromium fails, and naming both
// counts when the PDF does not have `pages` pages (a slide that spilled onto a second page).
void print_pdf(const std::string& chromium, const std::string& html, const std::string& pdf, std::size_t pages,
               const std::string& log);

// The pages of a PDF as Chromium writes it: its /Type /Page objects (uncompressed object headers).
std::size_t pdf_page_count(const std::string& pdf_bytes);

}  // namespace attnlab::course
