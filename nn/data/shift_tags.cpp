#include "nn/data/shift_tags.hpp"

#include <vector>

#include "core/error.hpp"
#include "nn/data/tasks.hpp"
#include "nn/metrics.hpp"

namespace attnlab::nn::data {

ShiftTags shift_tags(std::size_t shift, std::size_t length, std::size_t long_length, std::size_t n_train,
                     std::size_t n_test, Generator& gen) {
  check(shift > 0 && shift < length, "shift_tags", "the shift must be 1..length-1 = ", length - 1, ", got ", shift);
  check(long_length >= length, "shift_tags", "the long length ", long_length, " is below the training length ", length);
  check(n_train > 0 && n_test > 0, "shift_tags", "need training and held-out strings, got ", n_train, " and ", n_test);
  const auto shifted_strings = [&](std::size_t n, std::size_t len) {  // distinct, with their shifted copies as tags
    SeqTaskConfig cfg{SeqTask::shift};
    cfg.min_len = cfg.max_len = len, cfg.shift = shift;
    return make_seq_task(cfg, n, gen);
  };
  ShiftTags t;
  for (const char* c : {"_", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}) t.vocab.add(c);
  const std::vector<Pair> pairs = shifted_strings(n_train + n_test, length);
  const Tagged all = tag_pairs(pairs, t.vocab);
  t.train = all.slice(0, n_train), t.test = all.slice(n_train, n_train + n_test), t.example = pairs[n_train];
  t.test_long = tag_pairs(shifted_strings(n_test, long_length), t.vocab);
  t.bag_rule = accuracy(most_frequent_other_tags(t.test.inputs, t.vocab.size()), t.test.targets);
  return t;
}

}  // namespace attnlab::nn::data
