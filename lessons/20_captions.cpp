// Lesson 20: captions, and soft against hard attention.
//
// Show, Attend and Tell (Xu et al., 2015) captions an image with a decoder that, before every word,
// attends over the image's regions. Its soft attention reads the weighted mean of the regions, as
// every earlier lesson did; its hard attention draws one region from the weights and reads it
// alone, which has no gradient, and is trained by REINFORCE. We make scenes of two to four garments
// whose captions are generated from them ("bag left of sneaker above shirt"), so the true box of
// every garment a caption names is known, train both decoders over a small Vision Transformer's
// patches, caption scenes made of test garments, and score not only the captions (exact match,
// BLEU) but where each word looked; then the paper's doubly stochastic regulariser.
#include <algorithm>
#include <cmath>

#include <xtensor/xview.hpp>

#include "lessons/kit/caption_model.hpp"
#include "lessons/kit/caption_views.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/vit_model.hpp"
#include "nn/caption/caption_scores.hpp"
#include "nn/caption/captioner.hpp"
#include "nn/caption/coverage.hpp"
#include "nn/caption/estimator_spread.hpp"
#include "nn/data/fashion_mnist.hpp"
#include "nn/data/caption_scenes.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

using F = float;
using Tns = Tensor<F>;
constexpr std::size_t kSide = 64, kPatch = 16, kGrid = kSide / kPatch, kMostGarments = 4;
constexpr std::size_t kWords = data::caption_length(kMostGarments) - 1;  // the longest caption's words and <eos>
constexpr std::uint64_t kSplitSeed = 2017;  // lesson 16's validation garments
constexpr double kCoverWeight = 1.0 / double(kGrid * kGrid);  // lambda of the doubly stochastic penalty

struct SceneSets {
  data::CaptionScenes train, validation, test;
  SceneRecipe test_recipe;  // how test was made, on the captioners' cards (lessons/kit/caption_model)
  double box_share = 0;  // the mean share of the patches inside a named garment's box: chance
};
using Scored = nn::CaptionScores;

// ---------------------------------------------------------------------------------------------
// 1. Scenes that know their captions

SceneSets the_scenes() {
  const data::FashionMnistSplits<F> g = data::fashion_mnist_splits<F>(
      5000, kSplitSeed, full_or_quick<std::size_t>(0, 12000), full_or_quick<std::size_t>(0, 3000));
  SceneSets s;
  const std::size_t train = full_or_quick<std::size_t>(12000, 2400), held_out = full_or_quick<std::size_t>(1000, 400);
  data::CaptionSceneOptions o;
  o.min_garments = 2, o.max_garments = kMostGarments;
  s.train = data::make_caption_scenes(g.train, train, 3 * seed() + 1, o);
  s.validation = data::make_caption_scenes(g.validation, held_out, 3 * seed() + 2, o);
  s.test_recipe = {held_out, full_or_quick<std::size_t>(0, 3000), 3 * seed() + 3, o};
  s.test = recipe_scenes(s.test_recipe, g.test);
  config({{"train_scenes", train}, {"held_out_scenes", held_out}, {"canvas", kSide}, {"patch", kPatch},
          {"garments", text(o.min_garments, " to ", o.max_garments)}});
  s.box_share = data::box_patch_share(s.test, kPatch);
  metric("box_patch_share", s.box_share);
  say("A scene is a ", kSide, " x ", kSide, " canvas cut into four cells; two to four Fashion-MNIST garments go "
      "into as many of them, each moved by up to 4 pixels, and the caption is generated from where they went. It "
      "reads the cells column by column, the left column first and top to bottom, and between two garments says "
      "where the first is from the next: left of, above, up-left of or down-left of (in that order no other case "
      "comes up). Since we placed them, we know each garment's box: the tightest rectangle around its bright pixels.");
  say(train, " scenes to train on are made of the Fashion-MNIST training garments; ", held_out,
      " for validation of the 5,000 training garments lesson 16 holds out, and ", held_out, " to test of the test "
      "file's garments, never seen in training. A garment's box holds on average ", percent(s.box_share, 0),
      " of the ", kGrid * kGrid, " patches of ", kPatch, " x ", kPatch, " pixels: the share of attention a reader "
      "that looks everywhere alike would put inside it.");
  std::vector<xt::xarray<double>> images, overlays(6);
  std::vector<std::string> captions;
  for (std::size_t n = 0; n < 6; ++n)
    images.push_back(data::scene_with_boxes(s.test, n)), captions.push_back(data::caption_text(s.test.captions, n));
  save_figure(looks_grid(images, captions, overlays, 2, "Test scenes and their generated captions", 1500), "scenes",
              "Six test scenes with their captions; the garments named are boxed in orange, cyan, magenta and green, "
              "in the caption's order");
  return s;
}

// ---------------------------------------------------------------------------------------------
// 2 and 3. Two captioners: soft and hard glimpses

// layers = 0: every annotation is its own patch (embedding, position, norm); 1: one pre-norm
// Transformer layer lets every patch read every other before the decoder reads them.
nn::CaptionerConfig captioner_config(std::size_t layers) {
  nn::CaptionerConfig c;
  c.encoder.image_height = c.encoder.image_width = kSide;
  c.encoder.patch = kPatch, c.encoder.num_layers = layers;
  c.encoder.layer = nn::LayerConfig{48, 4, 96, 0.0, /*norm_first=*/true, nn::Activation::GELU, 1e-6};
  c.vocab = data::kCaptionVocab, c.embed = 16, c.hidden = 64, c.attention_hidden = 32;
  return c;
}

// Greedy captions of held-out scenes, 200 at a time, and their scores (nn/caption/caption_scores.hpp):
// exact match, words right, BLEU, and for the words that name a garment the attention inside its
// box and whether the peak patch is inside it.
nn::Caption<F> caption_all(nn::Captioner<F>& cap, const data::CaptionScenes& s, nn::Glimpse glimpse) {
  return nn::greedy_in_batches(cap, s.images, kWords, data::kCaptionBos, glimpse);
}
Scored score(nn::Captioner<F>& cap, const data::CaptionScenes& s, nn::Glimpse glimpse) {
  const nn::Caption<F> c = caption_all(cap, s, glimpse);
  return nn::score_captions(c.words, c.weights, s, kPatch);
}

Recipe recipe_for(const std::string& name) {
  Recipe r;
  r.label = name, r.epochs = epochs(20, 16), r.batch = 32, r.lr = 2e-3, r.weight_decay = 0.01, r.warmup = 0.05;
  r.floor = 0.05, r.seed = seed() + 5;
  return r;
}

// The two captioners of section 2 as files (the recipe's checkpoint and write_captioner_card).
std::string checkpoint_of(nn::Glimpse glimpse) { return glimpse == nn::Glimpse::soft ? "captioner_soft" : "captioner_hard"; }

struct Trained {
  std::unique_ptr<nn::Captioner<F>> model;
  History history;
  Scored test;
  double baseline = 0;  // hard: the moving average of the reward at the end
  double cover = 0;     // test: the doubly stochastic penalty of its greedy captions' attention
};

// The mean over scenes of sum_i (1 - sum_t alpha_ti)^2 over the words each caption has.
double cover_penalty(const nn::Caption<F>& c, const data::CaptionScenes& s) {
  return double(nn::doubly_stochastic_penalty(Tns(c.weights), data::caption_word_counts(s)).value()());
}

// Soft: the mean cross-entropy of the words (<pad> ignored), plus lambda times the doubly
// stochastic penalty when cover > 0. Hard: one draw of patches per word, and the surrogate whose
// gradient is the paper's estimate, L = -1/(B T) sum_b [log p(y_b | c_b) + (r_b - b) sum_t
// log alpha_{t, c_bt}], r_b = log p(y_b | c_b) held constant, b a moving average of r, the sum over
// the caption's words (padding draws nothing).
Trained train_one(nn::Glimpse glimpse, std::size_t layers, const std::string& name, const SceneSets& s,
                  double cover = 0) {
  Generator gen(seed() + (glimpse == nn::Glimpse::soft ? 11 : 12) + 10 * layers), draws(seed() + 13);
  Trained t{std::make_unique<nn::Captioner<F>>(captioner_config(layers), gen), {}, {}, 0};
  nn::Captioner<F>& cap = *t.model;
  bool first = true;
  Recipe r = recipe_for(name);
  if (layers == 0 && cover == 0) r.checkpoint = checkpoint_of(glimpse) + ".npz";  // with its card: what `inspect captions` runs
  if (layers > 0) r.epochs = epochs(10, 4);  // four times the cost of a step: fewer epochs
  r.validate = [&] {
    const Scored v = score(cap, s.validation, glimpse);
    return Scores{{"exact", v.exact}, {"pointing", v.pointing}};
  };
  t.history = train(cap, s.train.size(), [&](const std::vector<std::size_t>& rows) {
    const data::CaptionScenes b = data::select_scenes(s.train, rows);
    const IndexArray in = data::caption_inputs(b), want = data::caption_targets(b);
    const IndexArray counts = data::caption_word_counts(b);
    if (glimpse == nn::Glimpse::soft) {
      const nn::CaptionPass<F> p = cap.teacher_forced(Tns(b.images), in, glimpse);
      const Tns loss = cross_entropy(p.logits, want, {data::kCaptionPad});
      return cover > 0 ? add(loss, mul(nn::doubly_stochastic_penalty(p.weights, counts), F(cover))) : loss;
    }
    const nn::ReinforceLoss<F> r =
        nn::reinforce_loss(cap.teacher_forced(Tns(b.images), in, glimpse, &draws), want, counts, t.baseline, data::kCaptionPad);
    t.baseline = first ? r.mean_reward : 0.9 * t.baseline + 0.1 * r.mean_reward, first = false;
    return r.loss;
  }, r);
  const nn::Caption<F> c = caption_all(cap, s.test, glimpse);
  t.test = nn::score_captions(c.words, c.weights, s.test, kPatch), t.cover = cover_penalty(c, s.test);
  return t;
}

void report_training(const Trained& soft, const Trained& hard, const SceneSets& s) {
  say("Both captioners read the same kind of encoder: the first step of lesson 16's Vision Transformer, each of the ",
      kGrid * kGrid, " patches of ", kPatch, " x ", kPatch, " pixels projected to width ",
      captioner_config(0).encoder.layer.d_model, " with a learned position added and normed (nn::PatchEncoder with no "
      "Transformer layer; section 5 adds one), so that each annotation $a_i$ knows its own patch only, as a "
      "convolutional feature with a small receptive field does in the paper. The decoder starts from zeros (the "
      "paper starts it from the mean annotation, a summary of the whole scene it could caption from without looking) "
      "and is "
      "lesson 02's: a GRU whose query is its previous state, with the additive score");
  say("$$e_{ti} = v^\\top \\tanh(W_q s_{t-1} + W_k a_i),\\quad \\alpha_t = \\mathrm{softmax}(e_t),\\quad "
      "s_t = \\mathrm{GRU}([E y_{t-1}; z_t], s_{t-1}),\\quad p(y_t) = \\mathrm{softmax}(W_o [s_t; z_t]).$$");
  say("Soft attention reads $z_t = \\sum_i \\alpha_{ti} a_i$ and is trained by backpropagation through it. Hard "
      "attention draws one patch $c_t \\sim \\alpha_t$ and reads $z_t = a_{c_t}$ alone: the draw has no gradient, "
      "so it follows the paper's estimate, with $r = \\log p(y \\mid c, x)$ the caption's log-likelihood and $b$ a "
      "moving average of it,");
  say("$$\\nabla \\approx \\nabla \\log p(y \\mid c, x) + (r - b)\\, \\nabla \\sum_t \\log \\alpha_{t, c_t}.$$");
  say("The second term needs $\\partial \\log \\alpha_c / \\partial \\alpha = 1/\\alpha_c$ at the drawn patch "
      "(the op log_of_chosen, gradient-checked with the draws held fixed). At test time the hard decoder reads the "
      "patch of largest weight. Both trained the same way: ",
      describe(recipe_for(""), fit_steps(s.train.size(), recipe_for(""))), ".");
  std::vector<std::vector<std::string>> rows;
  for (const Trained* t : {&soft, &hard}) {
    std::string by_count;
    for (const auto& [k, e] : t->test.exact_by_garments) {
      by_count += (by_count.empty() ? "" : " / ") + fixed(e, 2);
      metric(text("exact_", t == &soft ? "soft" : "hard", "_", k, "_garments"), e);
    }
    rows.push_back(row(t == &soft ? "soft" : "hard", fixed(t->test.exact, 3), by_count, fixed(t->test.bleu, 3),
                       fixed(t->test.tokens, 3), fixed(t->test.relation, 3), fixed(t->test.share, 3),
                       fixed(t->test.pointing, 3)));
  }
  table({"attention", "exact captions", "exact, 2 / 3 / 4 garments", "BLEU", "words right", "relations right",
         "attention in box", "pointing"},
        rows);
  say("BLEU is corpus BLEU-4 over the caption's tokens (a relation such as \"up-left of\" is one token), the "
      "translation score of lesson 08: it gives credit for the runs of words a caption gets right where exact match "
      "gives none for a caption one word wrong.");
  metric("bleu_soft", soft.test.bleu), metric("bleu_hard", hard.test.bleu);
  metric("exact_soft", soft.test.exact), metric("exact_hard", hard.test.exact);
  metric("token_acc_soft", soft.test.tokens), metric("token_acc_hard", hard.test.tokens);
  metric("relation_acc_soft", soft.test.relation), metric("relation_acc_hard", hard.test.relation);
  metric("box_share_soft", soft.test.share), metric("box_share_hard", hard.test.share);
  metric("pointing_soft", soft.test.pointing), metric("pointing_hard", hard.test.pointing);
  claim({"soft_captions", "exact_soft >= 0.25",
         text("The soft captioner writes ", percent(soft.test.exact, 0), " of the test captions exactly and gets ",
              percent(soft.test.tokens, 0), " of the words right, the relation words ", percent(soft.test.relation, 0),
              " of the time."),
         text("The soft captioner writes only ", percent(soft.test.exact, 0), " of the test captions exactly (",
              percent(soft.test.tokens, 0), " of the words)."),
         Expect::full_run});
  claim({"hard_captions", "exact_hard >= exact_soft - 0.05",
         text("Hard attention captions about as well (", percent(hard.test.exact, 0), " exact against ",
              percent(soft.test.exact, 0), ")."),
         text("Hard attention captions worse: ", percent(hard.test.exact, 0), " exact against ",
              percent(soft.test.exact, 0), " for soft, with the same recipe; its gradient is an estimate from one draw."),
         Expect::either_way});
  std::vector<Run> curves{{"soft attention", &soft.history}, {"hard attention", &hard.history}};
  ScoreFigureOptions style{"Held-out exact captions while training"};
  style.score = "exact", style.ylabel = "validation exact match";
  save_figure(score_against_cost(curves, style), "training",
              "Validation exact-match after every epoch of the two captioners, against steps and CPU seconds");
  // Where the hard decoder looked while it trained: its pointing on validation scenes, epoch by epoch.
  const std::vector<double>& pointing = hard.history.validation_of("pointing");
  const std::size_t low = std::size_t(std::min_element(pointing.begin(), pointing.end()) - pointing.begin());
  const double chance = data::box_patch_share(s.validation, kPatch);
  metric("box_patch_share_validation", chance);
  metric("pointing_hard_val_lowest", pointing[low]), metric("pointing_hard_val_lowest_epoch", double(low + 1));
  style = {"Held-out pointing while training"};
  style.score = "pointing", style.ylabel = "validation pointing", style.chance = chance;
  save_figure(score_against_cost(curves, style), "pointing_training",
              "How often the peak patch of a word that names a garment lies in that garment's box, on validation "
              "scenes after every epoch of the two captioners; dashed: attention spread evenly");
  claim({"hard_fixes_off_the_garments", "pointing_hard_val_lowest < box_patch_share_validation",
         text("Hard attention drifts off the garments: its validation pointing is at its lowest after epoch ", low + 1,
              ", ", percent(pointing[low], 0), ", below the ", percent(chance, 0), " of attention spread evenly. "
              "REINFORCE raises the weight of whichever patches were drawn with likelier captions, and while the "
              "decoder cannot yet tell one garment from another, a garment's own patch need not be among them; once a "
              "few patches hold nearly all the weight, the draws seldom try the others, and the estimate hears little "
              "about them."),
         text("Hard attention's validation pointing never fell below the ", percent(chance, 0), " of attention spread "
              "evenly (its lowest ", percent(pointing[low], 0), ", after epoch ", low + 1, ")."),
         Expect::either_way});
}

// ---------------------------------------------------------------------------------------------
// 3. Where each word looked

// One test scene (the first of three garments) captioned by each reader (lessons/kit/caption_views):
// where it looked before each word of the true caption; a word that names a garment shows its box.
void words_figure(const std::vector<CaptionReader>& rows, const SceneSets& s, const std::string& stem,
                  const std::string& caption) {
  save_figure(caption_words_grid(rows, s.test, data::first_scene_with(s.test, 3), kWords), stem, caption);
}

void where_words_look(const Trained& soft, const Trained& hard, const SceneSets& s) {
  claim({"soft_points", "pointing_soft >= box_patch_share + 0.2",
         text("Nothing told the soft decoder where the garments are, yet when it names one, ",
              percent(soft.test.share, 0), " of its attention lies inside that garment's box (",
              percent(s.box_share, 0), " for attention spread evenly), and its peak patch is inside the box ",
              percent(soft.test.pointing, 0), " of the time."),
         text("The soft decoder's attention does not find the garments it names: ", percent(soft.test.share, 0),
              " inside the box (", percent(s.box_share, 0), " evenly), pointing ", percent(soft.test.pointing, 0), "."),
         Expect::full_run});
  metric("peak_outside_boxes_hard", hard.test.outside), metric("peak_weight_hard", hard.test.peak);
  claim({"hard_points", "pointing_hard >= box_patch_share + 0.2",
         text("By the end of training hard attention, taught only by its draws, points too: when it names a garment "
              "its peak patch is inside that garment's box ", percent(hard.test.pointing, 0), " of the time (",
              percent(s.box_share, 0), " for attention spread evenly)."),
         text("In this run's ", fit_steps(s.train.size(), recipe_for("")), " steps hard attention did not learn to "
              "point: when it names a garment its peak patch is inside that garment's box ",
              percent(hard.test.pointing, 0), " of the time, against ", percent(s.box_share, 0),
              " for attention spread evenly; ", percent(hard.test.outside, 0), " of those peaks lie on no garment at "
              "all, and hold ", percent(hard.test.peak, 0), " of the word's weight on average."),
         Expect::full_run});
  claim({"hard_points_sharper", "pointing_hard >= pointing_soft",
         text("Hard attention points at least as well: its peak is in the box ", percent(hard.test.pointing, 0),
              " of the time against ", percent(soft.test.pointing, 0), " for soft, with ", percent(hard.test.share, 0),
              " of its weight inside (soft ", percent(soft.test.share, 0), "): a decoder that reads one patch must put "
              "its weight on the right one."),
         text("Hard attention's peak is in the box ", percent(hard.test.pointing, 0), " of the time against ",
              percent(soft.test.pointing, 0), " for soft: no better at pointing (weight inside ",
              percent(hard.test.share, 0), " against ", percent(soft.test.share, 0), ")."),
         Expect::either_way});
  words_figure({{"soft", soft.model.get(), nn::Glimpse::soft}, {"hard", hard.model.get(), nn::Glimpse::hard}}, s,
               "attention_by_word",
               "One test scene captioned by each decoder: the attention before each word over the scene (yellow: much), "
               "the box of the garment the word names outlined");
}

// ---------------------------------------------------------------------------------------------
// 4. Attention that covers the scene: the doubly stochastic regulariser

void doubly_stochastic(const Trained& soft, const Trained& covered, const SceneSets& s) {
  say("Each word's weights sum to 1 over the patches. Show, Attend and Tell asks the other sum to come near 1 too: "
      "over a caption every patch should get about one word's worth of attention, so that the decoder looks at every "
      "part of the image at some point. It adds to the loss");
  say("$$\\lambda \\sum_i \\Big(1 - \\sum_t \\alpha_{ti}\\Big)^2,$$");
  say("whose gradient, $-2\\lambda (1 - \\sum_t \\alpha_{ti})$ on every $\\alpha_{ti}$, moves weight from patches many "
      "words read to patches none read (the op doubly_stochastic_penalty, gradient-checked). We train the soft "
      "captioner again with $\\lambda = 1/", kGrid * kGrid, "$ (a weight of 1 on the mean over patches, as common "
      "implementations write it). Here a caption has 4 to ", kWords, " words (with <eos>) for ", kGrid * kGrid, " patches, so the "
      "sums cannot all reach 1: the penalty is least when attention spreads evenly.");
  table({"soft attention", "exact captions", "BLEU", "words right", "attention in box", "pointing",
         "penalty on test"},
        {row("without the penalty", fixed(soft.test.exact, 3), fixed(soft.test.bleu, 3), fixed(soft.test.tokens, 3),
             fixed(soft.test.share, 3), fixed(soft.test.pointing, 3), fixed(soft.cover, 2)),
         row(text("with it, lambda = 1/", kGrid * kGrid), fixed(covered.test.exact, 3), fixed(covered.test.bleu, 3),
             fixed(covered.test.tokens, 3), fixed(covered.test.share, 3), fixed(covered.test.pointing, 3),
             fixed(covered.cover, 2))});
  metric("exact_covered", covered.test.exact), metric("bleu_covered", covered.test.bleu);
  metric("box_share_covered", covered.test.share), metric("pointing_covered", covered.test.pointing);
  metric("cover_penalty_soft", soft.cover), metric("cover_penalty_covered", covered.cover);
  claim({"penalty_spreads_attention", "cover_penalty_covered <= cover_penalty_soft",
         text("The penalty does what it says: on test scenes the sum it penalises falls from ", fixed(soft.cover, 2),
              " to ", fixed(covered.cover, 2), "."),
         text("The penalty did not lower itself on test scenes (", fixed(soft.cover, 2), " without, ",
              fixed(covered.cover, 2), " with)."),
         Expect::every_run});
  claim({"penalty_keeps_pointing", "pointing_covered >= pointing_soft - 0.03",
         text("And the attention still points: the peak is in the named garment's box ",
              percent(covered.test.pointing, 0), " of the time against ", percent(soft.test.pointing, 0),
              " without the penalty, with ", percent(covered.test.share, 0), " of the weight inside (",
              percent(soft.test.share, 0), " without); captions ", percent(covered.test.exact, 0), " exact against ",
              percent(soft.test.exact, 0), "."),
         text("It costs pointing: the peak is in the named garment's box ", percent(covered.test.pointing, 0),
              " of the time against ", percent(soft.test.pointing, 0), " without it, with ",
              percent(covered.test.share, 0), " of the weight inside (", percent(soft.test.share, 0), "). Pushing "
              "every patch toward one word's worth of attention pushes weight onto empty canvas, which the paper's "
              "photographs, full everywhere, do not have; captions ", percent(covered.test.exact, 0), " exact against ",
              percent(soft.test.exact, 0), "."),
         Expect::either_way});
  words_figure({{"no penalty", soft.model.get(), nn::Glimpse::soft},
                {"penalty", covered.model.get(), nn::Glimpse::soft}}, s, "covered_attention",
               "The same scene, soft attention trained without (top) and with (bottom) the doubly stochastic penalty");
}

// ---------------------------------------------------------------------------------------------
// 5. An encoder that mixes the patches

void mixing_encoder(const Trained& local, const Trained& mixed, const SceneSets& s) {
  say("The paper's annotations come from a convolutional network, each a summary of one region. A Vision "
      "Transformer's layer lets every patch read every other first. We train the soft captioner once more with one "
      "such layer (pre-norm, ", captioner_config(1).encoder.layer.heads, " heads) between the patches and the decoder, "
      "for ", epochs(10, 4), " epochs, and score it the same way.");
  table({"annotations", "exact captions", "words right", "attention in box", "pointing"},
        {row("each its own patch", fixed(local.test.exact, 3), fixed(local.test.tokens, 3), fixed(local.test.share, 3),
             fixed(local.test.pointing, 3)),
         row("after one encoder layer", fixed(mixed.test.exact, 3), fixed(mixed.test.tokens, 3),
             fixed(mixed.test.share, 3), fixed(mixed.test.pointing, 3))});
  metric("exact_mixed", mixed.test.exact), metric("token_acc_mixed", mixed.test.tokens);
  metric("box_share_mixed", mixed.test.share), metric("pointing_mixed", mixed.test.pointing);
  claim({"mixed_loses_the_boxes", "pointing_mixed <= pointing_soft - 0.2",
         text("Its captions are ", mixed.test.exact >= local.test.exact ? "as good or better" : "a little worse", " (",
              percent(mixed.test.exact, 0), " exact against ", percent(local.test.exact, 0), "), but its attention no "
              "longer finds the garment a word names: ", percent(mixed.test.share, 0), " of it inside the box, the peak "
              "inside ", percent(mixed.test.pointing, 0), " of the time, against ", percent(local.test.pointing, 0),
              ". Once the patches have read each other, any patch can tell the decoder what the garment is, and the "
              "weights over patches say where the decoder read, not where the evidence was: attention weights are an "
              "explanation only when the things attended to are local."),
         text("With one encoder layer the attention still finds the garments: peak inside the box ",
              percent(mixed.test.pointing, 0), " of the time against ", percent(local.test.pointing, 0),
              " with each patch alone (captions: ", percent(mixed.test.exact, 0), " exact against ",
              percent(local.test.exact, 0), ")."),
         Expect::either_way});
  words_figure({{"own patch", local.model.get(), nn::Glimpse::soft},
                {"mixed", mixed.model.get(), nn::Glimpse::soft}}, s, "mixed_attention",
               "The same scene, soft attention over patches that are each their own (top) and over patches after one "
               "encoder layer (bottom)");
}

// ---------------------------------------------------------------------------------------------
// 6. The price of a draw: the estimator's variance

void estimator_variance(Trained& hard, const SceneSets& s) {
  nn::Captioner<F>& cap = *hard.model;
  std::vector<std::size_t> rows;
  for (std::size_t k = 0; k < 64; ++k) rows.push_back(k);
  const data::CaptionScenes b = data::select_scenes(s.validation, rows);
  const IndexArray in = data::caption_inputs(b), want = data::caption_targets(b), counts = data::caption_word_counts(b);
  const std::size_t draws_n = full_or_quick<std::size_t>(32, 16);
  Generator draws(seed() + 21);
  // The gradient of the attention score's parameters only: in the hard decoder theirs comes from
  // the REINFORCE term alone. One per draw of patches, with the baseline b given.
  const std::vector<Tns> of = cap.score.parameters();
  auto spread = [&](double baseline) {
    std::vector<std::vector<double>> g;
    for (std::size_t d = 0; d < draws_n; ++d) {
      const nn::CaptionPass<F> p = cap.teacher_forced(Tns(b.images), in, nn::Glimpse::hard, &draws);
      g.push_back(nn::flat_gradient(cap, of, nn::reinforce_loss(p, want, counts, baseline, data::kCaptionPad).loss));
    }
    return nn::spread_of(g);
  };
  const nn::DrawSpread with_b = spread(hard.baseline), without_b = spread(0.0);
  const double var_b = with_b.variance, var_0 = without_b.variance, mean_norm = nn::vector_length(with_b.mean);
  const Tns soft_loss =
      cross_entropy(cap.teacher_forced(Tns(b.images), in, nn::Glimpse::soft).logits, want, {data::kCaptionPad});
  const std::vector<double> soft_g = nn::flat_gradient(cap, of, soft_loss);
  const double soft_norm = nn::vector_length(soft_g), cosine = nn::vector_cosine(soft_g, with_b.mean);
  cap.zero_grad();
  metric("hard_grad_sd_over_soft_norm", std::sqrt(var_b) / soft_norm);
  metric("hard_grad_sd_over_soft_norm_no_baseline", std::sqrt(var_0) / soft_norm);
  metric("hard_grad_sd_over_its_mean", std::sqrt(var_b) / mean_norm);
  metric("hard_mean_grad_cosine_soft", cosine);
  say("How noisy is one draw? On a fixed batch of 64 validation scenes and the trained hard decoder, ", draws_n,
      " draws of patches give ", draws_n, " gradients of the attention score's parameters ($W_q$, $W_k$, $v$). "
      "Their spread (the square root of the summed variances) is ", fixed(std::sqrt(var_b) / mean_norm, 2),
      " times the length of their mean, and ", fixed(std::sqrt(var_b) / soft_norm, 2),
      " times the length of the soft gradient of the same model on the same batch, which has no spread at all: it "
      "is computed, not drawn. Their mean and the soft gradient point alike to cosine ",
      fixed(cosine, 2), ".");
  claim({"hard_gradient_noisy", "hard_grad_sd_over_its_mean >= 1",
         text("One draw's gradient is mostly noise: its spread exceeds the mean it estimates (", fixed(std::sqrt(var_b) / mean_norm, 2),
              " times), which is why hard attention needs the baseline, many steps, or both."),
         text("One draw's gradient is fairly steady here: its spread is ", fixed(std::sqrt(var_b) / mean_norm, 2),
              " of its mean's length."),
         Expect::either_way});
  claim({"baseline_reduces_variance", "hard_grad_sd_over_soft_norm_no_baseline >= hard_grad_sd_over_soft_norm",
         text("Without the baseline (b = 0, the reward itself as the weight) the spread grows to ",
              fixed(std::sqrt(var_0) / soft_norm, 2), " soft-gradient lengths from ", fixed(std::sqrt(var_b) / soft_norm, 2),
              ": the reward, a log-likelihood, is always negative, so every draw's patch is pushed down and only the "
              "difference between draws carries information."),
         text("The baseline did not reduce the spread on this batch (", fixed(std::sqrt(var_0) / soft_norm, 2),
              " without it, ", fixed(std::sqrt(var_b) / soft_norm, 2), " with).")});
}

// ---------------------------------------------------------------------------------------------
// 7. The attention explorer

void explorer(const Trained& soft, const Trained& hard, const Trained& covered, const SceneSets& s) {
  ExplorerPage page{"Lesson 20: where each word of a caption looked", "caption words", "patches",
                    "Test scenes captioned by the soft, the hard and the penalised soft decoder. Each word on the right "
                    "is joined to the 16 patches (row r, column c) on the left by lines as dark as its weight; a patch "
                    "whose centre lies in a garment's box carries that garment's word of the true caption, numbered.",
                    {}};
  for (std::size_t n = 0; n < 4; ++n)
    for (const CaptionReader& r : {CaptionReader{"soft", soft.model.get(), nn::Glimpse::soft},
                                   CaptionReader{"hard", hard.model.get(), nn::Glimpse::hard},
                                   CaptionReader{"soft with the penalty", covered.model.get(), nn::Glimpse::soft}})
      page.inputs.push_back(caption_attention_input(r, s.test, n, kWords));
  show_explorer(page, "explorer", "The attention explorer: four test scenes, each captioned by the three decoders; "
                                  "hover a word to see which patches it read");
}

// The two captioners of section 2 beside their checkpoints (lessons/kit/caption_model): what
// `inspect captions` runs, with the exact match each scored on the test scenes.
void write_cards(const Trained& soft, const Trained& hard, const SceneSets& s) {
  for (const Trained* t : {&soft, &hard}) {
    const nn::Glimpse g = t == &soft ? nn::Glimpse::soft : nn::Glimpse::hard;
    write_captioner_card(checkpoint_of(g), *t->model, g, kWords,
                         {t == &soft ? "exact_soft" : "exact_hard", t->test.exact, s.test.size(),
                          "the test scenes (test_scenes): garments of the test file"},
                         s.test_recipe);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return run_lesson({"20_captions", "Captions, and soft against hard attention",
                     "A captioner over image patches with soft and with hard attention (REINFORCE), scored on held-out "
                     "scenes by its captions and by whether each garment word looks at its garment",
                     "pointing_soft", "attention_by_word", {"captioner_soft.npz", "captioner_hard.npz"}},
                    argc, argv, [] {
                      section("1. Scenes that know their captions");
                      const SceneSets s = the_scenes();
                      section("2. Soft and hard glimpses");
                      Trained soft = train_one(nn::Glimpse::soft, 0, "soft attention", s);
                      Trained hard = train_one(nn::Glimpse::hard, 0, "hard attention", s);
                      report_training(soft, hard, s);
                      write_cards(soft, hard, s);
                      section("3. Where each word looked");
                      where_words_look(soft, hard, s);
                      section("4. Attention that covers the scene");
                      const Trained covered = train_one(nn::Glimpse::soft, 0, "soft, doubly stochastic", s, kCoverWeight);
                      doubly_stochastic(soft, covered, s);
                      section("5. An encoder that mixes the patches");
                      mixing_encoder(soft, train_one(nn::Glimpse::soft, 1, "soft, one encoder layer", s), s);
                      section("6. The price of a draw");
                      estimator_variance(hard, s);
                      section("7. The attention explorer");
                      explorer(soft, hard, covered, s);
                    });
}
