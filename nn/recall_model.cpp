#include "nn/recall_model.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace attnlab::nn {

const char* kind_name(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::exact: return "exact";
    case AttentionKind::local: return "local";
    case AttentionKind::linear: return "linear";
    case AttentionKind::linformer: return "linformer";
  }
  return "unknown";
}

namespace {
// The width, once the sizes are known to work (checked before any member is built).
std::size_t checked_width(const data::RecallConfig& c, std::size_t width, std::size_t band) {
  check(width > 0 && band > 0 && band <= c.length, "RecallModel", "needs width > 0 and 0 < band <= length, got width ",
        width, ", band ", band, ", length ", c.length);
  return width;
}
}  // namespace

RecallModel::RecallModel(const data::RecallConfig& c, AttentionKind kind, std::size_t width, std::size_t band,
                         Generator& gen)
    : key_embed(c.keys + 1, checked_width(c, width, band), gen), value_embed(c.values + 1, width, gen), q_proj(width, width, gen, false),
      k_proj(width, width, gen, false), v_proj(width, width, gen, false), out(width, c.values, gen),
      linformer(c.length, band), config_(c), kind_(kind), band_(band) {
  this->register_module("key_embed", key_embed);
  this->register_module("value_embed", value_embed);
  this->register_module("q_proj", q_proj);
  this->register_module("k_proj", k_proj);
  this->register_module("v_proj", v_proj);
  this->register_module("out", out);
  if (kind == AttentionKind::linformer) this->register_module("linformer", linformer);
}

Tensor<float> RecallModel::embed(const data::Recall& b) const {
  check(b.keys.dimension() == 2 && b.length() == config_.length, "RecallModel", "sequences of length ",
        config_.length, " expected, got keys ", shape_str(b.keys.shape()));
  return add(key_embed(b.keys), value_embed(b.values));
}

Tensor<float> RecallModel::attend(const Tensor<float>& q, const Tensor<float>& k, const Tensor<float>& v) const {
  switch (kind_) {
    case AttentionKind::exact: return tiled_attention(q, k, v);
    case AttentionKind::local: return local_attention(q, k, v, band_);
    case AttentionKind::linear: return linear_attention(q, k, v);
    case AttentionKind::linformer: return linformer.forward(q, k, v);
  }
  throw std::logic_error("RecallModel: unknown attention kind");
}

Tensor<float> RecallModel::forward(const data::Recall& b) const {
  const Tensor<float> x = embed(b);
  return out(attend(q_proj(x), k_proj(x), v_proj(x)));
}

Tensor<float> RecallModel::loss(const data::Recall& b) const { return cross_entropy(forward(b), b.targets); }

Array<float> RecallModel::exact_weights(const data::Recall& b) const {
  NoGrad ng;
  const Tensor<float> x = embed(b), k = k_proj(x);
  return scaled_dot_product_attention(q_proj(x), k, k).weights.value();
}

double recall_accuracy(const RecallModel& m, const data::Recall& set, std::size_t batch) {
  check(batch > 0, "recall_accuracy", "the batch size must be positive, got 0");
  NoGrad ng;
  std::size_t right = 0, asked = 0;
  for (std::size_t from = 0; from < set.size(); from += batch) {
    std::vector<std::size_t> rows(std::min(batch, set.size() - from));
    std::iota(rows.begin(), rows.end(), from);
    const data::Recall b = set.rows(rows);
    const Tensor<float> out = m.forward(b);
    const Array<float>& logits = out.value();
    const std::size_t V = logits.shape()[2];
    for (std::size_t i = 0; i < b.targets.size(); ++i) {
      const Index target = b.targets.data()[i];
      if (target == data::kNotAsked) continue;
      const float* l = logits.data() + i * V;
      ++asked;
      right += Index(std::max_element(l, l + V) - l) == target;
    }
  }
  check(asked > 0, "recall_accuracy", "nothing is asked in a set of ", set.size(), " sequences");
  return double(right) / double(asked);
}

}  // namespace attnlab::nn
