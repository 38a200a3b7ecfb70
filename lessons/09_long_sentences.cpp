// Lesson 09: long sentences, and the positions that carry a Transformer past the training lengths.
//
// Lesson 08's Transformer translated held-out sentences of the training lengths almost perfectly
// and lost much of its BLEU on sentences longer than any it trained on, where the GRU with
// attention kept most of its own. Its positions are absolute: past the training lengths it adds
// sinusoids no layer has seen. Lesson 05 showed on a toy task which positional methods extrapolate;
// here the same Transformer, on lesson 08's task with the same batches and first draw, gets its
// positions as distances instead (T5's relative bias, RoPE, ALiBi), and each is scored beside the
// sinusoidal one and the GRU with attention on the sentences longer than any in training: BLEU by
// length, the share of translations cut short, and the cross-attention of the longest sentence.
#include <algorithm>
#include <map>
#include <memory>

#include <xtensor/xview.hpp>

#include "lessons/kit/alignment_grid.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/translation_model.hpp"
#include "lessons/kit/translation_setup.hpp"
#include "lessons/kit/translators.hpp"
#include "nn/data/translation_task.hpp"
#include "nn/positional/alibi.hpp"
#include "nn/positional/relative.hpp"
#include "nn/transformer/seq2seq.hpp"
#include "nn/translate.hpp"
#include "nn/translation_scores.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

using nn::bleu_of;
using nn::mean_words;
using Transformer = nn::Seq2SeqTransformer<float>;
using Task = data::TranslationTask;

// The Transformers with positions as distances, beside lesson 08's sinusoidal one.
struct Variant {
  nn::Positional method;
  std::string name, key;
};
const std::vector<Variant> kVariants = {{nn::Positional::RelativeBias, "Transformer, T5 relative bias", "relative"},
                                        {nn::Positional::Rotary, "Transformer, RoPE", "rope"},
                                        {nn::Positional::ALiBi, "Transformer, ALiBi", "alibi"}};
constexpr std::size_t kBuckets = 32, kMaxDistance = 128;  // nn::Seq2SeqTransformer's T5 table

// Each Transformer with distances trains for this many epochs: twice the plan's in a full run (the
// sinusoidal one and the GRU train for the plan's, as in lesson 08), since after the plan's 5 the
// best of them was still gaining; --quick: fewer, for its 30 seconds. The Noam schedule does not
// depend on the run's length, so after the plan's epochs each is the model a run of that length ends with.
int position_epochs(const TranslationPlan& p) {
  const int e = full_or_quick(2 * p.epochs, std::min(p.epochs, 3));
  config("position_epochs", e);
  return e;
}

// ---------------------------------------------------------------------------------------------
// 1. The question.

void the_question(const Task& t) {
  const auto [shortest, longest_trained] = data::word_range(t.pairs.train);
  const std::size_t longest = data::word_range(t.longer).second;
  say("Lesson 08's task: an English-like source language translated word for word into an invented verb-last one "
      "that mirrors every noun phrase, so that the true alignment of every sentence is known. Every model here trains "
      "on ", t.pairs.train.size(), " sentences of ", shortest, " to ", longest_trained, " source words and is scored "
      "on two held-out splits: ", t.test.size(), " test sentences of the same lengths, and ", t.longer.size(),
      " sentences of ", longest_trained + 1, " to ", longest, " words, longer than any it trained on.");
  say("A Transformer knows where a word is only through its positions. Lesson 08's adds the sinusoid of position $p$ "
      "to the embedding of word $p$: past ", longest_trained, " words every layer reads vectors it never saw in "
      "training. The methods of lesson 05 that extrapolate put only distances into the attention scores, and none "
      "into the embeddings:");
  const std::vector<double> slopes = nn::alibi_slopes(4);
  table({"positions", "what attention adds to the score of query $i$ and key $j$", "learned"},
        {row("sinusoidal (lesson 08)", "nothing: the embedding of word $p$ carries $\\mathrm{PE}(p)$", "no"),
         row("T5 relative bias", "$b_h(\\mathrm{bucket}(j - i))$ from a table of 32 buckets: in the encoder 8 exact "
                                 "distances each way, in the decoder 16 back, then log-spaced buckets up to 128", "yes"),
         row("RoPE", "rotates $q_i$ and $k_j$ by their positions: $q_i^\\top k_j$ depends on $j - i$ alone", "no"),
         row("ALiBi", text("$-m_h\\,|j - i|$, slopes $m_h$ = ", listing({fixed(slopes[0], 4), fixed(slopes[1], 4),
                                                                         fixed(slopes[2], 4), fixed(slopes[3], 4)}),
                           " for 4 heads"), "no")});
  say("The encoder's self-attention has them in both directions, the decoder's over its own past; the "
      "cross-attention has none (as in T5): the decoder finds the source word it needs by what the encoder wrote "
      "there. A learned table can only be as good as its training: a bucket no training sentence reaches keeps its "
      "initial values.");
  // Offsets j - i of sentences up to `n` words reach |j - i| <= n - 1; the decoder reads <bos> and the words.
  const auto encoder = nn::unseen_buckets(longest_trained, longest, kBuckets, kMaxDistance, true);
  const auto decoder = nn::unseen_buckets(longest_trained + 1, longest + 1, kBuckets, kMaxDistance, false);
  metric("relative_unseen_buckets_encoder", double(encoder.size()));
  metric("relative_unseen_buckets_decoder", double(decoder.size()));
  claim({"relative_table_has_untrained_rows", "relative_unseen_buckets_encoder + relative_unseen_buckets_decoder > 0",
         text("On the longer sentences the T5 bias reads ", encoder.size(), " buckets of the encoder's table and ",
              decoder.size(), " of the decoder's that no training sentence reaches: rows still as initialized (the "
              "decoder's exact buckets go up to 15 steps back, and training sentences end before)."),
         text("Every bucket the longer sentences reach is also reached in training: the T5 table has no untrained "
              "row here.")});
}

// ---------------------------------------------------------------------------------------------
// 2. The models.

// The translators compared (all[0] the GRU with attention, all[1] the sinusoidal Transformer, then
// kVariants), all[i + 1] translating with transformers[i].
struct Models {
  std::unique_ptr<nn::rnn::Seq2Seq> gru;
  std::vector<std::unique_ptr<Transformer>> transformers;
  std::vector<std::unique_ptr<History>> histories;  // the GRU's, then each Transformer's
  std::vector<Translator> all;
};

// Each Transformer's checkpoint and card, by its key: transformer_<positions>.npz and .json
// ("transformer_sinusoidal", "transformer_relative", "transformer_rope", "transformer_alibi").
std::string card_stem(const std::string& key) {
  return "transformer_" + (key == "transformer" ? std::string("sinusoidal") : key);
}
std::string checkpoint_of(const std::string& key) { return card_stem(key) + ".npz"; }

Models train_models(const TranslationPlan& p, const Task& t, int epochs_with_distances) {
  say("Each Transformer is lesson 08's: ", p.layers, " encoder and ", p.layers, " decoder layers, $d = ", p.d_model,
      "$, ", p.heads, " heads, post-norm, the Noam schedule with ", p.warmup, " warm-up steps, label smoothing ",
      kLabelSmoothing, ", the same batches and the same first draw, only its positions changed. The sinusoidal one and "
      "the GRU with additive attention (lesson 02's, ", p.gru_hidden, " wide) train for ", p.epochs, " epochs as in "
      "lesson 08; each Transformer with distances for ", epochs_with_distances, ". After every epoch each "
      "Transformer's greedy BLEU on the longer sentences is measured (never used to choose anything), so the "
      "comparison is also one at equal training: the Noam schedule does not depend on how long the run is, so "
      "after ", p.epochs, " epochs a longer run holds the very model a run of ", p.epochs, " epochs ends with.");
  Models m;
  auto transformer = [&](nn::Positional method, const std::string& name, const std::string& key, int epochs) {
    Transformer& model = *m.transformers.emplace_back(translation_transformer(p, t, method));
    Recipe r = translation_transformer_recipe(p);
    r.label = name, r.epochs = epochs, r.checkpoint = checkpoint_of(key);
    const History& h = *m.histories.emplace_back(std::make_unique<History>(train_translation_transformer(model, t, r)));
    m.all.push_back(translator(name, key, model, h, t));
  };
  // Lesson 08's order: the sinusoidal Transformer, the GRU, then the distances.
  Transformer& sinusoidal = *m.transformers.emplace_back(translation_transformer(p, t));
  Recipe r = translation_transformer_recipe(p);
  r.checkpoint = checkpoint_of("transformer");
  const History sinusoidal_history = train_translation_transformer(sinusoidal, t, r);
  History& gru = *m.histories.emplace_back(std::make_unique<History>());
  m.all.push_back(train_translation_gru(p, t, "additive", "GRU + additive attention", "gru_attention", m.gru, gru));
  const History& sh = *m.histories.emplace_back(std::make_unique<History>(sinusoidal_history));
  m.all.push_back(translator("Transformer, sinusoidal", "transformer", sinusoidal, sh, t));
  for (const Variant& v : kVariants) transformer(v.method, v.name, v.key, epochs_with_distances);

  std::vector<std::vector<std::string>> rows;
  for (const Translator& c : m.all) {
    const double bt = bleu_of(c.test, t.test);
    metric("bleu_test_" + c.key, bt);
    timing("train_seconds_" + c.key, c.history->seconds);
    rows.push_back(row(c.name, c.parameters, c.history->epoch_loss.size(), fixed(c.history->median_step_ms(), 1),
                       fixed(bt, 3)));
  }
  // Each Transformer's card beside its checkpoint (lesson 08's), what `inspect long` runs.
  for (std::size_t i = 0; i < m.transformers.size(); ++i)
    write_transformer_card(card_stem(m.all[i + 1].key), *m.transformers[i], translation_task_options(p), t.source_vocab,
                           t.target_vocab,
                           {"bleu_test_" + m.all[i + 1].key, bleu_of(m.all[i + 1].test, t.test), t.test.size(),
                            "the test split: held-out sentences of the training lengths, greedy decoding"});
  table({"model", "parameters", "epochs", "ms per step", "BLEU test"}, rows);
  return m;
}

// ---------------------------------------------------------------------------------------------
// 3. BLEU by length.

// Each Transformer's best-aligning head of its last decoder layer on the longer split, and its AER.
struct LastLayerHead {
  std::size_t head;
  double aer;
};

// What section 3 measured, by a translator's key.
struct Compared {
  std::vector<LastLayerHead> heads;  // heads[i]: transformers[i]
  std::size_t best;                  // the index in all of the best Transformer with distances
  std::map<std::string, double> longer, cut, aer_of, gain_of, longest_group;
  std::map<std::string, double> equal, low, high;  // BLEU longer after the plan's epochs; its range after them
  int equal_epochs;                                 // the plan's epochs, or fewer when the distances train fewer
};

Compared compare_on_longer(const TranslationPlan& p, const Task& t, const Models& m, int epochs_with_distances) {
  const std::vector<Translator>& all = m.all;
  const std::vector<Mask> truths = nn::true_alignments(t.longer);
  const int equal_epochs = std::min(p.epochs, epochs_with_distances);  // every Transformer trained this many
  const std::size_t at = std::size_t(equal_epochs) - 1;
  std::vector<plots::Series> series, by_epoch;
  std::vector<std::vector<std::string>> rows;
  Compared out{{}, 2, {}, {}, {}, {}, {}, {}, {}, {}, equal_epochs};
  auto &longer = out.longer, &cut = out.cut, &aer_of = out.aer_of, &gain_of = out.gain_of;
  auto& longest_group = out.longest_group;
  std::map<std::string, double> test;  // BLEU on the test split (section 2's table)
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Translator& c = all[i];
    const nn::LengthScores ll = nn::score_by_length(c.longer, t.longer_ids, kLongestBucket);
    series.push_back(bleu_by_length(c, t, kLongestBucket));
    longer[c.key] = bleu_of(c.longer, t.longer_ids), cut[c.key] = ll.cut_short, test[c.key] = bleu_of(c.test, t.test);
    longest_group[c.key] = ll.by_length.back().bleu.score;
    if (i > 2 && longer[c.key] > longer[all[out.best].key]) out.best = i;
    metric("bleu_longer_" + c.key, longer[c.key]);
    metric("cut_short_" + c.key, ll.cut_short);
    metric("bleu_longest_" + c.key, longest_group[c.key]);
    std::string at_k = "", aer = "";
    if (i > 0) {  // a Transformer: BLEU on the longer sentences by epoch, and its alignment of them
      const std::vector<double>& b = c.history->validation_of("bleu_longer");
      by_epoch.push_back(curve(c.name, b));
      by_epoch.back().color = plots::series_color(i);  // each model's color in the figure of BLEU by length
      at_k = fixed(b[at], 3);
      metric("bleu_longer_equal_epochs_" + c.key, out.equal[c.key] = b[at]);
      // The epochs past the plan's (none: the last alone): how far BLEU swings from one epoch to the next.
      const auto [lo, hi] = std::minmax_element(b.begin() + std::ptrdiff_t(std::min(at + 1, b.size() - 1)), b.end());
      out.low[c.key] = *lo, out.high[c.key] = *hi;
      metric("bleu_longer_last_gain_" + c.key, gain_of[c.key] = b.size() > 1 ? b.back() - b[b.size() - 2] : b.back());
      const auto [head, error] = nn::score_heads_as_aligners(*m.transformers[i - 1], t.longer_ids, truths).best_in_layer(p.layers - 1);
      out.heads.push_back({head, error}), aer = fixed(error, 3);
      metric("aer_longer_" + c.key, aer_of[c.key] = error);
    }
    rows.push_back(row(c.name, c.history->epoch_loss.size(), at_k, fixed(longer[c.key], 3),
                       fixed(longest_group[c.key], 3), percent(ll.cut_short, 0), fixed(ll.mean_words, 2), aer));
  }
  const std::string b = all[out.best].key, best_name = all[out.best].name;
  const std::string trained_for =
      epochs_with_distances == p.epochs
          ? text(" (both after ", p.epochs, " epochs)")
          : text(" (", epochs_with_distances, " epochs against ", p.epochs, "; after ", equal_epochs, " it scored ",
                 fixed(out.equal[b], 3), ")");
  metric("bleu_longer_best_positions", longer[b]);
  metric("cut_short_best_positions", cut[b]);
  metric("aer_longer_best_positions", aer_of[b]);
  metric("bleu_longer_last_gain_best_positions", gain_of[b]);
  metric("bleu_longest_best_positions", longest_group[b]);
  metric("bleu_longer_more_epochs_gain_best_positions", longer[b] - out.equal[b]);
  metric("bleu_longer_swing_best_positions", out.high[b] - out.low[b]);
  say("Greedy decoding (nn::translate), corpus BLEU-4 on words. Cut short: a translation of a longer sentence with "
      "fewer words than its reference (the references have ", fixed(mean_words(t.longer_ids.target), 2), " words on "
      "average). AER: the best cross-attention head of the last decoder layer on the longer sentences, teacher-forced "
      "on their references, as in lesson 08's section 5: whether the model still finds the source word to translate "
      "when it is given the right prefix. The claims below name the best of the three methods with distances on these "
      "very sentences: a choice made on the scores it reports, so read its number as the best this run offers, and "
      "each method's row as its own result.");
  table({"model", "epochs", text("BLEU longer after ", equal_epochs, " epochs"), "BLEU longer",
         text("BLEU, ", kLongestBucket, " and 15 words"), "cut short", "mean output words", "AER longer"}, rows);
  claim({"relative_positions_extrapolate", "bleu_longer_best_positions > bleu_longer_transformer + 0.05",
         text("With positions as distances the Transformer extrapolates: the best, ", best_name, ", scores ",
              fixed(longer[b], 3), " BLEU on the longer sentences against the sinusoidal one's ",
              fixed(longer["transformer"], 3), trained_for, "; ", percent(cut[b], 0), " of its translations stop short, "
              "against ", percent(cut["transformer"], 0), "."),
         text("No positional method here extrapolates clearly better than the sinusoidal one: the best, ", best_name,
              ", scores ", fixed(longer[b], 3), " BLEU on the longer sentences against ", fixed(longer["transformer"], 3),
              trained_for, "."),
         Expect::full_run});
  claim({"a_transformer_matches_the_gru", "bleu_longer_best_positions >= bleu_longer_gru_attention - 0.02",
         text(best_name, " matches or passes the GRU with attention on 11 to 15 words: ", fixed(longer[b], 3),
              " against ", fixed(longer["gru_attention"], 3), "."),
         text("No Transformer here reaches the GRU with attention on 11 to 15 words: the best, ", best_name, ", scores ",
              fixed(longer[b], 3), " against ", fixed(longer["gru_attention"], 3), "."),
         Expect::either_way});
  claim({"alibi_without_a_table", "bleu_longer_alibi > bleu_longer_relative",
         text("ALiBi, which learns nothing about positions, scores ", fixed(longer["alibi"], 3), " on the longer "
              "sentences, above the learned T5 bias (", fixed(longer["relative"], 3), "): a fixed penalty on distance "
              "has no row that training failed to reach."),
         text("ALiBi, which learns nothing about positions, scores ", fixed(longer["alibi"], 3), " on the longer "
              "sentences, not above the learned T5 bias (", fixed(longer["relative"], 3), "): its untrained rows do "
              "not hold the T5 table back here."),
         Expect::either_way});
  const std::string on_test = text(fixed(test["alibi"], 3), " BLEU against ", fixed(test["relative"], 3), " (T5) and ",
                                   fixed(test["rope"], 3), " (RoPE)");
  claim({"alibi_translates_worse_at_every_length",
         "bleu_test_alibi < bleu_test_relative - 0.02 and bleu_test_alibi < bleu_test_rope - 0.02",
         "Even on the test sentences, of the training lengths, ALiBi scores " + on_test + ": with the same epochs and "
         "batches it translates worse at every length, so part of its shortfall past the training lengths is one of "
         "translation, not only of extrapolation.",
         "On the test sentences, of the training lengths, ALiBi scores " + on_test + ": not below both of the others, "
         "so a weaker translation does not explain its shortfall on the longer sentences.",
         Expect::either_way});

  save_translation_bleu_by_length(series, "BLEU by source length: where the Transformer's positions come from",
                                   "bleu_by_length_positions",
                                   "BLEU of held-out sentences by length for the GRU with attention and the "
                                   "Transformer with each positional method. Right of the dashed line: lengths no "
                                   "model saw in training.");
  LineFigureOptions es{"BLEU on the longer sentences after each epoch", "epoch", "corpus BLEU, 11 to 15 words"};
  es.markers = true, es.ymin = 0.0, es.ymax = 1.0;
  save_figure(line_figure(by_epoch, es), "bleu_longer_by_epoch",
              "Greedy BLEU of every Transformer on the longer split after each epoch of its training.");
  return out;
}

// ---------------------------------------------------------------------------------------------
// 4. The longest sentence.

// The longest sentence of the longer split, translated by every Transformer, and the cross-attention
// of each one's best-aligning head of its last layer there.
void the_longest_sentence(const TranslationPlan& p, const Task& t, const Models& m, const Compared& c) {
  const std::size_t pick = nn::longest_pair(t.longer);  // the first of the longest sentences
  const data::TranslationPair& pr = t.longer[pick];
  const std::size_t n = data::word_count(pr);
  xt::xarray<double> maps = xt::zeros<double>({m.transformers.size(), n, n});
  std::vector<std::string> titles;
  std::vector<std::pair<std::string, std::string>> outputs = {
      {"GRU", t.target_vocab.decode(m.all[0].longer[pick], data::Tokenizer::words)}};
  for (std::size_t i = 0; i < m.transformers.size(); ++i) {
    const Translator& tr = m.all[i + 1];
    const std::size_t head = c.heads[i].head;
    xt::view(maps, i) = xt::view(nn::sentence_cross_attention(*m.transformers[i], t.longer_ids, pick, {{p.layers - 1, head}}), 0);
    titles.push_back(text(tr.name.substr(std::string("Transformer, ").size()), ", head ", head + 1, " (AER ",
                          fixed(c.heads[i].aer, 2), ")"));
    outputs.push_back({i ? tr.key : "sinusoidal", t.target_vocab.decode(tr.longer[pick], data::Tokenizer::words)});
  }
  say("The longest of the longer sentences, translated greedily by every model:");
  verbatim(compared_translations(pr, outputs));
  save_figure(alignment_grid(maps, pr, titles, text("Last decoder layer's cross-attention on a ", n,
                                                     "-word sentence; boxes: the true alignment"),
                             "target words (queries, teacher-forced)"),
              "cross_attention_long",
              text("Cross-attention of the best-aligning head of the last decoder layer of each Transformer (its AER "
                   "over the longer split in brackets) on \"", pr.source, "\", teacher-forced on its reference. Red "
                   "boxes mark the true alignment."));
  claim({"alignment_survives_with_distances", "aer_longer_best_positions < aer_longer_transformer",
         text("Teacher-forced on the references, the best head of ", m.all[c.best].name, " still links the words of "
              "the longer sentences (AER ", fixed(c.heads[c.best - 1].aer, 3), ") better than the sinusoidal model's (",
              fixed(c.heads[0].aer, 3), "): past the training lengths the absolute positions lose the source word to "
              "translate, the distances keep it."),
         text("Teacher-forced on the references, the best head of ", m.all[c.best].name, " links the words of the "
              "longer sentences no better (AER ", fixed(c.heads[c.best - 1].aer, 3), ") than the sinusoidal model's (",
              fixed(c.heads[0].aer, 3), ")."),
         Expect::either_way});
}

// The attention explorer (lessons/kit/explorer.hpp): the same longest sentence as each Transformer
// translates it (greedy, what it wrote, not the reference), every attention of every layer and head:
// the encoder's over the source, the decoder's over what it wrote so far, the cross-attention between.
void explore_the_longest(const Task& t, const Models& m) {
  const std::size_t pick = nn::longest_pair(t.longer);
  ExplorerPage page{text("Lesson 09: four Transformers on a ", data::word_count(t.longer[pick]), "-word sentence, longer "
                         "than any they trained on"), "queries", "keys",
                    "Each Transformer of the lesson (sinusoidal, T5 relative bias, RoPE, ALiBi) translating the "
                    "longest of the longer sentences greedily, three inputs each: the encoder's self-attention over the "
                    "source words, the decoder's self-attention over <bos> and the words it has written (it sees "
                    "only its past), and the cross-attention from each word it writes (and <eos>) to the source words. "
                    "Choose a layer and a head, hover a word to read its weights, click it for the neuron view: with "
                    "T5 and ALiBi the score's bias is the distance term, with RoPE the queries and keys are the rotated "
                    "ones; the cross-attention has no positions in any of them.",
                    {}};
  for (std::size_t i = 0; i < m.transformers.size(); ++i) {
    const Translator& tr = m.all[i + 1];
    const data::EncodedPairs one{{t.longer_ids.source[pick]}, {tr.longer[pick]}};
    SentenceAttention a = translated_sentence_attention(*m.transformers[i], one, 0, t.source_vocab, t.target_vocab);
    const std::string method = tr.name.substr(std::string("Transformer, ").size());
    a.encoder.name = method + ": encoder self-attention, " + a.encoder.name;
    a.decoder.name = method + ": decoder self-attention, " + a.decoder.name;
    a.cross.name = method + ": cross-attention, " + a.cross.name;
    for (AttentionInput* in : {&a.cross, &a.encoder, &a.decoder}) page.inputs.push_back(std::move(*in));
  }
  show_explorer(page, "explorer",
                "The attention explorer: every head of the four Transformers on the longest sentence, as each "
                "translates it; hover a word to see what it reads, click it to split its scores into query-key terms "
                "(build/bin/inspect long --method M makes one for a sentence of your own)");
}

// ---------------------------------------------------------------------------------------------
// 5. What is left between the best Transformer and the GRU.

void what_is_left(const TranslationPlan& p, const Models& m, const Compared& c, int epochs_with_distances) {
  const std::string name = m.all[c.best].name, b = m.all[c.best].key, g = "gru_attention";
  const double best = c.longer.at(b), gru = c.longer.at(g), aer = c.aer_of.at(b), gain = c.gain_of.at(b);
  const double longest = c.longest_group.at(b), gru_longest = c.longest_group.at(g);
  const double cut = c.cut.at(b), gru_cut = c.cut.at(g);
  metric("gap_to_gru", gru - best);
  metric("gap_to_gru_longest", gru_longest - longest);
  say("These measurements locate what separates ", name, " from the GRU with attention on these sentences: how well "
      "it finds the source word when it is given the right prefix, how the gap changes with length, and what its "
      "training gave: whether more of it paid, how far its score swings from one epoch to the next, and whether it "
      "was still learning when it stopped.");
  claim({"finds_the_words_but_writes_worse", "aer_longer_best_positions < 0.1 and gap_to_gru > 0.02",
         text("Given the right prefix its best head finds the source word (AER ", fixed(aer, 3), "), yet writing on its "
              "own it scores ", fixed(best, 3), " against the GRU's ", fixed(gru, 3), ": the loss is in free-running "
              "decoding, where one wrong or missing word shifts every later one (", percent(cut, 0), " of its "
              "translations end short, the GRU's ", percent(gru_cut, 0), ")."),
         aer >= 0.1 ? text("Even given the right prefix its best head misses source words (AER ", fixed(aer, 3), "): it "
                           "scores ", fixed(best, 3), " against the GRU's ", fixed(gru, 3), ", and the loss starts in "
                           "finding the word to translate, before free-running decoding adds its own.")
                    : text("Given the right prefix its best head finds the source word (AER ", fixed(aer, 3), "), and "
                           "writing on its own it scores ", fixed(best, 3), " against the GRU's ", fixed(gru, 3),
                           ": no gap in free-running decoding to explain."),
         Expect::either_way});
  // The GRU's lead (negative: the Transformer ahead), over the longer split and at its longest sentences.
  auto lead = [](double x) {
    return x >= 0 ? text("the GRU ahead by ", fixed(x, 3)) : text("the Transformer ahead by ", fixed(-x, 3));
  };
  const std::string leads = text(lead(gru - best), " BLEU over the whole longer split, ", lead(gru_longest - longest),
                                 " on ", kLongestBucket, " and 15 words");
  claim({"gap_grows_with_length", "gap_to_gru_longest > gap_to_gru",
         "The GRU gains on it with length: " + leads + ", the distances farthest from any seen in training.",
         "The GRU does not gain on it at the longest sentences: " + leads + ".", Expect::either_way});
  const std::string more = gru > best ? "close more of the gap" : "widen its lead";
  if (epochs_with_distances > c.equal_epochs) {  // a full run: the distances trained past the plan's epochs
    const double before = c.equal.at(b), low = c.low.at(b), high = c.high.at(b);
    const std::string swing = text("after epoch ", c.equal_epochs, " its BLEU on the longer sentences ranges from ",
                                   fixed(low, 3), " to ", fixed(high, 3), " from one epoch to the next");
    claim({"more_epochs_pay", "bleu_longer_more_epochs_gain_best_positions > 0.02",
           text("Training it ", epochs_with_distances, " epochs instead of ", c.equal_epochs, " paid: ", fixed(best, 3),
                " BLEU on the longer sentences against ", fixed(before, 3), " after ", c.equal_epochs, "."),
           text("Training it ", epochs_with_distances, " epochs instead of ", c.equal_epochs, " did not pay: ",
                fixed(best, 3), " BLEU on the longer sentences against ", fixed(before, 3), " after ", c.equal_epochs,
                "."),
           Expect::either_way});
    claim({"gap_within_epoch_swing", "abs(gap_to_gru) < bleu_longer_swing_best_positions",
           text("The gap to the GRU (", fixed(gru - best, 3), ") is smaller than its swing between epochs: ", swing,
                ": where among these epochs training stops moves its score by more than the gap, so one run "
                "cannot rank the two."),
           text("The gap to the GRU (", fixed(gru - best, 3), ") is larger than its swing between epochs (", swing,
                "): not a matter of where training happens to stop."),
           Expect::either_way});
  }
  claim({"still_rising", "bleu_longer_last_gain_best_positions > 0.01",
         text("Its BLEU on the longer sentences was still rising in the last of its ", epochs_with_distances,
              " epochs (+", fixed(gain, 3), "): more training could ", more, "."),
         text("Its BLEU on the longer sentences no longer rose in its last epoch (", fixed(gain, 3), "): more epochs "
              "of the same would not ", more, "."),
         Expect::either_way});
  say("The GRU needs no positions at all: it applies the same step once more for every extra word, and its "
      "attention reads the encoder's states by content. Every Transformer here must be told where a word is, and ",
      epochs_with_distances, " epochs of sentences up to ", kMaxTrainWords, " words are all it learns that from.");
}

}  // namespace

int main(int argc, char** argv) {
  LessonInfo info{"09_long_sentences", "Long sentences: positions that carry a Transformer past the training lengths",
                  "Lesson 08's translation Transformer with sinusoidal, T5 relative, RoPE and ALiBi positions against "
                  "the GRU with attention on sentences longer than any trained on: BLEU by length, translations cut "
                  "short, cross-attention of the longest sentence.",
                  "bleu_longer_best_positions"};
  info.lead_figure = "bleu_by_length_positions";
  info.checkpoints = {"transformer_sinusoidal.npz", "transformer_relative.npz", "transformer_rope.npz",
                      "transformer_alibi.npz"};
  return run_lesson(info, argc, argv, [] {
    const TranslationPlan plan = translation_plan();
    const int epochs_with_distances = position_epochs(plan);
    section("1. The question: sentences longer than any trained on");
    const Task task = data::make_translation_task(translation_task_options(plan));
    the_question(task);

    section("2. Five translators of one task");
    const Models models = train_models(plan, task, epochs_with_distances);

    section("3. BLEU by length, and translations cut short");
    const Compared compared = compare_on_longer(plan, task, models, epochs_with_distances);

    section("4. The longest sentence: where the decoder looks");
    the_longest_sentence(plan, task, models, compared);
    explore_the_longest(task, models);

    section("5. What is left between the best Transformer and the GRU");
    what_is_left(plan, models, compared, epochs_with_distances);
  });
}
