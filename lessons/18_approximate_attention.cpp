// Lesson 18: approximate attention.
//
// Lesson 17 computed exact attention in linear memory. The approximations here change the function
// to change the cost, and each keeps one structure of the attention matrix and drops the rest:
// local attention keeps a band around the diagonal, linear attention a smooth kernel phi(q).phi(k)
// in place of e^(q.k), Linformer a projection of the keys and values along the sequence to a few
// rows (a low-rank matrix). We measure each one's output error on three kinds of attention, look
// at the singular values of trained attention to see when a fixed projection can work, measure
// time and memory against n, and train each on a long-sequence lookup task to see what it costs in
// accuracy.
#include <algorithm>
#include <map>
#include <string>

#include "lessons/kit/approximations.hpp"
#include "lessons/kit/attention_spectra.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/recall_explorer.hpp"
#include "lessons/kit/recall_training.hpp"
#include "nn/attention/structure.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/recall.hpp"
#include "nn/recall_model.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;
using nn::AttentionKind;

namespace {

constexpr std::size_t kD = 64;     // the head width of every measurement and of the model
constexpr std::size_t kBand = 64;  // local attention's window and Linformer's rank, in sections 1 and 3

// ---------------------------------------------------------------------------------------------
// 1. Three approximations.

// Queries and keys made of position codes (nn::banded_queries_keys): q_i = k_i = a PE(i) (sinusoidal,
// d = 64), so q_i . k_j depends on i - j alone and is largest at i = j. The sharpness a sets the width
// of the band the attention forms around the diagonal: broad and smooth for small a, a few tokens
// wide for large a.
struct Family {
  std::string name, key;
  double sharpness;  // 0: iid normal queries and keys
};
const std::vector<Family> kFamilies = {{"iid normal q, k", "random", 0.0},
                                       {"broad band (q = k = 0.75 PE)", "broad", 0.75},
                                       {"narrow band (q = k = 2 PE)", "narrow", 2.0}};

// The errors of the approximations (lessons/kit/approximations) on one family at length n.
ApproximationErrors errors_of(double sharpness, std::size_t n, const Array<float>& v, Generator& gen) {
  const auto [q, k] = nn::banded_queries_keys(n, kD, sharpness, gen);
  return approximation_errors(q, k, v, kBand);
}

void three_approximations() {
  say("Exact attention gives query $i$ the output $o_i = \\sum_j e^{q_i \\cdot k_j} v_j / \\sum_j e^{q_i \\cdot k_j}$ "
      "(scores scaled by $1/\\sqrt{d}$ throughout), $n^2$ terms in all. Three ways to make fewer:");
  say("$$\\text{local:}\\ \\ o_i = \\frac{\\sum_{|i - j| \\le w} e^{q_i \\cdot k_j} v_j}{\\sum_{|i - j| \\le w} "
      "e^{q_i \\cdot k_j}}, \\qquad \\text{linear:}\\ \\ o_i = \\frac{\\phi(q_i)^\\top \\sum_j \\phi(k_j)\\, v_j^\\top}"
      "{\\phi(q_i)^\\top \\sum_j \\phi(k_j)}, \\qquad "
      "\\text{Linformer:}\\ \\ O = \\mathrm{softmax}\\big(Q (EK)^\\top\\big)\\,FV.$$");
  say("Local attention (Longformer's sliding window) keeps the keys within $w$ positions of the query: $(2w + 1)\\,n$ "
      "terms. Linear attention (Katharopoulos et al. 2020) replaces $e^{q \\cdot k}$ by $\\phi(q) \\cdot \\phi(k)$ with "
      "$\\phi(x) = \\mathrm{elu}(x) + 1$; the sums over $j$ then no longer depend on $i$: one $d \\times d$ state and "
      "one $d$-vector, computed once, $O(n d^2)$ work. Linformer (Wang et al. 2020) mixes the $n$ keys and values into "
      "$r$ rows with $r \\times n$ matrices $E$ and $F$: weights $n \\times r$. Here $w = r = ", kBand, "$; $E$ and $F$ "
      "start (and here stay, untrained) at segment means: row $r$ averages the $r$-th of ", kBand, " equal stretches of "
      "positions.");
  const std::size_t n = full_or_quick<std::size_t>(2048, 512);
  Generator gen(seed() + 41);
  const Array<float> v = random_normal<float>({1, n, kD}, gen);
  const char* short_names[] = {"local", "linear", "linformer"};
  const std::string op_names[] = {text("local, window ", kBand), "linear", text("Linformer, rank ", kBand)};
  std::vector<std::vector<std::string>> rows;
  for (const std::string& name : op_names) rows.push_back(row(name));
  std::map<std::string, double> e;  // "local_broad" -> error
  for (const Family& f : kFamilies) {
    const ApproximationErrors r = errors_of(f.sharpness, n, v, gen);
    const double errors[] = {r.local, r.linear, r.linformer};
    for (std::size_t i = 0; i < 3; ++i) {
      rows[i].push_back(fixed(errors[i], 3));
      e[text(short_names[i], "_", f.key)] = errors[i];
      metric(text("output_error_", short_names[i], "_", f.key), errors[i]);
    }
  }
  say("Each against exact attention on the same inputs, $n = ", n, "$, $d = ", kD, "$, $V$ normal: the error "
      "$\\|O - O_{\\text{exact}}\\| / \\|O_{\\text{exact}}\\|$ on three kinds of queries and keys. iid normal ones "
      "give weights with no pattern; position codes $q_i = k_i = a\\,\\mathrm{PE}(i)$ (sinusoidal, lesson 05) make "
      "$q_i \\cdot k_j$ depend on $i - j$ alone, a band around the diagonal, broad and smooth for a small sharpness "
      "$a$, a few tokens wide for a large one.");
  std::vector<std::string> header = {"approximation"};
  for (const Family& f : kFamilies) header.push_back("error, " + f.name);
  table(header, rows);
  claim({"local_keeps_the_band", "output_error_local_narrow <= 0.05 and output_error_local_broad >= 1",
         text("Local attention is exact once the band fits in its window (error ", fixed(e["local_narrow"], 3),
              " on the narrow band) and far off while the band is broad (", fixed(e["local_broad"], 2), "): it drops "
              "every key beyond ", kBand, " positions. An error above 1 is larger than the output itself: a broad "
              "exact output averages many values towards 0, the local one only a few."),
         text("Local attention's error is ", fixed(e["local_narrow"], 3), " on the narrow band and ",
              fixed(e["local_broad"], 2), " on the broad one: not the clean split expected of a band that fits its "
              "window against one that does not.")});
  claim({"smooth_approximations_keep_the_broad_band",
         "output_error_linformer_broad <= 0.25 and output_error_linear_broad <= 0.45 and "
         "output_error_linformer_narrow >= 0.5 and output_error_linear_narrow >= 0.5",
         text("Linformer and linear attention are the reverse: close on the broad band (", fixed(e["linformer_broad"], 3),
              " and ", fixed(e["linear_broad"], 3), "), whose attention is low-rank and smooth in position, and far off "
              "on the narrow one (", fixed(e["linformer_narrow"], 2), " and ", fixed(e["linear_narrow"], 2), "), which "
              "a few pooled summaries cannot resolve and whose weights $\\phi(q) \\cdot \\phi(k)$, positive and smooth "
              "in $q$ and $k$, cannot concentrate."),
         text("Linformer and linear attention do not split the two bands cleanly here: errors ",
              fixed(e["linformer_broad"], 3), " and ", fixed(e["linear_broad"], 3), " on the broad band, ",
              fixed(e["linformer_narrow"], 2), " and ", fixed(e["linear_narrow"], 2), " on the narrow one.")});
  claim({"iid_defeats_all",
         "min(output_error_local_random, min(output_error_linear_random, output_error_linformer_random)) >= 0.5",
         text("On iid queries and keys, whose weights follow no pattern, all three are far off (",
              fixed(e["local_random"], 2), ", ", fixed(e["linear_random"], 2), ", ", fixed(e["linformer_random"], 2),
              "): no approximation wins everywhere; each keeps one structure."),
         text("On iid queries and keys the errors are ", fixed(e["local_random"], 2), ", ", fixed(e["linear_random"], 2),
              " and ", fixed(e["linformer_random"], 2), ": one of them stays close even without a pattern.")});
  say("The figure sweeps the sharpness $a$ from broad to narrow: the errors on the left, and on the right what the "
      "exact attention looks like, the share of its weight within local attention's window and the share of its "
      "energy $\\sum_{ij} P_{ij}^2$ that Linformer's segment means keep.");
  const std::vector<double> sharpness = {0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0};
  std::vector<ApproximationErrors> sweep;
  for (double a : sharpness) sweep.push_back(errors_of(a, n, v, gen));
  save_figure(error_sweep_figure(sharpness, sweep, n, kBand), "errors_by_sharpness",
              "Left: output error of local, linear and Linformer attention against exact attention as the band of "
              "attention narrows. Right: the share of the exact weights within local attention's window, and the "
              "share of their energy the segment means (Linformer's untrained E) keep");
}

// ---------------------------------------------------------------------------------------------
// 2. The spectrum of attention matrices (on the recall task, which section 4 trains every attention on).

RecallTask make_task() {  // length, keys, values, pairs; the window and rank: an eighth of the length
  const data::RecallConfig c = {full_or_quick<std::size_t>(512, 128), 64, 16, full_or_quick<std::size_t>(32, 16)};
  return make_recall_task(c, full_or_quick<std::size_t>(1024, 512), full_or_quick<std::size_t>(512, 256), c.length / 8,
                          seed() + 5);
}

Recipe recall_recipe(const std::string& label) {
  Recipe r;
  r.label = label, r.epochs = epochs(8, 4), r.batch = 32, r.seed = seed() + 3;
  r.lr = 3e-3, r.warmup = 0.05, r.decay = Decay::cosine, r.floor = 0.05, r.clip = 1.0;  // Adam: no weight decay
  return r;
}

// Every attention from the same weights and by the same recipe (lessons/kit/recall_training.hpp).
RecallRun trained_on(const RecallTask& task, const std::string& name, AttentionKind kind) {
  return train_recall(task, name, kind, kD, recall_recipe(name), seed() + 9);
}

RecallRun low_rank(const RecallTask& task) {
  const data::RecallConfig& c = task.config;
  say("The task (nn/data/recall.hpp): multi-query associative recall. A sequence of ", c.length, " tokens; each shows "
      "a key (", c.keys, " possible) and a value (", c.values, " possible). The first half holds ", c.pairs, " facts "
      "\"key $k$ has value $v$\" with distinct keys at random places, fillers in between; the second half asks for each "
      "fact once, in random order and at random places, by showing its key with no value. The model must answer each "
      "question with the value: a lookup by content across up to the whole sequence. Chance is 1/", c.values, " = ",
      fixed(1.0 / double(c.values), 4), ". ", task.train.size(), " training sequences, ", task.held_out.size(), " held-out "
      "ones (every accuracy is on those). The model (nn/recall_model.hpp) is one attention layer of width ", kD,
      ": embeddings of the key and of the value, added; $q$, $k$ and $v$ projections; attention; a linear read-out of "
      "the value. No positions.");
  RecallRun exact = trained_on(task, "exact (tiled)", AttentionKind::exact);
  say("Exact attention (the tiled op of lesson 17) first. Training: ",
      describe(recall_recipe("exact"), fit_steps(task.train.size(), recall_recipe("exact"))), ". Its held-out "
      "accuracy: ", fixed(exact.accuracy, 3), ". Then its attention matrices, and the question behind Linformer: is an "
      "attention matrix close to one of low rank?");
  const std::size_t n = task.config.length, count = 4;
  const data::Recall some = task.held_out.rows(data::first_rows(count));
  Generator init_gen(seed() + 9);
  const nn::RecallModel untrained(task.config, AttentionKind::exact, kD, task.band, init_gen);
  Generator gen(seed() + 31);
  std::vector<NamedSpectrum> spectra = {
      named_spectrum("trained on recall", leading_matrices(exact.model->exact_weights(some), count), task.band),
      named_spectrum("same model, untrained", leading_matrices(untrained.exact_weights(some), count), task.band)};
  for (const Family& f : kFamilies)
    spectra.push_back(named_spectrum(f.name, banded_attention_matrices(n, kD, f.sharpness, count, gen), task.band));
  std::vector<std::vector<std::string>> rows;
  for (const NamedSpectrum& sp : spectra)
    rows.push_back(row(sp.name, fixed(sp.summary.rank_for_share, 1), percent(sp.summary.share_in_rank, 1),
                       percent(sp.segment_share, 1)));
  say("The energy of a matrix is the sum of its squared entries, $\\|P\\|_F^2 = \\sum_r \\sigma_r^2$, so the best "
      "rank-$r$ approximation (keep the $r$ largest singular values) keeps the share of the $r$ largest. The last "
      "column asks a harder question: how much survives a projection fixed in advance, the same for every input, as "
      "Linformer's $E$ is once trained (here its starting point, ", task.band, " segment means)?");
  table({"attention matrix ($n = " + rounded(double(n)) + "$)", "rank for 90 % of the energy",
         text("energy in the best rank ", task.band), text("energy kept by ", task.band, " segment means")},
        rows);
  const NamedSpectrum &trained = spectra[0], &broad = spectra[3], &narrow = spectra[4];
  const double r_trained = trained.summary.rank_for_share, kept = trained.summary.share_in_rank;
  metric("rank90_share_trained_recall", r_trained / double(n));  // as a share of the full rank n
  metric("rank90_share_broad", broad.summary.rank_for_share / double(n));
  metric("rank90_share_narrow", narrow.summary.rank_for_share / double(n));
  metric("best_rank_share_trained_recall", kept);
  metric("segment_share_trained_recall", trained.segment_share);
  metric("segment_share_broad", broad.segment_share);
  const std::string measured = text("The trained matrices need ", fixed(r_trained, 0), " singular values for 90 % of "
                                    "their energy (of ", n, "), and the best rank ", task.band, " keeps ",
                                    percent(kept, 1));
  claim({"trained_attention_low_rank", "best_rank_share_trained_recall >= 0.95 and rank90_share_trained_recall <= 0.15",
         text(measured, ": they attend from every question to one of ", task.config.pairs, " facts, so they have few "
              "independent columns."),
         text(measured, ": not as close to low rank as a lookup of ", task.config.pairs, " facts would make them.")});
  claim({"narrow_band_full_rank", "rank90_share_narrow >= 0.25",
         text("The narrow band needs ", fixed(narrow.summary.rank_for_share, 0), " (the broad one ",
              fixed(broad.summary.rank_for_share, 0), "): a narrow band is close to the identity, which is full rank."),
         text("The narrow band needs only ", fixed(narrow.summary.rank_for_share, 0), " singular values for 90 % of "
              "its energy.")});
  claim({"fixed_projection_keeps_position_not_content",
         "segment_share_broad >= 0.8 and segment_share_trained_recall <= 0.3",
         text("The segment means keep ", percent(broad.segment_share, 0), " of the broad band, whose low-rank "
              "structure is smooth in position, where a fixed projection finds it, and ",
              percent(trained.segment_share, 0), " of the trained recall matrices: those are low-rank too, but their "
              "important columns are the facts, and the facts move with every input. A fixed $E$ cannot follow them."),
         text("The segment means keep ", percent(broad.segment_share, 0), " of the broad band and ",
              percent(trained.segment_share, 0), " of the trained recall matrices: not the split between structure "
              "in position and structure in content.")});
  save_figure(singular_value_figure(spectra, n, task.band), "singular_values",
              "Singular values of attention matrices: trained on the recall task, the same model untrained, iid "
              "queries and keys, a broad and a narrow band; left, each normalized by the largest; right, the "
              "cumulative share of the energy");
  return exact;
}

// ---------------------------------------------------------------------------------------------
// 3. Time and memory against n.

// The sparse patterns (c[6], c[7]) beside the tiled kernel they run on (c[1]) and the window alone (c[2]).
void sparse_costs(const std::vector<CostCurve>& c) {
  const CostCurve &tiled = c[1], &local = c[2], &global = c[6], &stride = c[7];
  const double mask_mib = 4096.0 * 4096.0 / (1024.0 * 1024.0), at_global = global.at(global.peak_mib, 4096);
  const double global_mem = global.last_slope(global.peak_mib), stride_mem = stride.last_slope(stride.peak_mib);
  metric("memory_slope_fixed_global", global_mem);
  metric("memory_slope_strided", stride_mem);
  metric("fixed_global_peak_over_mask_n4096", at_global / mask_mib);
  claim({"patterns_hold_no_mask", "memory_slope_fixed_global <= memory_slope_local + 0.2 and memory_slope_strided <= "
         "memory_slope_local + 0.2 and fixed_global_peak_over_mask_n4096 < 0.5",
         text("The patterns hold no mask: sparse_attention is given the pattern as a description (the window, the "
              "global positions, the stride) and decides each tile's entries from it, so their memory grows like "
              "$n^{", fixed(global_mem, 2), "}$ and $n^{", fixed(stride_mem, 2), "}$, as the window alone's $n^{",
              fixed(local.last_slope(local.peak_mib), 2), "}$: ", fixed(at_global, 1), " MiB for the window + global "
              "tokens at $n = 4096$, where a mask alone would take ", fixed(mask_mib, 0), " MiB ($n^2$ bytes)."),
         text("The patterns' memory grows like $n^{", fixed(global_mem, 2), "}$ and $n^{", fixed(stride_mem, 2), "}$ "
              "(the window alone: $n^{", fixed(local.last_slope(local.peak_mib), 2), "}$), ", fixed(at_global, 1),
              " MiB at $n = 4096$ beside the ", fixed(mask_mib, 0), " MiB of an $n^2$ mask: more than a description "
              "of the pattern should need.")});
  const auto speedup = [&](double n) { return tiled.at(tiled.cpu_ms, n) / global.at(global.cpu_ms, n); };
  const double global_speedup = speedup(4096), speedup_growth = speedup(4096) / speedup(1024),
               stride_ratio = stride.at(stride.cpu_ms, 4096) / tiled.at(tiled.cpu_ms, 4096);
  timing("cpu_time_ratio_tiled_over_fixed_global_n4096", global_speedup);
  timing("cpu_time_ratio_strided_over_tiled_n4096", stride_ratio);
  claim({"global_tokens_skip_tiles", "global_speedup >= 2 and speedup_growth >= 1.5",
         text("In time the block-sparse kernel pays off for the window + global tokens: ", fixed(speedup(1024), 1),
              " times faster than exact attention on the same kernel at $n = 1024$, ", fixed(global_speedup, 1),
              " times at $n = 4096$ (timed in the same rounds): it visits the band's tiles and the global tokens' row "
              "and column of tiles, a number linear in $n$, while exact attention visits $n^2$; which tiles those are "
              "it decides from the pattern, a test per tile."),
         text("In time the window + global tokens ran ", fixed(speedup(1024), 1), " times faster than exact attention "
              "on the same kernel at $n = 1024$ and ", fixed(global_speedup, 1), " times at $n = 4096$: not the "
              "growing saving that skipping all but a band of tiles should give."),
         Expect::either_way, {{"global_speedup", global_speedup}, {"speedup_growth", speedup_growth}}});
  claim({"stride_visits_every_tile", "stride_ratio >= 0.7",
         text("The stride saves nothing: it took ", fixed(stride_ratio, 2), " times exact attention's time at "
              "$n = 4096$. A tile of 64 queries by 32 keys spans 95 offsets $i - j$, one of them a multiple of ", kBand,
              ", so every tile holds an allowed entry: none is skipped, and each is checked entry by entry against "
              "the pattern. A block-sparse kernel needs patterns that empty whole blocks."),
         text("The stride took ", fixed(stride_ratio, 2), " times exact attention's time at $n = 4096$, though every "
              "tile holds an allowed entry (a tile of 64 queries by 32 keys spans 95 offsets, one a multiple of ",
              kBand, ")."),
         Expect::either_way, {{"stride_ratio", stride_ratio}}});
  save_figure(cost_figure({&c[0], &tiled, &local, &global, &stride},
                          {text("Sparse patterns on the block-sparse tiled kernel: forward + backward, d = ", kD),
                           {{0, 2.0}, {3, 1.0}}, {{0, 2.0}, {3, 1.0}}}),
              "time_memory_sparse", "CPU time and peak memory of forward + backward against n for the sparse patterns "
              "beside exact attention (fused and tiled) and the window alone, log-log, with n² and n guides; in "
              "memory the two patterns, tiled and local hold nearly the same bytes, growing like n (the purple line "
              "hides the other three): the patterns are given to the kernel as a description, not a mask");
}

void cost_against_n() {
  const std::vector<std::size_t> sizes =
      full_or_quick(std::vector<std::size_t>{128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768},
                    std::vector<std::size_t>{128, 256, 512, 1024, 2048, 4096});
  CostOptions o;
  o.budget_bytes = 512 * 1024.0 * 1024.0;  // the fused op stops at n = 4096
  o.rounds = [](std::size_t n) { return n <= 1024 ? full_or_quick(7, 3) : n <= 4096 ? full_or_quick(3, 2) : 1; };
  auto fused = [](auto& q, auto& k, auto& v) { return scaled_dot_product_attention(q, k, v).output; };
  const std::vector<CostCurve> c = costs_against_n(
      {attention_cost("fused (lesson 06)", fused, kD),
       attention_cost("tiled (lesson 17)", [](auto& q, auto& k, auto& v) { return tiled_attention(q, k, v); }, kD),
       attention_cost(text("local, window ", kBand), local_fn(kBand), kD), attention_cost("linear", linear_fn(), kD),
       attention_cost("linear, causal", linear_fn(true), kD),
       attention_cost(text("Linformer, rank ", kBand), [](std::size_t n) { return linformer_fn(n, kBand); }, kD),
       attention_cost(text("window + ", nn::kGlobalTokens, " global tokens"),
                      [](std::size_t n) { return sparse_pattern_fn(n, kBand, nn::kGlobalTokens, false); }, kD),
       attention_cost(text("window + stride ", kBand), [](std::size_t n) { return sparse_pattern_fn(n, kBand, 0, true); }, kD)},
      sizes, o);
  say("Forward and backward of each attention on one sequence of $n$ tokens, one head, $d = ", kD, "$, float, the "
      "ops timed in turn (medians of interleaved rounds, CPU time), and the most bytes each holds beyond its inputs, "
      "counted by the allocator (lessons/kit/timing.hpp). The fused op stops at this run's budget of 512 MiB.");
  const CostCurve& fused_c = c[0];
  const CostTable costs = cost_table(c, 0, 4096, double(sizes.back()));
  table(costs.header, costs.rows);
  const char* keys[] = {"fused", "tiled", "local", "linear", "linear_causal", "linformer"};  // metric names
  double worst_ratio = 1e300, worst_slope = 0, least_speedup = 1e300, steepest = 0;
  for (std::size_t i = 2; i < 6; ++i) {  // the four approximations
    const double memory = fused_c.at(fused_c.peak_mib, 4096) / c[i].at(c[i].peak_mib, 4096),
                 speedup = fused_c.at(fused_c.cpu_ms, 4096) / c[i].at(c[i].cpu_ms, 4096);
    metric(text("memory_ratio_fused_over_", keys[i], "_n4096"), memory);
    metric(text("memory_slope_", keys[i]), c[i].last_slope(c[i].peak_mib));
    timing(text("cpu_time_ratio_fused_over_", keys[i], "_n4096"), speedup);
    worst_ratio = std::min(worst_ratio, memory), least_speedup = std::min(least_speedup, speedup);
    worst_slope = std::max(worst_slope, c[i].last_slope(c[i].peak_mib));
    steepest = std::max(steepest, c[i].last_slope(c[i].cpu_ms));
  }
  metric("memory_ratio_fused_over_approximations_n4096", worst_ratio);
  metric("memory_slope_approximations", worst_slope);
  claim({"approximations_linear_memory",
         "memory_ratio_fused_over_approximations_n4096 >= 10 and memory_slope_approximations <= 1.2",
         text("All four hold at least ", fixed(worst_ratio, 1), " times less memory than the fused op at $n = 4096$, and "
              "their memory grows at most like $n^{", fixed(worst_slope, 2), "}$ over the last three sizes: local "
              "attention computes only the tiles of the band ($2w + 1$ keys per query), linear attention keeps a $",
              kD, " \\times ", kD, "$ state instead of the $n \\times n$ weights, Linformer's weights are $n \\times ",
              kBand, "$."),
         text("The approximations hold at least ", fixed(worst_ratio, 1), " times less memory than the fused op at "
              "$n = 4096$, growing up to $n^{", fixed(worst_slope, 2), "}$: not all of them linear here.")});
  const double local_over_tiled = c[2].at(c[2].peak_mib, 4096) / c[1].at(c[1].peak_mib, 4096),
               causal_over_linear = c[4].at(c[4].peak_mib, 4096) / c[3].at(c[3].peak_mib, 4096);
  metric("local_over_tiled_memory_n4096", local_over_tiled);
  metric("causal_over_linear_memory_n4096", causal_over_linear);
  claim({"local_is_tiled_memory",
         "abs(local_over_tiled_memory_n4096 - 1) < 0.01 and abs(causal_over_linear_memory_n4096 - 1) < 0.01",
         "Local attention runs on the tiled kernel and holds exactly what the tiled op holds (its memory line hides "
         "the tiled one); causal linear attention is an RNN, its state updated token by token, and here both forms of "
         "linear attention run that scan and hold the same memory.",
         text("Local attention holds ", fixed(local_over_tiled, 3), " times the tiled op's memory, and causal linear "
              "attention ", fixed(causal_over_linear, 3), " times the non-causal one's.")});
  claim({"approximations_faster", "least_speedup >= 3 and steepest_time_slope <= 1.7",
         text("In time too: each is at least ", fixed(least_speedup, 1), " times faster than the fused op at $n = 4096$ "
              "(measured interleaved), and its CPU time grows at most like $n^{", fixed(steepest, 2), "}$ over "
              "the last three sizes."),
         text("In time the picture is mixed here: the smallest speedup over the fused op at $n = 4096$ is ",
              fixed(least_speedup, 1), ", and the CPU time grows up to $n^{", fixed(steepest, 2), "}$."),
         Expect::every_run, {{"least_speedup", least_speedup}, {"steepest_time_slope", steepest}}});
  sparse_costs(c);
  std::vector<const CostCurve*> all;
  for (std::size_t i = 0; i < 6; ++i) all.push_back(&c[i]);  // the sparse patterns have their own figure
  save_figure(cost_figure(all, {text("Every attention: forward + backward, one head, d = ", kD, " (float)"),
                                {{0, 2.0}}, {{0, 2.0}, {1, 1.0}}}),
              "time_memory_all", "CPU time and peak memory of forward + backward against n for every attention of "
              "lessons 17 and 18, log-log, with n² and n guides");
}

// ---------------------------------------------------------------------------------------------
// 4. Associative recall.

// Returns the trained runs (exact, local, linear, Linformer): section 5 compares against them.
std::vector<RecallRun> recall(const RecallTask& task, RecallRun exact) {
  say("The same model, data and recipe with each approximation in turn: local (window ", task.band, "), linear "
      "($\\mathrm{elu} + 1$, non-causal) and Linformer (rank ", task.band, ", $E$ and $F$ trained with the rest).");
  std::vector<RecallRun> runs;
  runs.push_back(std::move(exact));
  runs.push_back(trained_on(task, text("local, window ", task.band), AttentionKind::local));
  runs.push_back(trained_on(task, "linear", AttentionKind::linear));
  runs.push_back(trained_on(task, text("Linformer, rank ", task.band), AttentionKind::linformer));
  std::vector<std::vector<std::string>> rows;
  for (const RecallRun& t : runs) {
    rows.push_back(row(t.name, fixed(t.accuracy, 3), fixed(t.half, 3), fixed(t.history.median_step_cpu_ms(), 1)));
    metric(text("recall_accuracy_", nn::kind_name(t.kind)), t.accuracy);
    metric(text("recall_accuracy_half_", nn::kind_name(t.kind)), t.half);
    timing(text("recall_step_cpu_ms_", nn::kind_name(t.kind)), t.history.median_step_cpu_ms());
  }
  table({"attention", "held-out accuracy", "after half the epochs", "CPU ms a step (median)"}, rows);
  const double chance = 1.0 / double(task.config.values), exact_acc = runs[0].accuracy, local = runs[1].accuracy,
               linear = runs[2].accuracy, linformer = runs[3].accuracy;
  claim({"exact_solves_recall", "recall_accuracy_exact >= 0.85",
         text("Exact attention answers ", percent(exact_acc, 1), " of the questions."),
         text("Exact attention answers only ", percent(exact_acc, 1), " of the questions in this run.")});
  claim({"local_blind", "recall_accuracy_local <= 2 * chance",
         text("Local attention stays near chance (", fixed(local, 3), ", chance ", fixed(chance, 4), "): it is blind "
              "beyond its window, and almost every fact lies further than ", task.band, " tokens from its question."),
         text("Local attention reaches ", fixed(local, 3), ", above twice chance (", fixed(chance, 4), "): some facts "
              "fall within its window of their question."),
         Expect::every_run, {{"chance", chance}}});
  claim({"linear_recalls", "recall_accuracy_linear >= 0.7",
         text("Linear attention answers most questions (", fixed(linear, 3), "): its memory is one $", kD, " \\times ",
              kD, "$ sum over all tokens, which the ", task.config.pairs, " facts and every filler share, with room for ",
              task.config.pairs, " facts in ", kD, " dimensions."),
         text("Linear attention stays at ", fixed(linear, 3), " in this short run; the full run trains it longer."),
         Expect::full_run});
  const double half_linear = runs[2].half, half_exact = runs[0].half;
  claim({"linear_learns_later", "recall_accuracy_half_linear < recall_accuracy_half_exact - 0.1",
         text("It learns later than exact attention (", fixed(half_linear, 3), " against ", fixed(half_exact, 3),
              " after half the epochs): its weights $\\phi(q) \\cdot \\phi(k)$ are positive and smooth, so singling "
              "one key out takes the projections longer."),
         text("After half the epochs it stands at ", fixed(half_linear, 3), " against exact attention's ",
              fixed(half_exact, 3), "."),
         Expect::full_run});
  claim({"linformer_blind", "recall_accuracy_linformer <= 0.25",
         text("Linformer stays far below (", fixed(linformer, 3), "): it mixes the positions by a projection that is "
              "the same for every input, while the facts sit at new places in every sequence (section 2). An "
              "approximation is a different model, with its own blind spots."),
         text("Linformer reaches ", fixed(linformer, 3), ": trained $E$ and $F$ found some of the facts.")});
  std::vector<Run> curves;
  for (const RecallRun& t : runs) curves.push_back({t.name, &t.history});
  ScoreFigureOptions style{text("Associative recall at n = ", task.config.length, ": held-out accuracy during training")};
  style.chance = chance;
  save_figure(score_against_cost(curves, style), "recall_accuracy",
              "Held-out accuracy on associative recall for exact (tiled), local, linear and Linformer attention, after "
              "every epoch, against training steps and against the CPU seconds spent training");
  say("Exercises (exercises/18_approximate_attention.cpp, graded by scripts/grade.sh 16): 16.1 causal linear "
      "attention as an RNN; 16.2 an experiment: choose the approximation for each width of band.");
  return runs;
}

// ---------------------------------------------------------------------------------------------
// 5. Sparse patterns: which tokens may see far

// Beside the runs of section 4 (exact, local, linear, Linformer); all but Linformer in the explorer.
void sparse_patterns(const RecallTask& task, const std::vector<RecallRun>& approx) {
  const std::size_t L = task.config.length, w = task.band;
  const double exact_acc = approx[0].accuracy, local_acc = approx[1].accuracy;
  say("A sparse pattern keeps exact softmax attention but lets each query see only some keys: the window of local "
      "attention, plus a few tokens that see and are seen by every position. BigBird fixes them (here the first ",
      nn::kGlobalTokens, " positions); Longformer gives global attention to the tokens the task is about, such as a "
      "question's. The Sparse Transformer adds every ", w, "-th position back and forth (a stride). The patterns run "
      "on the tiled kernel of lesson 17 (sparse_attention), given as a description rather than a mask: the kernel "
      "decides from the window, the global positions and the stride which entries of each tile a query may see, "
      "and skips every tile the pattern leaves empty: a block-sparse kernel.");
  std::vector<RecallRun> runs;
  runs.push_back(trained_on(task, text("window + ", nn::kGlobalTokens, " fixed global tokens"), AttentionKind::fixed_global));
  runs.push_back(trained_on(task, "window + global asking tokens", AttentionKind::asking_global));
  runs.push_back(trained_on(task, text("window + stride ", w), AttentionKind::strided));
  std::vector<std::vector<std::string>> rows;
  for (const RecallRun& t : runs) {
    rows.push_back(row(t.name, fixed(t.accuracy, 3)));
    metric(text("recall_accuracy_", nn::kind_name(t.kind)), t.accuracy);
  }
  rows.push_back(row("(exact, section 4)", fixed(exact_acc, 3)));
  rows.push_back(row(text("(window ", w, " alone, section 4)"), fixed(local_acc, 3)));
  table({"pattern", "held-out accuracy"}, rows);
  const double fixed_acc = runs[0].accuracy, asking = runs[1].accuracy, strided = runs[2].accuracy;
  const double chance = 1.0 / double(task.config.values);
  claim({"asking_global_recalls", "recall_accuracy_asking_global >= 0.85 and recall_accuracy_asking_global >= "
                                  "recall_accuracy_local + 0.5",
         text("Global attention on the asking tokens recalls like exact attention (", fixed(asking, 3), " against ",
              fixed(exact_acc, 3), "): a question sees every fact, the rest of the sequence only its window.",
              asking == exact_acc ? " The same number, not by chance: the questions are the only positions scored, "
                                    "each sees every key as under exact attention, so both models compute the same loss "
                                    "and train alike; the sparse one skips most of the other rows' work."
                                  : ""),
         text("Global attention on the asking tokens reaches ", fixed(asking, 3), " (exact: ", fixed(exact_acc, 3),
              ", the window alone: ", fixed(local_acc, 3), ").")});
  claim({"fixed_global_blind", "recall_accuracy_fixed_global <= recall_accuracy_local + 0.1",
         text("Fixed global tokens do not help in one layer (", fixed(fixed_acc, 3), ", the window alone ",
              fixed(local_acc, 3), "): a global token reads every fact, but what it read reaches a question only "
              "through a second layer, and this model has one."),
         text("Fixed global tokens lift recall to ", fixed(fixed_acc, 3), " (the window alone: ", fixed(local_acc, 3),
              ")."),
         Expect::every_run});
  claim({"stride_sees_a_share", "recall_accuracy_strided <= 0.5",
         text("The stride sees a fact only when it lies a multiple of ", w, " away from its question: ",
              fixed(strided, 3), ", chance ", fixed(chance, 4), "."),
         text("The stride reaches ", fixed(strided, 3), ", more than the share of facts it can see.")});
  plots::Figure fig(1800, 900);
  fig.title(text("Associative recall at n = ", L, " under sparse patterns (held-out accuracy)"));
  bar_panel(fig.panel(0).xlabel("which keys a query may see").ylabel("accuracy"),
            {"exact", text("window ", w), "+ fixed global", "+ asking global", text("+ stride ", w)},
            {{"held-out accuracy", {exact_acc, local_acc, fixed_acc, asking, strided}}}, 2, 1.15);
  save_figure(fig, "sparse_patterns", "Held-out recall accuracy of exact attention, the window alone, and the window "
                                      "with fixed global tokens, with global attention on the asking tokens, and with a "
                                      "stride");
  show_explorer(recall_explorer(task, {&approx[0], &runs[1], &approx[1], &runs[0], &runs[2], &approx[2]}, 0), "explorer",
                "The attention explorer: each question of a held-out sequence against every token, under exact "
                "attention, global attention on the questions, the window, fixed global tokens, the stride and linear "
                "attention; hover a question to read its weights");
}

}  // namespace

int main(int argc, char** argv) {
  return run_lesson({"18_approximate_attention", "Approximate attention",
                     "Local, linear and Linformer attention: output error on three kinds of attention, the singular "
                     "values of trained attention, time and memory against n, and accuracy on associative recall, with "
                     "sparse patterns (global tokens, a stride) beside them",
                     "recall_accuracy_linear", "recall_accuracy"},
                    argc, argv, [] {
                      config({{"head_dim", kD}, {"window_and_rank", kBand}});
                      section("1. Three approximations");
                      three_approximations();
                      section("2. The spectrum of attention matrices");
                      const RecallTask task = make_task();
                      RecallRun exact = low_rank(task);
                      section("3. Time and memory against n");
                      cost_against_n();
                      section("4. Associative recall");
                      const std::vector<RecallRun> approx = recall(task, std::move(exact));
                      section("5. Sparse patterns: which tokens may see far");
                      sparse_patterns(task, approx);
                    });
}
