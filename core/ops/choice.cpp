#include "core/ops/choice.hpp"

#include <cmath>

#include "core/error.hpp"

namespace attnlab {

// y_r = log p[r, s_r] for every row r of p seen as (rows, N);  dp[r, s_r] = dy_r / p[r, s_r].
template <class T>
Tensor<T> log_of_chosen(const Tensor<T>& p, const IndexArray& chosen) {
  need("log_of_chosen", p, "probabilities");
  const Shape ps = p.shape();
  check(!ps.empty() && ps.back() > 0, "log_of_chosen", "probabilities ", shape_str(ps), " have no choices on the last axis");
  const Shape rows_shape(ps.begin(), ps.end() - 1);
  const Shape cs(chosen.shape().begin(), chosen.shape().end());
  check(cs == rows_shape, "log_of_chosen", "chosen ", shape_str(cs), " must be the probabilities' shape ",
        shape_str(ps), " without its last axis");
  const std::size_t N = ps.back(), rows = chosen.size();
  auto picks = std::make_shared<std::vector<std::size_t>>(rows);
  Array<T> y = Array<T>::from_shape(rows_shape);
  const T* pp = p.value().data();
  for (std::size_t r = 0; r < rows; ++r) {
    const Index s = chosen.data()[r];
    check(s >= 0 && std::size_t(s) < N, "log_of_chosen", "row ", r, " chose ", s, ", outside [0, ", N, ")");
    (*picks)[r] = r * N + std::size_t(s);
    // A drawn entry has probability above zero; one of 0 (a choice made elsewhere) has no finite
    // log and no gradient: an error, never a silent -inf.
    check(pp[(*picks)[r]] > T(0), "log_of_chosen", "row ", r, " chose ", s, ", whose probability is ",
          pp[(*picks)[r]], ": its log is not finite");
    y.data()[r] = std::log(pp[(*picks)[r]]);
  }
  return record<T>("log_of_chosen", std::move(y), {&p}, [picks](Node<T>& n) {
    Array<T> dp = xt::zeros<T>(n.input(0).shape());
    const T* g = n.grad.data();
    const T* pv = n.input(0).data();
    for (std::size_t r = 0; r < picks->size(); ++r) dp.data()[(*picks)[r]] += g[r] / pv[(*picks)[r]];
    n.add_grad(0, std::move(dp));
  });
}

template Tensor<float> log_of_chosen<float>(const Tensor<float>&, const IndexArray&);
template Tensor<double> log_of_chosen<double>(const Tensor<double>&, const IndexArray&);

}  // namespace attnlab
