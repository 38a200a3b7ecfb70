// Lesson 18: captions, and soft against hard attention.
//
// Show, Attend and Tell (Xu et al., 2015) captions an image with a decoder that, before every word,
// attends over the image's regions. Its soft attention reads the weighted mean of the regions, as
// every earlier lesson did; its hard attention draws one region from the weights and reads it
// alone, which has no gradient, and is trained by REINFORCE. We make scenes whose captions are
// generated from them ("bag left of sneaker"), so the true box of every garment a caption names is
// known, train both decoders over a small Vision Transformer's patches, caption scenes made of test
// garments, and score not only the captions but where each word looked.
#include <algorithm>
#include <cmath>

#include <xtensor/xview.hpp>

#include "lessons/kit/kit.hpp"
#include "lessons/kit/vit_model.hpp"
#include "nn/caption/captioner.hpp"
#include "nn/data/fashion_mnist.hpp"
#include "nn/data/caption_scenes.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

using F = float;
using Tns = Tensor<F>;
constexpr std::size_t kSide = 64, kPatch = 16, kGrid = kSide / kPatch, kWords = data::kCaptionLength - 1;
constexpr std::uint64_t kSplitSeed = 2017;  // lesson 14's validation garments

struct SceneSets {
  data::CaptionScenes train, validation, test;
  double box_share = 0;  // the mean share of the patches inside a named garment's box: chance
};

// (B, 4) inputs <bos> A relation B and targets A relation B <eos> of some scenes.
IndexArray inputs_of(const data::CaptionScenes& s) { return xt::view(s.captions, xt::all(), xt::range(0, kWords)); }
IndexArray targets_of(const data::CaptionScenes& s) { return xt::view(s.captions, xt::all(), xt::range(1, kWords + 1)); }
data::CaptionScenes rows_of(const data::CaptionScenes& s, const std::vector<std::size_t>& rows) {
  data::CaptionScenes out;
  out.images = xt::zeros<F>({rows.size(), kSide, kSide});
  out.captions = IndexArray::from_shape({rows.size(), data::kCaptionLength});
  for (std::size_t k = 0; k < rows.size(); ++k) {
    xt::view(out.images, k) = xt::view(s.images, rows[k]);
    xt::view(out.captions, k) = xt::view(s.captions, rows[k]);
    out.boxes.push_back(s.boxes[rows[k]]);
  }
  return out;
}

// A scene in colour, the boxes of its garments drawn in orange (the first) and cyan (the second);
// only = 0 or 1 draws that one box alone, -2 none.
xt::xarray<double> with_boxes(const data::CaptionScenes& s, std::size_t n, int only = -1) {
  xt::xarray<double> rgb = xt::zeros<double>({kSide, kSide, std::size_t(3)});
  for (std::size_t c = 0; c < 3; ++c) xt::view(rgb, xt::all(), xt::all(), c) = xt::view(s.images, n);
  const double colour[2][3] = {{1.0, 0.55, 0.0}, {0.0, 0.85, 1.0}};
  for (int k = 0; k < 2; ++k) {
    if (only == -2 || (only >= 0 && k != only)) continue;
    const data::Box& b = s.boxes[n][k];
    for (std::size_t y = b.top; y < b.bottom; ++y)
      for (std::size_t x = b.left; x < b.right; ++x)
        if (y == b.top || y + 1 == b.bottom || x == b.left || x + 1 == b.right)
          for (std::size_t c = 0; c < 3; ++c) rgb(y, x, c) = colour[k][c];
  }
  return rgb;
}

std::string caption_of(const IndexArray& words, std::size_t n) {
  std::vector<Index> w(words.shape(1));
  for (std::size_t t = 0; t < w.size(); ++t) w[t] = words(n, t);
  return data::caption_text(w);
}

// ---------------------------------------------------------------------------------------------
// 1. Scenes that know their captions

SceneSets the_scenes() {
  const data::FashionMnistSplits<F> g = data::fashion_mnist_splits<F>(
      5000, kSplitSeed, full_or_quick<std::size_t>(0, 12000), full_or_quick<std::size_t>(0, 3000));
  SceneSets s;
  const std::size_t train = full_or_quick<std::size_t>(12000, 2400), held_out = full_or_quick<std::size_t>(1000, 400);
  s.train = data::make_caption_scenes(g.train, train, 3 * seed() + 1);
  s.validation = data::make_caption_scenes(g.validation, held_out, 3 * seed() + 2);
  s.test = data::make_caption_scenes(g.test, held_out, 3 * seed() + 3);
  config({{"train_scenes", train}, {"held_out_scenes", held_out}, {"canvas", kSide}, {"patch", kPatch}});
  double share = 0;
  for (std::size_t n = 0; n < s.test.size(); ++n)
    for (std::size_t k = 0; k < 2; ++k)
      share += double(xt::sum(xt::cast<int>(data::patches_in_box(s.test.boxes[n][k], kSide, kPatch)))()) /
               double(kGrid * kGrid);
  s.box_share = share / double(2 * s.test.size());
  metric("box_patch_share", s.box_share);
  say("A scene is a ", kSide, " x ", kSide, " canvas cut into four cells; two Fashion-MNIST garments go into two "
      "of them, each moved by up to 4 pixels, and the caption is generated from where they went: the left garment "
      "first (the upper one when they share a column), then one of four relations (left of, above, up-left of, "
      "down-left of), then the other garment. Since we placed them, we know each garment's box: the tightest "
      "rectangle around its bright pixels.");
  say(train, " scenes to train on are made of the Fashion-MNIST training garments; ", held_out,
      " for validation of the 5,000 training garments lesson 14 holds out, and ", held_out, " to test of the test "
      "file's garments, never seen in training. A garment's box holds on average ", percent(s.box_share, 0),
      " of the ", kGrid * kGrid, " patches of ", kPatch, " x ", kPatch, " pixels: the share of attention a reader "
      "that looks everywhere alike would put inside it.");
  std::vector<xt::xarray<double>> images, overlays(8);
  std::vector<std::string> captions;
  for (std::size_t n = 0; n < 8; ++n) images.push_back(with_boxes(s.test, n)), captions.push_back(caption_of(s.test.captions, n));
  save_figure(looks_grid(images, captions, overlays, 4, "Test scenes and their generated captions", 1000), "scenes",
              "Eight test scenes with their captions; the first garment named is boxed in orange, the second in cyan");
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

struct Scored {
  double exact = 0, tokens = 0, share = 0, pointing = 0;  // captions, and attention on object words
  double relation = 0;                                    // the relation word right
};

// Greedy captions of held-out scenes, 200 at a time: exact match and token accuracy over the four
// words (<eos> included), and for the two words that name a garment, the attention inside its box
// and whether the peak patch is inside it.
Scored score(nn::Captioner<F>& cap, const data::CaptionScenes& s, nn::Glimpse glimpse) {
  Scored r;
  const IndexArray targets = targets_of(s);
  for (std::size_t from = 0; from < s.size(); from += 200) {
    std::vector<std::size_t> rows;
    for (std::size_t n = from; n < std::min(s.size(), from + 200); ++n) rows.push_back(n);
    const data::CaptionScenes part = rows_of(s, rows);
    const nn::Caption<F> c = cap.greedy(Tns(part.images), kWords, data::kCaptionBos, glimpse);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      bool all = true;
      for (std::size_t t = 0; t < kWords; ++t) {
        const bool ok = c.words(k, t) == targets(rows[k], t);
        r.tokens += ok, all = all && ok;
      }
      r.exact += all, r.relation += c.words(k, 1) == targets(rows[k], 1);
      for (std::size_t g = 0; g < 2; ++g) {
        const xt::xarray<bool> in = data::patches_in_box(part.boxes[k][g], kSide, kPatch);
        double inside = 0, best = -1;
        bool peak_in = false;
        for (std::size_t p = 0; p < kGrid * kGrid; ++p) {
          const double w = c.weights(k, 2 * g, p);
          if (in(p / kGrid, p % kGrid)) inside += w;
          if (w > best) best = w, peak_in = in(p / kGrid, p % kGrid);
        }
        r.share += inside, r.pointing += peak_in;
      }
    }
  }
  const double n = double(s.size());
  return {r.exact / n, r.tokens / (n * kWords), r.share / (2 * n), r.pointing / (2 * n), r.relation / n};
}

Recipe recipe_for(const std::string& name) {
  Recipe r;
  r.label = name, r.epochs = epochs(20, 16), r.batch = 32, r.lr = 2e-3, r.weight_decay = 0.01, r.warmup = 0.05;
  r.floor = 0.05, r.seed = seed() + 5;
  return r;
}

struct Trained {
  std::unique_ptr<nn::Captioner<F>> model;
  History history;
  Scored test;
  double baseline = 0;  // hard: the moving average of the reward at the end
};

// Soft: the mean cross-entropy of the words. Hard: one draw of patches per word, and the surrogate
// whose gradient is the paper's estimate, L = -1/(B T) sum_b [log p(y_b | c_b) + (r_b - b) sum_t
// log alpha_{t, c_bt}], r_b = log p(y_b | c_b) held constant, b a moving average of r.
Trained train_one(nn::Glimpse glimpse, std::size_t layers, const std::string& name, const SceneSets& s) {
  Generator gen(seed() + (glimpse == nn::Glimpse::soft ? 11 : 12) + 10 * layers), draws(seed() + 13);
  Trained t{std::make_unique<nn::Captioner<F>>(captioner_config(layers), gen), {}, {}, 0};
  nn::Captioner<F>& cap = *t.model;
  const IndexArray inputs = inputs_of(s.train), targets = targets_of(s.train);
  bool first = true;
  Recipe r = recipe_for(name);
  if (layers > 0) r.epochs = epochs(10, 4);  // four times the cost of a step: fewer epochs
  r.validate = [&] {
    const Scored v = score(cap, s.validation, glimpse);
    return Scores{{"exact", v.exact}, {"pointing", v.pointing}};
  };
  t.history = train(cap, s.train.size(), [&](const std::vector<std::size_t>& rows) {
    const data::CaptionScenes b = rows_of(s.train, rows);
    const IndexArray in = inputs_of(b), want = targets_of(b);
    if (glimpse == nn::Glimpse::soft)
      return cross_entropy(cap.teacher_forced(Tns(b.images), in, glimpse).logits, want);
    const nn::CaptionPass<F> p = cap.teacher_forced(Tns(b.images), in, glimpse, &draws);
    const Tns loss = cross_entropy(p.logits, want);
    const Array<F> logp = log_softmax(p.logits, -1).value();
    Array<F> advantage = xt::zeros<F>({rows.size(), std::size_t(1)});
    double mean_reward = 0;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      double reward = 0;
      for (std::size_t w = 0; w < kWords; ++w) reward += logp(k, w, std::size_t(want(k, w)));
      advantage(k, 0) = F(reward - t.baseline), mean_reward += reward / double(rows.size());
    }
    t.baseline = first ? mean_reward : 0.9 * t.baseline + 0.1 * mean_reward, first = false;
    return sub(loss, mean(mul(Tns(advantage), p.log_choice)));
  }, r);
  t.test = score(cap, s.test, glimpse);
  return t;
}

void report_training(const Trained& soft, const Trained& hard, const SceneSets& s) {
  say("Both captioners read the same kind of encoder: the first step of lesson 14's Vision Transformer, each of the ",
      kGrid * kGrid, " patches of ", kPatch, " x ", kPatch, " pixels projected to width ",
      captioner_config(0).encoder.layer.d_model, " with a learned position added and normed (nn::PatchEncoder with no "
      "Transformer layer; section 4 adds one), so that each annotation $a_i$ knows its own patch only, as a "
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
  for (const Trained* t : {&soft, &hard})
    rows.push_back(row(t == &soft ? "soft" : "hard", fixed(t->test.exact, 3), fixed(t->test.tokens, 3),
                       fixed(t->test.relation, 3), fixed(t->test.share, 3), fixed(t->test.pointing, 3)));
  table({"attention", "exact captions", "words right", "relation right", "attention in box", "pointing"}, rows);
  metric("exact_soft", soft.test.exact), metric("exact_hard", hard.test.exact);
  metric("token_acc_soft", soft.test.tokens), metric("token_acc_hard", hard.test.tokens);
  metric("relation_acc_soft", soft.test.relation), metric("relation_acc_hard", hard.test.relation);
  metric("box_share_soft", soft.test.share), metric("box_share_hard", hard.test.share);
  metric("pointing_soft", soft.test.pointing), metric("pointing_hard", hard.test.pointing);
  claim({"soft_captions", "exact_soft >= 0.25",
         text("The soft captioner writes ", percent(soft.test.exact, 0), " of the test captions exactly and gets ",
              percent(soft.test.tokens, 0), " of the words right: the relation word ", percent(soft.test.relation, 0),
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
}

// ---------------------------------------------------------------------------------------------
// 4. Where each word looked

struct FigureRow {
  std::string label;
  const Trained* model;
  nn::Glimpse glimpse;
};

// One test scene, its four words, and where each row's model looked before each word.
void words_figure(const std::vector<FigureRow>& rows, const SceneSets& s, const std::string& stem,
                  const std::string& caption) {
  const std::size_t n = 1;
  const data::CaptionScenes one = rows_of(s.test, {n});
  std::vector<xt::xarray<double>> images, overlays;
  std::vector<std::string> captions;
  for (const FigureRow& r : rows) {
    const nn::Caption<F> c = r.model->model->greedy(Tns(one.images), kWords, data::kCaptionBos, r.glimpse);
    for (std::size_t w = 0; w < kWords; ++w) {
      images.push_back(with_boxes(one, 0, w == 0 ? 0 : w == 2 ? 1 : -2));
      overlays.push_back(xt::reshape_view(xt::cast<double>(xt::view(c.weights, 0, w)), {kGrid, kGrid}));
      captions.push_back(text(r.label, ": ", data::caption_words()[std::size_t(c.words(0, w))]));
    }
  }
  save_figure(looks_grid(images, captions, overlays, 4, text("Where each word looked (the true caption: \"", caption_of(s.test.captions, n), "\")"),
                         int(500 * rows.size())),
              stem, caption);
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
  claim({"hard_points_sharper", "pointing_hard >= pointing_soft",
         text("Hard attention points at least as well: its peak is in the box ", percent(hard.test.pointing, 0),
              " of the time against ", percent(soft.test.pointing, 0), " for soft, with ", percent(hard.test.share, 0),
              " of its weight inside (soft ", percent(soft.test.share, 0), "): a decoder that reads one patch must put "
              "its weight on the right one."),
         text("Hard attention's peak is in the box ", percent(hard.test.pointing, 0), " of the time against ",
              percent(soft.test.pointing, 0), " for soft: no better at pointing (weight inside ",
              percent(hard.test.share, 0), " against ", percent(soft.test.share, 0), ")."),
         Expect::either_way});
  words_figure({{"soft", &soft, nn::Glimpse::soft}, {"hard", &hard, nn::Glimpse::hard}}, s, "attention_by_word",
               "One test scene captioned by each decoder: the attention before each word over the scene (yellow: much), "
               "the box of the garment the word names outlined");
}

// ---------------------------------------------------------------------------------------------
// 4. An encoder that mixes the patches

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
  words_figure({{"own patch", &local, nn::Glimpse::soft}, {"mixed", &mixed, nn::Glimpse::soft}}, s, "mixed_attention",
               "The same scene, soft attention over patches that are each their own (top) and over patches after one "
               "encoder layer (bottom)");
}

// ---------------------------------------------------------------------------------------------
// 5. The price of a draw: the estimator's variance

// The gradient of the attention score's parameters (the only ones whose gradient in the hard
// decoder comes from the REINFORCE term alone), flattened.
std::vector<double> score_gradient(nn::Captioner<F>& cap, const Tns& loss) {
  cap.zero_grad();
  loss.backward();
  std::vector<double> g;
  for (const Tns& p : cap.score.parameters())
    for (const F v : p.grad()) g.push_back(v);
  return g;
}

void estimator_variance(Trained& hard, const SceneSets& s) {
  nn::Captioner<F>& cap = *hard.model;
  std::vector<std::size_t> rows;
  for (std::size_t k = 0; k < 64; ++k) rows.push_back(k);
  const data::CaptionScenes b = rows_of(s.validation, rows);
  const IndexArray in = inputs_of(b), want = targets_of(b);
  const std::size_t draws_n = full_or_quick<std::size_t>(32, 16);
  Generator draws(seed() + 21);
  auto spread = [&](double baseline) {  // per-draw gradients: their mean and their total variance
    std::vector<std::vector<double>> g;
    for (std::size_t d = 0; d < draws_n; ++d) {
      const nn::CaptionPass<F> p = cap.teacher_forced(Tns(b.images), in, nn::Glimpse::hard, &draws);
      const Array<F> logp = log_softmax(p.logits, -1).value();
      Array<F> adv = xt::zeros<F>({rows.size(), std::size_t(1)});
      for (std::size_t k = 0; k < rows.size(); ++k) {
        double r = 0;
        for (std::size_t w = 0; w < kWords; ++w) r += logp(k, w, std::size_t(want(k, w)));
        adv(k, 0) = F(r - baseline);
      }
      g.push_back(score_gradient(cap, sub(cross_entropy(p.logits, want), mean(mul(Tns(adv), p.log_choice)))));
    }
    std::vector<double> m(g[0].size(), 0.0);
    for (const auto& x : g)
      for (std::size_t i = 0; i < m.size(); ++i) m[i] += x[i] / double(draws_n);
    double var = 0;
    for (const auto& x : g)
      for (std::size_t i = 0; i < m.size(); ++i) var += (x[i] - m[i]) * (x[i] - m[i]) / double(draws_n - 1);
    return std::make_pair(m, var);
  };
  const auto [mean_b, var_b] = spread(hard.baseline);
  const auto [mean_0, var_0] = spread(0.0);
  const std::vector<double> soft_g =
      score_gradient(cap, cross_entropy(cap.teacher_forced(Tns(b.images), in, nn::Glimpse::soft).logits, want));
  double soft_norm = 0, mean_norm = 0, dot = 0;
  for (std::size_t i = 0; i < soft_g.size(); ++i)
    soft_norm += soft_g[i] * soft_g[i], mean_norm += mean_b[i] * mean_b[i], dot += soft_g[i] * mean_b[i];
  soft_norm = std::sqrt(soft_norm), mean_norm = std::sqrt(mean_norm);
  cap.zero_grad();
  metric("hard_grad_sd_over_soft_norm", std::sqrt(var_b) / soft_norm);
  metric("hard_grad_sd_over_soft_norm_no_baseline", std::sqrt(var_0) / soft_norm);
  metric("hard_grad_sd_over_its_mean", std::sqrt(var_b) / mean_norm);
  metric("hard_mean_grad_cosine_soft", dot / (soft_norm * mean_norm));
  say("How noisy is one draw? On a fixed batch of 64 validation scenes and the trained hard decoder, ", draws_n,
      " draws of patches give ", draws_n, " gradients of the attention score's parameters ($W_q$, $W_k$, $v$). "
      "Their spread (the square root of the summed variances) is ", fixed(std::sqrt(var_b) / mean_norm, 2),
      " times the length of their mean, and ", fixed(std::sqrt(var_b) / soft_norm, 2),
      " times the length of the soft gradient of the same model on the same batch, which has no spread at all: it "
      "is computed, not drawn. Their mean and the soft gradient point alike to cosine ",
      fixed(dot / (soft_norm * mean_norm), 2), ".");
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

}  // namespace

int main(int argc, char** argv) {
  return run_lesson({"18_captions", "Captions, and soft against hard attention",
                     "A captioner over image patches with soft and with hard attention (REINFORCE), scored on held-out "
                     "scenes by its captions and by whether each garment word looks at its garment",
                     "pointing_soft", "attention_by_word"},
                    argc, argv, [] {
                      section("1. Scenes that know their captions");
                      const SceneSets s = the_scenes();
                      section("2. Soft and hard glimpses");
                      Trained soft = train_one(nn::Glimpse::soft, 0, "soft attention", s);
                      Trained hard = train_one(nn::Glimpse::hard, 0, "hard attention", s);
                      report_training(soft, hard, s);
                      section("3. Where each word looked");
                      where_words_look(soft, hard, s);
                      section("4. An encoder that mixes the patches");
                      mixing_encoder(soft, train_one(nn::Glimpse::soft, 1, "soft, one encoder layer", s), s);
                      section("5. The price of a draw");
                      estimator_variance(hard, s);
                    });
}
