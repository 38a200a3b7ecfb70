#include "nn/data/tasks.hpp"

#include <algorithm>
#include <array>
#include <unordered_set>

#include "core/error.hpp"

namespace attnlab::nn::data {

namespace {

void validate(const SeqTaskConfig& cfg) {
  check(!cfg.alphabet.empty(), "make_seq_task", "empty alphabet");
  std::array<bool, 256> seen{};
  for (unsigned char c : cfg.alphabet) {
    check(!seen[c], "make_seq_task", "alphabet \"", cfg.alphabet, "\" repeats character '", char(c), "'");
    seen[c] = true;
  }
  check(cfg.task != SeqTask::shift || !seen[static_cast<unsigned char>(cfg.filler)], "make_seq_task",
        "the filler '", cfg.filler, "' of the shift task is in the alphabet \"", cfg.alphabet, "\"");
  check(cfg.min_len >= 1 && cfg.min_len <= cfg.max_len, "make_seq_task",
        "need 1 <= min_len <= max_len, got min_len ", cfg.min_len, ", max_len ", cfg.max_len);
}

// sum over L in [min_len, max_len] of |A|^L, saturating at `cap` (all we need to know).
std::size_t distinct_strings(const SeqTaskConfig& cfg, std::size_t cap) {
  const std::size_t a = cfg.alphabet.size();
  std::size_t total = 0, power = 1;
  for (std::size_t len = 1; len <= cfg.max_len; ++len) {
    power = power > cap / a ? cap : power * a;
    if (len >= cfg.min_len) total = std::min(cap, total + power);
    if (total >= cap) return cap;
  }
  return total;
}

}  // namespace

const char* seq_task_name(SeqTask task) {
  switch (task) {
    case SeqTask::copy: return "copy";
    case SeqTask::reverse: return "reverse";
    case SeqTask::sort: return "sort";
    case SeqTask::shift: return "shift";
  }
  return "?";
}

std::string seq_task_target(const SeqTaskConfig& cfg, const std::string& source) {
  switch (cfg.task) {
    case SeqTask::copy: return source;
    case SeqTask::reverse: return std::string(source.rbegin(), source.rend());
    case SeqTask::shift:
      if (cfg.shift >= source.size()) return std::string(source.size(), cfg.filler);
      return std::string(cfg.shift, cfg.filler) + source.substr(0, source.size() - cfg.shift);
    case SeqTask::sort: {
      std::array<int, 256> rank;
      rank.fill(-1);
      for (std::size_t i = 0; i < cfg.alphabet.size(); ++i) rank[static_cast<unsigned char>(cfg.alphabet[i])] = int(i);
      for (unsigned char c : source)
        check(rank[c] >= 0, "seq_task_target", "character '", char(c), "' is not in alphabet \"", cfg.alphabet, "\"");
      std::string out = source;
      std::stable_sort(out.begin(), out.end(), [&](char x, char y) {
        return rank[static_cast<unsigned char>(x)] < rank[static_cast<unsigned char>(y)];
      });
      return out;
    }
  }
  fail("seq_task_target", "unknown task ", int(cfg.task));
}

std::vector<Pair> make_seq_task(const SeqTaskConfig& cfg, std::size_t n, Generator& gen) {
  validate(cfg);
  const std::size_t available = distinct_strings(cfg, n + 1);
  check(available >= n, "make_seq_task", "asked for ", n, " distinct ", seq_task_name(cfg.task), " examples but only ",
        available, " strings of length ", cfg.min_len, "..", cfg.max_len, " exist over alphabet \"", cfg.alphabet, "\"");
  // Drawing a length uniformly, then rejecting repeats, would stall when short lengths are
  // exhausted; near-exhaustion is rare in practice, and the attempt cap turns a stall into an error.
  std::vector<Pair> out;
  out.reserve(n);
  std::unordered_set<std::string> seen;
  const std::size_t span = cfg.max_len - cfg.min_len + 1;
  std::size_t attempts = 0;
  const std::size_t max_attempts = 100 * n + 1000;
  while (out.size() < n) {
    check(++attempts <= max_attempts, "make_seq_task", "gave up after ", max_attempts, " draws with ", out.size(),
          " of ", n, " distinct examples: widen the lengths or the alphabet");
    const std::size_t len = cfg.min_len + static_cast<std::size_t>(gen.below(span));
    std::string s(len, ' ');
    for (auto& c : s) c = cfg.alphabet[static_cast<std::size_t>(gen.below(cfg.alphabet.size()))];
    if (!seen.insert(s).second) continue;
    out.push_back({s, seq_task_target(cfg, s)});
  }
  return out;
}

}  // namespace attnlab::nn::data
