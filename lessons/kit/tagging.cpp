#include "lessons/kit/tagging.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <xtensor/xview.hpp>

#include "core/error.hpp"
#include "nn/data/batch.hpp"
#include "nn/metrics.hpp"

namespace attnlab::lessons {

IndexArray predict_tags(const Tagger& logits_of, const IndexArray& inputs, std::size_t batch) {
  NoGrad no_grad;
  IndexArray predictions = IndexArray::from_shape(inputs.shape());
  std::vector<std::size_t> all(inputs.shape()[0]);
  std::iota(all.begin(), all.end(), std::size_t(0));
  for (const auto& rows : nn::data::batch_slices(all, std::max<std::size_t>(batch, 1))) {
    const IndexArray p = nn::argmax_last(logits_of(nn::data::take_rows(inputs, rows)).value());
    for (std::size_t i = 0; i < rows.size(); ++i) xt::view(predictions, rows[i], xt::all()) = xt::view(p, i, xt::all());
  }
  return predictions;
}

TagScores score_tags(const IndexArray& predictions, const IndexArray& targets, Index ignore) {
  TagScores s;
  s.token = nn::accuracy(predictions, targets, ignore);
  s.exact = nn::exact_match_rows(predictions, targets, ignore);
  for (std::size_t c = 0; c < targets.shape()[1]; ++c) {
    const IndexArray column = xt::view(targets, xt::all(), c);
    const bool scored = std::any_of(column.begin(), column.end(), [&](Index t) { return t != ignore; });
    s.by_position.push_back(scored ? nn::accuracy(IndexArray(xt::view(predictions, xt::all(), c)), column, ignore)
                                   : std::nan(""));
  }
  return s;
}

TagScores evaluate_tagger(const Tagger& logits_of, const nn::data::Tagged& held_out, std::size_t batch, Index ignore) {
  return score_tags(predict_tags(logits_of, held_out.inputs, batch), held_out.targets, ignore);
}

LengthScores evaluate_at_two_lengths(const Tagger& logits_of, const nn::data::Tagged& held_out,
                                     const nn::data::Tagged& held_out_long, std::size_t batch) {
  LengthScores s;
  s.at_train = evaluate_tagger(logits_of, held_out, batch);
  try {
    s.at_long = evaluate_tagger(logits_of, held_out_long, batch);
  } catch (const ShapeError& e) {
    s.long_failure = e.what();
  }
  return s;
}

}  // namespace attnlab::lessons
