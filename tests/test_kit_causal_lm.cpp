// The kit's pieces around a causal language model: its attention over a text as the explorer's
// input (lessons/kit/causal_lm_explorer), generation timed with and without the KV cache
// (lessons/kit/generation_speed), and a training step under the op profiler
// (lessons/kit/step_profile), training on random windows of a stream (lessons/kit/window_training)
// what sharing keys and values saves and costs (lessons/kit/kv_sharing), what the next token costs
// with and without the cache, and the fortunes GPT's config (lessons/kit/fortunes_gpt);
// bad input refused by name.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <stdexcept>

#include "core/ops.hpp"
#include "core/runtime/allocator.hpp"
#include "nn/lm/score.hpp"
#include "plots/error.hpp"
#include "lessons/kit/causal_lm_explorer.hpp"
#include "lessons/kit/fortunes_gpt.hpp"
#include "lessons/kit/generation_speed.hpp"
#include "lessons/kit/kv_sharing.hpp"
#include "lessons/kit/step_profile.hpp"
#include "lessons/kit/window_training.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::contains;
using attnlab::testing::error_of;
using Vocab = nn::data::Vocab;

namespace {
std::unique_ptr<nn::CausalLM<float>> tiny_gpt(const Vocab& v) {
  nn::CausalLMConfig c;
  c.vocab = v.size();
  c.num_layers = 2;
  c.max_length = 12;
  c.layer = {16, 2, 32, 0.0, true, nn::Activation::GELU, 1e-5};
  c.positional = nn::Positional::Rotary;
  Generator gen(11);
  auto m = std::make_unique<nn::CausalLM<float>>(c, gen);
  m->eval();
  return m;
}

Vocab letters() {
  Vocab v;
  for (const char* s : {"a", "b", " "}) v.add(s);
  return v;
}
}  // namespace

TEST_CASE("causal_lm_attention_input: every layer and head over the text, scores kept, nothing above the diagonal") {
  const Vocab v = letters();
  auto gpt = tiny_gpt(v);
  const std::vector<Index> ids{Vocab::bos, v.id("a"), v.id(" "), v.id("b")};
  const AttentionInput in = causal_lm_attention_input(*gpt, v, ids, "\"a b\"");
  CHECK(in.name == "\"a b\"");
  CHECK(in.queries == std::vector<std::string>{"<bos>", "a", "\u2423", "b"});
  REQUIRE(in.heads.size() == 2);
  REQUIRE(in.heads[0].size() == 2);
  REQUIRE(in.q.size() == 2);  // the neuron view's queries and keys
  CHECK(in.heads[1][1](0, 0) == doctest::Approx(1.0));
  CHECK(in.heads[1][1](1, 3) == 0.0);
  CHECK(contains(error_of<std::invalid_argument>([&] { causal_lm_attention_input(*gpt, v, std::vector<Index>(13, 4), "x"); }),
                 "causal_lm_attention_input: needs 1 .. 12 ids, got 13"));
  CHECK(in.kv_heads.empty());  // a config that names no key/value heads: every head its own
}

TEST_CASE("causal_lm_attention_input: a grouped-query GPT's page groups its query heads by the key/value head they read") {
  const Vocab v = letters();
  nn::CausalLMConfig c;
  c.vocab = v.size(), c.num_layers = 2, c.max_length = 12;
  c.layer = {16, 4, 32, 0.0, true, nn::Activation::GELU, 1e-5};
  c.layer.kv_heads = 2;
  c.positional = nn::Positional::Rotary;
  Generator gen(11);
  nn::CausalLM<float> gpt(c, gen);
  gpt.eval();
  const AttentionInput in = causal_lm_attention_input(gpt, v, {Vocab::bos, v.id("a"), v.id(" "), v.id("b")}, "x");
  CHECK(in.kv_heads == std::vector<std::size_t>{2, 2});
  REQUIRE(in.k[1].size() == 4);
  CHECK(in.k[1][0] == in.k[1][1]);     // heads 1 and 2 read key/value head 1
  CHECK(!(in.k[1][1] == in.k[1][2]));  // head 3 another
  CHECK(contains(explorer_html({"Grouped", "queries", "keys", "", {in}}), "\"kv_heads\":2"));
}

TEST_CASE("generation_speed: both ways measured, bad input refused") {
  const Vocab v = letters();
  auto gpt = tiny_gpt(v);
  const GenerationSpeed s = generation_speed(*gpt, Vocab::bos, 20, 1);
  CHECK(s.with_cache > 0.0);
  CHECK(s.without_cache > 0.0);
  CHECK(s.ratio() == doctest::Approx(s.with_cache / s.without_cache));
  CHECK(contains(error_of<std::invalid_argument>([&] { generation_speed(*gpt, Vocab::bos, 0, 1); }), "generation_speed: needs at least one token"));
  CHECK(contains(error_of<std::invalid_argument>([&] { generation_speed(*gpt, Vocab::bos, 5, 0); }), "0 rounds"));
}

TEST_CASE("profile_steps: the ops of a forward and backward, the batch charged apart, the shares in words") {
  const Vocab v = letters();
  auto gpt = tiny_gpt(v);
  gpt->train();
  IndexArray ids = xt::zeros<Index>({2, 6}), targets = xt::ones<Index>({2, 6});
  int made = 0;
  const StepProfile p = profile_steps<int>(
      *gpt, [&] { return ++made; }, [&](const int&) { return cross_entropy(gpt->forward(ids), targets); }, 2);
  CHECK(made == 2);
  CHECK(p.steps == 2);
  CHECK(p.total_ms > 0.0);
  bool linear = false, batch = false;
  for (const OpTime& t : p.times) linear |= t.op == "linear", batch |= t.op == "making the batch";
  CHECK(linear);
  CHECK(batch);
  CHECK(contains(p.table, "linear"));
  const std::string words = p.largest(3);
  CHECK(contains(words, "'" + p.times[0].op + "' "));
  CHECK(contains(words, " and '"));
  CHECK(contains(error_of<std::invalid_argument>([&] { profile_steps<int>(*gpt, [] { return 0; }, [&](const int&) { return Tensor<float>(); }, 0); }),
                 "profile_steps: needs at least one step, got 0"));
}

TEST_CASE("train_on_windows: a held-out score in nats and bits at every point, the loss falling on a repeated text") {
  const Vocab v = letters();
  auto gpt = tiny_gpt(v);
  gpt->train();
  const Index a = v.id("a"), b = v.id("b"), s = v.id(" ");
  std::vector<Index> stream;
  for (int i = 0; i < 60; ++i) stream.insert(stream.end(), {Vocab::bos, a, b, s, b, a, Vocab::eos});
  const std::vector<std::vector<Index>> monitor{{a, b, s, b, a}};
  const WindowPlan plan{8, 4, 40, 2, 3};
  Recipe r;
  r.lr = 1e-2;
  const History h = train_on_windows(*gpt, stream, monitor, plan, r);
  CHECK(h.steps == 40);
  const std::vector<double>& nats = h.validation_of("loss");
  const std::vector<double>& bits = h.validation_of("bpc");
  REQUIRE(nats.size() == 2);
  CHECK(bits[1] == doctest::Approx(nats[1] / std::log(2.0)));
  CHECK(nats[1] < std::log(double(v.size())));  // below a uniform guess: it learnt the text
  CHECK(millions_read(plan) == std::vector<double>{20 * 32 / 1e6, 40 * 32 / 1e6});
  const auto refused = [&](const WindowPlan& p, const std::vector<std::vector<Index>>& m) {
    return error_of<std::invalid_argument>([&] { train_on_windows(*gpt, stream, m, p, r); });
  };
  CHECK(contains(refused({8, 4, 41, 2, 3}, monitor), "train_on_windows: steps 41 are not a positive multiple of evaluations 2"));
  CHECK(contains(refused(plan, {}), "the monitor holds no sequence"));
  CHECK(contains(refused({500, 4, 40, 2, 3}, monitor), "is no longer than a window of 500"));
}

TEST_CASE("measure_kv_sharing: the cache holds h/g times fewer bytes a token; each model trained and scored") {
  const Vocab v = letters();
  const Index a = v.id("a"), b = v.id("b");
  std::vector<Index> stream;
  for (int i = 0; i < 40; ++i) stream.insert(stream.end(), {Vocab::bos, a, b, b, a, Vocab::eos});
  nn::CausalLMConfig c = tiny_gpt(v)->config();
  c.num_layers = 1;
  const WindowPlan plan{8, 4, 10, 5, 3};  // evaluations: set to 1
  Recipe r;
  const std::vector<Index> probe{Vocab::bos, a, b};
  const KvSharing mha = measure_kv_sharing(c, 2, 1, stream, {{a, b}}, plan, r, probe, 1);
  const KvSharing mqa = measure_kv_sharing(c, 1, 1, stream, {{a, b}}, plan, r, probe, 1);
  CHECK(mha.bytes_per_token == doctest::Approx(2 * 16 * sizeof(float)));  // K and V, one layer, d = 16
  CHECK(mqa.bytes_per_token == doctest::Approx(mha.bytes_per_token / 2));
  CHECK(mqa.parameters < mha.parameters);
  CHECK(mha.validation_bpc > 0.0);
  CHECK(mqa.tokens_per_second > 0.0);
  CHECK(contains(error_of<std::invalid_argument>([&] { measure_kv_sharing(c, 1, 1, stream, {{a}}, plan, r, {}, 1); }),
                 "measure_kv_sharing: the probe holds 0 ids"));
  CHECK(contains(error_of([&] { measure_kv_sharing(c, 3, 1, stream, {{a}}, plan, r, probe, 1); }),
                 "heads 2 is not divisible by kv_heads 3"));
  // train_kv_sharing: the same measurements, and the trained model back in eval mode.
  const KvSharingRun run = train_kv_sharing(c, 1, 1, stream, {{a, b}}, plan, r, probe, 1);
  REQUIRE(run.model);
  CHECK(!run.model->training());
  CHECK(run.model->config().layer.kv_heads == 1);
  CHECK(run.history.steps == 10);
  CHECK(run.measured.validation_bpc == doctest::Approx(mqa.validation_bpc));
  CHECK(run.measured.bytes_per_token == mqa.bytes_per_token);
  CHECK(contains(error_of<std::invalid_argument>([&] { train_kv_sharing(c, 1, 1, stream, {{a}}, plan, r, {}, 1); }),
                 "train_kv_sharing: the probe holds 0 ids"));
}

TEST_CASE("next_token_costs: both ways timed at every size; bad sizes refused by name") {
  const Vocab v = letters();
  auto gpt = tiny_gpt(v);
  const std::vector<Index> prefix{Vocab::bos, v.id("a"), v.id("b"), v.id(" "), v.id("a"), v.id("b")};
  const std::vector<CostCurve> c = next_token_costs(*gpt, prefix, {1, 3, 5}, 1);
  REQUIRE(c.size() == 2);
  CHECK(c[0].name == "the whole prefix again");
  CHECK(c[1].name == "one position through the KV cache");
  for (const CostCurve& curve : c) {
    CHECK(curve.n == std::vector<double>{1, 3, 5});
    REQUIRE(curve.wall_ms.size() == 3);
    CHECK(curve.wall_ms[2] > 0.0);
  }
  CHECK(contains(error_of<std::invalid_argument>([&] { next_token_costs(*gpt, prefix, {6}, 1); }),
                 "next_token_costs: after 6 tokens (at least 1) the next is id 7, but the prefix holds 6"));
  CHECK(contains(error_of<std::invalid_argument>([&] { next_token_costs(*gpt, prefix, {0}, 1); }), "after 0 tokens"));
  CHECK(contains(error_of<std::invalid_argument>([&] { next_token_costs(*gpt, prefix, {}, 1); }),
                 "next_token_costs: needs sizes and at least one round, got 0 sizes"));
  CHECK(contains(error_of<std::invalid_argument>([&] { next_token_costs(*gpt, prefix, {2}, 0); }), "0 rounds"));
}

TEST_CASE("next_token_costs: the cached call's peak is its own, not lowered by an earlier pass's weights freed inside it" *
          doctest::skip(attnlab::testing::kAddressSanitizer)) {
  // Each layer keeps its last attention weights, (1, h, L, L); a call that freed a full pass's
  // weights inside its own measurement would seem to need less memory the longer the prefix.
  // Four heads and a feed-forward 4 d_model wide, as in the lessons: the call's peak comes after
  // the first layer's attention, where those weights would already be freed.
  const Vocab v = letters();
  nn::CausalLMConfig config = tiny_gpt(v)->config();
  config.layer.heads = 4, config.layer.d_ff = 64;
  Generator gen(12);
  auto gpt = std::make_unique<nn::CausalLM<float>>(config, gen);
  gpt->eval();
  std::vector<Index> prefix{Vocab::bos};
  for (int i = 0; i < 11; ++i) prefix.push_back(v.id(i % 3 ? "a" : "b"));
  const std::vector<CostCurve> c = next_token_costs(*gpt, prefix, {1, 5, 10}, 1);
  REQUIRE(counting_bytes());
  for (std::size_t i = 1; i < 3; ++i) CHECK(c[0].peak_mib[i] > c[0].peak_mib[i - 1]);  // more positions
  // The cached call at n = 10 measured by hand, once with the model holding a one-token pass's
  // weights (as next_token_costs leaves it) and once after a full pass over the 11 ids.
  nn::CausalLMCache<float> filled;
  gpt->forward_cached(nn::lm::as_row(std::vector<Index>(prefix.begin(), prefix.begin() + 10)), filled);
  const IndexArray next = nn::lm::as_row({prefix[10]});
  const auto cached_peak = [&](const std::function<void()>& before) {
    nn::CausalLMCache<float> cache = filled;
    before();
    return double(peak_bytes_at_one_thread([&] { gpt->forward_cached(next, cache); })) / (1024.0 * 1024.0);
  };
  const double settled = cached_peak([&] {
    nn::CausalLMCache<float> scratch;
    gpt->forward_cached(nn::lm::as_row({prefix[0]}), scratch);
  });
  const double after_full_pass = cached_peak([&] {
    NoGrad no_grad;
    gpt->forward(nn::lm::as_row(std::vector<Index>(prefix.begin(), prefix.begin() + 11)));
  });
  CHECK(c[1].peak_mib[2] == settled);
  CHECK(after_full_pass < settled);  // the (1, 4, 11, 11) weights of each layer freed inside the call
  CHECK(c[0].peak_mib[2] > c[1].peak_mib[2]);
}

TEST_CASE("kv_cache_bytes_held: counted by the allocator, a key and a value of every head in every layer a token" *
          doctest::skip(attnlab::testing::kAddressSanitizer)) {
  const Vocab v = letters();
  auto gpt = tiny_gpt(v);
  std::vector<Index> prefix{Vocab::bos};
  for (int i = 0; i < 11; ++i) prefix.push_back(v.id(i % 2 ? "a" : " "));
  const std::vector<double> held = kv_cache_bytes_held(*gpt, prefix, {1, 4, 11});
  REQUIRE(counting_bytes());
  const double per_token = 2.0 * 2 * 16 * sizeof(float);  // 2 layers, d_model 16 (2 heads of 8)
  CHECK(held[1] - held[0] == 3 * per_token);
  CHECK(held[2] - held[1] == 7 * per_token);
  nn::CausalLMCache<float> cache;
  gpt->forward_cached(nn::lm::as_row(std::vector<Index>(prefix.begin(), prefix.begin() + 4)), cache);
  CHECK(held[1] >= double(cache.bytes()));  // the numbers, and the few bytes of their container
  CHECK(held[1] < double(cache.bytes()) + 1024);
  CHECK(contains(error_of<std::invalid_argument>([&] { kv_cache_bytes_held(*gpt, prefix, {12}); }),
                 "kv_cache_bytes_held: after 12 tokens"));
  const std::vector<CostCurve> c = next_token_costs(*gpt, prefix, {1, 4, 11}, 1);
  const plots::Figure fig = next_token_figure(c, held, "next");
  CHECK(contains(error_of<plots::PlotError>([&] { next_token_figure(c, {1.0, 2.0}, "next"); }),
                 "next_token_figure: needs the two ways measured at the 2 sizes"));
}

TEST_CASE("fortunes_gpt_config: the lessons' GPT, sizes checked by name") {
  const nn::CausalLMConfig c = fortunes_gpt_config(100, {64, 4, 2, 32, 2});
  CHECK(c.vocab == 100);
  CHECK(c.num_layers == 2);
  CHECK(c.max_length == 32);
  CHECK(c.layer.d_model == 64);
  CHECK(c.layer.heads == 4);
  CHECK(c.layer.kv_heads == 2);
  CHECK(c.layer.d_ff == 256);
  CHECK(c.layer.dropout == 0.0);
  CHECK(c.layer.norm_first);
  CHECK(c.positional == nn::Positional::Rotary);
  CHECK(c.tie_output);
  CHECK(contains(error_of<std::invalid_argument>([] { fortunes_gpt_config(100, {60, 8, 2, 32, 0}); }),
                 "fortunes_gpt_config: d_model must split into heads of even width"));
  CHECK(contains(error_of<std::invalid_argument>([] { fortunes_gpt_config(100, {64, 4, 2, 32, 3}); }),
                 "kv_heads must divide the heads (vocab 100, d_model 64, heads 4, kv_heads 3"));
  CHECK(contains(error_of<std::invalid_argument>([] { fortunes_gpt_config(0, {64, 4, 2, 32, 0}); }),
                 "needs a vocabulary"));
}

TEST_CASE("next_token_flops: the cache does one position's products, the prefix again all of them") {
  const Vocab v = letters();
  auto gpt = tiny_gpt(v);
  const std::vector<Index> prefix{Vocab::bos, v.id("a"), v.id("b"), v.id(" "), v.id("a"), v.id("b")};
  const NextTokenFlops one = next_token_flops(*gpt, prefix, 1), five = next_token_flops(*gpt, prefix, 5);
  // Again from the start: every product over n + 1 rows. Through the cache: one row, and the scores
  // against n + 1 keys; the projections, feed-forward and output are the same at every n.
  CHECK(five.without_cache > 2.5 * one.without_cache);
  CHECK(five.with_cache < 1.2 * one.with_cache);
  CHECK(five.with_cache * 4 < five.without_cache);
  CHECK(one.with_cache > 0.0);
  CHECK(next_token_flops(*gpt, prefix, 5).with_cache == five.with_cache);  // counted, not timed: the same again
  CHECK(contains(error_of<std::invalid_argument>([&] { next_token_flops(*gpt, prefix, 6); }),
                 "next_token_flops: after 6 tokens"));
}

TEST_CASE("cached_generation_speeds: one speed per model, timed in turn; bad input refused by name") {
  const Vocab v = letters();
  auto a = tiny_gpt(v), b = tiny_gpt(v);
  const std::vector<double> s = cached_generation_speeds({a.get(), b.get()}, Vocab::bos, 8, 1);
  REQUIRE(s.size() == 2);
  CHECK(s[0] > 0.0);
  CHECK(s[1] > 0.0);
  CHECK(contains(error_of<std::invalid_argument>([&] { cached_generation_speeds({}, Vocab::bos, 8, 1); }),
                 "cached_generation_speeds: needs a model, a token and a round, got 0 models"));
  CHECK(contains(error_of<std::invalid_argument>([&] { cached_generation_speeds({a.get()}, Vocab::bos, 8, 0); }),
                 "0 rounds"));
}

TEST_CASE("bits_curves and profile_window_steps: a run of train_on_windows drawn in bits, a step profiled") {
  const Vocab v = letters();
  const Index a = v.id("a"), b = v.id("b");
  std::vector<Index> stream;
  for (int i = 0; i < 40; ++i) stream.insert(stream.end(), {Vocab::bos, a, b, b, a, Vocab::eos});
  auto gpt = tiny_gpt(v);
  gpt->train();
  const WindowPlan plan{8, 4, 40, 2, 3};
  const History h = train_on_windows(*gpt, stream, {{a, b}}, plan, Recipe{});
  const std::vector<plots::Series> s = bits_curves("GPT", h, plan, {{"bigram", 1.5, "#d62728"}});
  const auto values = [](const xt::xarray<double>& a) { return std::vector<double>(a.begin(), a.end()); };
  REQUIRE(s.size() == 3);
  CHECK(s[0].name == "GPT, validation");
  CHECK(values(s[0].y) == h.validation_of("bpc"));
  CHECK(values(s[0].x) == millions_read(plan));
  CHECK(s[1].name == "GPT, training windows");
  CHECK(s[1].y(0) == doctest::Approx(h.loss.front() / std::log(2.0)));  // windows of 40 / 40 = 1 step
  CHECK(values(s[2].y) == std::vector<double>{1.5, 1.5});
  CHECK(values(s[2].x) == std::vector<double>{0.0, millions_read(plan).back()});
  CHECK(contains(error_of<std::invalid_argument>([&] { bits_curves("GPT", History{}, plan, {}); }),
                 "bits_curves: the history of 'GPT' needs 1 .. 2 \"bpc\" points"));
  const StepProfile p = profile_window_steps(gpt->config(), stream, plan, 5, 2);
  CHECK(p.steps == 2);
  CHECK(!p.times.empty());
  CHECK(contains(error_of<std::invalid_argument>([&] { profile_window_steps(gpt->config(), stream, plan, 5, 0); }),
                 "profile_steps: needs at least one step"));
}

TEST_CASE("causal_mask_figure: one annotated panel of the lower triangle; no labels refused") {
  plots::Figure fig = causal_mask_figure({"<bos>", "a", "b"}, "The causal mask");
  CHECK(fig.rows() == 1);
  CHECK(fig.cols() == 1);
  CHECK(fig.panel(0).plot() != nullptr);
  CHECK_THROWS_WITH_AS(causal_mask_figure({}, "none"), doctest::Contains("causal_mask_figure: no labels"),
                       std::invalid_argument);
}
