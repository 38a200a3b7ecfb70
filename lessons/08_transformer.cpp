// Lesson 08: the Transformer, encoder and decoder, trained to translate.
//
// Everything the course has built comes together: embeddings and sinusoidal positions, multi-head
// self-attention in the encoder, masked self-attention and cross-attention in the decoder, the
// Noam learning-rate schedule and label smoothing. The task is a toy translation whose target
// language puts the words in another order, where the true word alignment of every sentence is
// known. Three questions, each answered by a measurement: does attention remove the fixed-vector
// bottleneck of a recurrent encoder-decoder (BLEU by sentence length, sentences longer than any
// trained on included)? What does beam search buy over greedy decoding? Do the decoder's
// cross-attention heads find the true alignment, and which ones? (Which positions carry the
// Transformer past the training lengths is lesson 09; what label smoothing, the place of the layer
// norm and the warm-up change is lesson 10.)
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "lessons/kit/alignment_grid.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/translation_model.hpp"
#include "lessons/kit/translation_setup.hpp"
#include "lessons/kit/translators.hpp"
#include "nn/data/translation_task.hpp"
#include "nn/parameter_blocks.hpp"
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

using Plan = TranslationPlan;  // the task's and the models' sizes, shared with lesson 09

// ---------------------------------------------------------------------------------------------
// 1. The task.

using Task = data::TranslationTask;

Task make_task(const Plan& plan) { return data::make_translation_task(translation_task_options(plan)); }

void the_task(const Task& t) {
  say("The source language is English-like: subject, verb, object, an optional prepositional phrase, adjectives "
      "before their noun. The target language is invented: its words are made of random syllables, the verb goes "
      "last, the prepositional phrase moves before the object and becomes a postposition, and every noun phrase is "
      "mirrored (noun, adjectives, determiner). Each source word becomes exactly one target word, so the true "
      "alignment of every sentence is a permutation we know. Training pairs, each target word written with the "
      "source word it translates:");
  std::string shown;
  for (std::size_t i = 0; i < 4; ++i)
    shown += t.pairs.train[i].source + "\n  -> " + t.pairs.train[i].target + "\n     " + data::gloss(t.pairs.train[i]) + "\n";
  verbatim(shown);
  auto range = [](const std::vector<data::TranslationPair>& ps) {
    const auto [fewest, most] = data::word_range(ps);
    return text(fewest, " to ", most);
  };
  const std::size_t overlap = data::held_out_in_training(t), unknown = data::unknown_held_out_words(t);
  table({"split", "sentences", "source words", "what it is for"},
        {row("train", t.pairs.train.size(), range(t.pairs.train), "every model's training data"),
         row("validation", t.pairs.validation.size(), range(t.pairs.validation), "held-out loss after every epoch"),
         row("test", t.pairs.test.size(), range(t.pairs.test), "held-out sentences of the training lengths"),
         row("longer", t.longer.size(), range(t.longer), "held-out sentences longer than any in training")});
  metric("split_overlap", double(overlap));
  claim({"splits_disjoint", "split_overlap == 0",
         "Splits are cut by distinct source sentence: no held-out sentence is also a training sentence.",
         text(overlap, " held-out sentences are also training sentences.")});
  say("The longer split keeps up to the same number of sentences of each length (the grammar rarely makes 14 or 15 "
      "words). Vocabularies come from the training split: ", t.source_vocab.size(), " source and ",
      t.target_vocab.size(), " target words (with <pad> <bos> <eos> <unk>); held-out source words never seen in "
      "training: ", unknown, ".");
  config({{"train_sentences", t.pairs.train.size()}, {"test_sentences", t.pairs.test.size()},
          {"longer_sentences", t.longer.size()}});
}

// ---------------------------------------------------------------------------------------------
// 2. The Transformer.

void the_architecture(const Plan& p, const Task& t, const Transformer& m) {
  say("The encoder embeds each source word (times $\\sqrt{d}$, plus the sinusoidal position of lesson 05) and runs ",
      p.layers, " layers of multi-head self-attention and a feed-forward network, each in a residual connection "
      "followed by a layer norm (post-norm, as in the paper): $x \\leftarrow \\mathrm{LayerNorm}(x + f(x))$. Its "
      "output, one vector per source word, is the memory. The decoder embeds $\\langle bos\\rangle\\, y_1 \\ldots "
      "y_{T-1}$ the same way and runs ", p.layers, " layers of three sublayers: masked self-attention (position $t$ "
      "sees positions up to $t$), cross-attention (queries from the decoder, keys and values from the memory: the "
      "target words look at the source words) and the feed-forward network. A linear layer gives the scores of the "
      "next target word. $d = ", p.d_model, "$, ", p.heads, " heads of ", p.d_model / p.heads, ", feed-forward width $d_{ff} = ",
      p.d_ff, "$, dropout 0.1.");
  std::vector<std::vector<std::string>> rows;
  for (const nn::ParameterBlock& blk : nn::parameter_blocks(m, 3)) {
    const bool layer0 = blk.name.rfind("decoder.layers.0.", 0) == 0;
    if (blk.depth <= 2 || layer0) rows.push_back(row(std::string(2 * (blk.depth - 1), ' ') + blk.name, blk.parameters));
  }
  rows.push_back(row("total", m.parameter_count()));
  say("Parameters per block (one decoder layer opened up: each of its two attentions has $4d^2 + 4d$ parameters, "
      "the feed-forward network $2 d\\, d_{ff} + d_{ff} + d$, each norm $2d$):");
  table({"block", "parameters"}, rows);
  metric("transformer_parameters", double(m.parameter_count()));
}

void the_schedule(const Plan& p, const Task& t, const Recipe& r, const History& h) {
  say("The Noam schedule (Vaswani et al. 2017, section 5.3), $$\\eta(s) = d^{-1/2} \\min\\left(s^{-1/2},\\; s\\, "
      "w^{-3/2}\\right),$$ rises linearly over the first $w = ", p.warmup, "$ steps to ", fixed(r.lr, 5), " and decays as "
      "$1/\\sqrt{s}$ after. Adam divides each step by a running mean of squared gradients; in the first steps that "
      "mean rests on few samples, and the warm-up keeps the steps small while it settles (Liu et al. 2020). Training: ",
      describe(r, h.steps), ".");
  LineFigureOptions style{text("Noam schedule, d = ", p.d_model, ", warm-up ", p.warmup, " steps"), "training step",
                          "learning rate"};
  save_figure(line_figure({curve("learning rate of each step", h.lr)}, style), "noam_schedule",
              "The learning rate of every training step of the Transformer below.");
  const double V = double(t.target_vocab.size()), eps = kLabelSmoothing;
  const double q_true = 1 - eps + eps / V, q_other = eps / V;
  const double floor = -q_true * std::log(q_true) - (V - 1) * q_other * std::log(q_other);
  say("Label smoothing $\\varepsilon = 0.1$ (Szegedy et al. 2016): the target of every word is $q = (1 - \\varepsilon)"
      "\\,\\mathrm{onehot} + \\varepsilon / V$ over all $V = ", t.target_vocab.size(), "$ words. A model that "
      "reproduced $q$ exactly would still score its entropy $H(q) = ", fixed(floor, 3), "$ nats per word: the floor "
      "of the smoothed training loss, where an unsmoothed loss can reach 0.");
  metric("smoothed_loss_floor", floor);
}

void the_training(const History& h) {
  std::vector<std::vector<std::string>> rows;
  const auto& val = h.validation_of("loss");
  const auto& nll = h.validation_of("nll");
  for (std::size_t e = 0; e < val.size(); ++e)
    rows.push_back(row(e + 1, fixed(h.epoch_loss[e], 3), fixed(val[e], 3), fixed(nll[e], 3)));
  table({"epoch", "training loss (smoothed)", "validation loss (smoothed)", "validation cross-entropy"}, rows);
  CurvesFigureOptions style{"The Transformer: loss per target word"};
  style.ylabel = "nats per word (log scale)";
  save_figure(loss_curves({{"Transformer", &h}}, style), "transformer_loss",
              "Training loss by step; training and validation loss by epoch (both label-smoothed).");
  metric("transformer_validation_loss", val.back());
  metric("transformer_validation_nll", nll.back());
  metric("transformer_validation_first_nll", nll.front());
  metric("transformer_generalization_gap", val.back() - h.epoch_loss.back());
  timing("transformer_step_ms", h.median_step_ms());
  claim({"transformer_learns", "transformer_validation_nll < transformer_validation_first_nll",
         text("The held-out cross-entropy falls from ", fixed(nll.front(), 3), " nats per word after the first epoch to ",
              fixed(nll.back(), 3), " after the last."),
         text("The held-out cross-entropy does not fall: ", fixed(nll.front(), 3), " after the first epoch, ",
              fixed(nll.back(), 3), " after the last.")});
  claim({"no_generalization_gap", "transformer_generalization_gap < 0.05",
         text("In the last epoch the validation loss (", fixed(val.back(), 3), ") is no more than 0.05 above the "
              "training loss (", fixed(h.epoch_loss.back(), 3), ", with dropout on): the model does as well on new "
              "sentences as on its training sentences."),
         text("In the last epoch the validation loss (", fixed(val.back(), 3), ") is ",
              fixed(val.back() - h.epoch_loss.back(), 3), " above the training loss (", fixed(h.epoch_loss.back(), 3),
              ", with dropout on): the model fits its training sentences better than new ones."),
         Expect::either_way});
}

// ---------------------------------------------------------------------------------------------
// 3. The bottleneck, measured.

void the_bottleneck(const Plan& p, const Task& t, const std::vector<Translator>& models) {
  std::vector<plots::Series> series;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> falls, stops;
  std::map<std::string, double> on_test, on_longer;
  for (const Translator& c : models) {
    series.push_back(bleu_by_length(c, t, kLongestBucket));
    const xt::xarray<double>&x = series.back().x, &y = series.back().y;
    const double at_longest = y(std::size_t(std::find(x.begin(), x.end(), double(kMaxTrainWords)) - x.begin()));
    falls.push_back(text(c.name, " from ", fixed(y(0), 3), " to ", fixed(at_longest, 3)));
    metric("bleu_shortest_" + c.key, y(0));
    metric("bleu_at_" + std::to_string(kMaxTrainWords) + "_words_" + c.key, at_longest);
    const double bt = bleu_of(c.test, t.test), bl = bleu_of(c.longer, t.longer_ids);
    on_test[c.key] = bt, on_longer[c.key] = bl;
    rows.push_back(row(c.name, c.parameters, fixed(c.history->median_step_ms(), 1), fixed(bt, 3), fixed(bl, 3),
                       fixed(mean_words(c.longer), 2)));
    metric("bleu_test_" + c.key, bt);
    metric("bleu_longer_" + c.key, bl);
    metric("parameters_" + c.key, double(c.parameters));
    timing("train_seconds_" + c.key, c.history->seconds);
    std::size_t short_ = 0;
    for (const auto& h : c.longer) short_ += h.size() <= kMaxTrainWords;
    stops.push_back(text(c.name, " ", fixed(mean_words(c.longer), 2), " words (",
                         percent(double(short_) / double(c.longer.size()), 0), " no longer than ", kMaxTrainWords, ")"));
  }
  say("Every model trained for ", p.epochs, " epochs on the same batches (", models.front().history->steps, " steps of ",
      p.batch, " sentences). BLEU is corpus BLEU-4 on words (0 to 1), greedy decoding (nn::translate).");
  table({"model", "parameters", "ms per step", "BLEU test", "BLEU longer", "mean output length, longer"}, rows);
  say("Without attention every sentence must pass through the encoder's final states, ", 2 * p.gru_hidden, " numbers; "
      "with attention the decoder reads every source word again at every step.");
  const std::string bleus = text(fixed(on_test["gru_attention"], 3), " (GRU with attention) and ",
                                 fixed(on_test["transformer"], 3), " (Transformer) against ", fixed(on_test["gru_plain"], 3), ".");
  claim({"attention_beats_bottleneck",
         "bleu_test_gru_attention > bleu_test_gru_plain + 0.15 and bleu_test_transformer > bleu_test_gru_plain + 0.15",
         "Both attention models clearly beat the GRU without attention on held-out test sentences: BLEU " + bleus,
         "The attention models do not both beat the GRU without attention by 0.15 BLEU: " + bleus});
  claim({"bottleneck_falls_with_length",
         "bleu_shortest_gru_plain - bleu_at_10_words_gru_plain > bleu_shortest_gru_attention - bleu_at_10_words_gru_attention + 0.1",
         text("From the shortest test sentences to the longest training length (", kMaxTrainWords, " words), BLEU goes ",
              listing(falls), ": without attention the longer the sentence, the more of it is lost in the fixed vector."),
         text("From the shortest test sentences to the longest training length (", kMaxTrainWords, " words), BLEU goes ",
              listing(falls), ": the model without attention does not lose clearly more with length (by 0.1) than "
              "the GRU with attention.")});
  const std::string lengths = text("). The translations are, on average (the references: ",
                                   fixed(mean_words(t.longer_ids.target), 2), " words): ", listing(stops), ".");
  claim({"transformer_extrapolates_worse",
         "bleu_longer_transformer < bleu_longer_gru_attention",
         text("On sentences longer than any trained on, the Transformer scores ", fixed(on_longer["transformer"], 3),
              ", below the GRU with attention (", fixed(on_longer["gru_attention"], 3), lengths, " The Transformer's "
              "positions past the training lengths are sinusoidal vectors no layer was trained on, while the recurrent "
              "model applies the same step once more."),
         text("On sentences longer than any trained on, the Transformer scores ", fixed(on_longer["transformer"], 3),
              ", not below the GRU with attention (", fixed(on_longer["gru_attention"], 3), lengths),
         Expect::full_run});
  save_translation_bleu_by_length(series, "BLEU by source length (held-out: test up to 10 words, longer split after)",
                        "bleu_by_length",
                        "BLEU of held-out sentences grouped by their length, for the GRU without attention, the GRU "
                        "with additive attention and the Transformer. Right of the dashed line: lengths no model saw "
                        "in training.");
}

// ---------------------------------------------------------------------------------------------
// 4. Decoding.

constexpr std::size_t kWidest = 8;
const std::vector<double> kAlphas = {0.0, 1.0};

void decoding(const Task& t, Transformer& m) {
  std::vector<std::size_t> test_rows, longer_rows;
  const std::size_t per_split = full_or_quick<std::size_t>(150, 30);  // one at a time: beam search is slow
  const data::EncodedPairs test = nn::spread_evenly(t.test, per_split, &test_rows),
                           longer = nn::spread_evenly(t.longer_ids, per_split, &longer_rows);
  say("Greedy decoding writes the most likely next word at every step. Beam search keeps the $k$ most likely prefixes "
      "instead, so a word that looks worse now can win later. A hypothesis $y$ is ranked by $\\log p(y) / |y|^\\alpha$: "
      "with $\\alpha = 0$ every extra word costs $\\log p < 0$ and short outputs are favoured; $\\alpha = 1$ ranks by "
      "the mean log-probability per word. We decode ", test.size(), " test and ", longer.size(), " longer sentences "
      "(spread evenly over each split) one at a time, greedily and with widths $k = 1 \\ldots ", kWidest, "$ both ways "
      "(nn::beam_sweep).");
  const double w0 = wall_ms();
  const nn::BeamSweep dt = nn::beam_sweep(m, test, kWidest, kAlphas), dl = nn::beam_sweep(m, longer, kWidest, kAlphas);
  timing("decoding_seconds", (wall_ms() - w0) / 1000);
  const std::vector<SweptSplit> swept = {{"test", &dt, &test}, {"longer", &dl, &longer}};
  table({"decoder", "test, $\\alpha = 0$", "test, $\\alpha = 1$", "longer, $\\alpha = 0$", "longer, $\\alpha = 1$"},
        beam_sweep_rows(swept, kWidest, kAlphas));
  const double greedy = bleu_of(dt.greedy, test);
  const nn::BestBeam best = nn::best_beam(dt, test);
  metric("greedy_bleu_test_subset", greedy);
  metric("greedy_bleu_longer_subset", bleu_of(dl.greedy, longer));
  metric("best_beam_bleu_test_subset", best.bleu);
  metric("best_beam_width", double(best.width));
  metric("beam_gain_over_greedy", best.bleu - greedy);
  for (std::size_t w : {std::size_t(4), kWidest}) metric(text("beam_bleu_test_w", w, "_norm"), bleu_of(dt.at(w, 1.0), test));
  const std::size_t same = nn::same_count(dt.at(1, 0.0), dt.greedy) + nn::same_count(dl.at(1, 0.0), dl.greedy);
  metric("beam1_equals_greedy", double(same) / double(test.size() + longer.size()));
  claim({"beam1_is_greedy", "beam1_equals_greedy == 1",
         text("Beam width 1 with $\\alpha = 0$ gives the greedy translation for all ", test.size() + longer.size(),
              " sentences: it is the same search."),
         text("Beam width 1 with $\\alpha = 0$ gives the greedy translation for only ", same, " of ",
              test.size() + longer.size(), " sentences.")});
  claim({"beam_helps", "beam_gain_over_greedy > 0.005",
         text("On the test sentences the best beam is width ", best.width, " with $\\alpha = ", int(best.alpha), "$: BLEU ",
              fixed(best.bleu, 4), " against ", fixed(greedy, 4), " for greedy decoding."),
         text("No beam beats greedy decoding by more than 0.005 BLEU on the test sentences: the best of the sweep "
              "scores ", fixed(best.bleu, 4), " against greedy's ", fixed(greedy, 4), ". Beam search can only change a "
              "translation where the model gives another one a higher probability than the greedy one."),
         Expect::either_way});
  save_beam_sweep_figures(swept, kWidest, kAlphas,
                          "BLEU of beam search by width, with ($\\alpha = 1$) and without ($\\alpha = 0$) length "
                          "normalization, on test sentences and on longer ones.",
                          "Mean output length of beam search by width; dashed: the references' mean lengths (grey: "
                          "test, black: longer).");

  auto words_of = [&](const data::Sequence& ids) { return t.target_vocab.decode(ids, data::Tokenizer::words); };
  std::string shown;
  for (const auto& [pairs, rws, d] : {std::tuple{&t.pairs.test, &test_rows, &dt}, std::tuple{&t.longer, &longer_rows, &dl}})
    for (std::size_t i = 0; i < std::min<std::size_t>(3, d->greedy.size()); ++i)
      shown += compared_translations((*pairs)[(*rws)[i]], {{"greedy", words_of(d->greedy[i])},
                                                           {"beam 4", words_of(d->at(4, 1.0)[i])}}) + "\n";
  say("Three test sentences and three longer ones with their references (beam: width 4, $\\alpha = 1$):");
  verbatim(shown);
}

// ---------------------------------------------------------------------------------------------
// 5. Cross-attention against the truth.

void cross_attention_vs_truth(Transformer& m, const Task& t) {
  const std::size_t L = m.decoder.size(), H = m.config().layer.heads;
  say("Every decoder layer has ", H, " cross-attention heads; row $t$ of a head's map is where the decoder looks in the "
      "source while it predicts target word $t$. Each head is scored as a word aligner: link every target word to the "
      "source word its head attends to most, the links $A$, and compare them with the true links $S$ over all ",
      t.test.size(), " test sentences, teacher-forced on their references, by the alignment error rate (Och & Ney "
      "2003) $$\\mathrm{AER} = 1 - \\frac{2\\,|A \\cap S|}{|A| + |S|},$$ 0 for the true alignment, 1 for not one right link.");
  const std::vector<Mask> truths = nn::true_alignments(t.pairs.test);
  const nn::HeadAlignment s = nn::score_heads_as_aligners(m, t.test, truths);
  const xt::xarray<double> aer = nn::error_rates(s.at_output), aer_in = nn::error_rates(s.at_input);
  std::size_t best_l = 0, best_h = 0;
  std::vector<std::vector<std::string>> rows;
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t h = 0; h < H; ++h) {
      if (aer(l, h) < aer(best_l, best_h)) best_l = l, best_h = h;
      rows.push_back(row(l + 1, h + 1, fixed(aer(l, h), 3), fixed(aer_in(l, h), 3)));
      metric(text("aer_layer", l + 1, "_head", h + 1), aer(l, h));
    }
  table({"layer", "head", "AER, row predicting the word", "AER, row that has just read it"}, rows);
  // the same-order guess: target word j linked to source word j, no reordering at all
  const double diagonal = nn::same_order_counts(truths).error_rate(), shifted = xt::amin(aer_in)();
  metric("aer_best_head", aer(best_l, best_h));
  metric("aer_best_head_layer", double(best_l + 1));
  metric("aer_best_head_shifted", shifted);
  metric("aer_diagonal", diagonal);
  claim({"a_head_aligns", "aer_best_head < aer_diagonal - 0.3",
         text("Head ", best_h + 1, " of layer ", best_l + 1, " aligns best: AER ", fixed(aer(best_l, best_h), 3),
              ", far below the ", fixed(diagonal, 3), " of linking target word $j$ to source word $j$ (the same "
              "order, which this language breaks). Nothing in training asked for it: the alignment is learnt as a "
              "means to translate."),
         text("No head aligns much better than the same-order guess: the best, head ", best_h + 1, " of layer ",
              best_l + 1, ", scores AER ", fixed(aer(best_l, best_h), 3), " against ", fixed(diagonal, 3), ".")});
  const std::string second = "The second column scores the row one step later, which has the target word as its "
                             "input, where alignments are often read (Garg et al. 2019); here it is ";
  claim({"shifted_row_aligns_better", "aer_best_head_shifted < aer_best_head",
         second + text("better: best ", fixed(shifted, 3), "."), second + text("no better: best ", fixed(shifted, 3), "."),
         Expect::either_way});

  plots::HeatmapOptions ho;
  ho.x_labels = numbered("head ", H, 1), ho.y_labels = numbered("layer ", L, 1);
  ho.annotate = true, ho.decimals = 2, ho.vmin = 0.0, ho.vmax = 1.0;
  ho.cmap = plots::Colormap::viridis();
  ho.colorbar_label = "alignment error rate";
  HeatmapFigureOptions hf;
  hf.title = "AER of each cross-attention head (test; 0 = the true alignment)";
  hf.xlabel = "head", hf.ylabel = "decoder layer", hf.width = 1600, hf.height = 900;
  save_figure(heatmap_figure(aer, ho, hf), "head_aer",
              "AER of each decoder cross-attention head against the true alignment, all test sentences.");

  const std::size_t pick = nn::first_with_words(t.pairs.test, 8, 9);  // a held-out sentence of 8 or 9 words
  const data::TranslationPair& p = t.pairs.test[pick];
  std::vector<std::pair<std::size_t, std::size_t>> all_heads;
  std::vector<std::string> titles;
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t h = 0; h < H; ++h) {
      all_heads.push_back({l, h});
      titles.push_back(text("layer ", l + 1, ", head ", h + 1, " (AER ", fixed(aer(l, h), 2), ")"));
    }
  save_figure(alignment_grid(nn::sentence_cross_attention(m, t.test, pick, all_heads), p, titles,
                             "Decoder cross-attention on a test sentence; boxes: the true alignment"),
              "cross_attention",
              text("Cross-attention of every head while the decoder predicts each word of \"", p.target,
                   "\", the translation of \"", p.source, "\". Red boxes mark the true alignment."));
}

// The attention explorer (lessons/kit/explorer.hpp): every decoder layer's cross-attention heads on
// three test sentences and two longer than any training sentence, as the model translates them.
void explore(Transformer& m, const Task& t) {
  data::EncodedPairs shown = nn::spread_evenly(t.test, 3);
  const data::EncodedPairs longer = nn::spread_evenly(t.longer_ids, 2);
  shown.source.insert(shown.source.end(), longer.source.begin(), longer.source.end());
  shown.target.insert(shown.target.end(), longer.target.begin(), longer.target.end());
  shown.target = nn::translate(m, shown);  // what the model writes, in place of the references
  ExplorerPage page{"Lesson 08: the Transformer's cross-attention", "target words", "source words",
                    "Three test sentences, then two longer than any the model was trained on, as it translates them "
                    "(greedy). Each target word draws lines to the source words its decoder read while writing it; "
                    "choose a layer and a head, hover a word to read its weights, click it for the neuron view.",
                    {}};
  for (std::size_t i = 0; i < shown.size(); ++i)
    page.inputs.push_back(translated_sentence_input(m, shown, i, t.source_vocab, t.target_vocab));
  show_explorer(page, "explorer",
                "The attention explorer: the Transformer's cross-attention on test sentences and on longer ones "
                "(build/bin/inspect translate makes one for a sentence of your own)");
}

}  // namespace

int main(int argc, char** argv) {
  LessonInfo info{"08_transformer", "The Transformer, encoder and decoder, trained to translate",
                  "An encoder-decoder Transformer learns a toy translation with reordering; against GRUs with and "
                  "without attention, beam search, cross-attention scored against the true alignment.",
                  "bleu_test_transformer"};
  info.lead_figure = "bleu_by_length";
  info.checkpoints = {"transformer.npz"};
  return run_lesson(info, argc, argv, [] {
    const Plan plan = translation_plan();
    config("positional_method", nn::positional_name(nn::Positional::Sinusoidal));
    section("1. The task: a toy translation that reorders words, with its true alignments");
    const Task task = make_task(plan);
    the_task(task);

    section("2. The Transformer, built up");
    const std::unique_ptr<Transformer> built = translation_transformer(plan, task);
    Transformer& transformer = *built;
    the_architecture(plan, task, transformer);
    const Recipe recipe = translation_transformer_recipe(plan);
    const History th = train_translation_transformer(transformer, task, recipe);
    the_schedule(plan, task, recipe, th);
    the_training(th);

    section("3. The bottleneck: no attention, additive attention, the Transformer");
    std::unique_ptr<nn::rnn::Seq2Seq> plain, additive;
    History hp, ha;
    const std::vector<Translator> models = {
        train_translation_gru(plan, task, "none", "GRU, no attention", "gru_plain", plain, hp),
        train_translation_gru(plan, task, "additive", "GRU + additive attention", "gru_attention", additive, ha),
        translator("Transformer", "transformer", transformer, th, task)};
    the_bottleneck(plan, task, models);
    write_transformer_card("transformer", transformer, translation_task_options(plan), task.source_vocab,
                           task.target_vocab,
                           {"bleu_test_transformer", bleu_of(models.back().test, task.test), task.test.size(),
                            "the test split: held-out sentences of the training lengths, greedy decoding"});

    section("4. Decoding: greedy and beam search");
    decoding(task, transformer);

    section("5. Cross-attention against the true alignment");
    cross_attention_vs_truth(transformer, task);
    explore(transformer, task);
    say("Section 3 scored the Transformer on sentences longer than any it trained on, where its positions are "
        "absolute: past ", kMaxTrainWords, " words, sinusoids no layer was trained on. Lesson 09 trains the "
        "same Transformer with positions given as distances (T5's relative bias, RoPE, ALiBi) on the same task and "
        "asks which of them carries it past the training lengths.");
  });
}
