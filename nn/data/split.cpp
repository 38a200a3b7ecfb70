#include "nn/data/split.hpp"

#include <cmath>
#include <unordered_set>

#include "core/error.hpp"
#include "core/random.hpp"

namespace attnlab::nn::data {

SplitIndices split_indices(const std::vector<std::string>& sources, const SplitFractions& f, std::uint64_t seed) {
  check(f.train >= 0 && f.validation >= 0 && f.test >= 0, "split_indices",
        "fractions must be non-negative, got train ", f.train, ", validation ", f.validation, ", test ", f.test);
  const double sum = f.train + f.validation + f.test;
  check(std::abs(sum - 1.0) <= 1e-9, "split_indices", "fractions must sum to 1, got train ", f.train,
        " + validation ", f.validation, " + test ", f.test, " = ", sum);

  std::vector<std::size_t> unique;
  std::unordered_set<std::string> seen;
  for (std::size_t i = 0; i < sources.size(); ++i)
    if (seen.insert(sources[i]).second) unique.push_back(i);

  Generator gen(seed);
  shuffle(unique, gen);
  const std::size_t n = unique.size();
  // Validation and test get their rounded shares; train absorbs the rounding, so a zero
  // fraction for validation or test always means an empty split.
  const auto share = [n](double frac) { return static_cast<std::size_t>(std::llround(frac * static_cast<double>(n))); };
  const std::size_t n_val = std::min(n, share(f.validation));
  const std::size_t n_test = std::min(n - n_val, share(f.test));
  const std::size_t n_train = n - n_val - n_test;

  SplitIndices out;
  out.train.assign(unique.begin(), unique.begin() + n_train);
  out.validation.assign(unique.begin() + n_train, unique.begin() + n_train + n_val);
  out.test.assign(unique.begin() + n_train + n_val, unique.end());
  return out;
}

}  // namespace attnlab::nn::data
