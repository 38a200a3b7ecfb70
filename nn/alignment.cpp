#include "nn/alignment.hpp"

#include "core/error.hpp"
#include "nn/metrics.hpp"

namespace attnlab::nn {

AlignmentCounts& AlignmentCounts::operator+=(const AlignmentCounts& o) {
  hypothesis += o.hypothesis;
  sure += o.sure;
  hit_sure += o.hit_sure;
  hit_possible += o.hit_possible;
  return *this;
}

double AlignmentCounts::error_rate() const {
  check(hypothesis + sure > 0, "alignment_error_rate", "no links at all, neither hypothesised nor gold");
  return 1.0 - static_cast<double>(hit_sure + hit_possible) / static_cast<double>(hypothesis + sure);
}

AlignmentCounts count_links(const Mask& a, const Mask& s, const Mask& p) {
  check(a.dimension() == 2 && a.shape() == s.shape() && s.shape() == p.shape(), "count_links",
        "expected three (T, S) link matrices of one shape, got ", shape_str(a.shape()), ", ",
        shape_str(s.shape()), " and ", shape_str(p.shape()));
  AlignmentCounts c;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool hyp = a.data()[i], sure = s.data()[i], possible = p.data()[i];
    check(!sure || possible, "count_links", "sure link ", i / a.shape()[1], ",", i % a.shape()[1],
          " is not among the possible links");
    c.hypothesis += hyp;
    c.sure += sure;
    c.hit_sure += hyp && sure;
    c.hit_possible += hyp && possible;
  }
  return c;
}

double alignment_error_rate(const std::vector<Mask>& hypotheses, const std::vector<Mask>& sure) {
  check(hypotheses.size() == sure.size(), "alignment_error_rate", hypotheses.size(), " hypotheses but ",
        sure.size(), " gold alignments");
  AlignmentCounts total;
  for (std::size_t i = 0; i < sure.size(); ++i) total += count_links(hypotheses[i], sure[i], sure[i]);
  return total.error_rate();
}

template <class T>
Mask peak_links(const Array<T>& attention, std::size_t words) {
  check(attention.dimension() == 2 && attention.shape()[1] > 0 && words <= attention.shape()[1], "peak_links",
        "expected an attention map (T, K) with K >= ", words, " > 0, got ", shape_str(attention.shape()));
  const std::size_t rows = attention.shape()[0];
  Mask links = Mask::from_shape({rows, words});
  std::fill(links.begin(), links.end(), false);
  const IndexArray peak = argmax_last(attention);
  for (std::size_t j = 0; j < rows; ++j)
    if (static_cast<std::size_t>(peak(j)) < words) links(j, static_cast<std::size_t>(peak(j))) = true;
  return links;
}

template Mask peak_links<float>(const Array<float>&, std::size_t);
template Mask peak_links<double>(const Array<double>&, std::size_t);

}  // namespace attnlab::nn
