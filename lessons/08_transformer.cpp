// Lesson 08: the Transformer, encoder and decoder, trained to translate.
//
// Everything the course has built comes together: embeddings and sinusoidal positions, multi-head
// self-attention in the encoder, masked self-attention and cross-attention in the decoder, the
// Noam learning-rate schedule and label smoothing. We train it on a toy translation whose target
// language puts the words in another order, where the true word alignment of every sentence is
// known, and ask four questions with measurements: does attention remove the fixed-vector
// bottleneck of a recurrent encoder-decoder (BLEU by sentence length, sentences longer than any
// seen in training included)? What does beam search buy over greedy decoding? Do the decoder's
// cross-attention heads find the true alignment, and which ones? What do label smoothing, the
// place of the layer norm and the warm-up actually change?
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>

#include <xtensor/xview.hpp>

#include "lessons/kit/kit.hpp"
#include "nn/data/date_task.hpp"
#include "nn/rnn/seq2seq.hpp"
#include "nn/alignment.hpp"
#include "nn/data/split.hpp"
#include "nn/data/translation.hpp"
#include "nn/decode.hpp"
#include "nn/parameter_blocks.hpp"
#include "nn/schedule.hpp"
#include "nn/transformer/seq2seq.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

using F = float;
using Transformer = nn::Seq2SeqTransformer<F>;
using Sequences = std::vector<data::Sequence>;

// Training sentences have at most kMaxTrainWords source words; the length split holds the longer
// ones the grammar makes (up to 15 words), which no model sees in training.
constexpr std::size_t kMaxTrainWords = 10;
constexpr std::size_t kLongestBucket = 14;  // BLEU by length: 14 and 15 words share one point (15 is rare)
constexpr Index kPad = data::Vocab::pad, kBos = data::Vocab::bos, kEos = data::Vocab::eos;

// ---------------------------------------------------------------------------------------------
// The sizes and budgets, one place for the full run and --quick.

struct Plan {
  std::size_t sentences, per_long_length;  // generated; kept per length in the length split
  std::size_t words_per_class;             // 0: the whole lexicon; quick: a smaller vocabulary
  std::size_t d_model, heads, d_ff, layers;
  std::size_t gru_hidden;                  // embedding, encoder and decoder states, attention width
  int epochs;                              // every model: the same epochs of the same batches
  int ablation_epochs;                     // each arm of the norm and warm-up ablation
  std::size_t batch;
  long warmup;                             // Noam warm-up steps
  double noam_factor;                      // Noam's scale: the peak is factor (d warmup)^-0.5
  double gru_lr;
  std::size_t beam_sentences;              // per split, for the beam-width sweep
  int early_epochs;                        // the less sure model of the beam sweep: after this many epochs
};

Plan make_plan() {
  Plan p;
  p.sentences = full_or_quick<std::size_t>(30000, 4000);
  p.per_long_length = full_or_quick<std::size_t>(150, 40);
  p.words_per_class = full_or_quick<std::size_t>(0, 10);
  p.d_model = 64, p.heads = 4, p.d_ff = 128, p.layers = 2;
  p.gru_hidden = 64;
  p.epochs = epochs(5, 4);
  p.ablation_epochs = full_or_quick(2, 1);
  p.batch = full_or_quick<std::size_t>(64, 32);
  // The quick run warms up over fewer steps at the same peak (6.25e-3).
  p.warmup = full_or_quick<long>(400, 50);
  p.noam_factor = full_or_quick(1.0, std::sqrt(50.0 / 400.0));
  p.gru_lr = 3e-3;
  p.beam_sentences = full_or_quick<std::size_t>(150, 12);
  // The quick run's first epoch leaves a model that translates nothing yet (BLEU 0 on some seeds):
  // its beam sweep reads the model after two of its four epochs.
  p.early_epochs = full_or_quick(1, 2);
  config({{"sentences_generated", p.sentences}, {"words_per_class", p.words_per_class},
          {"ablation_epochs", p.ablation_epochs}, {"max_train_words", kMaxTrainWords}, {"d_model", p.d_model},
          {"heads", p.heads}, {"d_ff", p.d_ff}, {"layers", p.layers}, {"gru_hidden", p.gru_hidden},
          {"epochs", p.epochs}, {"batch", p.batch}, {"warmup", p.warmup}, {"noam_factor", p.noam_factor},
          {"gru_lr", p.gru_lr}});
  return p;
}

// ---------------------------------------------------------------------------------------------
// 1. The task.

struct Task : data::EncodedSplits {             // vocabularies; train, validation, test as ids
  data::Splits<data::TranslationPair> pairs;  // at most kMaxTrainWords words, split by distinct source
  std::vector<data::TranslationPair> longer;  // longer than every training sentence
  data::EncodedPairs longer_ids;
};

std::size_t words(const data::TranslationPair& p) { return p.alignment.size(); }  // one target word per source word

Task make_task(const Plan& plan) {
  const data::ToyTranslation language;  // one language (lexicon seed) for every run
  Generator gen(seed() + 1);
  data::GrammarConfig grammar;
  grammar.words_per_class = plan.words_per_class;
  const std::vector<data::TranslationPair> all = data::make_translation(language, plan.sentences, gen, grammar);
  std::vector<data::TranslationPair> in_range;
  std::map<std::size_t, std::size_t> kept;
  Task t;
  for (const auto& p : all) {
    if (words(p) <= kMaxTrainWords) in_range.push_back(p);
    else if (kept[words(p)]++ < plan.per_long_length) t.longer.push_back(p);
  }
  t.pairs = data::split_examples(in_range, {0.9, 0.05, 0.05}, seed() + 2);
  static_cast<data::EncodedSplits&>(t) = data::encode_splits(t.pairs, data::Tokenizer::words, data::Tokenizer::words);
  t.longer_ids = data::encode_pairs(t.longer, t.source_vocab, data::Tokenizer::words, t.target_vocab,
                                    data::Tokenizer::words);
  return t;
}

// "suszo=lake gati=every ...": each target word with the source word it translates.
std::string gloss(const data::TranslationPair& p) {
  const std::vector<std::string> s = data::word_tokens(p.source), t = data::word_tokens(p.target);
  std::string out;
  for (std::size_t j = 0; j < t.size(); ++j) out += (j ? " " : "") + t[j] + "=" + s[std::size_t(p.alignment[j])];
  return out;
}

std::size_t unknown_words(const data::EncodedPairs& e) {
  std::size_t n = 0;
  for (const auto& s : e.source) n += std::size_t(std::count(s.begin(), s.end(), data::Vocab::unk));
  return n;
}

void the_task(const Task& t) {
  say("The source language is English-like: subject, verb, object, an optional prepositional phrase, adjectives "
      "before their noun. The target language is invented: its words are made of random syllables, the verb goes "
      "last, the prepositional phrase moves before the object and becomes a postposition, and every noun phrase is "
      "mirrored (noun, adjectives, determiner). Each source word becomes exactly one target word, so the true "
      "alignment of every sentence is a permutation we know. Training pairs, each target word written with the "
      "source word it translates:");
  std::string shown;
  for (std::size_t i = 0; i < 4; ++i)
    shown += t.pairs.train[i].source + "\n  -> " + t.pairs.train[i].target + "\n     " + gloss(t.pairs.train[i]) + "\n";
  verbatim(shown);
  auto range = [](const std::vector<data::TranslationPair>& ps) {
    std::size_t lo = 1000, hi = 0;
    for (const auto& p : ps) lo = std::min(lo, words(p)), hi = std::max(hi, words(p));
    return text(lo, " to ", hi);
  };
  std::size_t overlap = 0;
  {
    std::map<std::string, int> seen;
    for (const auto& p : t.pairs.train) seen[p.source] = 1;
    for (const auto* split : {&t.pairs.validation, &t.pairs.test, &t.longer})
      for (const auto& p : *split) overlap += seen.count(p.source);
  }
  table({"split", "sentences", "source words", "what it is for"},
        {row("train", t.pairs.train.size(), range(t.pairs.train), "every model's training data"),
         row("validation", t.pairs.validation.size(), range(t.pairs.validation), "held-out loss after every epoch"),
         row("test", t.pairs.test.size(), range(t.pairs.test), "held-out sentences of the training lengths"),
         row("longer", t.longer.size(), range(t.longer), "held-out sentences longer than any in training")});
  say("Splits are cut by distinct source sentence: sentences shared between training and a held-out split: ", overlap,
      ". The longer split keeps up to the same number of sentences of each length (the grammar rarely makes 14 or 15 "
      "words). Vocabularies from the training split: ", t.source_vocab.size(), " source and ", t.target_vocab.size(),
      " target words (with <pad> <bos> <eos> <unk>); held-out source words never seen in training: ",
      unknown_words(t.test) + unknown_words(t.longer_ids), ".");
  metric("split_overlap", double(overlap));
  config({{"train_sentences", t.pairs.train.size()}, {"test_sentences", t.pairs.test.size()},
          {"longer_sentences", t.longer.size()}});
}

// ---------------------------------------------------------------------------------------------
// Training and scoring a Transformer.

// One way of training the Transformer: the main run and each arm of the ablations of section 6.
struct Arm {
  std::string label;
  bool pre_norm = false;    // post-norm, as the paper
  bool warmup = true;       // Noam's linear warm-up; without it, the peak from step 1, then the same decay
  double smoothing = 0.1;
  double lr_scale = 1.0;    // Noam's factor: the whole schedule times this
  int epochs = 0;           // 0: the plan's
  bool keep_early = false;  // keep a copy of the model as it was after Plan::early_epochs epochs
};

nn::Seq2SeqConfig transformer_config(const Plan& p, const Task& t, bool pre_norm) {
  nn::Seq2SeqConfig c;
  c.src_vocab = t.source_vocab.size();
  c.tgt_vocab = t.target_vocab.size();
  c.encoder_layers = c.decoder_layers = p.layers;
  c.layer = nn::LayerConfig{p.d_model, p.heads, p.d_ff, 0.1, pre_norm, nn::Activation::ReLU, 1e-5};
  c.pad_id = kPad;
  return c;
}

nn::Schedule schedule(const Plan& p, bool warmup, double scale = 1.0) {
  const nn::Schedule noam = nn::noam_lr(double(p.d_model), p.warmup, scale * p.noam_factor);
  if (warmup) return noam;
  const long w = p.warmup;
  return [noam, w](long step) { return noam(std::max(step, w)); };
}

// The Transformer reads the source as it is (no <eos>: attention sees the length) and is scored on
// y <eos> from <bos> y.
data::Seq2SeqBatch transformer_batch(const data::EncodedPairs& split, const std::vector<std::size_t>& rows) {
  return data::make_seq2seq_batch(split, rows, /*source_eos=*/false);
}

Tensor<F> teacher_forced(Transformer& m, const data::Seq2SeqBatch& b) {
  return m.forward(b.source.ids, b.decoder_input.ids, b.source.allowed(), b.decoder_input.allowed());
}

Tensor<F> transformer_loss(Transformer& m, const data::Seq2SeqBatch& b, double smoothing) {
  CrossEntropyOptions ce;
  ce.ignore_index = kPad;
  ce.label_smoothing = smoothing;
  return cross_entropy(teacher_forced(m, b), b.decoder_target.ids, ce);
}

// Teacher-forced scores of a held-out split, per real target token: the loss with the training's
// smoothing, the plain cross-entropy, the accuracy of the argmax, and the mean probability of the
// argmax (the model's confidence).
struct TokenScores {
  double loss = 0, nll = 0, accuracy = 0, confidence = 0;
};

TokenScores token_scores(Transformer& m, const data::EncodedPairs& split, double smoothing) {
  NoGrad no_grad;
  m.eval();
  TokenScores s;
  std::size_t tokens = 0;
  in_batches(split.size(), 256, [&](const std::vector<std::size_t>& rows) {
    const data::Seq2SeqBatch b = transformer_batch(split, rows);
    const Tensor<F> logits = teacher_forced(m, b);
    CrossEntropyOptions ce;
    ce.ignore_index = kPad;
    ce.reduction = Reduction::Sum;
    ce.label_smoothing = smoothing;
    s.loss += cross_entropy(logits, b.decoder_target.ids, ce).item();
    ce.label_smoothing = 0.0;
    s.nll += cross_entropy(logits, b.decoder_target.ids, ce).item();
    const Array<F> p = softmax(logits, -1).value();
    const std::size_t T = p.shape()[1], V = p.shape()[2];
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::size_t t = 0; t < T; ++t) {
        const Index want = b.decoder_target.ids(i, t);
        if (want == kPad) continue;
        const F* row = &p(i, t, 0);
        const std::size_t best = std::size_t(std::max_element(row, row + V) - row);
        s.confidence += row[best];
        s.accuracy += Index(best) == want;
        ++tokens;
      }
  });
  for (double* v : {&s.loss, &s.nll, &s.accuracy, &s.confidence}) *v /= double(tokens);
  return s;
}

struct Trained {
  std::unique_ptr<Transformer> model;
  History history;
  std::unique_ptr<Transformer> early;  // with Arm::keep_early
};

void copy_weights(const Transformer& from, Transformer& to) {
  NoGrad no_grad;
  const std::vector<Tensor<F>> a = from.parameters(), b = to.parameters();
  for (std::size_t i = 0; i < a.size(); ++i) b[i].mutable_value() = a[i].value();
}

// Adam (beta2 0.98, eps 1e-9, the paper's), the Noam schedule (or its peak from step 1), gradients
// clipped at norm 1; every recipe starts from the same initial draw and sees the same batches.
Trained train_transformer(const Plan& p, const Task& t, const Arm& r) {
  Generator gen(seed() + 3);
  Trained out{std::make_unique<Transformer>(transformer_config(p, t, r.pre_norm), gen), {}, nullptr};
  Transformer& m = *out.model;
  nn::Adam<F> opt(m.parameters(), 1e-3, 0.9, 0.98, 1e-9);
  FitOptions fo;
  fo.label = r.label;
  fo.epochs = r.epochs > 0 ? r.epochs : p.epochs;
  fo.batch = p.batch;
  fo.seed = seed() + 4;
  fo.clip = 1.0;
  fo.lr = schedule(p, r.warmup, r.lr_scale);
  fo.validate = [&] {
    const TokenScores s = token_scores(m, t.validation, r.smoothing);
    return Scores{{"loss", s.loss}, {"nll", s.nll}};
  };
  const std::size_t epoch_steps = (t.train.size() + p.batch - 1) / p.batch;
  if (r.keep_early)
    fo.after_step = [&](std::size_t step) {
      if (step != epoch_steps * std::size_t(p.early_epochs)) return;
      Generator unused(0);  // the weights are overwritten
      out.early = std::make_unique<Transformer>(transformer_config(p, t, r.pre_norm), unused);
      copy_weights(m, *out.early);
      out.early->eval();
    };
  out.history = fit(m, opt, t.train.size(),
                    [&](const std::vector<std::size_t>& rows) {
                      return transformer_loss(m, transformer_batch(t.train, rows), r.smoothing);
                    },
                    fo);
  return out;
}

data::Sequence before_eos(const std::vector<Index>& ids) { return {ids.begin(), std::find(ids.begin(), ids.end(), kEos)}; }

std::size_t longest_source(const data::EncodedPairs& split) {
  std::size_t n = 0;
  for (const auto& s : split.source) n = std::max(n, s.size());
  return n;
}

// Greedy translations of a whole split (without <eos>), a batch of sources at a time.
Sequences translate(Transformer& m, const data::EncodedPairs& split) {
  m.eval();
  const std::size_t max_len = longest_source(split) + 5;
  Sequences out;
  in_batches(split.size(), 256, [&](const std::vector<std::size_t>& rows) {
    const data::Seq2SeqBatch b = transformer_batch(split, rows);
    for (const auto& ids : nn::greedy_decode_batch(m, b.source.ids, b.source.allowed(), kBos, kEos, max_len))
      out.push_back(before_eos(ids));
  });
  return out;
}

Sequences translate(nn::rnn::Seq2Seq& m, const data::EncodedPairs& split) {
  m.eval();
  const std::size_t max_len = longest_source(split) + 5;
  Sequences out;
  in_batches(split.size(), 256, [&](const std::vector<std::size_t>& rows) {
    for (const auto& ids : m.greedy(data::make_seq2seq_batch(split, rows).source, max_len).ids)
      out.push_back(before_eos(ids));
  });
  return out;
}

double bleu(const Sequences& hyps, const data::EncodedPairs& split) { return nn::corpus_bleu(hyps, split.target).score; }

double mean_length(const Sequences& s) {
  double n = 0;
  for (const auto& x : s) n += double(x.size());
  return n / double(s.size());
}

// ---------------------------------------------------------------------------------------------
// 2. The Transformer, built up.

void the_architecture(const Plan& p, const Task& t) {
  say("The encoder embeds each source word (times sqrt(d), plus the sinusoidal position of lesson 05) and runs ",
      p.layers, " layers of multi-head self-attention and a feed-forward network, each in a residual connection "
      "followed by a layer norm (post-norm, as in the paper). Its output, one vector per source word, is the memory. "
      "The decoder embeds <bos> y_1 .. y_{T-1} the same way and runs ", p.layers, " layers of three sublayers: masked "
      "self-attention (position t sees positions up to t), cross-attention (queries from the decoder, keys and values "
      "from the memory: here the target words look at the source words) and the feed-forward network. A linear layer "
      "gives the scores of the next target word. d_model = ", p.d_model, ", ", p.heads, " heads of ",
      p.d_model / p.heads, ", feed-forward width ", p.d_ff, ", dropout 0.1.");
  Generator gen(seed() + 3);
  Transformer m(transformer_config(p, t, false), gen);
  m.eval();
  NoGrad no_grad;
  const data::Seq2SeqBatch b = transformer_batch(t.train, {0, 1, 2, 3});
  const Tensor<F> memory = m.encode(b.source.ids, b.source.allowed());
  const Tensor<F> logits = m.decode(b.decoder_input.ids, memory, b.source.allowed(), b.decoder_input.allowed());
  auto sh = [](const auto& x) { return shape_str(x.shape()); };
  table({"tensor", "shape", "what it is"},
        {row("source ids", sh(b.source.ids), "(B, S): a batch of 4 training sentences, padded"),
         row("memory", sh(memory), "(B, S, d): the encoder's output, one vector per source word"),
         row("decoder input", sh(b.decoder_input.ids), "(B, T): <bos> y_1 .. y_{T-1}"),
         row("self-attention weights", sh(m.decoder.layer(0).self_attention()), "(B, h, T, T): causal, per head"),
         row("cross-attention weights", sh(m.decoder.layer(0).cross_attention()), "(B, h, T, S): target words over source words"),
         row("logits", sh(logits), "(B, T, V): scores of y_1 .. y_T <eos>")});
  std::vector<std::vector<std::string>> rows;
  for (const nn::ParameterBlock& blk : nn::parameter_blocks(m, 3)) {
    const bool layer0 = blk.name.rfind("decoder.layers.0.", 0) == 0;
    if (blk.depth <= 2 || layer0) rows.push_back(row(std::string(2 * (blk.depth - 1), ' ') + blk.name, blk.parameters));
  }
  rows.push_back(row("total", m.parameter_count()));
  say("The model summary, parameters per block (one decoder layer opened up: its two attentions have 4 d^2 + 4 d "
      "parameters each, the feed-forward 2 d d_ff + d_ff + d, each norm 2 d):");
  table({"block", "parameters"}, rows);
  metric("transformer_parameters", double(m.parameter_count()));
}

void the_schedule_and_smoothing(const Plan& p, const Task& t, const History& h) {
  const double peak = schedule(p, true)(p.warmup);
  say("Noam schedule (Vaswani et al. 2017, section 5.3): lr = factor d^-0.5 min(step^-0.5, step warmup^-1.5), here "
      "with factor ", fixed(p.noam_factor, 3), ": a linear rise over the first ", p.warmup, " steps to ", fixed(peak, 5),
      " and a 1/sqrt(step) decay after. Adam divides each step by a running mean of squared gradients; in the first "
      "steps that mean rests on few samples, and the warm-up keeps the steps small while it settles (Liu et al. 2020). "
      "Section 6 trains without it.");
  std::vector<double> steps, with, without;
  const nn::Schedule flat = schedule(p, false);
  for (std::size_t s = 1; s <= h.lr.size(); ++s) {
    steps.push_back(double(s));
    with.push_back(h.lr[s - 1]);
    without.push_back(flat(long(s)));
  }
  LineFigureOptions style;
  style.title = text("Noam schedule, d = ", p.d_model, ", warm-up ", p.warmup, " steps");
  style.xlabel = "training step";
  style.ylabel = "learning rate";
  save_figure(line_figure({curve("with warm-up (the lr of the training below)", steps, with),
                           reference("without warm-up (section 6)", steps, without)},
                          style),
              "noam_schedule", "The learning rate of every training step, with the warm-up and without it.");
  const double V = double(t.target_vocab.size()), eps = 0.1;
  // The smoothed target q = (1 - eps) one-hot + eps / V; its entropy is the least smoothed loss.
  const double q_true = 1 - eps + eps / V, q_other = eps / V;
  const double floor = -q_true * std::log(q_true) - (V - 1) * q_other * std::log(q_other);
  say("Label smoothing 0.1 (Szegedy et al. 2016): the target of every word is 0.9 on the right word and 0.1 spread "
      "over all ", t.target_vocab.size(), " words, so the loss keeps pulling the model away from certainty. A model "
      "that reproduced that target exactly would still score its entropy, ", fixed(floor, 3), " nats per word: the "
      "floor of the smoothed training loss, where an unsmoothed loss can reach 0.");
  metric("smoothed_loss_floor", floor);
}

void the_training(const Trained& main_run) {
  const History& h = main_run.history;
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
  const double gap = val.back() - h.epoch_loss.back();
  say(h.steps, " steps (", val.size(), " epochs), ", fixed(h.median_step_ms(), 1), " ms a step (median wall time; "
      "the machine is shared). In the last epoch the validation loss is ", fixed(val.back(), 3), " against ",
      fixed(h.epoch_loss.back(), 3), " in training (with dropout on), ",
      gap > 0.05 ? "a gap: the model fits its training sentences better than new ones."
                 : "no gap to speak of: the model does as well on new sentences as on the ones it trained on.");
  metric("transformer_validation_loss", val.back());
  metric("transformer_validation_nll", nll.back());
  timing("transformer_step_ms", h.median_step_ms());
  timing("transformer_train_seconds", h.seconds);
}

// ---------------------------------------------------------------------------------------------
// 3. The bottleneck, measured.

struct Compared {
  std::string name, key;
  std::size_t parameters;
  const History* history;
  Sequences test, longer;
};

nn::rnn::Seq2SeqConfig gru_config(const Plan& p, const std::string& score) {
  nn::rnn::Seq2SeqConfig c;
  c.style = nn::rnn::DecoderStyle::Bahdanau;
  c.score = score;
  c.embed = c.encoder_hidden = c.decoder_hidden = c.attention_hidden = p.gru_hidden;
  return c;
}

struct GruRun {
  std::unique_ptr<nn::rnn::Seq2Seq> model;
  History history;
};

GruRun train_gru(const Plan& p, const Task& t, const std::string& score, const std::string& label) {
  Generator gen(seed() + 5);
  GruRun r{std::make_unique<nn::rnn::Seq2Seq>(gru_config(p, score), t.source_vocab.size(), t.target_vocab.size(), gen), {}};
  lessons::Recipe rc;
  rc.label = label;
  rc.epochs = p.epochs;
  rc.batch = p.batch;
  rc.seed = seed() + 4;
  rc.lr = p.gru_lr;
  rc.decay = Decay::constant;
  nn::rnn::Seq2Seq& m = *r.model;
  rc.validate = [&] { return Scores{{"loss", nn::rnn::mean_loss(m, t.validation)}}; };
  r.history = train(m, t.train.size(), [&](const std::vector<std::size_t>& rows) {
    return m.loss(data::make_seq2seq_batch(t.train, rows));
  }, rc);
  return r;
}

// The source length of every sentence of test and longer, the longest lengths in one bucket.
std::vector<std::size_t> length_groups(const Task& t) {
  std::vector<std::size_t> g;
  for (const auto* split : {&t.pairs.test, &t.longer})
    for (const auto& p : *split) g.push_back(std::min(words(p), kLongestBucket));
  return g;
}

template <class V>
V joined(const V& a, const V& b) {
  V out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

void the_bottleneck(const Plan& p, const Task& t, const std::vector<Compared>& models) {
  const std::vector<std::size_t> groups = length_groups(t);
  const Sequences refs = joined(t.test.target, t.longer_ids.target);
  std::vector<plots::Series> series;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> falls;  // BLEU at the shortest and at the longest training length
  for (const Compared& c : models) {
    std::vector<double> x, y;
    double at_shortest = 0, at_longest = 0;
    for (const nn::GroupBleu& g : nn::bleu_by_group(joined(c.test, c.longer), refs, groups)) {
      x.push_back(double(g.group));
      y.push_back(g.bleu.score);
      if (x.size() == 1) at_shortest = g.bleu.score;
      if (g.group == kMaxTrainWords) at_longest = g.bleu.score;
    }
    falls.push_back(text(c.name, " from ", fixed(at_shortest, 3), " to ", fixed(at_longest, 3)));
    metric("bleu_at_" + std::to_string(kMaxTrainWords) + "_words_" + c.key, at_longest);
    metric("bleu_shortest_" + c.key, at_shortest);
    series.push_back(curve(c.name, x, y));
    const double bt = bleu(c.test, t.test), bl = bleu(c.longer, t.longer_ids);
    rows.push_back(row(c.name, c.parameters, fixed(c.history->median_step_ms(), 1), fixed(c.history->seconds, 0),
                       fixed(bt, 3), fixed(bl, 3), fixed(mean_length(c.longer), 2)));
    metric("bleu_test_" + c.key, bt);
    metric("bleu_longer_" + c.key, bl);
    metric("parameters_" + c.key, double(c.parameters));
    timing("train_seconds_" + c.key, c.history->seconds);
  }
  series.push_back(reference("longest training sentence", {double(kMaxTrainWords) + 0.5, double(kMaxTrainWords) + 0.5},
                             {0.0, 1.0}));
  table({"model", "parameters", "ms per step", "training seconds", "BLEU test", "BLEU longer", "mean output length, longer"},
        rows);
  std::size_t fewest = models.front().parameters, most = fewest;
  for (const Compared& c : models) fewest = std::min(fewest, c.parameters), most = std::max(most, c.parameters);
  say("Every model trained for ", p.epochs, " epochs on the same batches (", models.front().history->steps,
      " steps of ", p.batch, " sentences), with ", fewest, " to ", most, " parameters. BLEU is corpus BLEU-4 on words "
      "(0 to 1), greedy decoding. Times are wall-clock on a shared machine.");
  // Where each model stops on the longer split: at most as many words as the longest training sentence?
  std::vector<std::string> stops;
  for (const Compared& c : models) {
    std::size_t short_ = 0;
    for (const auto& h : c.longer) short_ += h.size() <= kMaxTrainWords;
    stops.push_back(text(c.name, " ", fixed(mean_length(c.longer), 2), " words (", percent(double(short_) / double(c.longer.size()), 0),
                         " of its translations no longer than ", kMaxTrainWords, ")"));
  }
  const double plain_test = bleu(models[0].test, t.test);
  claim({"attention_beats_the_bottleneck",
         "bleu_test_gru_attention >= bleu_test_gru_plain + 0.1 and bleu_test_transformer >= bleu_test_gru_plain + 0.1",
         text("Both attention models beat the GRU without attention on held-out sentences: ",
              fixed(bleu(models[1].test, t.test), 3), " and ", fixed(bleu(models[2].test, t.test), 3), " BLEU against ",
              fixed(plain_test, 3), "."),
         text("In this run the attention models do not clearly beat the GRU without attention (",
              fixed(bleu(models[1].test, t.test), 3), " and ", fixed(bleu(models[2].test, t.test), 3), " against ",
              fixed(plain_test, 3), ").")});
  say("From the shortest test sentences (", std::size_t(series.front().x(0)), " words) to the longest training length (",
      kMaxTrainWords, " words), BLEU goes ", listing(falls), ".");
  const std::string at10 = "bleu_at_" + std::to_string(kMaxTrainWords) + "_words_";
  claim({"bottleneck_loses_long_sentences",
         text("bleu_shortest_gru_plain - ", at10, "gru_plain >= 0.2 and bleu_shortest_gru_attention - ", at10,
              "gru_attention <= 0.1"),
         text("Without attention every sentence must pass through the encoder's final states, ", 2 * p.gru_hidden,
              " numbers, and the longer the sentence the more of it is lost; with attention the decoder reads every "
              "source word again at every step, and its BLEU hardly falls with length."),
         text("BLEU falls with length for the model without attention by less than 0.2, or for the one with attention by "
              "more than 0.1, in this run: the bottleneck does not show as a fall with length here.")});
  const double transformer_longer = bleu(models.back().longer, t.longer_ids);
  const double gru_longer = bleu(models[1].longer, t.longer_ids);
  say("On the longer split the references are ", fixed(mean_length(t.longer_ids.target), 2), " words long on average, "
      "the translations: ", listing(stops), ". A translation of a sentence of 11 or more words cannot be right with ",
      kMaxTrainWords, " words or fewer.");
  claim({"transformer_vs_gru_beyond_training", "transformer_minus_gru_attention_longer > 0",
         text("The Transformer scores ", fixed(transformer_longer, 3), " on the longer split, above the GRU with "
              "attention (", fixed(gru_longer, 3), "): it carries over to lengths it never saw better than the recurrent "
              "model."),
         text("The Transformer scores ", fixed(transformer_longer, 3), " on the longer split, below the GRU with attention ("
              , fixed(gru_longer, 3), "). One difference between them: the Transformer's positions past the training "
              "lengths are sinusoidal vectors no layer was trained on, while the recurrent model applies the same step "
              "once more."),
         Expect::either_way, {{"transformer_minus_gru_attention_longer", transformer_longer - gru_longer}}});
  metric("transformer_minus_gru_attention_longer", transformer_longer - gru_longer);
  LineFigureOptions style;
  style.title = "BLEU by source sentence length (held-out: test up to 10 words, longer split after)";
  style.xlabel = text("source words (the last point: ", kLongestBucket, " and 15)");
  style.ylabel = "corpus BLEU";
  style.markers = true;
  style.ymin = 0.0;
  style.ymax = 1.0;
  save_figure(line_figure(series, style), "bleu_by_length",
              "BLEU of held-out sentences grouped by their length, for the GRU without attention, the GRU with "
              "additive attention and the Transformer. Right of the dashed line: lengths no model saw in training.");
}

// ---------------------------------------------------------------------------------------------
// 4. Decoding.

// n sentences spread evenly over a split (all of them if it has no more), as a split, and the rows.
struct Subset {
  data::EncodedPairs ids;
  std::vector<std::size_t> rows;
};

Subset spread(const data::EncodedPairs& s, std::size_t n) {
  Subset out;
  const std::size_t k = std::min(n, s.size());
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t r = i * s.size() / k;
    out.rows.push_back(r);
    out.ids.source.push_back(s.source[r]);
    out.ids.target.push_back(s.target[r]);
  }
  return out;
}

// Every sentence of a split decoded one at a time, greedily and by beam search of every width
// with and without length normalization, through one step function per sentence (its source
// encoded once for all the searches).
struct Decodings {
  Sequences greedy;
  std::map<std::pair<std::size_t, double>, Sequences> beam;  // (width, alpha) -> translations
};

constexpr std::size_t kWidest = 8;
const std::vector<double> kAlphas = {0.0, 1.0};

Decodings decode_all(Transformer& m, const data::EncodedPairs& split) {
  m.eval();
  Decodings d;
  for (std::size_t i = 0; i < split.size(); ++i) {
    IndexArray src = IndexArray::from_shape({split.source[i].size()});
    std::copy(split.source[i].begin(), split.source[i].end(), src.begin());
    const nn::StepFn step = nn::seq2seq_step(m, src);
    const std::size_t max_len = split.source[i].size() + 6;
    d.greedy.push_back(before_eos(nn::greedy_decode(step, kBos, kEos, max_len)));
    for (std::size_t w = 1; w <= kWidest; ++w)
      for (double a : kAlphas) {
        nn::BeamOptions o;
        o.width = w;
        o.length_penalty = a;
        o.max_len = max_len;
        d.beam[{w, a}].push_back(before_eos(nn::beam_search(step, kBos, kEos, o).front().tokens));
      }
  }
  return d;
}

std::string translations_text(const std::vector<std::string>& source, const std::vector<std::string>& reference,
                              const std::vector<std::string>& greedy, const std::vector<std::string>& beam) {
  std::string out;
  for (std::size_t i = 0; i < source.size(); ++i)
    out += text("source     ", source[i], "\nreference  ", reference[i], "\ngreedy     ", greedy[i],
                greedy[i] == reference[i] ? "   (right)" : "", "\nbeam 4     ", beam[i],
                beam[i] == reference[i] ? "   (right)" : "", "\n\n");
  return out;
}

// One model's decodings of the two subsets, scored: BLEU and mean length, greedy and per (width, alpha).
struct Scored {
  std::string name, key;
  Decodings test, longer;
};

double beam_bleu(const Decodings& d, std::size_t w, double a, const data::EncodedPairs& refs) {
  return bleu(d.beam.at({w, a}), refs);
}

void decoding(const Plan& p, const Task& t, Transformer& final_model, Transformer& early_model) {
  const Subset test = spread(t.test, p.beam_sentences), longer = spread(t.longer_ids, p.beam_sentences);
  say("Greedy decoding writes the most likely next word at every step. Beam search keeps the `width` most likely "
      "prefixes instead, so a word that looks worse now can win later. Ranked by raw log-probability (alpha = 0), "
      "every extra word costs log p < 0 and short outputs are favoured; dividing by the length (alpha = 1) ranks by "
      "the mean log-probability per word. We decode ", test.rows.size(), " test and ", longer.rows.size(),
      " longer sentences (spread evenly over each split) one at a time, greedily and with widths 1 to ", kWidest,
      " both ways (nn::greedy_decode and nn::beam_search over the model's next-word distribution), with the trained "
      "Transformer and with the same model as it was after ", counted(p.early_epochs, "epoch"), ", when it was less sure "
      "of itself.");
  const double w0 = wall_ms();
  std::vector<Scored> models;
  models.push_back({text("after ", counted(p.early_epochs, "epoch")), "early", decode_all(early_model, test.ids),
                    decode_all(early_model, longer.ids)});
  models.push_back({text("after ", p.epochs, " epochs"), "final", decode_all(final_model, test.ids),
                    decode_all(final_model, longer.ids)});
  timing("decoding_seconds", (wall_ms() - w0) / 1000);

  std::vector<std::string> header = {"decoder"};
  for (const Scored& m : models)
    for (const char* split : {"test", "longer"})
      for (const char* how : {"alpha 0", "alpha 1"}) header.push_back(text(m.name, ": ", split, ", ", how));
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> greedy_row = {"greedy"};
  for (const Scored& m : models)
    for (int k = 0; k < 4; ++k)
      greedy_row.push_back(fixed(bleu(k < 2 ? m.test.greedy : m.longer.greedy, k < 2 ? test.ids : longer.ids), 4));
  rows.push_back(greedy_row);
  for (std::size_t w = 1; w <= kWidest; ++w) {
    std::vector<std::string> r = {text("beam ", w)};
    for (const Scored& m : models)
      for (const auto* split : {&m.test, &m.longer})
        for (double a : kAlphas) r.push_back(fixed(beam_bleu(*split, w, a, split == &m.test ? test.ids : longer.ids), 4));
    rows.push_back(r);
  }
  say("BLEU of every decoder:");
  table(header, rows);
  for (const Scored& m : models) {
    metric(text("greedy_bleu_test_subset_", m.key), bleu(m.test.greedy, test.ids));
    metric(text("greedy_bleu_longer_subset_", m.key), bleu(m.longer.greedy, longer.ids));
    for (std::size_t w = 1; w <= kWidest; ++w)
      for (double a : kAlphas) {
        const std::string how = a == 0 ? "raw" : "norm";
        metric(text("beam_bleu_test_w", w, "_", how, "_", m.key), beam_bleu(m.test, w, a, test.ids));
        metric(text("beam_bleu_longer_w", w, "_", how, "_", m.key), beam_bleu(m.longer, w, a, longer.ids));
      }
  }

  // The figure: per model, BLEU and mean length against the width.
  std::vector<double> widths;
  for (std::size_t w = 1; w <= kWidest; ++w) widths.push_back(double(w));
  plots::Figure fig(2600, 1800, 2, 2);
  fig.title("Beam search: BLEU and output length by beam width");
  plots::LineOptions lo, bleu_axis;
  lo.markers = bleu_axis.markers = true;
  bleu_axis.ymin = 0.0;
  bleu_axis.ymax = 1.0;
  for (std::size_t row_i = 0; row_i < models.size(); ++row_i) {
    const Scored& m = models[row_i];
    std::vector<plots::Series> bleus, lengths;
    for (const auto* split : {&m.test, &m.longer})
      for (double a : kAlphas) {
        const data::EncodedPairs& refs = split == &m.test ? test.ids : longer.ids;
        std::vector<double> b, l;
        for (std::size_t w = 1; w <= kWidest; ++w) {
          b.push_back(beam_bleu(*split, w, a, refs));
          l.push_back(mean_length(split->beam.at({w, a})));
        }
        const std::string name = text(split == &m.test ? "test" : "longer", ", alpha ", int(a));
        bleus.push_back(curve(name, widths, b));
        lengths.push_back(curve(name, widths, l));
      }
    // The two reference lengths dashed, each in its own shade: no two legend entries alike.
    lengths.push_back(reference("references, test", widths, std::vector<double>(widths.size(), mean_length(test.ids.target))));
    lengths.back().color = plots::Color{0.1, 0.1, 0.1};
    lengths.push_back(
        reference("references, longer", widths, std::vector<double>(widths.size(), mean_length(longer.ids.target))));
    lengths.back().color = plots::Color{0.65, 0.65, 0.65};
    plots::line_plot(fig.panel(int(row_i), 0).title(text("BLEU, ", m.name)).xlabel("beam width").ylabel("corpus BLEU"),
                     bleus, bleu_axis);
    plots::line_plot(
        fig.panel(int(row_i), 1).title(text("Mean output length, ", m.name)).xlabel("beam width").ylabel("words"),
        lengths, lo);
  }
  save_figure(fig, "beam_width",
              "BLEU and mean output length of beam search by width, with and without length normalization, on test "
              "sentences and on longer ones, for the model early in training (top) and fully trained (bottom); dashed: "
              "the references' mean length.");

  // Width 1 is greedy search (with alpha 0: a finished hypothesis ends the search).
  std::size_t same = 0, all = 0;
  for (const Scored& m : models)
    for (const auto* d : {&m.test, &m.longer})
      for (std::size_t i = 0; i < d->greedy.size(); ++i, ++all) same += d->beam.at({1, 0.0})[i] == d->greedy[i];
  say("Beam width 1 with alpha 0 gives the greedy translation for ", same, " of ", all, " sentences (both models).");
  metric("beam1_equals_greedy", double(same) / double(all));
  const Scored& last = models.back();
  const double sure_early = token_scores(early_model, test.ids, 0.0).confidence;
  const double sure_final = token_scores(final_model, test.ids, 0.0).confidence;
  metric("confidence_test_subset_early", sure_early);
  metric("confidence_test_subset_final", sure_final);
  // The best beam of each model: the width and alpha with the highest BLEU on the test subset.
  auto best_beam = [&](const Scored& m) {
    std::tuple<double, std::size_t, double> best{-1.0, 1, 0.0};
    for (std::size_t w = 1; w <= kWidest; ++w)
      for (double a : kAlphas) best = std::max(best, std::tuple{beam_bleu(m.test, w, a, test.ids), w, a});
    return best;
  };
  const Scored& early = models.front();
  const auto [early_best, early_w, early_a] = best_beam(early);
  const auto [last_best, last_w, last_a] = best_beam(last);
  const double early_greedy = bleu(early.test.greedy, test.ids), last_greedy = bleu(last.test.greedy, test.ids);
  metric("best_beam_gain_test_early", early_best - early_greedy);
  metric("best_beam_gain_test_final", last_best - last_greedy);
  say("The trained model: greedy ", fixed(last_greedy, 4), " on test and ", fixed(bleu(last.longer.greedy, longer.ids), 4),
      " on longer sentences; its best beam on test is width ", last_w, ", alpha ", int(last_a), ": ", fixed(last_best, 4),
      ". ", early.name, ": greedy ", fixed(early_greedy, 4), ", best beam width ", early_w, ", alpha ", int(early_a), ": ",
      fixed(early_best, 4), ". Teacher-forced on these test sentences, the trained model gives its first choice a "
      "probability of ", fixed(sure_final, 3), " on average, the model ", early.name, " ", fixed(sure_early, 3), ".");
  claim({"beam_helps_the_unsure_model", "best_beam_gain_test_early >= 0.01",
         text("Beam search helps the less sure model: its best beam beats its greedy translation by ",
              fixed(early_best - early_greedy, 3), " BLEU. Beam search can only find translations the model scores "
                                                     "higher than the greedy one, and it finds them where the model "
                                                     "hesitates between words."),
         text("Beam search gains the less sure model ", fixed(early_best - early_greedy, 3), " BLEU at best (", fixed(early_best, 3),
              " against greedy ", fixed(early_greedy, 3), "): on these ", test.rows.size(), " sentences its hesitations "
              "were not where a wider search finds a better sentence."),
         Expect::either_way});
  claim({"beam_leaves_the_sure_model", "best_beam_gain_test_final <= 0.01",
         text("The trained model, sure of its first choice, gains nothing worth the name from a wider beam (",
              fixed(last_best - last_greedy, 3), " BLEU at best)."),
         text("Even the trained model gains ", fixed(last_best - last_greedy, 3), " BLEU from its best beam."),
         Expect::either_way});

  // A few held-out translations.
  auto words_of = [&](const data::Sequence& ids) { return t.target_vocab.decode(ids, data::Tokenizer::words); };
  std::vector<std::string> src, ref, g, b;
  for (const auto& [pairs, subset, d] :
       {std::tuple{&t.pairs.test, &test, &last.test}, std::tuple{&t.longer, &longer, &last.longer}})
    for (std::size_t i = 0; i < std::min<std::size_t>(3, d->greedy.size()); ++i) {
      src.push_back((*pairs)[subset->rows[i]].source);
      ref.push_back((*pairs)[subset->rows[i]].target);
      g.push_back(words_of(d->greedy[i]));
      b.push_back(words_of(d->beam.at({4, 1.0})[i]));
    }
  say("Three test sentences and three longer ones with their references, from the trained model (beam 4, alpha 1):");
  verbatim(translations_text(src, ref, g, b));
}

// ---------------------------------------------------------------------------------------------
// 5. Cross-attention against the truth.

// Per layer, the cross-attention weights (B, h, T, S) of a teacher-forced batch of a split.
std::vector<Array<F>> cross_attention(Transformer& m, const data::Seq2SeqBatch& b) {
  NoGrad no_grad;
  m.eval();
  teacher_forced(m, b);
  std::vector<Array<F>> out;
  for (std::size_t l = 0; l < m.decoder.size(); ++l) out.push_back(m.decoder.layer(l).cross_attention().value());
  return out;
}

// The (target words, source words) weights of sentence i of the batch, head h. shift = 0: the rows
// that predict each target word; shift = 1: the rows that have just read it as their input.
xt::xarray<double> head_map(const Array<F>& w, std::size_t i, std::size_t h, std::size_t n_tgt, std::size_t n_src,
                            std::size_t shift) {
  return xt::view(xt::cast<double>(w), i, h, xt::range(shift, shift + n_tgt), xt::range(0, n_src));
}

struct HeadScores {
  std::vector<std::vector<nn::AlignmentCounts>> at_output, at_input;  // [layer][head]
  nn::AlignmentCounts diagonal;  // target word j linked to source word j: no reordering at all
};

HeadScores score_heads(Transformer& m, const data::EncodedPairs& split, const std::vector<data::TranslationPair>& pairs) {
  const std::size_t L = m.decoder.size(), H = m.config().layer.heads;
  HeadScores s{std::vector<std::vector<nn::AlignmentCounts>>(L, std::vector<nn::AlignmentCounts>(H)),
               std::vector<std::vector<nn::AlignmentCounts>>(L, std::vector<nn::AlignmentCounts>(H)), {}};
  in_batches(split.size(), 256, [&](const std::vector<std::size_t>& rows) {
    const std::vector<Array<F>> layers = cross_attention(m, transformer_batch(split, rows));
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const data::TranslationPair& p = pairs[rows[k]];
      const Mask truth = data::alignment_matrix(p);
      const std::size_t n = words(p);
      Mask diagonal = Mask::from_shape({n, n});
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < n; ++i) diagonal(j, i) = i == j;
      s.diagonal += nn::count_links(diagonal, truth, truth);
      for (std::size_t l = 0; l < L; ++l)
        for (std::size_t h = 0; h < H; ++h) {
          s.at_output[l][h] += nn::count_links(nn::peak_links(head_map(layers[l], k, h, n, n, 0), n), truth, truth);
          s.at_input[l][h] += nn::count_links(nn::peak_links(head_map(layers[l], k, h, n, n, 1), n), truth, truth);
        }
    }
  });
  return s;
}

void cross_attention_vs_truth(Transformer& m, const Task& t) {
  const std::size_t L = m.decoder.size(), H = m.config().layer.heads;
  say("Every decoder layer has ", H, " cross-attention heads; row t of a head's map is where the decoder looks in the "
      "source while it predicts target word t. The true alignment is known, so each head can be scored as a word "
      "aligner: link every target word to the source word its head attends to most, and count the alignment error "
      "rate (AER, Och & Ney 2003) against the truth over all ", t.test.size(), " test sentences, teacher-forced on "
      "their references. AER = 1 - 2 |A and S| / (|A| + |S|): 0 is the true alignment, 1 not one right link.");
  const HeadScores s = score_heads(m, t.test, t.pairs.test);
  xt::xarray<double> aer = xt::zeros<double>({L, H}), aer_in = xt::zeros<double>({L, H});
  std::size_t best_l = 0, best_h = 0;
  std::vector<std::vector<std::string>> rows;
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t h = 0; h < H; ++h) {
      aer(l, h) = s.at_output[l][h].error_rate();
      aer_in(l, h) = s.at_input[l][h].error_rate();
      if (aer(l, h) < aer(best_l, best_h)) best_l = l, best_h = h;
      rows.push_back(row(l + 1, h + 1, fixed(aer(l, h), 3), fixed(aer_in(l, h), 3)));
      metric(text("aer_layer", l + 1, "_head", h + 1), aer(l, h));
    }
  table({"layer", "head", "AER, row predicting the word", "AER, row that has just read it"}, rows);
  const double diagonal = s.diagonal.error_rate();
  metric("aer_best_head", aer(best_l, best_h));
  metric("aer_best_head_layer", double(best_l + 1));
  metric("aer_best_head_shifted", xt::amin(aer_in)());
  metric("aer_diagonal", diagonal);
  claim({"a_head_aligns", "aer_best_head <= 0.2 and aer_best_head <= aer_diagonal - 0.2",
         text("One head has learned the alignment: head ", best_h + 1, " of layer ", best_l + 1, " scores AER ",
              fixed(aer(best_l, best_h), 3), ", where linking target word $j$ to source word $j$ (the same order, which "
              "this language breaks) scores ", fixed(diagonal, 3), "."),
         text("No head reads off the alignment well: the best, head ", best_h + 1, " of layer ", best_l + 1, ", scores AER ",
              fixed(aer(best_l, best_h), 3), " (the same order: ", fixed(diagonal, 3), ").")});
  claim({"shifted_row_no_better", "aer_best_head_shifted >= aer_best_head",
         text("The second column scores the row one step later, which has the target word as its input: alignments "
              "read from attention are often taken there (Garg et al. 2019); here it is no better (best ",
              fixed(xt::amin(aer_in)(), 3), ")."),
         text("The second column scores the row one step later, which has the target word as its input, as alignments "
              "read from attention often are (Garg et al. 2019); here it is better (best ", fixed(xt::amin(aer_in)(), 3),
              ")."),
         Expect::either_way});

  plots::HeatmapOptions ho;
  ho.x_labels = numbered("head ", H, 1), ho.y_labels = numbered("layer ", L, 1);
  ho.annotate = true;
  ho.decimals = 2;
  ho.vmin = 0.0;
  ho.vmax = 1.0;
  ho.cmap = plots::Colormap::viridis();
  ho.colorbar_label = "alignment error rate";
  HeatmapFigureOptions hf;
  hf.title = "Alignment error rate of each cross-attention head (test sentences; 0 = the true alignment)";
  hf.xlabel = "head";
  hf.ylabel = "decoder layer";
  hf.width = 1800;
  hf.height = 900;
  save_figure(heatmap_figure(aer, ho, hf), "head_aer",
              "AER of each decoder cross-attention head against the true alignment, all test sentences.");

  // The grid for one held-out sentence: every layer and head, the true links boxed.
  std::size_t pick = 0;
  for (std::size_t i = 0; i < t.pairs.test.size(); ++i)
    if (words(t.pairs.test[i]) >= 8 && words(t.pairs.test[i]) <= 9) {
      pick = i;
      break;
    }
  const data::TranslationPair& p = t.pairs.test[pick];
  const std::size_t n = words(p);
  const std::vector<Array<F>> layers = cross_attention(m, transformer_batch(t.test, {pick}));
  xt::xarray<double> maps = xt::zeros<double>({L * H, n, n});
  std::vector<std::string> titles;
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t h = 0; h < H; ++h) {
      xt::view(maps, l * H + h) = head_map(layers[l], 0, h, n, n, 0);
      titles.push_back(text("layer ", l + 1, ", head ", h + 1, "  (AER ", fixed(aer(l, h), 2), ")"));
    }
  plots::HeatmapGridOptions g;
  g.heatmap = attention_style(data::word_tokens(p.source), data::word_tokens(p.target));
  for (std::size_t j = 0; j < n; ++j) g.heatmap.outlined.push_back({j, std::size_t(p.alignment[j])});
  g.cols = int(H);
  g.panel_titles = titles;
  g.title = "Decoder cross-attention on a test sentence; boxes: the true alignment";
  g.xlabel = "source words (keys)";
  g.ylabel = "target words (queries)";
  g.width_px = 3200;
  g.height_px = 1700;
  save_figure(plots::heatmap_grid(maps, g), "cross_attention",
              text("Cross-attention of every head (rows: layers) while the decoder predicts each word of \"", p.target,
                   "\", the translation of \"", p.source, "\". Red boxes mark the true alignment."));
}

// ---------------------------------------------------------------------------------------------
// 6. Two training choices, ablated.

void label_smoothing_ablation(const Plan& p, const Task& t, Trained& smoothed, const Sequences& smoothed_test,
                              const Sequences& smoothed_longer) {
  say("The same model, the same initial weights and batches, trained with one-hot targets (smoothing 0):");
  Trained plain = train_transformer(p, t, {"no smoothing", false, true, 0.0, 1.0, 0});
  const Sequences plain_test = translate(*plain.model, t.test), plain_longer = translate(*plain.model, t.longer_ids);
  const TokenScores a = token_scores(*plain.model, t.test, 0.0), b = token_scores(*smoothed.model, t.test, 0.1);
  const double bleu_a = bleu(plain_test, t.test), bleu_b = bleu(smoothed_test, t.test);
  const double long_a = bleu(plain_longer, t.longer_ids), long_b = bleu(smoothed_longer, t.longer_ids);
  table({"smoothing", "BLEU test", "BLEU longer", "test word accuracy (teacher-forced)", "mean max probability",
         "test cross-entropy"},
        {row("0", fixed(bleu_a, 4), fixed(long_a, 4), fixed(a.accuracy, 4), fixed(a.confidence, 4), fixed(a.nll, 4)),
         row("0.1", fixed(bleu_b, 4), fixed(long_b, 4), fixed(b.accuracy, 4), fixed(b.confidence, 4), fixed(b.nll, 4))});
  say("Mean max probability is the probability the model gives its own first choice, averaged over the test words: "
      "its confidence. Against its accuracy it says how calibrated the model is: without smoothing the confidence is ",
      fixed(a.confidence, 3), " for an accuracy of ", fixed(a.accuracy, 3), "; with smoothing 0.1, ",
      fixed(b.confidence, 3), " for ", fixed(b.accuracy, 3), " (confidence minus accuracy: ",
      fixed(b.confidence - b.accuracy, 3), " against ", fixed(a.confidence - a.accuracy, 3), "; 0 would be calibrated on "
      "average, below 0 under-confident). Held-out cross-entropy: ", fixed(b.nll, 3), " with smoothing, ", fixed(a.nll, 3),
      " without.");
  claim({"smoothing_lowers_confidence", "ls01_confidence <= ls0_confidence - 0.01",
         text("A smoothed target puts 0.9 on the right word, and the smoothed model is pulled away from certainty: its "
              "confidence is ", fixed(b.confidence, 3), " against ", fixed(a.confidence, 3), " without smoothing."),
         text("Smoothing did not lower the model's confidence in this run (", fixed(b.confidence, 3), " against ",
              fixed(a.confidence, 3), ")."),
         Expect::every_run, {{"ls01_confidence", b.confidence}, {"ls0_confidence", a.confidence}}});
  plots::Figure fig(2400, 1000);
  fig.title("Label smoothing 0 against 0.1: held-out scores");
  bar_panel(fig.panel(0).ylabel("score"), {"BLEU test", "BLEU longer", "word accuracy", "mean max probability"},
            {{"smoothing 0", {bleu_a, long_a, a.accuracy, a.confidence}},
             {"smoothing 0.1", {bleu_b, long_b, b.accuracy, b.confidence}}},
            3, 1.05);
  save_figure(fig, "ablation_smoothing", "Held-out BLEU, word accuracy and confidence with and without label smoothing.");
  metric("ls0_bleu_test", bleu_a);
  metric("ls0_bleu_longer", long_a);
  metric("ls0_confidence", a.confidence);
  metric("ls0_accuracy", a.accuracy);
  metric("ls01_confidence", b.confidence);
  metric("ls01_accuracy", b.accuracy);
}

// How unsteady a loss curve is: the largest rise of the mean loss over windows of `window` steps
// above the lowest mean before it (0 for a curve that only falls).
double largest_rise(const std::vector<double>& loss, std::size_t window) {
  const Windowed w = windowed(loss, window);
  double lowest = 1e300, rise = 0;
  for (double v : w.y) rise = std::max(rise, v - lowest), lowest = std::min(lowest, v);
  return rise;
}

void norm_and_warmup_ablation(const Plan& p, const Task& t) {
  const double peak = schedule(p, true)(p.warmup);
  say("Post-norm puts the layer norm after each residual sum, x = norm(x + f(x)), so the gradient that reaches a "
      "lower layer has passed through every norm above it. Pre-norm, x = x + f(norm(x)), keeps an identity path "
      "from the loss to the embeddings. The usual account (Xiong et al. 2020) is that post-norm needs the warm-up "
      "and pre-norm does not. We train the four combinations for ", p.ablation_epochs, p.ablation_epochs == 1 ?
      " epoch" : " epochs", " each, everything else equal (the same initial draw, batches and smoothing), at the "
      "schedule of section 2 (peak ", fixed(peak, 4), ") and at twice its learning rate (peak ", fixed(2 * peak, 4),
      "). Without warm-up the learning rate starts at the peak and follows the same decay.");
  struct Arm {
    std::string name, key;
    bool pre_norm, warmup;
    double scale;
  };
  std::vector<Arm> arms;
  for (double scale : {1.0, 2.0})
    for (bool pre : {false, true})
      for (bool warm : {true, false})
        arms.push_back({text(pre ? "pre-norm" : "post-norm", warm ? ", warm-up" : ", no warm-up"),
                        text(pre ? "pre" : "post", warm ? "_warmup" : "_nowarmup", scale == 1.0 ? "_lr1" : "_lr2"),
                        pre, warm, scale});
  std::vector<Trained> runs;
  for (const Arm& a : arms)
    runs.push_back(train_transformer(p, t, {text(a.name, ", lr x", int(a.scale)), a.pre_norm, a.warmup, 0.1, a.scale,
                                            p.ablation_epochs}));
  const std::size_t steps = runs.front().history.steps, window = std::max<std::size_t>(1, steps / 40);
  const std::size_t early = std::min<std::size_t>(steps, std::size_t(p.warmup));
  std::vector<std::vector<std::string>> rows;
  plots::Figure fig(2800, 1100, 1, 2);
  fig.title(window > 1 ? text("Training loss of the four recipes (mean of every ", window, " steps)")
                       : std::string("Training loss of the four recipes"));
  plots::LineOptions lo;
  for (int panel = 0; panel < 2; ++panel) {
    std::vector<plots::Series> series;
    for (std::size_t i = 0; i < arms.size(); ++i) {
      const Arm& a = arms[i];
      if ((a.scale == 2.0) != (panel == 1)) continue;
      const History& h = runs[i].history;
      const double early_loss = mean_over(h.loss, 0, early);
      const double rise = largest_rise(h.loss, window);
      const double val = h.validation_of("loss").back();
      const double b = bleu(translate(*runs[i].model, t.test), t.test);
      rows.push_back(row(text("x", int(a.scale)), a.name, fixed(early_loss, 3), fixed(rise, 3), fixed(val, 3), fixed(b, 4)));
      const Windowed w = windowed(h.loss, window);
      series.push_back(curve(a.name, w.x, w.y));
      metric("ablation_" + a.key + "_early_loss", early_loss);
      metric("ablation_" + a.key + "_largest_rise", rise);
      metric("ablation_" + a.key + "_validation_loss", val);
      metric("ablation_" + a.key + "_bleu_test", b);
    }
    plots::line_plot(fig.panel(panel)
                         .title(text("peak learning rate ", fixed((panel + 1) * peak, 4), panel ? " (twice)" : " (section 2)"))
                         .xlabel("training step")
                         .ylabel("label-smoothed loss (nats per word)"),
                     series, lo);
  }
  table({"learning rate", "recipe", text("mean loss, first ", early, " steps"), text("largest rise (", window, "-step means)"),
         "validation loss", "BLEU test"},
        rows);
  // What the warm-up buys each norm placement at each rate: validation loss without it minus with it.
  auto val_of = [&](bool pre, bool warm, double scale) {
    for (std::size_t i = 0; i < arms.size(); ++i)
      if (arms[i].pre_norm == pre && arms[i].warmup == warm && arms[i].scale == scale)
        return runs[i].history.validation_of("loss").back();
    return 0.0;
  };
  std::vector<std::string> gains;
  for (double scale : {1.0, 2.0})
    for (bool pre : {false, true}) {
      const double gain = val_of(pre, false, scale) - val_of(pre, true, scale);
      gains.push_back(text(pre ? "pre-norm" : "post-norm", " at x", int(scale), " ", gain >= 0 ? "+" : "", fixed(gain, 3)));
      metric(text("warmup_gain_", pre ? "pre" : "post", "_lr", int(scale)), gain);
    }
  say("What the warm-up is worth, as the validation loss without it minus the loss with it (positive: the warm-up "
      "helps): ", listing(gains), ". The largest rise measures spikes: how far the loss, averaged over ", window,
      " steps, climbs back above its lowest point so far.");
  const double post2 = val_of(false, false, 2.0) - val_of(false, true, 2.0), pre2 = val_of(true, false, 2.0) - val_of(true, true, 2.0);
  claim({"post_norm_needs_warmup", "warmup_gain_post_lr2 >= 0.5 and warmup_gain_post_lr2 >= warmup_gain_pre_lr2",
         text("At twice the learning rate post-norm needs the warm-up: without it its validation loss ends ",
              fixed(post2, 2), " higher, pre-norm's ", fixed(pre2, 2), ". In post-norm the gradient reaching the early "
              "layers passes through every norm of the residual stream, and a large first step can throw the "
              "model where it does not recover."),
         text("At twice the learning rate the warm-up is worth ", fixed(post2, 2), " of validation loss to post-norm and ",
              fixed(pre2, 2), " to pre-norm in this run."),
         Expect::every_run, {{"warmup_gain_post_lr2", post2}, {"warmup_gain_pre_lr2", pre2}}});
  save_figure(fig, "ablation_norm",
              "Training loss by step of post-norm and pre-norm, with and without warm-up, at the learning rate of "
              "section 2 and at twice it.");
}

}  // namespace

int main(int argc, char** argv) {
  return run_lesson(
      {"08_transformer", "The Transformer, encoder and decoder, trained to translate",
       "An encoder-decoder Transformer learns a toy translation with reordering; against GRUs with and without "
       "attention, beam search, cross-attention scored against the true alignment, two ablations.",
       "bleu_test_transformer"},
      argc, argv, [] {
        const Plan plan = make_plan();
        section("1. The task: a toy translation that reorders words, with its true alignments");
        const Task task = make_task(plan);
        the_task(task);

        section("2. The Transformer, built up");
        the_architecture(plan, task);
        Trained transformer = train_transformer(plan, task, {"Transformer", false, true, 0.1, 1.0, 0, true});
        the_schedule_and_smoothing(plan, task, transformer.history);
        the_training(transformer);
        const Sequences t_test = translate(*transformer.model, task.test);
        const Sequences t_longer = translate(*transformer.model, task.longer_ids);

        section("3. No attention, additive attention, the Transformer");
        const GruRun plain = train_gru(plan, task, "none", "GRU, no attention");
        const GruRun additive = train_gru(plan, task, "additive", "GRU + attention");
        const std::vector<Compared> models = {
            {"GRU, no attention", "gru_plain", plain.model->parameter_count(), &plain.history, translate(*plain.model, task.test),
             translate(*plain.model, task.longer_ids)},
            {"GRU + additive attention", "gru_attention", additive.model->parameter_count(), &additive.history,
             translate(*additive.model, task.test), translate(*additive.model, task.longer_ids)},
            {"Transformer", "transformer", transformer.model->parameter_count(), &transformer.history, t_test, t_longer}};
        the_bottleneck(plan, task, models);

        section("4. Decoding: greedy and beam search");
        decoding(plan, task, *transformer.model, *transformer.early);

        section("5. Cross-attention against the true alignment");
        cross_attention_vs_truth(*transformer.model, task);

        section("6. Two training choices, ablated");
        label_smoothing_ablation(plan, task, transformer, t_test, t_longer);
        norm_and_warmup_ablation(plan, task);
      });
}
