#include "nn/recall_model.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "core/error.hpp"

namespace attnlab::nn {

const char* kind_name(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::exact: return "exact";
    case AttentionKind::local: return "local";
    case AttentionKind::linear: return "linear";
    case AttentionKind::linformer: return "linformer";
    case AttentionKind::fixed_global: return "fixed_global";
    case AttentionKind::asking_global: return "asking_global";
    case AttentionKind::strided: return "strided";
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

Mask sparse_pattern(std::size_t length, std::size_t band, const std::vector<bool>& global, bool strided) {
  check(band > 0 && global.size() == length, "sparse_pattern", "needs a band > 0 and a global flag per position, got band ",
        band, " and ", global.size(), " flags for length ", length);
  Mask m = Mask::from_shape({length, length});
  for (std::size_t i = 0; i < length; ++i)
    for (std::size_t j = 0; j < length; ++j) {
      const std::size_t d = i > j ? i - j : j - i;
      m(i, j) = d <= band || global[i] || global[j] || (strided && d % band == 0);
    }
  return m;
}

namespace {
// Whether sequence s's position i is global under the pattern `kind`: the first kGlobalTokens
// (fixed), or a token that asks, showing a key and no value (nn/data/recall.hpp).
bool is_global(AttentionKind kind, const data::Recall& b, const data::RecallConfig& c, std::size_t s, std::size_t i) {
  return kind == AttentionKind::fixed_global    ? i < kGlobalTokens
         : kind == AttentionKind::asking_global ? b.keys(s, i) != Index(c.keys) && b.values(s, i) == Index(c.values)
                                                : false;
}

void check_sparse(AttentionKind kind, const char* who) {
  if (kind != AttentionKind::fixed_global && kind != AttentionKind::asking_global && kind != AttentionKind::strided)
    throw std::logic_error(std::string(who) + ": " + kind_name(kind) + " is not a sparse pattern");
}
}  // namespace

Allowed RecallModel::pattern(const data::Recall& b) const {
  check_sparse(kind_, "RecallModel::pattern");
  const std::size_t n = b.size(), L = b.length();
  Mask m = Mask::from_shape({n, L, L});
  for (std::size_t s = 0; s < n; ++s) {
    std::vector<bool> global(L, false);
    for (std::size_t i = 0; i < L; ++i) global[i] = is_global(kind_, b, config_, s, i);
    xt::view(m, s) = sparse_pattern(L, band_, global, kind_ == AttentionKind::strided);
  }
  return Allowed::where(std::move(m));
}

SparsePattern RecallModel::pattern_description(const data::Recall& b) const {
  check_sparse(kind_, "RecallModel::pattern_description");
  SparsePattern p;
  p.window = long(band_);
  p.stride = kind_ == AttentionKind::strided ? long(band_) : 0;
  for (std::size_t s = 0; s < b.size(); ++s) {
    p.global_by_block.emplace_back();
    for (std::size_t i = 0; i < b.length(); ++i)
      if (is_global(kind_, b, config_, s, i)) p.global_by_block.back().push_back(long(i));
  }
  return p;
}

Tensor<float> RecallModel::attend(const data::Recall& b, const Tensor<float>& q, const Tensor<float>& k,
                                  const Tensor<float>& v) const {
  switch (kind_) {
    case AttentionKind::exact: return tiled_attention(q, k, v);
    case AttentionKind::local: return local_attention(q, k, v, band_);
    case AttentionKind::linear: return linear_attention(q, k, v);
    case AttentionKind::linformer: return linformer.forward(q, k, v);
    case AttentionKind::fixed_global:
    case AttentionKind::asking_global:
    case AttentionKind::strided: {
      // The exact kernel deciding the pattern tile by tile from its description, skipping the
      // tiles it leaves empty (block-sparse): no n^2 mask. The same bits as under pattern(b).
      return sparse_attention(q, k, v, pattern_description(b));
    }
  }
  throw std::logic_error("RecallModel: unknown attention kind");
}

Tensor<float> RecallModel::forward(const data::Recall& b) const {
  const Tensor<float> x = embed(b);
  return out(attend(b, q_proj(x), k_proj(x), v_proj(x)));
}

Tensor<float> RecallModel::loss(const data::Recall& b) const { return cross_entropy(forward(b), b.targets); }

Array<float> RecallModel::exact_weights(const data::Recall& b) const {
  NoGrad ng;
  const Tensor<float> x = embed(b), k = k_proj(x);
  return scaled_dot_product_attention(q_proj(x), k, k).weights.value();
}

Array<float> RecallModel::attention_weights(const data::Recall& b) const {
  NoGrad ng;
  const Tensor<float> x = embed(b), q = q_proj(x), k = k_proj(x);
  AttentionOptions<float> o;
  switch (kind_) {
    case AttentionKind::exact: break;
    case AttentionKind::local: {
      const std::size_t L = b.length();
      o.allowed = Allowed::where(sparse_pattern(L, band_, std::vector<bool>(L, false), false));
      break;
    }
    case AttentionKind::fixed_global:
    case AttentionKind::asking_global:
    case AttentionKind::strided: o.allowed = pattern(b); break;
    case AttentionKind::linear: {
      // phi(x) = elu(x) + 1, as core/ops/linear_attention.cpp; weights phi(q_i) . phi(k_j) over the row's sum.
      const auto phi = [](const Array<float>& a) { return Array<float>(xt::where(a > 0.f, a + 1.f, xt::exp(a))); };
      Array<float> w = matmul(Tensor<float>(phi(q.value())), Tensor<float>(phi(k.value())), false, true).value();
      const LinearAttentionOptions defaults;
      const std::size_t B = w.shape()[0], L = w.shape()[1];
      for (std::size_t s = 0; s < B; ++s)
        for (std::size_t i = 0; i < L; ++i) {
          float* row = w.data() + (s * L + i) * L;
          double sum = 0;
          for (std::size_t j = 0; j < L; ++j) sum += row[j];
          for (std::size_t j = 0; j < L; ++j) row[j] = float(row[j] / (sum + defaults.eps));
        }
      return w;
    }
    case AttentionKind::linformer:
      throw std::logic_error("RecallModel::attention_weights: Linformer's weights are over its projected rows, not "
                             "the tokens");
  }
  return scaled_dot_product_attention(q, k, k, o).weights.value();
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
