#include "nn/attention/multi_head.hpp"

#include <cmath>
#include <limits>

#include <xtensor/xbroadcast.hpp>
#include <xtensor/xoperation.hpp>
#include <xtensor/xview.hpp>

#include "core/broadcast.hpp"
#include "nn/init.hpp"

namespace attnlab::nn {

namespace {
// Before issue 19 this module held W_q, W_k and W_v as three Linear layers, whose default
// U(-1/sqrt(d), 1/sqrt(d)) draws the Xavier init then overwrote. The packed layout skips the same
// number of draws, so a seed still builds the same model, draw for draw, and the lessons still
// train to the numbers the README reports.
Generator fork_after_skipping(Generator& gen, std::size_t draws) {
  for (std::size_t i = 0; i < draws; ++i) gen.uniform();
  return gen.fork();
}

// The rows of the packed [W_q; W_k; W_v]: d + 2 kv_heads d_k, 3d without grouping (and 3d for
// shapes the constructor then refuses).
std::size_t packed_rows(std::size_t d, std::size_t heads, std::size_t kv_heads) {
  if (heads == 0 || d % heads != 0 || kv_heads == 0) return 3 * d;
  return d + 2 * kv_heads * (d / heads);
}
}  // namespace

template <class T>
MultiHeadAttention<T>::MultiHeadAttention(std::size_t d_model, std::size_t heads, Generator& gen,
                                          double dropout, bool bias, std::size_t kv_heads)
    : out_proj(d_model, d_model, gen, bias), d_model_(d_model), heads_(heads), kv_heads_(kv_heads ? kv_heads : heads),
      p_(dropout),
      gen_(fork_after_skipping(gen, packed_rows(d_model, heads, kv_heads_) * (d_model + (bias ? 1 : 0)))) {
  check(heads_ > 0 && d_model_ % heads_ == 0, "MultiHeadAttention", "d_model ", d_model_,
        " is not divisible by heads ", heads_);
  check(heads_ % kv_heads_ == 0, "MultiHeadAttention", "heads ", heads_, " is not divisible by kv_heads ", kv_heads_,
        ": each key/value head serves an equal group of query heads");
  check(p_ >= 0.0 && p_ < 1.0, "MultiHeadAttention", "dropout must be in [0, 1), got ", p_);
  const std::size_t d = d_model_, rows = packed_rows(d, heads_, kv_heads_);
  in_proj_weight = this->register_parameter("in_proj_weight", Tensor<T>::zeros({rows, d}));
  if (bias) in_proj_bias = this->register_parameter("in_proj_bias", Tensor<T>::zeros({rows}));
  this->register_module("out_proj", out_proj);
  // Xavier-uniform per d x d block (fan_in = fan_out = d): U(-a, a), a = sqrt(6 / 2d). The blocks
  // are consecutive rows, so one pass over the packed matrix draws W_q, W_k, W_v in turn. (PyTorch
  // takes the fans of the whole (3d, d) matrix, a = sqrt(6 / 4d); a loaded state_dict replaces
  // either.) Biases zero, as PyTorch's. With grouped queries the (kv_dim, d) blocks of W_k and W_v
  // are drawn at the same scale as W_q's.
  const double a = 1.0 * std::sqrt(6.0 / static_cast<double>(d + d));
  uniform(in_proj_weight, gen, -a, a);
  xavier_uniform(out_proj.weight, gen);
  if (bias) zeros(out_proj.bias);
}

namespace {
// The fixed bias plus the one made from the queries (the first may be absent), checked against the
// scores' shape (B, h, Lq, Lk).
template <class T>
Tensor<T> with_query_bias(const Tensor<T>& bias, const Tensor<T>& from_queries, const Shape& scores) {
  check(from_queries.defined() && broadcasts_to(from_queries.shape(), scores), "MultiHeadAttention",
        "query_bias returned ", from_queries.defined() ? shape_str(from_queries.shape()) : std::string("nothing"),
        ", which does not broadcast to the scores (B, h, Lq, Lk) = ", shape_str(scores));
  return bias.defined() ? add(bias, from_queries) : from_queries;
}
}  // namespace

// x W_p^T + b_p with W_p the block's rows of in_proj_weight: [0, d), [d, d + kv), [d + kv, d + 2 kv).
// The slice is a copy of the block's weights; its backward adds the block's gradient into those
// rows of the packed gradient.
template <class T>
Tensor<T> MultiHeadAttention<T>::in_proj(const Tensor<T>& x, long part) const {
  need("MultiHeadAttention", x, "input");
  check(x.ndim() >= 1 && x.shape().back() == d_model_, "MultiHeadAttention",
        "expected input (..., d_model = ", d_model_, "), got ", shape_str(x.shape()));
  const long d = static_cast<long>(d_model_), kv = static_cast<long>(kv_dim());
  const long lo = part == 0 ? 0 : d + (part - 1) * kv, hi = part == 0 ? d : lo + kv;
  const Tensor<T> w = slice(in_proj_weight, 0, lo, hi);
  const Tensor<T> b = in_proj_bias.defined() ? slice(in_proj_bias, 0, lo, hi) : Tensor<T>();
  return linear(x, w, b);
}

template <class T>
AttentionResult<T> MultiHeadAttention<T>::attend(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v,
                                                 const AttentionOptions<T>& o) {
  const std::size_t group = heads_ / kv_heads_;
  const Tensor<T> keys = repeat_heads(k, kv_heads_, group);
  keep_parts(q.value(), keys.value(), o);
  return multi_head_attention(q, keys, repeat_heads(v, kv_heads_, group), heads_, o);
}

template <class T>
void MultiHeadAttention<T>::set_head_gate(Tensor<T> gate) {
  if (gate.defined())
    check(gate.shape() == Shape{heads_}, "MultiHeadAttention", "head gate must have one entry per head, (", heads_,
          "), got ", shape_str(gate.shape()));
  head_gate_ = std::move(gate);
}

// gate (h) -> (h, 1) -> (h, d_k) -> (h * d_k): column c of the merged heads belongs to head c / d_k.
template <class T>
Tensor<T> MultiHeadAttention<T>::gated(const Tensor<T>& merged) const {
  if (!head_gate_.defined()) return merged;
  const long h = static_cast<long>(heads_), dk = static_cast<long>(head_dim());
  const Tensor<T> columns = reshape(broadcast_to(reshape(head_gate_, {h, 1}), Shape{heads_, head_dim()}), {h * dk});
  return mul(merged, columns);
}

// The bias broadcast to (B, h, Lq, Lk), and -inf wherever the mask or the causal order (key j
// after query i) hides a key: the softmax of q.k * scale + bias is then the weights the op returns.
template <class T>
void MultiHeadAttention<T>::keep_parts(const Array<T>& q, const Array<T>& k, const AttentionOptions<T>& o) {
  if (!keep_parts_) return;
  const std::size_t B = q.shape()[0], Lq = q.shape()[1], Lk = k.shape()[1];
  const std::vector<std::size_t> scores{B, heads_, Lq, Lk};
  ScoreParts<T> p{q, k, xt::zeros<T>(scores), o.scale.value_or(1.0 / std::sqrt(static_cast<double>(head_dim())))};
  if (o.bias.defined()) p.bias += xt::broadcast(o.bias.value(), scores);
  const T hidden = -std::numeric_limits<T>::infinity();
  if (o.allowed) p.bias = xt::where(xt::broadcast(o.allowed->mask(), scores), p.bias, hidden);
  if (o.causal)
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t h = 0; h < heads_; ++h)
        for (std::size_t i = 0; i < Lq; ++i)
          for (std::size_t j = i + 1; j < Lk; ++j) p.bias(b, h, i, j) = hidden;
  parts_ = std::move(p);
}

template <class T>
AttentionResult<T> MultiHeadAttention<T>::forward(const Tensor<T>& query, const Tensor<T>& key,
                                                  const Tensor<T>& value,
                                                  const MultiHeadOptions<T>& opt) {
  const char* who = "MultiHeadAttention";
  need(who, query, "query");
  need(who, key, "key");
  need(who, value, "value");
  const Shape qs = query.shape(), ks = key.shape(), vs = value.shape();
  check(qs.size() == 3 && qs[2] == d_model_, who, "query must be (B, Lq, d_model = ", d_model_,
        "), got ", shape_str(qs));
  check(ks.size() == 3 && ks[2] == d_model_, who, "key must be (B, Lk, d_model = ", d_model_,
        "), got ", shape_str(ks));
  check(vs.size() == 3 && vs[2] == d_model_, who, "value must be (B, Lk, d_model = ", d_model_,
        "), got ", shape_str(vs));
  check(qs[0] == ks[0] && ks[0] == vs[0] && ks[1] == vs[1], who,
        "batch or key lengths differ: query ", shape_str(qs), ", key ", shape_str(ks), ", value ",
        shape_str(vs));
  const std::size_t B = qs[0], Lq = qs[1], Lk = ks[1];

  AttentionOptions<T> o;
  if (opt.allowed_keys) {
    check(opt.allowed_keys->shape() == Shape{B, Lk}, who, "allowed keys must be (B, Lk) = ",
          shape_str(Shape{B, Lk}), ", got ", shape_str(opt.allowed_keys->shape()));
    o.allowed = opt.allowed_keys->reshaped({B, 1, 1, Lk});
  }
  if (opt.allowed) {
    const Shape target{B, heads_, Lq, Lk};
    check(broadcasts_to(opt.allowed->shape(), target), who, "allowed entries ",
          shape_str(opt.allowed->shape()), " do not broadcast to (B, h, Lq, Lk) = ", shape_str(target));
    o.allowed = o.allowed ? *o.allowed && *opt.allowed : *opt.allowed;
  }
  o.causal = opt.causal;
  o.bias = opt.bias;
  o.dropout = this->training() ? p_ : 0.0;
  o.generator = &gen_;

  // The heads are read in place from the projections and the output comes back merged.
  AttentionResult<T> r;
  if (opt.qk_transform || opt.query_bias) {
    // q and k pass through the transform (heads side by side), or q makes a bias, so Q, K and V
    // come from the three row blocks of the projection rather than one packed GEMM.
    const auto same = [](const Tensor<T>& t) { return t; };
    const auto& transform = opt.qk_transform ? opt.qk_transform : std::function<Tensor<T>(const Tensor<T>&)>(same);
    const Tensor<T> q = transform(q_proj(query)), k = transform(k_proj(key));
    check(q.shape() == Shape{B, Lq, d_model_} && k.shape() == Shape{B, Lk, kv_dim()}, who,
          "qk_transform must keep the shapes (B, Lq, d) = ", shape_str(Shape{B, Lq, d_model_}),
          " and (B, Lk, kv_dim) = ", shape_str(Shape{B, Lk, kv_dim()}), ", got ", shape_str(q.shape()),
          " and ", shape_str(k.shape()));
    if (opt.query_bias) o.bias = with_query_bias(o.bias, opt.query_bias(q), Shape{B, heads_, Lq, Lk});
    r = attend(q, k, v_proj(value), o);  // the bias kept with the queries' own (Shaw's) term in it
  } else if (query.node() == key.node() && key.node() == value.node() && kv_heads_ < heads_) {
    // Grouped self-attention: one GEMM makes q and the kv heads' k and v, read apart by slices.
    const Tensor<T> qkv = linear(query, in_proj_weight, in_proj_bias);
    const long d = static_cast<long>(d_model_), kv = static_cast<long>(kv_dim());
    r = attend(slice(qkv, 2, 0, d), slice(qkv, 2, d, d + kv), slice(qkv, 2, d + kv, d + 2 * kv), o);
  } else if (query.node() == key.node() && key.node() == value.node()) {
    // Self-attention: one GEMM with the packed [W_q; W_k; W_v] makes Q, K and V together.
    const Tensor<T> qkv = linear(query, in_proj_weight, in_proj_bias);
    if (keep_parts_) {
      const auto d = static_cast<std::ptrdiff_t>(d_model_);
      keep_parts(xt::view(qkv.value(), xt::all(), xt::all(), xt::range(0, d)),
                 xt::view(qkv.value(), xt::all(), xt::all(), xt::range(d, 2 * d)), o);
    }
    r = multi_head_self_attention(qkv, heads_, o);
  } else {
    r = attend(q_proj(query), k_proj(key), v_proj(value), o);
  }
  return {out_proj(gated(r.output)), r.weights};
}

template <class T>
AttentionResult<T> MultiHeadAttention<T>::forward(const Tensor<T>& x, const MultiHeadOptions<T>& options) {
  return forward(x, x, x, options);
}

// The new rows' q, k, v come from one GEMM on the packed projection, as in forward. Query i of the
// new rows sits at position c + i (c = cached positions) and may see keys 0 .. c + i: all of them
// for a single new row, the causal triangle when nothing is cached, and otherwise that band.
template <class T>
AttentionResult<T> MultiHeadAttention<T>::forward_cached(const Tensor<T>& x, KVCache<T>& cache,
                                                         const MultiHeadOptions<T>& opt) {
  const char* who = "MultiHeadAttention (cached)";
  need(who, x, "input");
  const Shape xs = x.shape();
  check(xs.size() == 3 && xs[2] == d_model_ && xs[1] > 0, who, "input must be (B, n > 0, d_model = ", d_model_,
        "), got ", shape_str(xs));
  const std::size_t B = xs[0], n = xs[1], c = cache.length();
  if (c > 0)
    check(cache.keys.shape() == Shape{B, c, kv_dim()} && cache.values.shape() == cache.keys.shape(), who,
          "the cache holds keys ", shape_str(cache.keys.shape()), " and values ", shape_str(cache.values.shape()),
          ", not (B = ", B, ", L, kv_dim = ", kv_dim(), ")");
  check(!opt.allowed_keys && !opt.allowed, who, "masks are not supported with a cache (the positions are causal)");
  const long d = long(d_model_), kv = long(kv_dim());
  const Tensor<T> qkv = linear(x, in_proj_weight, in_proj_bias);  // (B, n, d + 2 kv_dim)
  Tensor<T> q = slice(qkv, 2, 0, d), k = slice(qkv, 2, d, d + kv);
  const Tensor<T> v = slice(qkv, 2, d + kv, d + 2 * kv);
  if (opt.qk_transform) {
    q = opt.qk_transform(q);
    k = opt.qk_transform(k);
  }
  const Tensor<T> bias = opt.query_bias ? with_query_bias(opt.bias, opt.query_bias(q), Shape{B, heads_, n, c + n})
                                        : opt.bias;
  const Tensor<T> keys = c == 0 ? k : concat<T>({Tensor<T>(cache.keys), k}, 1);
  const Tensor<T> values = c == 0 ? v : concat<T>({Tensor<T>(cache.values), v}, 1);
  cache.keys = keys.value();
  cache.values = values.value();

  AttentionOptions<T> o;
  if (c == 0) {
    o.causal = true;
  } else if (n > 1) {
    Mask band = Mask::from_shape({n, c + n});
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < c + n; ++j) band(i, j) = j <= c + i;
    o.allowed = Allowed::where(std::move(band));
  }
  if (bias.defined())
    check(broadcasts_to(bias.shape(), Shape{B, heads_, n, c + n}), who, "bias ", shape_str(bias.shape()),
          " does not broadcast to (B, h, n, cached + n) = ", shape_str(Shape{B, heads_, n, c + n}));
  o.bias = bias;
  o.dropout = this->training() ? p_ : 0.0;
  o.generator = &gen_;
  const std::size_t group = heads_ / kv_heads_;  // the cache keeps the kv heads; each is read by its group
  const AttentionResult<T> r =
      multi_head_attention(q, repeat_heads(keys, kv_heads_, group), repeat_heads(values, kv_heads_, group), heads_, o);
  return {out_proj(gated(r.output)), r.weights};
}

template class MultiHeadAttention<float>;
template class MultiHeadAttention<double>;

}  // namespace attnlab::nn
