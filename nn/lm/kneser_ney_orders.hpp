// The counted baselines of a language-model lesson: interpolated Kneser-Ney models of every order
// 1 .. max_order counted once on the training sequences, scored on held-out ones, and the order
// that scores best there (the one to hold a neural model to, chosen on validation, never on test).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "nn/lm/kneser_ney.hpp"

namespace attnlab::nn::lm {

struct KneserNeyOrders {
  std::unique_ptr<KneserNey> model;     // the counts of every order
  std::vector<double> validation_nats;  // nats per predicted token of each order's model, [k - 1]
  std::size_t best_order = 1;           // the lowest order of the smallest validation_nats
  double count_seconds = 0;             // the time counting took (wall clock)
  double nats(std::size_t order) const { return validation_nats.at(order - 1); }
  double best() const { return nats(best_order); }
};

// KneserNey(train, vocab, max_order, bos, eos, discount), scored on `validation` (at least one
// sequence); its errors, and a ShapeError naming count_kneser_ney_orders for an empty validation set.
KneserNeyOrders count_kneser_ney_orders(const std::vector<std::vector<Index>>& train,
                                        const std::vector<std::vector<Index>>& validation, std::size_t vocab,
                                        std::size_t max_order, Index bos, Index eos, double discount = 0.75);

}  // namespace attnlab::nn::lm
