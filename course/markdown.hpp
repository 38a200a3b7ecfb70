// The course's own documents (docs/syllabus.md) as pages of the book: the little Markdown they
// are written in, turned into HTML. Headings (#, ##, ###), paragraphs, bullet and numbered lists,
// tables (a header row, a --- row, then rows), and inline `code`, **bold**, *emphasis* and
// [links](target). Everything else is text, escaped: a document can never inject markup. A link
// to another Markdown file (../README.md, results.md) has no page in the book and is shown as its
// text alone.
#pragma once

#include <string>

namespace attnlab::course {

std::string markdown_html(const std::string& markdown);

}  // namespace attnlab::course
