// The kit's pieces around a causal language model: its attention over a text as the explorer's
// input (lessons/kit/causal_lm_explorer), generation timed with and without the KV cache
// (lessons/kit/generation_speed), and a training step under the op profiler
// (lessons/kit/step_profile), training on random windows of a stream (lessons/kit/window_training)
// and what sharing keys and values saves and costs (lessons/kit/kv_sharing);
// bad input refused by name.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <stdexcept>

#include "core/ops.hpp"
#include "lessons/kit/causal_lm_explorer.hpp"
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
}
