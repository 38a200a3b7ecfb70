#include "nn/attention/masked_softmax.hpp"

namespace attnlab::nn {

// w = softmax(masked_fill(s, !m, -1e9)) * m, with m broadcast over the queries.
// Backward through the composition: dw at masked keys is multiplied by 0, so softmax's
// ds = w * (dw - sum(dw * w)) is 0 there too (w is 0, or the whole row's dw is 0 when every key
// is masked), and masked_fill passes no gradient to the filled scores anyway.
template <class T>
Tensor<T> masked_softmax(const Tensor<T>& scores, const std::optional<Mask>& key_mask,
                         const std::string& who) {
  need(who.c_str(), scores, "scores");
  check(scores.ndim() == 3, who, "scores must be (B, Lq, Lk), got ", shape_str(scores.shape()));
  if (!key_mask) return softmax(scores, -1);
  const Shape s = scores.shape();
  check(key_mask->dimension() == 2 && key_mask->shape()[0] == s[0] && key_mask->shape()[1] == s[2],
        who, "key mask must be (B, Lk) = ", shape_str(Shape{s[0], s[2]}), ", got ",
        shape_str(key_mask->shape()));
  Mask keep = *key_mask;
  keep.reshape({s[0], std::size_t(1), s[2]});
  Mask drop = !keep;
  Array<T> keep01 = xt::cast<T>(keep);
  Tensor<T> w = softmax(masked_fill(scores, drop, T(-1e9)), -1);
  return mul(w, Tensor<T>(std::move(keep01)));
}

template Tensor<float> masked_softmax<float>(const Tensor<float>&, const std::optional<Mask>&,
                                             const std::string&);
template Tensor<double> masked_softmax<double>(const Tensor<double>&, const std::optional<Mask>&,
                                               const std::string&);

}  // namespace attnlab::nn
