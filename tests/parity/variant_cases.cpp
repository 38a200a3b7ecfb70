// Parity cases for the variants of the later lessons, written like tests/test_parity_torch.cpp's
// (a Case per computation: seeded weights, inputs and upstream gradient; our outputs and every
// gradient; tests/parity/torch_parity.py rebuilds each one in torch from the paper's formula):
//   GroupedQueryAttention  MultiHeadAttention with kv_heads 2 and 1 of 4 heads (lesson 11)
//   repeat_heads           the op that shares a key/value head over its group of query heads
//   LocalPAttention        Luong's local-p: a predicted centre, a window, a Gaussian (lesson 03)
//   local_m_attention      Luong's local-m: the centre at the decoder's step
//   GraphAttention         GAT heads masked by the adjacency (lesson 19), and MeanAggregation
//   sparse_attention       window, global tokens and stride (lesson 18), rows that see nothing
//   log_of_chosen          REINFORCE's log-probability of the drawn patch (lesson 20)
//   doubly_stochastic_penalty  Show, Attend and Tell's coverage term (lesson 20)
//   Captioner              lesson 20's captioner, soft and hard (replayed draws), with its
//                          PatchEncoder and the REINFORCE surrogate
#include <cstdint>
#include <string>
#include <vector>

#include "core/ops.hpp"
#include "nn/attention/local_m.hpp"
#include "nn/attention/local_p.hpp"
#include "nn/attention/multi_head.hpp"
#include "nn/caption/captioner.hpp"
#include "nn/caption/coverage.hpp"
#include "nn/graph/graph_attention.hpp"
#include "tests/parity/case.hpp"

namespace attnlab::parity_cases {

namespace {

// (n) lengths as an IndexArray, for the ops that take one.
IndexArray index_array(const std::vector<std::size_t>& values) {
  IndexArray a = xt::zeros<Index>({values.size()});
  for (std::size_t i = 0; i < values.size(); ++i) a(i) = static_cast<Index>(values[i]);
  return a;
}

// ---------------------------------------------------------------- grouped-query attention

// 4 query heads of 2 sharing kv_heads key/value heads; self-attention causal with the second
// sequence padded, or cross-attention with padded keys; with and without biases.
void grouped_query_case(Npz& in, Npz& ours, const std::string& name, std::uint64_t seed, std::size_t kv_heads,
                        bool self, bool bias) {
  const std::size_t d = 8, h = 4, B = 2;
  Case c(name, in, ours, seed);
  nn::MultiHeadAttention<double> m(d, h, c.gen(), 0.0, bias, kv_heads);
  c.params(m);
  c.cfg("d_model", double(d));
  c.cfg("heads", double(h));
  c.cfg("kv_heads", double(kv_heads));
  c.cfg("causal", self);
  nn::MultiHeadOptions<double> opt;
  opt.causal = self;
  AttentionResult<double> r;
  if (self) {
    opt.allowed_keys = Allowed::where(length_mask({5, 3}, 5));
    c.data("key_padding_mask", NpyArray(opt.allowed_keys->mask()));
    r = m.forward(c.input("x", {B, 5, d}), opt);
  } else {
    opt.allowed_keys = Allowed::where(length_mask({4, 2}, 4));
    c.data("key_padding_mask", NpyArray(opt.allowed_keys->mask()));
    Tn q = c.input("query", {B, 3, d});
    Tn k = c.input("key", {B, 4, d});
    Tn v = c.input("value", {B, 4, d});
    r = m.forward(q, k, v, opt);
  }
  c.output("output", r.output);
  c.output("weights", r.weights, /*differentiable=*/false);
  c.backward();
}

void grouped_query_cases(Npz& in, Npz& ours) {
  grouped_query_case(in, ours, "GroupedQueryAttention kv_heads=2 self causal key-padding", 101, 2, true, true);
  grouped_query_case(in, ours, "GroupedQueryAttention kv_heads=1 (multi-query) cross key-padding", 102, 1, false,
                     true);
  grouped_query_case(in, ours, "GroupedQueryAttention kv_heads=1 (multi-query) self causal no-bias", 103, 1, true,
                     false);
}

void repeat_heads_cases(Npz& in, Npz& ours) {
  struct RepeatCase {
    const char* name;
    Shape shape;
    std::size_t heads, repeats;
  };
  const std::vector<RepeatCase> cases{{"repeat_heads 2 heads x2 (B, L, 2 d)", {2, 3, 6}, 2, 2},
                                   {"repeat_heads 1 head x4 (rows, d)", {5, 3}, 1, 4},
                                   {"repeat_heads 3 heads x1 (identity)", {2, 2, 3, 6}, 3, 1}};
  std::uint64_t seed = 111;
  for (const RepeatCase& s : cases) {
    Case c(s.name, in, ours, seed++);
    c.cfg("heads", double(s.heads));
    c.cfg("repeats", double(s.repeats));
    c.output("output", repeat_heads(c.input("x", s.shape), s.heads, s.repeats));
    c.backward();
  }
}

// ---------------------------------------------------------------- Luong's local attention

// The window's half-width and the real keys (B = 2, the second row padded after its length), for
// torch; returns the real keys. The score is the case name's second word.
Allowed local_cfg(Case& c, std::size_t half_window, const std::vector<std::size_t>& lengths, std::size_t Lk) {
  Allowed real = Allowed::where(length_mask(lengths, Lk));
  c.cfg("half_window", double(half_window));
  c.data("key_mask", NpyArray(real.mask()));
  return real;
}

void local_result(Case& c, const nn::LocalAttentionResult<double>& r) {
  c.output("output", r.output);
  c.output("weights", r.weights, /*differentiable=*/false);
  c.output("positions", r.positions, /*differentiable=*/false);
  c.backward();
}

// Local-p with a general score over every decoder step, and one decoder step with a dot score.
void local_p_cases(Npz& in, Npz& ours) {
  for (bool step : {false, true}) {
    Case c(step ? "LocalPAttention dot one step D=1" : "LocalPAttention general masked D=2", in, ours,
           step ? 122 : 121);
    const std::size_t dq = 4, D = step ? 1 : 2, Lk = 7;
    const auto score = nn::make_score<double>(step ? "dot" : "general", dq, 4, c.gen());
    nn::LocalPAttention<double> m(dq, 5, D, c.gen());
    c.params(m);
    c.params(*score, 0.5, "score.");
    const Allowed real = local_cfg(c, D, step ? std::vector<std::size_t>{7, 3} : std::vector<std::size_t>{7, 4}, Lk);
    Tn q = c.input("query", step ? Shape{2, dq} : Shape{2, 3, dq});
    Tn k = c.input("keys", {2, Lk, 4});
    Tn v = c.input("values", {2, Lk, 3});
    local_result(c, m.forward(*score, q, k, v, real));
  }
}

// Local-m teacher-forced past the shorter row's end (its centres clip at S - 1), and one step at
// first_step 4 with a concat score.
void local_m_cases(Npz& in, Npz& ours) {
  for (bool step : {false, true}) {
    Case c(step ? "local_m_attention concat one step at 4 D=2" : "local_m_attention additive steps 0-5 D=1", in,
           ours, step ? 132 : 131);
    const std::size_t dq = 3, D = step ? 2 : 1, Lk = 6, first = step ? 4 : 0;
    const auto score = nn::make_score<double>(step ? "concat" : "additive", dq, 4, c.gen(), 5);
    c.params(*score, 0.5, "score.");
    c.cfg("first_step", double(first));
    const Allowed real = local_cfg(c, D, step ? std::vector<std::size_t>{6, 2} : std::vector<std::size_t>{6, 3}, Lk);
    Tn q = c.input("query", step ? Shape{2, dq} : Shape{2, 6, dq});
    Tn k = c.input("keys", {2, Lk, 4});
    Tn v = c.input("values", {2, Lk, 2});
    local_result(c, nn::local_m_attention(*score, q, k, v, real, D, first));
  }
}

// ---------------------------------------------------------------- graph attention

// Two graphs: six nodes with an isolated one (its neighbourhood is itself alone) and a five-node
// ring with a chord; several heads, two LeakyReLU slopes.
void graph_cases(Npz& in, Npz& ours) {
  struct Graph {
    const char* name;
    std::size_t nodes, in_features, head_features, heads;
    double slope;
    std::vector<std::pair<std::size_t, std::size_t>> edges;
  };
  const std::vector<Graph> graphs{
      {"GraphAttention 2 heads of 3, 6 nodes, one isolated", 6, 4, 3, 2, 0.2,
       {{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}}},
      {"GraphAttention 3 heads of 2, ring of 5 with a chord, slope 0.1", 5, 3, 2, 3, 0.1,
       {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}, {0, 2}}}};
  std::uint64_t seed = 141;
  for (const Graph& g : graphs) {
    Case c(g.name, in, ours, seed++);
    nn::GraphAttention<double> m(g.in_features, g.head_features, g.heads, c.gen(), g.slope);
    c.params(m);
    c.cfg("heads", double(g.heads));
    c.cfg("negative_slope", g.slope);
    const Allowed adjacency = nn::neighbourhoods(g.nodes, g.edges);
    c.data("neighbourhoods", NpyArray(adjacency.mask()));
    Tn weights;
    c.output("output", m.forward(c.input("x", {g.nodes, g.in_features}), adjacency, &weights));
    c.output("weights", weights, /*differentiable=*/false);
    c.backward();
  }
  Case c("MeanAggregation 6 nodes, one isolated", in, ours, 149);
  nn::MeanAggregation<double> m(4, 3, c.gen());
  c.params(m);
  const Allowed adjacency = nn::neighbourhoods(6, graphs[0].edges);
  c.data("neighbourhoods", NpyArray(adjacency.mask()));
  c.output("output", m.forward(c.input("x", {6, 4}), adjacency));
  c.backward();
}

// ---------------------------------------------------------------- sparse attention

// One pattern on q (..., Lq, d), k (..., Lk, d), v (..., Lk, dv). For torch the pattern goes as
// its description (window, stride, causal) and the global positions as flags (blocks, min(Lq, Lk)),
// blocks the leading dims flattened, true where a position is global in that block.
void sparse_case(Npz& in, Npz& ours, const std::string& name, std::uint64_t seed, const Shape& q_shape,
                 const Shape& k_shape, std::size_t dv, const SparsePattern& pattern,
                 const TiledAttentionOptions<double>& options) {
  Case c(name, in, ours, seed);
  const std::size_t Lq = q_shape[q_shape.size() - 2], Lk = k_shape[k_shape.size() - 2];
  const std::size_t blocks = shape_size(q_shape) / (Lq * q_shape.back()), n = std::min(Lq, Lk);
  Mask global = xt::zeros<bool>({blocks, n});
  for (std::size_t b = 0; b < blocks; ++b)
    for (long g : pattern.global_by_block.empty() ? pattern.global : pattern.global_by_block[b])
      global(b, std::size_t(g)) = true;
  c.data("global", NpyArray(global));
  c.cfg("window", double(pattern.window));
  c.cfg("stride", double(pattern.stride));
  c.cfg("causal", options.causal);
  if (options.scale) c.cfg("scale", *options.scale);
  if (options.allowed) c.data("allowed", NpyArray(options.allowed->mask()));
  Shape v_shape = k_shape;
  v_shape.back() = dv;
  Tn q = c.input("q", q_shape, 1.5);
  Tn k = c.input("k", k_shape, 1.5);
  Tn v = c.input("v", v_shape);
  c.output("output", sparse_attention(q, k, v, pattern, options));
  c.backward();
}

void sparse_cases(Npz& in, Npz& ours) {
  TiledAttentionOptions<double> small;  // tiles of 2 queries and 3 keys: rows cross tiles
  small.block_q = 2;
  small.block_k = 3;
  sparse_case(in, ours, "sparse_attention window 1 + global {0, 6} + stride 3, small tiles", 151, {2, 9, 3},
              {2, 9, 3}, 3, SparsePattern{1, {0, 6}, {}, 3}, small);
  // Block 0 has no global token: its queries 6 to 8 see no key (Lk = 6): zero rows.
  TiledAttentionOptions<double> causal = small;
  causal.causal = true;
  sparse_case(in, ours, "sparse_attention causal, global by block, rows that see nothing", 152, {2, 9, 3}, {2, 6, 3},
              2, SparsePattern{0, {}, {{}, {2, 4}}, 0}, causal);
  // Heads as a leading dim, padded keys (2, 1, 1, Lk) broadcast over heads and queries, a scale of
  // our own, the default tiles.
  TiledAttentionOptions<double> padded;
  Mask real_keys = xt::zeros<bool>({2, 1, 1, 7});
  for (std::size_t j = 0; j < 7; ++j) real_keys(0, 0, 0, j) = true;
  for (std::size_t j = 0; j < 4; ++j) real_keys(1, 0, 0, j) = true;
  padded.allowed = Allowed::where(std::move(real_keys));
  padded.scale = 0.3;
  sparse_case(in, ours, "sparse_attention heads, key padding, scale 0.3, window 2 + global {1}", 153, {2, 2, 7, 4},
              {2, 2, 7, 4}, 5, SparsePattern{2, {1}, {}, 0}, padded);
  // Causal with a stride and no window beyond the diagonal: the Sparse Transformer's strided heads.
  TiledAttentionOptions<double> strided;
  strided.causal = true;
  sparse_case(in, ours, "sparse_attention causal stride 3", 154, {1, 10, 4}, {1, 10, 4}, 3,
              SparsePattern{0, {}, {}, 3}, strided);
}

// ---------------------------------------------------------------- hard attention and coverage

// log_of_chosen on probabilities given directly (positive, unnormalised: the op reads only the
// chosen entry) and on a softmax of logits (B, L, N), the way the hard-attention captioner uses it.
void log_of_chosen_cases(Npz& in, Npz& ours) {
  for (bool of_softmax : {false, true}) {
    Case c(of_softmax ? "log_of_chosen of softmax(logits) (2, 3, 5)" : "log_of_chosen of probabilities (4, 6)", in,
           ours, of_softmax ? 162 : 161);
    const Shape shape = of_softmax ? Shape{2, 3, 5} : Shape{4, 6};
    const Tn x = of_softmax ? c.input("logits", shape, 2.0) : c.input("p", shape, 0.1, 0.5);
    Shape rows(shape.begin(), shape.end() - 1);
    IndexArray chosen = xt::zeros<Index>(rows);
    for (std::size_t i = 0; i < chosen.size(); ++i) chosen.flat(i) = static_cast<Index>(c.gen().below(shape.back()));
    c.data("chosen", NpyArray(chosen));
    c.output("log_p", log_of_chosen(of_softmax ? softmax(x) : x, chosen));
    c.backward();
  }
}

// The penalty over weights (B, L, N): lengths that count every step, some, and none; tau 1 (the
// paper's, and lesson 20's) and another tau, which the op takes as a parameter.
void coverage_cases(Npz& in, Npz& ours) {
  for (bool paper : {true, false}) {
    Case c(paper ? "doubly_stochastic_penalty tau 1, lengths 4 2 0"
                 : "doubly_stochastic_penalty tau 0.75, lengths 3 1",
           in, ours, paper ? 171 : 172);
    const double tau = paper ? 1.0 : 0.75;
    const IndexArray lengths = paper ? index_array({4, 2, 0}) : index_array({3, 1});
    c.cfg("tau", tau);
    c.data("lengths", NpyArray(lengths));
    const Tn weights = c.input("weights", {lengths.size(), 4, 5}, 0.1, 0.2);
    c.output("penalty", nn::doubly_stochastic_penalty(weights, lengths, tau));
    c.backward();
  }
}

// ---------------------------------------------------------------- the captioner

// Images 8 x 12 in patches of 4 (N = 6 on a 2 x 3 grid: a transposed grid would show), words
// teacher-forced over L = 4 steps. Soft: one pre-norm GELU encoder layer and the paper's summary
// start. Hard: no encoder layer, the zero start, the draws replayed from `choices` (a pass is then
// a function of the weights), and reinforce_loss on top, its second caption counting 2 words.
void captioner_cases(Npz& in, Npz& ours) {
  for (bool hard : {false, true}) {
    Case c(hard ? "Captioner hard, replayed draws, no encoder layer, reinforce_loss"
                : "Captioner soft, 1 encoder layer, summary start",
           in, ours, hard ? 182 : 181);
    nn::CaptionerConfig cfg;
    cfg.encoder.image_height = 8;
    cfg.encoder.image_width = 12;
    cfg.encoder.patch = 4;
    cfg.encoder.num_layers = hard ? 0 : 1;
    cfg.encoder.layer = {8, 2, 16, 0.0, /*norm_first=*/true, nn::Activation::GELU, 1e-6};
    cfg.vocab = 7, cfg.embed = 5, cfg.hidden = 6, cfg.attention_hidden = 4;
    cfg.summary_init = !hard;
    nn::Captioner<double> m(cfg, c.gen());
    c.params(m);
    c.cfg("patch", double(cfg.encoder.patch));
    c.cfg("num_layers", double(cfg.encoder.num_layers));
    c.cfg("d_model", 8);
    c.cfg("heads", 2);
    c.cfg("d_ff", 16);
    c.cfg("gelu", 1);
    c.cfg("norm_first", 1);
    c.cfg("eps", 1e-6);
    c.cfg("summary_init", cfg.summary_init);
    const std::size_t B = 2, L = 4, N = 6;
    IndexArray words = xt::zeros<Index>({B, L}), choices = xt::zeros<Index>({B, L});
    for (std::size_t i = 0; i < words.size(); ++i) {
      words.flat(i) = static_cast<Index>(c.gen().below(cfg.vocab));
      choices.flat(i) = static_cast<Index>(c.gen().below(N));
    }
    c.data("words", NpyArray(words));
    Tn images = c.input("images", {B, 8, 12});
    if (!hard) {
      const nn::CaptionPass<double> pass = m.teacher_forced(images, words, nn::Glimpse::soft);
      c.output("logits", pass.logits);
      c.output("weights", pass.weights);
      c.backward();
      continue;
    }
    c.data("choices", NpyArray(choices));
    const nn::CaptionPass<double> pass = m.teacher_forced(images, words, nn::Glimpse::hard, nullptr, &choices);
    c.output("logits", pass.logits);
    c.output("weights", pass.weights);
    c.output("log_choice", pass.log_choice);
    // Targets: the words shifted by one, and the second caption ends after 2 words (-100 after).
    const Index ignore = -100;
    IndexArray targets = xt::zeros<Index>({B, L});
    const IndexArray counts = index_array({L, 2});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < L; ++t)
        targets(b, t) = t < std::size_t(counts(b)) ? static_cast<Index>(c.gen().below(cfg.vocab)) : ignore;
    c.data("targets", NpyArray(targets));
    c.data("word_counts", NpyArray(counts));
    c.cfg("baseline", -9.0);
    const nn::ReinforceLoss<double> r = nn::reinforce_loss(pass, targets, counts, -9.0, ignore);
    c.output("reinforce_loss", r.loss);
    c.output("mean_reward", Tn(Array<double>(r.mean_reward)), /*differentiable=*/false);
    c.backward();
  }
}

}  // namespace

void variant_cases(Npz& in, Npz& ours) {
  grouped_query_cases(in, ours);
  repeat_heads_cases(in, ours);
  local_p_cases(in, ours);
  local_m_cases(in, ours);
  graph_cases(in, ours);
  sparse_cases(in, ours);
  log_of_chosen_cases(in, ours);
  coverage_cases(in, ours);
  captioner_cases(in, ours);
}

}  // namespace attnlab::parity_cases
