#include "nn/lm/kneser_ney_orders.hpp"

#include <chrono>

#include "core/error.hpp"

namespace attnlab::nn::lm {

KneserNeyOrders count_kneser_ney_orders(const std::vector<std::vector<Index>>& train,
                                        const std::vector<std::vector<Index>>& validation, std::size_t vocab,
                                        std::size_t max_order, Index bos, Index eos, double discount) {
  check(!validation.empty(), "count_kneser_ney_orders", "needs at least one validation sequence");
  KneserNeyOrders out;
  const auto t0 = std::chrono::steady_clock::now();
  out.model = std::make_unique<KneserNey>(train, vocab, max_order, bos, eos, discount);
  out.count_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.validation_nats = out.model->mean_nats(validation);
  for (std::size_t k = 1; k <= max_order; ++k)
    if (out.nats(k) < out.best()) out.best_order = k;
  return out;
}

}  // namespace attnlab::nn::lm
