// Questions to think about, at the end of each lesson's page in the book (and on its last slide).
//
//   lessons/questions/NN_name.md               the questions, for students: a numbered list
//   exercises/solutions/questions/NN_name.md   short answers, the same numbers: the teacher's copy
//                                              only (the student handout leaves out
//                                              exercises/solutions/ whole, so answers never ship)
//
// Both are a numbered Markdown list, "1. " at the start of a line opening an item, the lines after
// it continuing it; other lines (a "# " title, blank lines) are ignored. Items are prose: $...$
// formulas are typeset as in the lessons' text (html.hpp's prose_html).
#pragma once

#include <string>
#include <vector>

namespace attnlab::course {

// Where a book finds its questions and their answers.
struct BookSources {
  std::string questions;  // a folder of NN_name.md
  std::string answers;    // a folder of NN_name.md; it may be missing (the student copy); "": none
};
// lessons/questions and exercises/solutions/questions of this source tree.
BookSources default_sources();

struct Question {
  std::string text;
  std::string answer;  // "" when there are no answers
};

// The items of a numbered list, in order, each with its continuation lines joined by a space.
std::vector<std::string> numbered_items(const std::string& markdown);

// Lesson `id`'s questions, each with its answer when the answers folder holds the lesson's file.
// Empty when the lesson has no questions file. std::runtime_error naming both files when the
// answers are not one per question, or when an answers file has no questions file.
std::vector<Question> read_questions(const BookSources& sources, const std::string& id);

// The book's section: <h2 id="questions">, an ordered list, each answer folded in a <details>.
std::string questions_html(const std::vector<Question>& questions);

}  // namespace attnlab::course
