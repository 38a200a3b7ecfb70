// One generated example: a source string and its target string. Every task (copy, reverse,
// sort, dates, translation) produces these, so splitting and batching are written once.
#pragma once

#include <string>

namespace attnlab::nn::data {

struct Pair {
  std::string source;
  std::string target;
};

inline bool operator==(const Pair& a, const Pair& b) { return a.source == b.source && a.target == b.target; }

}  // namespace attnlab::nn::data
