// Train / validation / test splits: seeded, disjoint, and disjoint by *source string* too, so
// a model can never be scored on an input it trained on (generated tasks repeat inputs easily).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::nn::data {

struct SplitFractions {
  double train = 0.8, validation = 0.1, test = 0.1;
};

struct SplitIndices {
  std::vector<std::size_t> train, validation, test;
};

// Keeps the first example of each distinct source, shuffles those with the seed, and cuts
// round(f_val * n) for validation, round(f_test * n) for test, the rest for train (n = number
// of distinct sources). Fractions must be >= 0 and sum to 1 (within 1e-9): ShapeError otherwise.
SplitIndices split_indices(const std::vector<std::string>& sources, const SplitFractions& f, std::uint64_t seed);

template <class E>
struct Splits {
  std::vector<E> train, validation, test;
};

// Any examples with a .source string (Pair, TranslationPair).
// The examples the indices name, split by split, into any struct with train, validation and test
// vectors (Splits<E> by default).
template <class E, class Out = Splits<E>>
Out take_splits(const std::vector<E>& examples, const SplitIndices& idx) {
  Out out;
  auto take = [&](const std::vector<std::size_t>& rows, std::vector<E>& dst) {
    dst.reserve(rows.size());
    for (std::size_t r : rows) dst.push_back(examples[r]);
  };
  take(idx.train, out.train);
  take(idx.validation, out.validation);
  take(idx.test, out.test);
  return out;
}

template <class E>
Splits<E> split_examples(const std::vector<E>& examples, const SplitFractions& f, std::uint64_t seed) {
  std::vector<std::string> sources;
  sources.reserve(examples.size());
  for (const auto& e : examples) sources.push_back(e.source);
  return take_splits(examples, split_indices(sources, f, seed));
}

}  // namespace attnlab::nn::data
