#include "nn/transformer/equivariance.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <xtensor/xadapt.hpp>
#include <xtensor/xview.hpp>

#include "core/error.hpp"
#include "core/ops.hpp"

namespace attnlab::nn {

double permutation_error(EncoderModel<float>& model, const IndexArray& one, const std::vector<std::size_t>& perm) {
  check(model.config().pooling == Pooling::None, "permutation_error",
        "the model pools its tokens into one output; a permutation of the tokens needs one output per token");
  check(one.dimension() == 2 && one.shape()[0] == 1, "permutation_error", "the input must be one sequence (1, L), got ",
        shape_str(one.shape()));
  std::vector<std::size_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool is_permutation = sorted.size() == one.shape()[1];
  for (std::size_t i = 0; is_permutation && i < sorted.size(); ++i) is_permutation = sorted[i] == i;
  check(is_permutation, "permutation_error", "perm (", perm.size(), " entries) is not a permutation of 0..",
        one.shape()[1], "-1, the positions of the input ", shape_str(one.shape()));
  NoGrad no_grad;
  model.eval();
  const IndexArray index = xt::cast<Index>(xt::adapt(perm));
  const IndexArray shuffled = xt::view(one, xt::all(), xt::keep(perm));                // pi x
  const Array<float> permuted = index_select(model.forward(one), 1, index).value();  // pi f(x)
  const Array<float> of_permuted = model.forward(shuffled).value();                   // f(pi x)
  double worst = 0.0;
  for (std::size_t i = 0; i < permuted.size(); ++i)
    worst = std::max(worst, std::fabs(double(of_permuted.data()[i]) - double(permuted.data()[i])));
  return worst;
}

std::vector<std::size_t> random_permutation(std::size_t n, Generator& gen) {
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  shuffle(perm, gen);
  return perm;
}

std::vector<std::size_t> reversal(std::size_t n) {
  std::vector<std::size_t> perm(n);
  std::iota(perm.rbegin(), perm.rend(), 0);
  return perm;
}

}  // namespace attnlab::nn
