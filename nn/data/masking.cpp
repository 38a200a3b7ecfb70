#include "nn/data/masking.hpp"

#include <cmath>

#include "core/error.hpp"

namespace attnlab::nn::data {

MaskedTokens mask_tokens(const std::vector<Index>& ids, Index mask_id, Index first, Index end, Generator& gen,
                         const MaskingRule& rule, Index ignore) {
  const auto share = [](double p) { return p >= 0.0 && p <= 1.0; };
  check(share(rule.select) && share(rule.mask) && share(rule.random) && rule.mask + rule.random <= 1.0,
        "mask_tokens", "the rule's shares must lie in [0, 1] with mask + random <= 1, got select ", rule.select,
        ", mask ", rule.mask, ", random ", rule.random);
  check(first < end, "mask_tokens", "the eligible ids [", first, ", ", end, ") are empty");
  check(mask_id < first || mask_id >= end, "mask_tokens", "the mask id ", mask_id, " lies among the eligible ids [",
        first, ", ", end, ")");

  MaskedTokens out{ids, std::vector<Index>(ids.size(), ignore), std::vector<MaskChoice>(ids.size(), MaskChoice::none)};
  std::vector<std::size_t> eligible;
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= first && ids[i] < end) eligible.push_back(i);
  if (eligible.empty()) return out;
  const auto n = eligible.size();
  const std::size_t k = std::min(n, std::max<std::size_t>(1, std::size_t(std::llround(rule.select * double(n)))));
  // The first k of a partial Fisher-Yates shuffle: k distinct places, each subset equally likely.
  for (std::size_t i = 0; i < k; ++i) std::swap(eligible[i], eligible[i + gen.below(n - i)]);
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t at = eligible[i];
    out.target[at] = ids[at];
    const double u = gen.uniform();
    if (u < rule.mask) {
      out.input[at] = mask_id;
      out.choice[at] = MaskChoice::masked;
    } else if (u < rule.mask + rule.random) {
      out.input[at] = first + Index(gen.below(std::uint64_t(end - first)));
      out.choice[at] = MaskChoice::random;
    } else {
      out.choice[at] = MaskChoice::kept;
    }
  }
  return out;
}

}  // namespace attnlab::nn::data
