// Lesson 12: generating text, what each new token costs, and how the KV cache and shared keys and
// values make it cheaper.
//
// A GPT writes one token at a time: predict a distribution over the next token, draw one, append
// it, ask again. Asked naively, every new token runs the whole text so far through the model
// again, and the cost of a token grows with its position. The KV cache keeps every layer's keys
// and values of the positions already seen (they never change: position t looks only left), so a
// new token is one position of work; it is exact, and what it costs is memory, 2 x layers x heads
// x d_k numbers a token. Multi-query and grouped-query attention shrink that memory by sharing
// one key and value head among several query heads. We train three GPTs like lesson 11's on the
// same fortunes corpus, with 4, 2 and 1 key/value heads, generate with the first, and measure
// each: the cache's bytes a token, held-out bits per character, and how fast it writes.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "lessons/kit/causal_lm_explorer.hpp"
#include "lessons/kit/fortunes_gpt.hpp"
#include "lessons/kit/generation_speed.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/kv_sharing.hpp"
#include "nn/data/char_corpus.hpp"
#include "nn/lm/by_position.hpp"
#include "nn/lm/sample.hpp"
#include "nn/lm/score.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;
namespace lm = attnlab::nn::lm;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
using Vocab = data::Vocab;
using Corpus = data::CharCorpus;
using GPT = nn::CausalLM<float>;

// What a run trains: three GPTs of one size, only their key/value heads differ.
struct KvSettings {
  std::size_t train_entries = 0, held_out_entries = 0;  // 0: all of them (quick takes a slice)
  std::size_t d_model = 96, heads = 4, layers = 2, context = 64, batch = 32;
  long steps = 1500;
  double lr = 3e-3;
  std::size_t sample_chars = 300;  // the longest sample
  int speed_rounds = 5;            // timed rounds of each speed measurement
};

KvSettings settings_of_run() {
  KvSettings r;
  if (quick()) {
    r.train_entries = 2500, r.held_out_entries = 150;
    r.d_model = 32, r.layers = 1, r.context = 32, r.batch = 16, r.steps = 200;
    r.sample_chars = 120, r.speed_rounds = 2;
  }
  return r;
}

const std::vector<std::size_t> kKvHeads{4, 2, 1};
const std::vector<std::string> kNames{"multi-head (MHA)", "grouped-query (GQA)", "multi-query (MQA)"};
const std::vector<std::string> kKeys{"mha", "gqa", "mqa"};

// ---------------------------------------------------------------------------------------------
// 1. Three GPTs that differ only in their key/value heads.

struct Trained {
  std::vector<KvSharingRun> runs;  // 4, 2 and 1 key/value heads
  std::vector<Index> probe;        // the opening of the first validation entry, a context long
};

Trained train_three(const Corpus& c, const KvSettings& r) {
  const nn::CausalLMConfig gpt = fortunes_gpt_config(c.vocab.size(), {r.d_model, r.heads, r.layers, r.context});
  const WindowPlan plan{r.context, r.batch, r.steps, 1, seed() + 201};
  Recipe recipe;
  recipe.label = "GPT", recipe.seed = seed(), recipe.batch = r.batch, recipe.lr = r.lr, recipe.weight_decay = 0.1;
  recipe.beta2 = 0.99, recipe.warmup = 0.1, recipe.floor = 0.05;
  say("The model is lesson 11's GPT (pre-norm layers, rotary positions, the output tied to the embedding; "
      "lessons/kit/fortunes_gpt), on lesson 11's corpus and split: ", c.split.train.size(), " fortune-cookie entries "
      "train it, ", c.split.validation.size(), " held out score it, ", c.vocab.size(), " tokens in all. Three of them, "
      "smaller than lesson 11's so that one run trains all three: ", counted(r.layers, "layer"), ", $d_{\\text{model}} = ",
      r.d_model, "$, ", r.heads, " query heads of $d_k = ", r.d_model / r.heads, "$, ", r.steps, " steps of ", r.batch,
      " windows of ", r.context, " characters: ", describe(recipe, fit_steps(std::size_t(r.steps) * r.batch, recipe)),
      ". They start from the same seed and read the same windows; they differ only in how many key/value heads their "
      "attention has: 4 (one per query head, as in lesson 11), 2 and 1. Sections 2 and 3 generate with the first; "
      "section 4 compares the three.");
  Trained t{{}, data::opening(c.validation.front(), r.context)};
  for (std::size_t kv : kKvHeads)
    t.runs.push_back(train_kv_sharing(gpt, kv, seed() + 200, c.stream, c.validation, plan, recipe, t.probe,
                                      r.speed_rounds));
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < t.runs.size(); ++i) {
    const KvSharingRun& run = t.runs[i];
    const double seconds = run.history.seconds;  // a tenth where a quick run trains in under a second
    rows.push_back(row(kNames[i], run.measured.kv_heads, run.measured.parameters, fixed(seconds, seconds < 10 ? 1 : 0)));
    timing("train_seconds_" + kKeys[i], run.history.seconds);
  }
  table({"attention", "key/value heads", "parameters", "training seconds"}, rows);
  config({{"d_model", r.d_model}, {"heads", r.heads}, {"layers", r.layers}, {"context", r.context},
          {"batch", r.batch}, {"steps", r.steps}, {"peak_lr", r.lr}, {"train_entries", c.split.train.size()},
          {"validation_entries", c.split.validation.size()}, {"split_seed", kFortunesSplitSeed}});
  return t;
}

// ---------------------------------------------------------------------------------------------
// 2. Generating: one character at a time.

void generating(GPT& gpt, const Corpus& c, const KvSettings& r) {
  say("To generate, the model predicts a distribution over the next character, one is drawn, appended, and the "
      "model is asked again. The temperature $T$ divides the logits $z$ before the softmax, so character $i$ is drawn "
      "with probability $\\mathrm{softmax}(z / T)_i = e^{z_i / T} / \\sum_j e^{z_j / T}$: $T < 1$ sharpens the "
      "distribution toward the likeliest characters (safer, duller), $T = 1$ samples the model as trained, and top-$k$ "
      "keeps only the $k$ likeliest. Each sample starts from <bos> and ends at the model's <eos> (or after ",
      r.sample_chars, " characters); every setting draws with the same random numbers. The GPT with 4 key/value heads:");
  struct Setting {
    double temperature;
    std::size_t top_k;
  };
  for (const Setting& s : std::vector<Setting>{{0.5, 0}, {0.8, 0}, {1.0, 0}, {1.0, 5}}) {
    lm::SampleOptions o;
    o.temperature = s.temperature, o.top_k = s.top_k, o.max_tokens = r.sample_chars;
    Generator gen(seed() + 50);
    std::string block;
    for (int i = 0; i < 2; ++i) {
      std::vector<Index> out = lm::sample(gpt, {Vocab::bos}, Vocab::eos, o, gen);
      if (!out.empty() && out.back() == Vocab::eos) out.pop_back();
      block += (i ? "\n---\n" : "") + data::char_text(c.vocab, out);
    }
    say(s.top_k ? text("T = ", s.temperature, ", top-k = ", s.top_k, ":") : text("T = ", s.temperature, ":"));
    verbatim(block);
  }
  say("Each of those characters was one more trip through the model. The next section asks what one trip costs.");
}

// ---------------------------------------------------------------------------------------------
// 3. What each new token costs, and the KV cache.

void what_a_token_costs(GPT& gpt, const std::vector<Index>& probe, const KvSettings& r) {
  const std::size_t last = probe.size() - 1;  // the longest prefix: the next token is the context's last
  say("Asked naively, the model reads the whole text again for every new character: the one after ", last,
      " costs a forward pass over ", last + 1, " positions, and generating ", last, " characters processes 1 + 2 + ... + ", last,
      " = ", last * (last + 1) / 2, " positions. But position $t$ looks only left, so its keys and values in every "
      "layer never change once computed. The KV cache keeps them: a new character runs one position through the "
      "model, its query against the cached keys, and appends its own key and value. The counted work of the next "
      "character's matrix products (2 m n k operations each, core/runtime/flops), after n characters:");
  std::vector<std::size_t> sizes;
  for (std::size_t n = 1; n < last; n *= 2) sizes.push_back(n);
  sizes.push_back(last);
  std::vector<std::vector<std::string>> rows;
  NextTokenFlops at_last;
  for (std::size_t n : sizes) {
    const NextTokenFlops f = next_token_flops(gpt, probe, n);
    rows.push_back(row(n, fixed(f.without_cache / 1e6, 3), fixed(f.with_cache / 1e6, 3),
                       fixed(f.without_cache / f.with_cache, 1)));
    at_last = f;
  }
  table({"characters before", "MFLOP, whole prefix again", "MFLOP, through the cache", "ratio"}, rows);
  const double ratio = at_last.without_cache / at_last.with_cache;
  metric("next_token_mflop_no_cache_last", at_last.without_cache / 1e6);
  metric("next_token_mflop_cache_last", at_last.with_cache / 1e6);
  metric("next_token_flop_ratio_last", ratio);
  claim({"cache_work_is_one_position", "next_token_flop_ratio_last > 0.5 * positions",
         text("After ", last, " characters the next costs ", fixed(at_last.without_cache / 1e6, 2), " MFLOP of products "
              "run again from the start, ", fixed(at_last.with_cache / 1e6, 3), " through the cache: ", fixed(ratio, 1),
              " times less, near the ", last + 1, " positions the naive pass repeats (the cached position still scores "
              "all ", last + 1, " keys)."),
         text("After ", last, " characters the cache saves only a factor of ", fixed(ratio, 1), " in counted work (",
              fixed(at_last.without_cache / 1e6, 2), " against ", fixed(at_last.with_cache / 1e6, 3), " MFLOP), far from "
              "the ", last + 1, " positions the naive pass repeats."),
         Expect::every_run, {{"positions", double(last + 1)}}});

  // The same two ways timed, at each n, the memory of each counted, and the cache checked against
  // the full forward.
  const std::vector<CostCurve> cost = next_token_costs(gpt, probe, sizes, r.speed_rounds);
  const std::vector<double> held = kv_cache_bytes_held(gpt, probe, sizes);
  const std::size_t kv = gpt.config().layer.kv_heads ? gpt.config().layer.kv_heads : r.heads, dk = r.d_model / r.heads;
  const double per_token = 2.0 * double(r.layers * kv * dk * sizeof(float));
  const double held_per_token = (held.back() - held.front()) / double(last - sizes.front());
  const double again_mib = cost[0].peak_mib.back(), call_mib = cost[1].peak_mib.back(), cache_mib = held.back() / kMiB;
  metric("kv_cache_held_bytes_last", held.back());
  metric("kv_cache_held_bytes_per_token", held_per_token);
  metric("next_token_peak_mib_no_cache_last", again_mib);
  metric("next_token_peak_mib_cache_first", cost[1].peak_mib.front());
  metric("next_token_peak_mib_cache_last", call_mib);
  save_figure(next_token_figure(cost, held, "What the next character costs after n characters, with and without the KV cache"),
              "next_token_cost",
              text("The next character after n characters: the whole prefix run again against one position through "
                   "the cache. Left, its CPU time (median of ", r.speed_rounds, " rounds, this run's: it moves with the "
                   "machine's load), dashed a line growing like n. Right, memory counted by the allocator: the most "
                   "each call holds at once beyond what was held when it began, and for the cached way the cache it "
                   "reads as well; the cache alone, with a dashed line growing like n."));
  claim({"cache_memory_grows_like_n", "kv_cache_held_bytes_per_token == per_token",
         text("The price is memory held between characters, and it grows like n: counted by the allocator, the cache "
              "holds ", fixed(held.front(), 0), " bytes after ", sizes.front(), " character and ", fixed(held.back(), 0),
              " after ", last, ", ", fixed(held_per_token, 0), " bytes for each character more: $2 \\cdot ", r.layers,
              " \\cdot ", kv, " \\cdot ", dk, " \\cdot 4 = ", fixed(per_token, 0), "$, a key and a value of every "
              "head in every layer. Run again, the whole prefix keeps no cache between characters, but each call needs ",
              fixed(again_mib, 3), " MiB at its peak after ", last, " characters; through the cache, the call needs ",
              fixed(call_mib, 3), " MiB beyond the ", fixed(cache_mib, 3), " MiB of cache (", fixed(cost[1].peak_mib.front(), 3),
              " after one character)."),
         text("The cache counted by the allocator grows by ", fixed(held_per_token, 1), " bytes a character (",
              fixed(held.front(), 0), " after ", sizes.front(), ", ", fixed(held.back(), 0), " after ", last, "), not the ",
              fixed(per_token, 0), " of a key and a value of every head in every layer."),
         Expect::every_run, {{"per_token", per_token}}});
  const double without_ms = cost[0].cpu_ms.back(), with_ms = cost[1].cpu_ms.back();
  timing("next_token_ms_no_cache_last", without_ms);
  timing("next_token_ms_cache_last", with_ms);
  const double diff = lm::cache_max_diff(gpt, probe);
  metric("kv_cache_max_diff", diff);
  const GenerationSpeed speed = generation_speed(gpt, Vocab::bos, last, r.speed_rounds);
  say("Timed (", r.speed_rounds, " rounds, medians, batch of one): after ", last, " characters the next takes ",
      fixed(without_ms, 3), " ms of CPU again from the start and ", fixed(with_ms, 3), " ms through the cache. Generating ",
      last, " characters from <bos>: ", fixed(speed.with_cache, 0), " characters a second with the cache, ",
      fixed(speed.without_cache, 0), " without, a ratio of ", fixed(speed.ratio(), 1), ", where the positions processed "
      "fall by a factor of ", fixed(double(last + 1) / 2, 1), ". Where the time falls less than the work, the reasons "
      "are these: a one-row product cannot keep the vector units busy, and every call's fixed costs (dispatch, "
      "allocation, the layer norms, the softmax, drawing the character) are paid per character either way; the "
      "larger the model and the longer the text, the more the products are the time. The times are this run's and "
      "move with the machine's load.");
  timing("generate_chars_per_second_cache", speed.with_cache);
  timing("generate_chars_per_second_no_cache", speed.without_cache);
  timing("kv_cache_speedup", speed.ratio());
  claim({"kv_cache_exact", "kv_cache_max_diff <= 1e-4",
         text("And it is exact: fed one character at a time through the cache, the GPT gives the logits of the full "
              "forward over the ", probe.size(), " characters to ", sci(diff), ", float rounding (the products summed "
              "in another order)."),
         text("Fed one character at a time through the cache, the GPT's logits differ from the full forward's by ",
              sci(diff), ", more than float rounding: the cache is not exact.")});
  plots::Figure fig(1500, 1000);
  fig.title(text("Generating ", last, " characters, batch of one"));
  bar_panel(fig.panel(0).ylabel("characters per second"), {"with the KV cache", "without (whole prefix again)"},
            {{"", {speed.with_cache, speed.without_cache}}}, 0);
  save_figure(fig, "kv_cache_speed", "Generation speed with and without the KV cache, measured in this run.");
}

// ---------------------------------------------------------------------------------------------
// 4. Sharing keys and values: multi-query and grouped-query attention.

void sharing_keys_and_values(Trained& t, const KvSettings& r) {
  const std::size_t dk = r.d_model / r.heads;
  say("What the cache costs is memory: every layer keeps a key and a value of $d_k$ numbers per head per token, and "
      "for a batch of long texts that cache, not the weights, fills the memory, and reading it is the cost of each new "
      "token. Multi-query attention (Shazeer 2019) keeps one key head and one value head, shared by all the query "
      "heads; grouped-query attention (Ainslie et al. 2023, used by many recent open models) keeps $g$ of them, each "
      "read by a group of $h/g$ query heads. A float cache then holds $2 \\cdot \\text{layers} \\cdot g \\cdot d_k \\cdot 4$ "
      "bytes a token: $2 \\cdot ", r.layers, " \\cdot g \\cdot ", dk, " \\cdot 4$ here. In the backward pass a shared key or "
      "value head gets the sum of the gradients of the query heads in its group. The three GPTs of section 1: the "
      "bytes measured on the cache after ", t.probe.size(), " characters, the bits on all the validation entries, the "
      "speed generating ", r.context - 1, " characters with the cache, the three timed in turn in each of ",
      r.speed_rounds, " rounds (medians; this run's, they move with the machine's load).");
  std::vector<GPT*> models;
  for (KvSharingRun& run : t.runs) models.push_back(run.model.get());
  const std::vector<double> speed = cached_generation_speeds(models, Vocab::bos, r.context - 1, r.speed_rounds);
  std::vector<std::vector<std::string>> rows;
  std::vector<double> bytes, bits;
  for (std::size_t i = 0; i < t.runs.size(); ++i) {
    const KvSharing& s = t.runs[i].measured;
    rows.push_back(row(kNames[i], s.kv_heads, s.parameters, fixed(s.bytes_per_token, 0), fixed(s.validation_bpc, 3),
                       fixed(speed[i], 0)));
    bytes.push_back(s.bytes_per_token), bits.push_back(s.validation_bpc);
    metric("kv_cache_bytes_per_token_" + kKeys[i], s.bytes_per_token);
    metric("kv_val_bpc_" + kKeys[i], s.validation_bpc);
    timing("kv_generate_chars_per_second_" + kKeys[i], speed[i]);
  }
  table({"attention", "key/value heads", "parameters", "KV-cache bytes per token", "validation bits / char",
         "characters a second (cache)"}, rows);
  const auto plus = [](double d) { return text(d >= 0 ? "+" : "", fixed(d, 3)); };
  metric("gqa_minus_mha_bpc", bits[1] - bits[0]);
  metric("mqa_minus_mha_bpc", bits[2] - bits[0]);
  claim({"kv_cache_shrinks", "kv_cache_bytes_per_token_mha == 2 * kv_cache_bytes_per_token_gqa and "
         "kv_cache_bytes_per_token_mha == 4 * kv_cache_bytes_per_token_mqa",
         text("The cache shrinks with the key/value heads, measured: ", fixed(bytes[0], 0), " bytes a token with 4, ",
              fixed(bytes[1], 0), " with 2, ", fixed(bytes[2], 0), " with 1."),
         text("The measured cache does not shrink in proportion: ", fixed(bytes[0], 0), ", ", fixed(bytes[1], 0), " and ",
              fixed(bytes[2], 0), " bytes a token.")});
  claim({"gqa_keeps_quality", "gqa_minus_mha_bpc < 0.05",
         text("Halving the key/value heads costs little: grouped-query attention scores ", fixed(bits[1], 3),
              " bits per character against multi-head attention's ", fixed(bits[0], 3), " (", plus(bits[1] - bits[0]),
              "), with half the cache."),
         text("Halving the key/value heads costs ", fixed(bits[1] - bits[0], 3), " bits per character here (",
              fixed(bits[1], 3), " against ", fixed(bits[0], 3), "): at this size every head's keys matter."),
         Expect::either_way});
  claim({"mqa_cost", "mqa_minus_mha_bpc < 0.05",
         text("Even one shared key/value head stays close: multi-query attention scores ", fixed(bits[2], 3), " (",
              plus(bits[2] - bits[0]), " against multi-head), with a quarter of the cache."),
         text("One shared key/value head costs more: multi-query attention scores ", fixed(bits[2], 3), ", ",
              fixed(bits[2] - bits[0], 3), " bits behind multi-head, for a quarter of the cache."),
         Expect::either_way});
  say("Why the speeds tell little here: with a batch of one and ", r.context, " characters the multi-head cache holds ",
      fixed(bytes[0] * double(r.context) / 1024, 1), " KiB in all, read in no time; the model's matrix products and "
      "each call's fixed costs set the pace, and sharing saves only the key and value projections' share of them. "
      "Sharing pays where the cache is large (long texts, big batches, memory bandwidth the limit), and a cache a "
      "quarter the size lets four times as many texts be served at once.");
  plots::Figure fig(2400, 1000, 1, 3);
  fig.title("Sharing keys and values: the cache it saves, the bits it costs, the speed");
  const std::vector<std::string> short_names{"MHA (4)", "GQA (2)", "MQA (1)"};
  bar_panel(fig.panel(0).title("KV cache").ylabel("bytes per token"), short_names, {{"", bytes}}, 0);
  bar_panel(fig.panel(1).title("Held-out loss").ylabel("validation bits per character"), short_names,
            {{"", bits}}, 3);
  bar_panel(fig.panel(2).title("Generation").ylabel("characters per second"), short_names, {{"", speed}}, 0);
  save_figure(fig, "kv_sharing",
              text("Three GPTs of ", counted(r.layers, "layer"), " and 4 query heads with 4, 2 and 1 key/value heads (in "
                   "brackets): the KV cache measured per token, bits per character on all the validation entries after ",
                   r.steps, " steps, and characters a second generated with the cache in this run."));
}

// The attention explorer (lessons/kit/explorer.hpp): the three GPTs side by side on the held-out
// opening of section 3, each model's layers in turn; the query heads that share a key/value head
// grouped on the page.
void explore_the_three(Trained& t, const Corpus& c) {
  const std::vector<std::string> short_names{"MHA, 4 key/value heads", "GQA, 2 key/value heads", "MQA, 1 key/value head"};
  const std::string name = "\"" + data::char_text(c.vocab, t.probe) + "\"";
  std::vector<std::pair<std::string, AttentionInput>> models;
  for (std::size_t i = 0; i < t.runs.size(); ++i)
    models.emplace_back(short_names[i], causal_lm_attention_input(*t.runs[i].model, c.vocab, t.probe, name));
  ExplorerPage page{"Lesson 12: four query heads, and the key/value heads they share", "characters (queries)",
                    "characters (keys)",
                    text("The three GPTs of section 4 reading the first ", t.probe.size() - 1, " characters of the first "
                         "validation entry after <bos>; each model's layers in turn in the layer selector. Every model has "
                         "4 query heads; multi-head attention gives each its own key/value head, grouped-query attention "
                         "lets heads 1-2 and 3-4 share one each, multi-query attention all four share one. The heads that "
                         "share a key/value head are grouped in the head selector, the readout and the model view: their "
                         "keys are the same vectors (the neuron view shows it), only their queries differ, which is all "
                         "that lets them look at different characters."),
                    {side_by_side(name, models)}};
  show_explorer(page, "explorer",
                "The attention explorer: the three GPTs on a held-out entry, the query heads that share a key/value "
                "head grouped; click a character to see its scores split into query-key products");
}

}  // namespace

int main(int argc, char** argv) {
  LessonInfo info{"12_kv_cache", "Generating text, the KV cache, and sharing keys and values",
                  "sampling from a GPT, what each new character costs with and without the KV cache, and multi-query "
                  "and grouped-query attention",
                  "mqa_minus_mha_bpc", "kv_sharing", {}};
  return run_lesson(info, argc, argv, [] {
    const KvSettings r = settings_of_run();
    section("1. Three GPTs that differ only in their key/value heads");
    const Corpus corpus = load_fortunes_corpus(r.train_entries, r.held_out_entries);
    Trained t = train_three(corpus, r);

    section("2. Generating, one character at a time");
    generating(*t.runs[0].model, corpus, r);

    section("3. What each new character costs, and the KV cache");
    what_a_token_costs(*t.runs[0].model, t.probe, r);

    section("4. Sharing keys and values: multi-query and grouped-query attention");
    sharing_keys_and_values(t, r);
    explore_the_three(t, corpus);
  });
}
