// The attention explorer's behaviour and look (lessons/kit/explorer.hpp): plain JavaScript over the
// page's inline data and its style sheet, kept apart from the C++ that checks and writes the data.
#pragma once

namespace attnlab::lessons {

const char* explorer_script();  // reads the JSON of <script id="attention-data">, draws the three views
const char* explorer_style();

}  // namespace attnlab::lessons
