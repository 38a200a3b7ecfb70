// Lesson 12: BERT, a bidirectional encoder pretrained by filling in masked characters of real
// English text, then fine-tuned to tell which file a fortune came from.
//
// A GPT predicts the next token from the ones before it. BERT (Devlin et al. 2018) reads the whole
// text at once, both sides of every position, so it cannot be trained to predict "the next" token:
// it would see it. Instead some of its input is hidden and it must restore it (the cloze task,
// "masked language modelling"). Nobody labels anything: the text is its own supervision, and what
// the encoder learns doing it transfers to tasks that do need labels. We pretrain a small BERT on the
// characters of the Debian fortunes corpus, score its guesses on held-out text against counted
// baselines, fine-tune it to classify entries by topic against the same model trained from scratch
// with the same budget and a bag-of-characters classifier, and read what its heads attend to.
#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <unordered_map>

#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "io/files.hpp"
#include "lessons/kit/kit.hpp"
#include "nn/checkpoint.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/fortunes.hpp"
#include "nn/data/masking.hpp"
#include "nn/schedule.hpp"
#include "nn/transformer/masked_lm.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

using F = float;
using data::MaskChoice;

constexpr std::uint64_t kSplitSeed = 2018;      // the held-out entries: the same in every run
constexpr std::uint64_t kHeldOutMaskSeed = 99;  // the masks of the held-out windows: the same in every run
constexpr double kHeldOutShare = 0.1;           // of the entries, for validation and again for test
constexpr Index kIgnore = -100;
// Five topic files whose entries differ in what they talk about and how: hacker lore, mock
// dictionary entries, politics, verse and Zippy the Pinhead's non sequiturs.
const std::vector<std::string> kTopics = {"computers", "definitions", "politics", "songs-poems", "zippy"};

// Pretraining runs in two phases, as BERT's did (90 % of its steps on 128 tokens, then 512): short
// windows first, long ones after. Section 2 says why.
struct Phase {
  std::size_t context;   // tokens per window, [CLS] included
  std::size_t batch;     // windows per step
  std::size_t windows;   // windows per epoch, drawn at random places
  int epochs;
};

struct BertSettings {
  std::size_t d_model, heads, layers, d_ff;
  Phase short_windows, long_windows;
  double pretrain_lr;
  std::size_t held_out_windows;    // validation windows scored after every pretraining epoch
  int finetune_epochs;
  std::size_t finetune_batch;
  double finetune_lr;
  std::size_t finetune_per_topic;  // training entries per topic at most (0: all the split has)
  std::size_t context() const { return long_windows.context; }  // the longest sequence: fine-tuning's too
};

BertSettings recipe() {
  return full_or_quick(BertSettings{64, 4, 4, 256, {32, 64, 8192, 10}, {128, 32, 2048, 4}, 2e-3, 400, 10, 32, 5e-4, 100},
                       BertSettings{32, 2, 2, 128, {32, 32, 8192, 4}, {64, 32, 2048, 1}, 3e-3, 64, 6, 32, 1e-3, 60});
}

// ---------------------------------------------------------------------------------------------
// The corpus as characters.

struct Corpus {
  data::FortuneSplits split;
  data::Vocab vocab;          // the characters of the training entries, then <mask> and <cls>
  Index first = Index(data::Vocab::num_specials), end = 0;  // the characters: ids [first, end)
  Index mask = 0, cls = 0;
  std::vector<Index> train, validation, test;  // each entry's characters, then <eos>
};

std::vector<Index> stream_of(const data::Vocab& vocab, const std::vector<data::Fortune>& entries) {
  std::vector<Index> s;
  for (const auto& e : entries) {
    const std::vector<Index> ids = data::encode_fortune(vocab, e.text);
    s.insert(s.end(), ids.begin(), ids.end());
    s.push_back(data::Vocab::eos);
  }
  return s;
}

Corpus load_corpus() {
  Corpus c;
  c.split = data::split_fortunes(data::read_fortunes(), kHeldOutShare, kHeldOutShare, kSplitSeed);
  c.vocab = data::fortune_vocab(c.split.train);
  c.end = Index(c.vocab.size());
  c.mask = c.vocab.add("<mask>");
  c.cls = c.vocab.add("<cls>");
  c.train = stream_of(c.vocab, c.split.train);
  c.validation = stream_of(c.vocab, c.split.validation);
  c.test = stream_of(c.vocab, c.split.test);
  return c;
}

// A token as the figures and the report show it: a character as the kit's visible() shows it, the
// specials as short marks.
std::string shown(const data::Vocab& v, Index id) {
  const std::string& t = v.token(id);
  if (t == "<mask>") return "\u25ae";
  if (t == "<cls>") return "CLS";
  if (t == "<eos>") return "EOS";
  return visible(t);
}

std::string shown_text(const data::Vocab& v, const std::vector<Index>& ids) {
  std::string s;
  for (Index id : ids) s += shown(v, id);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Masked windows: the pretraining examples.

// A batch of windows, each [CLS] then up to context - 1 characters of the stream, masked by the
// rule, with where every target sits: its flat place b * L + l in the batch and in the stream.
struct MlmBatch {
  IndexArray ids;                     // (B, L)
  std::optional<Allowed> real;        // when some row is padded
  IndexArray positions, targets;      // (N): the places to predict and the true characters
  std::vector<MaskChoice> choices;    // (N)
  std::vector<std::size_t> at;        // (N): the target's place in the stream
};

MlmBatch masked_windows(const Corpus& c, const std::vector<Index>& stream, const std::vector<std::size_t>& starts,
                        std::size_t context, Generator& gen) {
  const std::size_t B = starts.size(), L = context;
  MlmBatch b;
  b.ids = xt::zeros<Index>({B, L});
  Mask real = xt::zeros<bool>({B, L});
  bool padded = false;
  std::vector<Index> positions, targets;
  for (std::size_t r = 0; r < B; ++r) {
    const std::size_t start = starts[r], stop = std::min(stream.size(), start + L - 1);
    std::vector<Index> row = {c.cls};
    row.insert(row.end(), stream.begin() + long(start), stream.begin() + long(stop));
    const data::MaskedTokens m = data::mask_tokens(row, c.mask, c.first, c.end, gen);
    padded = padded || row.size() < L;
    for (std::size_t l = 0; l < row.size(); ++l) {
      b.ids(r, l) = m.input[l];
      real(r, l) = true;
      if (m.target[l] == kIgnore) continue;
      positions.push_back(Index(r * L + l));
      targets.push_back(m.target[l]);
      b.choices.push_back(m.choice[l]);
      b.at.push_back(start + l - 1);
    }
  }
  if (padded) b.real = Allowed::where(real);
  b.positions = xt::adapt(positions, {positions.size()});
  b.targets = xt::adapt(targets, {targets.size()});
  return b;
}

// Held-out windows side by side from the start of a stream (at most `limit`), masked once with a
// fixed seed: every run and every model is scored on the very same targets.
std::vector<MlmBatch> held_out_set(const Corpus& c, const std::vector<Index>& stream, std::size_t context,
                                   std::size_t limit, std::size_t batch) {
  Generator gen(kHeldOutMaskSeed);
  std::vector<std::size_t> starts;
  for (std::size_t s = 0; s < stream.size() && starts.size() < limit; s += context - 1) starts.push_back(s);
  std::vector<MlmBatch> set;
  for (std::size_t lo = 0; lo < starts.size(); lo += batch)
    set.push_back(masked_windows(c, stream, {starts.begin() + long(lo), starts.begin() + long(std::min(starts.size(), lo + batch))},
                                 context, gen));
  return set;
}

std::size_t count_targets(const std::vector<MlmBatch>& set) {
  std::size_t n = 0;
  for (const auto& b : set) n += b.targets.size();
  return n;
}

// ---------------------------------------------------------------------------------------------
// Scores of masked-character predictions: mean cross-entropy (nats), accuracy, and accuracy by
// what the rule did to the target.

struct MlmScores {
  double loss = 0, accuracy = 0;
  std::array<double, 4> accuracy_by_choice{};  // indexed by MaskChoice (none unused)
  std::array<std::size_t, 4> count_by_choice{};
};

// Adds one target's log-probability and hit to running sums; finish() turns sums into means.
struct ScoreSums {
  double nll = 0;
  std::size_t n = 0;
  std::array<std::size_t, 4> hits{}, count{};
  void add(double log_p, bool hit, MaskChoice choice) {
    nll -= log_p;
    ++n;
    ++count[std::size_t(choice)];
    hits[std::size_t(choice)] += hit;
  }
  MlmScores finish() const {
    MlmScores s;
    s.loss = nll / double(std::max<std::size_t>(n, 1));
    std::size_t all = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      all += hits[k];
      s.count_by_choice[k] = count[k];
      s.accuracy_by_choice[k] = double(hits[k]) / double(std::max<std::size_t>(count[k], 1));
    }
    s.accuracy = double(all) / double(std::max<std::size_t>(n, 1));
    return s;
  }
};

MlmScores score_model(nn::MaskedLM<F>& bert, const std::vector<MlmBatch>& set) {
  NoGrad no_grad;
  bert.eval();
  ScoreSums sums;
  for (const MlmBatch& b : set) {
    const Array<F> logp = log_softmax(bert.forward(b.ids, b.real, b.positions), -1).value();
    const IndexArray guess = nn::argmax_last(logp);
    for (std::size_t k = 0; k < b.targets.size(); ++k)
      sums.add(double(logp(k, std::size_t(b.targets(k)))), guess(k) == b.targets(k), b.choices[k]);
  }
  return sums.finish();
}

// The counted baselines, fitted on the training stream.
//   unigram:    p(c), the characters' frequencies: always guesses the most frequent one;
//   neighbours: p(c | the character before, the character after), counted, and shrunk towards the
//               unigram with a pseudo-count alpha: (n(l c r) + alpha p(c)) / (n(l . r) + alpha),
//               alpha chosen on the validation targets. It reads the true neighbours even where
//               the model's input has them masked: a baseline with an edge.
class CountedBaselines {
 public:
  explicit CountedBaselines(const Corpus& c) : c_(c), V_(std::size_t(c.end)) {
    unigram_.assign(V_, 1.0);  // one pseudo-count each: no character has probability 0
    for (Index t : c.train)
      if (eligible(t)) unigram_[std::size_t(t)] += 1;
    const double total = std::accumulate(unigram_.begin() + c.first, unigram_.end(), 0.0);
    for (std::size_t v = 0; v < V_; ++v) unigram_[v] = v < std::size_t(c.first) ? 0.0 : unigram_[v] / total;
    best_unigram_ = Index(std::max_element(unigram_.begin(), unigram_.end()) - unigram_.begin());
    for (std::size_t i = 1; i + 1 < c.train.size(); ++i)
      if (eligible(c.train[i])) {
        ++triple_[key(c.train[i - 1], c.train[i + 1])][c.train[i]];
        ++pair_[key(c.train[i - 1], c.train[i + 1])];
      }
  }

  Index most_frequent() const { return best_unigram_; }
  double unigram(Index c) const { return unigram_[std::size_t(c)]; }

  MlmScores score_unigram(const std::vector<MlmBatch>& set) const {
    ScoreSums sums;
    for (const MlmBatch& b : set)
      for (std::size_t k = 0; k < b.targets.size(); ++k)
        sums.add(std::log(unigram(b.targets(k))), b.targets(k) == best_unigram_, b.choices[k]);
    return sums.finish();
  }

  MlmScores score_neighbours(const std::vector<MlmBatch>& set, const std::vector<Index>& stream, double alpha) const {
    ScoreSums sums;
    for (const MlmBatch& b : set)
      for (std::size_t k = 0; k < b.targets.size(); ++k) {
        const std::size_t i = b.at[k];
        const Index left = i > 0 ? stream[i - 1] : data::Vocab::eos;
        const Index right = i + 1 < stream.size() ? stream[i + 1] : data::Vocab::eos;
        const auto p = [&](Index ch) { return probability(left, ch, right, alpha); };
        Index guess = c_.first;
        for (Index ch = c_.first; ch < c_.end; ++ch)
          if (p(ch) > p(guess)) guess = ch;
        sums.add(std::log(p(b.targets(k))), guess == b.targets(k), b.choices[k]);
      }
    return sums.finish();
  }

 private:
  bool eligible(Index t) const { return t >= c_.first && t < c_.end; }
  // A stream holds characters, <eos> and <unk>: every id is below V_, so (l, r) -> l V_ + r is one-to-one.
  std::size_t key(Index l, Index r) const { return std::size_t(l) * V_ + std::size_t(r); }
  double probability(Index l, Index ch, Index r, double alpha) const {
    const auto pit = pair_.find(key(l, r));
    const double n_pair = pit == pair_.end() ? 0.0 : double(pit->second);
    double n = 0;
    if (n_pair > 0) {
      const auto& row = triple_.at(key(l, r));
      const auto it = row.find(ch);
      n = it == row.end() ? 0.0 : double(it->second);
    }
    return (n + alpha * unigram(ch)) / (n_pair + alpha);
  }

  const Corpus& c_;
  std::size_t V_;
  std::vector<double> unigram_;
  Index best_unigram_ = 0;
  std::unordered_map<std::size_t, std::map<Index, std::size_t>> triple_;
  std::unordered_map<std::size_t, std::size_t> pair_;
};

// ---------------------------------------------------------------------------------------------
// The model.

nn::EncoderModelConfig bert_config(const Corpus& c, const BertSettings& r, double dropout) {
  nn::EncoderModelConfig cfg;
  cfg.vocab = c.vocab.size();
  cfg.num_classes = kTopics.size();
  cfg.num_layers = r.layers;
  cfg.max_length = r.context();
  // Pre-norm with a final norm (BERT itself is post-norm; pre-norm trains without a long warm-up).
  cfg.layer = nn::LayerConfig{r.d_model, r.heads, r.d_ff, dropout, /*norm_first=*/true, nn::Activation::GELU, 1e-5};
  cfg.positional = nn::Positional::RelativeBias;
  cfg.pooling = nn::Pooling::First;  // the classifier reads [CLS]
  cfg.pad_id = data::Vocab::pad;
  return cfg;
}

// Every model of the lesson starts from this draw: the pretrained one, and the one fine-tuned from
// scratch, whose classifier therefore starts where the pretrained model's does (pretraining never
// touches the classifier).
std::unique_ptr<nn::MaskedLM<F>> new_bert(const Corpus& c, const BertSettings& r, double dropout) {
  Generator gen(seed());
  return std::make_unique<nn::MaskedLM<F>>(bert_config(c, r, dropout), gen);
}

// ---------------------------------------------------------------------------------------------
// 1. Text, characters and the masking rule.

void the_corpus(const Corpus& c) {
  std::size_t chars = 0;
  for (const auto& e : c.split.train) chars += data::fortune_chars(e.text).size();
  say("The Debian package fortunes holds ", c.split.train.size() + c.split.validation.size() + c.split.test.size(),
      " distinct entries (a later copy of an entry is dropped) in ", data::fortune_topics(c.split.train).size(),
      " files by topic. We split them by entry, ", percent(1 - 2 * kHeldOutShare, 0), " for training and ",
      percent(kHeldOutShare, 0), " each for validation and test, with a fixed seed, so that every run holds out the "
      "same entries. The model reads characters: the ", c.end - c.first, " characters of the training entries, the "
      "four specials every vocabulary here has (<pad> = 0, <bos>, <eos>, <unk>) and two of BERT's, [MASK] and "
      "[CLS], appended after them: ", c.vocab.size(), " tokens. Each entry ends with <eos>, BERT's [SEP].");
  table({"split", "entries", "characters"},
        {row("train", c.split.train.size(), c.train.size() - c.split.train.size()),
         row("validation", c.split.validation.size(), c.validation.size() - c.split.validation.size()),
         row("test", c.split.test.size(), c.test.size() - c.split.test.size())});
  config({{"split_seed", kSplitSeed}, {"vocabulary", c.vocab.size()}});
  metric("train_characters", double(chars));
}

// One held-out entry with the rule applied, and the rule's shares measured over all training windows.
void the_masking_rule(const Corpus& c, const BertSettings& r) {
  say("BERT's rule: choose 15 % of the characters as targets. Replace a chosen character by [MASK] (shown \u25ae) "
      "80 % of the time, by a random character 10 % of the time, and leave it as it is 10 % of the time; the loss "
      "is the cross-entropy of the original character at the chosen places only. [CLS], <eos> and padding are "
      "never chosen. Why not always [MASK]? Because [MASK] never occurs after pretraining: a model that only "
      "learned to fix [MASK] places would have no reason to build a good representation of a character it can "
      "see. With 10 % random and 10 % unchanged, any character it reads may be wrong, so it must represent every one.");
  // Three held-out entries, each as read and as masked.
  std::vector<const data::Fortune*> picks;
  for (const auto& e : c.split.validation)
    if (picks.size() < 3 && e.text.size() >= 40 && e.text.size() <= 56 && e.text.find('\n') == std::string::npos)
      picks.push_back(&e);
  Generator gen(seed() + 11);
  std::size_t width = 0;
  std::vector<std::vector<Index>> originals, inputs;
  std::vector<std::vector<MaskChoice>> choices;
  std::string block;
  for (const auto* e : picks) {
    std::vector<Index> ids = {c.cls};
    for (Index id : data::encode_fortune(c.vocab, e->text)) ids.push_back(id);
    ids.push_back(data::Vocab::eos);
    const data::MaskedTokens m = data::mask_tokens(ids, c.mask, c.first, c.end, gen);
    originals.push_back(ids);
    inputs.push_back(m.input);
    choices.push_back(m.choice);
    width = std::max(width, ids.size());
    std::string marks;
    for (MaskChoice ch : m.choice)
      marks += ch == MaskChoice::none ? " " : ch == MaskChoice::masked ? "M" : ch == MaskChoice::random ? "R" : "K";
    block += "text:   " + shown_text(c.vocab, ids) + "\ninput:  " + shown_text(c.vocab, m.input) + "\nchosen: " + marks + "\n\n";
  }
  verbatim(block + "M: replaced by [MASK], R: by a random character, K: kept; the model predicts the text's character at each.");
  // The figure: per entry, the text row and the input row, cells colored by what the rule did; a
  // long entry wraps after kLine positions, so the characters read at the book's width.
  constexpr std::size_t kLine = 32;
  const std::size_t lines = (width + kLine - 1) / kLine, rows = 2 * picks.size() * lines;
  xt::xarray<double> kind = xt::zeros<double>({rows, kLine});
  kind.fill(std::nan(""));
  std::vector<std::string> cells(rows * kLine), labels;
  for (std::size_t e = 0; e < picks.size(); ++e)
    for (std::size_t part = 0; part < lines; ++part) {
      const std::size_t top = 2 * (e * lines + part);
      for (std::size_t col = 0; col < kLine; ++col) {
        const std::size_t l = part * kLine + col;
        if (l >= originals[e].size()) continue;
        kind(top, col) = kind(top + 1, col) = double(int(choices[e][l]));
        cells[top * kLine + col] = shown(c.vocab, originals[e][l]);
        cells[(top + 1) * kLine + col] = shown(c.vocab, inputs[e][l]);
      }
      labels.push_back(part == 0 ? text("entry ", e + 1, ": text") : text("(", part * kLine, "...) text"));
      labels.push_back("what BERT reads");
    }
  plots::HeatmapOptions ho;
  ho.cell_text = cells;
  ho.y_labels = labels;
  ho.x_labels = number_labels(kLine, 4);
  // One color per choice (the values 0..3 land exactly on the table's four entries).
  ho.cmap = plots::Colormap("choices", {plots::Color{0.97, 0.97, 0.97}, plots::Color{0.99, 0.68, 0.38},
                                         plots::Color{0.90, 0.33, 0.33}, plots::Color{0.45, 0.76, 0.45}}, false);
  ho.vmin = 0;
  ho.vmax = 3;
  ho.colorbar = false;
  HeatmapFigureOptions style;
  style.title = "The 80/10/10 rule on three held-out entries";
  style.xlabel = text("position in the line (", kLine, " a line; 0 of the first is [CLS])");
  style.width = 1800;
  style.height = int(200 + 56 * rows);
  save_figure(heatmap_figure(kind, ho, style), "masking",
              "Three validation entries as written (upper row of each pair) and as the model reads them (lower row). "
              "Chosen targets are shaded by what happened to them: orange, replaced by [MASK] (\u25ae); red, by a random "
              "character; green, kept; light cells are not targets.");

  // The shares, measured over one epoch's worth of long training windows.
  const Phase& ph = r.long_windows;
  Generator count_gen(seed() + 12);
  std::array<double, 4> n{};
  double eligible = 0;
  for (std::size_t w = 0; w < ph.windows; ++w) {
    const std::size_t start = count_gen.below(c.train.size() - ph.context);
    const MlmBatch b = masked_windows(c, c.train, {start}, ph.context, count_gen);
    for (MaskChoice ch : b.choices) n[std::size_t(ch)] += 1;
    for (std::size_t l = 0; l < ph.context; ++l) eligible += b.ids(0, l) != c.cls && b.ids(0, l) != data::Vocab::eos;
  }
  const double chosen = n[1] + n[2] + n[3];
  table({"over " + std::to_string(ph.windows) + " training windows of " + std::to_string(ph.context - 1) + " characters", "share"},
        {row("characters chosen as targets", percent(chosen / eligible, 2)), row("of the chosen: [MASK]", percent(n[1] / chosen, 2)),
         row("of the chosen: a random character", percent(n[2] / chosen, 2)), row("of the chosen: kept", percent(n[3] / chosen, 2))});
  metric("masking_chosen_share", chosen / eligible);
  metric("masking_mask_share", n[1] / chosen);
  metric("masking_random_share", n[2] / chosen);
  metric("masking_kept_share", n[3] / chosen);
}

// The attention pattern of a padded batch, BERT's beside GPT's.
void both_directions() {
  const std::size_t L = 8, real = 6;
  xt::xarray<double> bert = xt::zeros<double>({L, L}), gpt = xt::zeros<double>({L, L});
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t j = 0; j < L; ++j) {
      bert(i, j) = j < real;
      gpt(i, j) = j <= i && j < real;
    }
  const std::vector<std::string> tokens = {"CLS", "c", "a", "t", "s", "EOS", "pad", "pad"};
  plots::Figure fig(2400, 1150, 1, 2);
  fig.title("Which keys a query may use: BERT reads both sides, a GPT only the left");
  plots::HeatmapOptions ho = attention_style(tokens, tokens);
  plots::heatmap(fig.panel(0).title("BERT: every real token (padding hidden)").xlabel("Keys").ylabel("Queries"), bert, ho);
  plots::heatmap(fig.panel(1).title("GPT: causal, itself and the left only").xlabel("Keys"), gpt, ho);
  fig.shared_colorbar({ho.cmap, 0.0, 1.0, "1: allowed, 0: hidden"});
  save_figure(fig, "attention_masks",
              "Allowed keys (1) for each query of a sequence of 6 real tokens padded to 8. In BERT every position "
              "sees the whole text, which is why it cannot be trained to predict the next character and fills in "
              "hidden ones instead.");
  say("Without a causal mask every position sees every other: the representation of a character is built from "
      "both sides of it. That is what makes BERT good at understanding a text and unable to write one.");
}

// ---------------------------------------------------------------------------------------------
// 2. Pretraining by masked language modelling.

struct Pretrained {
  std::unique_ptr<nn::MaskedLM<F>> bert;
  History history;  // both phases, one after the other
  std::size_t first_phase_epochs = 0, first_phase_steps = 0;
  MlmScores test, unigram, neighbours;
};

std::vector<std::size_t> random_starts(std::size_t n, const std::vector<Index>& stream, std::size_t context, Generator& gen) {
  std::vector<std::size_t> s(n);
  for (auto& v : s) v = gen.below(stream.size() - context);
  return s;
}

Pretrained pretrain(const Corpus& c, const BertSettings& r) {
  Pretrained p{new_bert(c, r, 0.0), {}, 0, 0, {}, {}, {}};
  nn::MaskedLM<F>& bert = *p.bert;
  const std::size_t L = r.context();
  const auto validation = held_out_set(c, c.validation, L, r.held_out_windows, 64);
  const auto validation_short = held_out_set(c, c.validation, r.short_windows.context, r.held_out_windows, 64);
  const auto test = held_out_set(c, c.test, L, full_or_quick<std::size_t>(100000, 600), 64);
  const CountedBaselines counted(c);
  // The baselines first: what a model that reads nothing, or only the two neighbours, gets.
  double best_alpha = 1, best_loss = 1e9;
  for (double alpha : {0.25, 1.0, 4.0, 16.0}) {
    const double loss = counted.score_neighbours(validation, c.validation, alpha).loss;
    if (loss < best_loss) best_loss = loss, best_alpha = alpha;
  }
  p.unigram = counted.score_unigram(test);
  p.neighbours = counted.score_neighbours(test, c.test, best_alpha);
  say("Two counted baselines, fitted on the training characters and scored on the same held-out targets as the "
      "model. The unigram model reads nothing and always guesses the most frequent character ('",
      shown(c.vocab, counted.most_frequent()), "'). The neighbour model counts each character between its two "
      "neighbours (p(c | left, right), shrunk towards the unigram with a pseudo-count of ", best_alpha,
      " chosen on validation) and reads the true neighbours even where the model sees a [MASK]: a local context "
      "of one character each side, with an edge.");

  table({"part", "parameters"},
        {row(text("character embedding (", c.vocab.size(), " x ", r.d_model, "), also the output layer"),
             bert.model.embed.parameter_count()),
         row(text("relative position bias (32 distance buckets x ", r.heads, " heads)"), bert.model.positional.parameter_count()),
         row(text(r.layers, " pre-norm encoder layers and the final norm (", r.heads, " heads, FFN ", r.d_ff, ")"),
             bert.model.encoder.parameter_count()),
         row("MLM head: dense, norm, output bias", bert.mlm.parameter_count()),
         row("[CLS] classifier (used when fine-tuning)", bert.model.head.parameter_count()),
         row("total", bert.parameter_count())});
  config({{"d_model", r.d_model}, {"heads", r.heads}, {"layers", r.layers}, {"d_ff", r.d_ff},
          {"positions", "relative (T5 buckets)"}});

  nn::AdamW<F> opt(bert.parameters(), r.pretrain_lr, 0.9, 0.98, 1e-8, 0.01);
  const std::string from = checkpoint_from("bert_mlm.npz");
  if (!from.empty()) {
    config("pretrained_from", from);
    nn::load_checkpoint(from, bert.named_parameters(), &opt);
    say("Starting from ", from, ": the weights and the AdamW state of an earlier run (", opt.steps(),
        " steps); this run trains them further.");
  }
  Phase first = r.short_windows;
  first.epochs = epochs(first.epochs, first.epochs);
  const Phase& second = r.long_windows;
  const auto steps_of = [](const Phase& ph) { return long((ph.windows + ph.batch - 1) / ph.batch) * ph.epochs; };
  const long steps = steps_of(first) + steps_of(second), done = long(opt.steps());
  say("Pretraining reads windows of the training text drawn at random places, [CLS] in front, masked afresh each "
      "time: first ", first.epochs, " epochs of ", first.windows, " windows of ", first.context - 1, " characters (batches of ",
      first.batch, "), then ", second.epochs, " epochs of ", second.windows, " windows of ", second.context - 1,
      " (batches of ", second.batch, "). Why short windows first? At the start every head spreads its attention "
      "evenly, so a character's neighbour gets 1/L of it and the gradient that would teach a head to look there is "
      "that weak: at L = ", second.context, " the model sits for hundreds of steps at the unigram's loss, "
      "predicting spaces. At L = ", first.context, " the neighbours are four times as loud, the heads find them, "
      "and the long windows then teach the model to use a wider context. The positions are T5's relative bias "
      "(a learned score per head for each distance, exact up to 7, then in log-spaced buckets), which carries "
      "over from short windows to long ones unchanged. AdamW (peak ", r.pretrain_lr, ", weight decay 0.01), one "
      "warm-up and cosine decay over both phases, gradients clipped at norm 1. After every epoch the model fills "
      "in the masked characters of ", r.held_out_windows, " validation windows of each length (",
      count_targets(validation_short), " of ", first.context - 1, " characters, ", count_targets(validation), " of ",
      L - 1, ").");
  auto phase_config = [](const Phase& ph) {
    return Json{{"context", ph.context}, {"batch", ph.batch}, {"windows", ph.windows}, {"epochs", ph.epochs}};
  };
  config({{"pretrain_short_windows", phase_config(first)}, {"pretrain_long_windows", phase_config(second)},
          {"pretrain_peak_lr", r.pretrain_lr}});
  const nn::Schedule lr = nn::warmup_cosine_lr(r.pretrain_lr, std::max(1L, steps / 20), steps, r.pretrain_lr / 20);
  Generator windows(seed() + 21), masks(seed() + 22);
  auto phase = [&](const Phase& ph, const std::string& label) {
    FitOptions fo;
    fo.label = label;
    fo.epochs = ph.epochs;
    fo.batch = ph.batch;
    fo.seed = seed();
    fo.clip = 1.0;
    fo.lr = [&, done](long step) { return lr(step - done); };
    fo.validate = [&] {
      const MlmScores s = score_model(bert, validation), t = score_model(bert, validation_short);
      return Scores{{"loss", s.loss}, {"accuracy", s.accuracy}, {"loss_short", t.loss}, {"accuracy_short", t.accuracy}};
    };
    return fit(bert, opt, ph.windows,
               [&](const std::vector<std::size_t>& rows) {
                 const MlmBatch b = masked_windows(c, c.train, random_starts(rows.size(), c.train, ph.context, windows),
                                                   ph.context, masks);
                 return cross_entropy(bert.forward(b.ids, b.real, b.positions), b.targets);
               },
               fo);
  };
  const History h1 = phase(first, text("pretraining, ", first.context - 1, " characters"));
  const History h2 = phase(second, text("pretraining, ", second.context - 1, " characters"));
  p.history = joined(h1, h2);
  p.first_phase_epochs = h1.epoch_loss.size();
  p.first_phase_steps = h1.steps;
  nn::save_checkpoint(lesson().path("bert_mlm.npz"), bert.named_parameters(), &opt);
  p.test = score_model(bert, test);
  timing("pretrain_seconds", p.history.seconds);
  timing("pretrain_short_step_ms", h1.median_step_ms());
  timing("pretrain_long_step_ms", h2.median_step_ms());
  return p;
}

void pretraining_results(const Corpus& c, const Pretrained& p, const BertSettings& r) {
  const History& h = p.history;
  std::vector<std::vector<std::string>> rows;
  const auto& vl = h.validation_of("loss");
  const auto& va = h.validation_of("accuracy");
  const auto& vls = h.validation_of("loss_short");
  const auto& vas = h.validation_of("accuracy_short");
  const std::size_t short_chars = r.short_windows.context - 1, long_chars = r.long_windows.context - 1;
  for (std::size_t e = 0; e < vl.size(); ++e)
    rows.push_back(row(e + 1, e < p.first_phase_epochs ? short_chars : long_chars, fixed(h.epoch_loss[e], 3),
                       fixed(vls[e], 3), fixed(vas[e], 3), fixed(vl[e], 3), fixed(va[e], 3)));
  table({"epoch", "trained on windows of", "training loss", text("validation loss, ", short_chars),
         text("accuracy, ", short_chars), text("validation loss, ", long_chars), text("accuracy, ", long_chars)},
        rows);
  const std::size_t fe = p.first_phase_epochs;
  metric("val_accuracy_short_first_epoch", vas[0]);
  metric("val_accuracy_short_phase_end", vas[fe - 1]);
  metric("val_accuracy_long_first_epoch", va[0]);
  metric("val_accuracy_long_phase_end", va[fe - 1]);
  metric("val_accuracy_long_end", va.back());
  claim({"short_windows_learned", "val_accuracy_short_phase_end >= val_accuracy_short_first_epoch + 0.02",
         text("While the model trains on windows of ", short_chars, " characters it gets better at them (validation "
              "accuracy ", fixed(vas[0], 3), " after the first epoch, ", fixed(vas[fe - 1], 3), " after the last)."),
         text("On windows of ", short_chars, " characters the validation accuracy hardly moves over the short phase (",
              fixed(vas[0], 3), " after the first epoch, ", fixed(vas[fe - 1], 3), " after the last): most of what the "
              "model learns here it learns in the first epoch."),
         Expect::either_way});
  claim({"long_windows_need_their_phase", "val_accuracy_long_phase_end < val_accuracy_short_phase_end - 0.02 and "
                                          "val_accuracy_long_end >= val_accuracy_long_phase_end + 0.02",
         text("On windows of ", long_chars, " it does worse (", fixed(va[fe - 1], 3), " at the end of the short phase): "
              "distances beyond ", short_chars, " fall in relative-position buckets it has never trained, and each query "
              "spreads its attention over more keys. The long windows mend that (", fixed(va.back(), 3), " at the end). "
              "BERT's own recipe had the same shape: its 512-token phase existed to teach the positions beyond 128."),
         text("On windows of ", long_chars, " it reaches ", fixed(va[fe - 1], 3), " at the end of the short phase and ",
              fixed(va.back(), 3), " at the end: the long phase changes little in this run."),
         Expect::either_way});
  const std::size_t n_test = p.test.count_by_choice[1] + p.test.count_by_choice[2] + p.test.count_by_choice[3];
  say("On the ", n_test, " masked characters of the test windows (", c.split.test.size(), " held-out entries):");
  auto by = [](const MlmScores& s, MaskChoice ch) { return fixed(s.accuracy_by_choice[std::size_t(ch)], 3); };
  table({"model", "loss (nats)", "bits per character", "accuracy", "on [MASK]", "on random", "on kept"},
        {row("unigram (reads nothing)", fixed(p.unigram.loss, 3), fixed(p.unigram.loss / std::log(2.0), 3), fixed(p.unigram.accuracy, 3),
             by(p.unigram, MaskChoice::masked), by(p.unigram, MaskChoice::random), by(p.unigram, MaskChoice::kept)),
         row("neighbours (true left and right)", fixed(p.neighbours.loss, 3), fixed(p.neighbours.loss / std::log(2.0), 3),
             fixed(p.neighbours.accuracy, 3), by(p.neighbours, MaskChoice::masked), by(p.neighbours, MaskChoice::random),
             by(p.neighbours, MaskChoice::kept)),
         row("BERT", fixed(p.test.loss, 3), fixed(p.test.loss / std::log(2.0), 3), fixed(p.test.accuracy, 3),
             by(p.test, MaskChoice::masked), by(p.test, MaskChoice::random), by(p.test, MaskChoice::kept))});
  metric("mlm_test_accuracy_masked_minus_unigram", p.test.accuracy_by_choice[1] - p.unigram.accuracy);
  claim({"bert_beats_the_unigram", "mlm_test_accuracy_masked_minus_unigram >= 0.05",
         text("Under [MASK], where it reads nothing of the character, BERT restores ", percent(p.test.accuracy_by_choice[1], 1),
              " of the held-out characters, against ", percent(p.unigram.accuracy, 1), " for the unigram guess (always "
              "the most frequent character): it reads the context."),
         text("Under [MASK], BERT restores ", percent(p.test.accuracy_by_choice[1], 1), " of the held-out characters, not "
              "clearly above the unigram guess (", percent(p.unigram.accuracy, 1), "): it has not yet learned to read "
              "the context."),
         Expect::every_run, {{"mlm_test_accuracy_masked_minus_unigram", p.test.accuracy_by_choice[1] - p.unigram.accuracy}}});
  say("Over all the targets: ", percent(p.test.accuracy, 1), ". Where the rule left the character in place the model "
      "reads the answer, and gets ", percent(p.test.accuracy_by_choice[3], 1), " right; where it put a random character "
      "it must notice the character does not fit (", percent(p.test.accuracy_by_choice[2], 1), ").");
  claim({"bert_against_neighbour_counts", "mlm_test_accuracy > neighbours_test_accuracy",
         text("BERT beats the counts of the two true neighbours (", percent(p.neighbours.accuracy, 1), "), which see the "
              "neighbours it may not."),
         text("The counts of the two true neighbours still win (", percent(p.neighbours.accuracy, 1), "): they see the "
              "true neighbours, which BERT may not (a neighbour may be masked too), a local count is hard to beat at "
              "the character level, and the model has read the training text a few times (--from continues)."),
         Expect::either_way, {{"mlm_test_accuracy", p.test.accuracy}, {"neighbours_test_accuracy", p.neighbours.accuracy}}});
  metric("mlm_test_accuracy", p.test.accuracy);
  metric("mlm_test_loss", p.test.loss);
  metric("mlm_test_accuracy_masked", p.test.accuracy_by_choice[1]);
  metric("mlm_test_accuracy_random", p.test.accuracy_by_choice[2]);
  metric("mlm_test_accuracy_kept", p.test.accuracy_by_choice[3]);
  metric("unigram_test_accuracy", p.unigram.accuracy);
  metric("unigram_test_loss", p.unigram.loss);
  metric("neighbours_test_accuracy", p.neighbours.accuracy);
  metric("neighbours_test_loss", p.neighbours.loss);

  // Loss and accuracy against the baselines.
  plots::Figure fig(2800, 1000, 1, 2);
  fig.title("Masked language modelling: held-out characters against counted baselines");
  const Windowed train = windowed(h.loss, std::max<std::size_t>(1, h.steps / 60));
  // The step at which each epoch ends: the two phases have their own steps per epoch.
  std::vector<double> epoch_end;
  const std::size_t short_steps = p.first_phase_steps / std::max<std::size_t>(1, p.first_phase_epochs);
  const std::size_t long_steps = (h.steps - p.first_phase_steps) / std::max<std::size_t>(1, vl.size() - p.first_phase_epochs);
  for (std::size_t e = 1; e <= vl.size(); ++e)
    epoch_end.push_back(double(e <= p.first_phase_epochs ? e * short_steps
                                                         : p.first_phase_steps + (e - p.first_phase_epochs) * long_steps));
  const std::vector<double> span = {1.0, double(h.steps)};
  auto flat = [&](const std::string& name, double v, std::size_t color) {
    plots::Series s = curve(name, span, {v, v});
    s.dashed = true;
    s.color = plots::series_color(color);
    return s;
  };
  // Where the long windows start: a vertical gray line over each panel's range.
  auto boundary = [&](double lo, double hi) {
    const double x = double(p.first_phase_steps) + 0.5;
    return reference(text("windows of ", r.long_windows.context - 1, " from here"), {x, x}, {lo, hi});
  };
  const double top = std::max(*std::max_element(train.y.begin(), train.y.end()), p.unigram.loss);
  // One color per curve in both panels.
  auto colored = [](plots::Series s, std::size_t color) {
    s.color = plots::series_color(color);
    return s;
  };
  plots::LineOptions lo;
  plots::line_plot(fig.panel(0).title("Cross-entropy of the masked characters").xlabel("training step").ylabel("nats"),
                   {colored(curve("training (mean of windows of steps)", train.x, train.y), 0),
                    colored(curve(text("validation, windows of ", short_chars), epoch_end, vls), 1),
                    colored(curve(text("validation, windows of ", long_chars), epoch_end, vl), 2),
                    flat("unigram, test", p.unigram.loss, 3), flat("neighbours, test", p.neighbours.loss, 4),
                    boundary(0.0, top)},
                   lo);
  lo.ymin = 0.0;
  lo.ymax = 1.0;
  plots::line_plot(fig.panel(1).title("Accuracy on the masked characters").xlabel("training step").ylabel("accuracy"),
                   {colored(curve(text("validation, windows of ", short_chars), epoch_end, vas), 1),
                    colored(curve(text("validation, windows of ", long_chars), epoch_end, va), 2),
                    flat("unigram, test", p.unigram.accuracy, 3), flat("neighbours, test", p.neighbours.accuracy, 4),
                    boundary(0.0, 1.0)},
                   lo);
  save_figure(fig, "mlm_training",
              text("Left: training loss by step and validation loss after each epoch, in nats per masked character, "
                   "with the two counted baselines on the test targets (dashed). Right: validation accuracy after each "
                   "epoch, on validation windows of both lengths. Training windows of ", r.short_windows.context - 1,
                   " characters until the gray line, of ", r.long_windows.context - 1, " after it."));
}

// The model's guesses at the masks of one held-out sentence.
void fill_in(const Corpus& c, nn::MaskedLM<F>& bert) {
  const data::Fortune* pick = nullptr;
  for (const auto& e : c.split.test)
    if (!pick && e.text.size() >= 50 && e.text.size() <= 70 && e.text.find('\n') == std::string::npos) pick = &e;
  if (!pick) return;
  std::vector<Index> ids = {c.cls};
  for (Index id : data::encode_fortune(c.vocab, pick->text)) ids.push_back(id);
  ids.push_back(data::Vocab::eos);
  // Every fifth character masked (a harder test than 15 %: less context around each).
  std::vector<Index> input = ids;
  std::vector<Index> where;
  for (std::size_t l = 3; l + 1 < ids.size(); l += 5) input[l] = c.mask, where.push_back(Index(l));
  NoGrad no_grad;
  bert.eval();
  IndexArray in = xt::adapt(input, {std::size_t(1), input.size()});
  const Array<F> logp = log_softmax(bert.forward(in, std::nullopt, xt::adapt(where, {where.size()})), -1).value();
  std::string guessed = shown_text(c.vocab, input), block;
  std::size_t right = 0;
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k = 0; k < where.size(); ++k) {
    std::vector<Index> order(std::size_t(c.end - c.first));
    std::iota(order.begin(), order.end(), c.first);
    std::sort(order.begin(), order.end(), [&](Index a, Index b) { return logp(k, std::size_t(a)) > logp(k, std::size_t(b)); });
    const Index truth = ids[std::size_t(where[k])];
    right += order[0] == truth;
    std::string top;
    for (std::size_t t = 0; t < 3; ++t) top += (t ? "  " : "") + shown(c.vocab, order[t]) + " " + fixed(std::exp(logp(k, std::size_t(order[t]))), 2);
    rows.push_back(row(where[k], shown(c.vocab, truth), top));
  }
  say("A held-out entry with every fifth character hidden, and the model's three best guesses for each hidden one "
      "(the probability it gives them). Both sides count: a guess has to fit the word it completes and the word "
      "that follows.");
  verbatim("text:  " + shown_text(c.vocab, ids) + "\ninput: " + guessed);
  table({"position", "truth", "best guesses"}, rows);
  say(right, " of the ", where.size(), " hidden characters come first in its ranking.");
}

// ---------------------------------------------------------------------------------------------
// 3. Fine-tuning: which file is an entry from?

struct TopicSet {
  std::vector<std::vector<Index>> entries;  // [CLS] characters <eos>, uncut
  IndexArray labels;
  std::vector<std::string> texts;
  std::size_t size() const { return entries.size(); }
};

// The same number of entries of every topic (the rarest topic's count in this split), the first
// ones in the split's (shuffled) order.
TopicSet topic_set(const Corpus& c, const std::vector<data::Fortune>& split, std::size_t cap = 0) {
  std::vector<std::vector<const data::Fortune*>> by(kTopics.size());
  for (const auto& e : split)
    for (std::size_t t = 0; t < kTopics.size(); ++t)
      if (e.topic == kTopics[t]) by[t].push_back(&e);
  std::size_t n = by[0].size();
  for (const auto& b : by) n = std::min(n, b.size());
  if (cap) n = std::min(n, cap);
  TopicSet s;
  std::vector<Index> labels;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t t = 0; t < kTopics.size(); ++t) {
      std::vector<Index> ids = {c.cls};
      for (Index id : data::encode_fortune(c.vocab, by[t][i]->text)) ids.push_back(id);
      ids.push_back(data::Vocab::eos);
      s.entries.push_back(std::move(ids));
      s.texts.push_back(by[t][i]->text);
      labels.push_back(Index(t));
    }
  s.labels = xt::adapt(labels, {labels.size()});
  return s;
}

struct TopicData {
  TopicSet train, validation, test;
};

// A batch of entries cut to the context: [CLS], then a window of the characters (a random one in
// training when the entry is longer, its beginning otherwise), <eos> kept at the end when it fits.
struct ClassBatch {
  IndexArray ids;
  Allowed real;
  IndexArray labels;
};

ClassBatch class_batch(const TopicSet& s, const std::vector<std::size_t>& rows, std::size_t context, Generator* crop) {
  std::size_t L = 0;
  std::vector<std::vector<Index>> cut;
  for (std::size_t r : rows) {
    const std::vector<Index>& e = s.entries[r];
    std::vector<Index> ids = e;
    if (e.size() > context) {
      const std::size_t body = e.size() - 1, keep = context - 1;  // characters and <eos> after [CLS]
      const std::size_t start = crop ? 1 + crop->below(body - keep + 1) : 1;
      ids = {e[0]};
      ids.insert(ids.end(), e.begin() + long(start), e.begin() + long(start + keep));
    }
    L = std::max(L, ids.size());
    cut.push_back(std::move(ids));
  }
  ClassBatch b{xt::zeros<Index>({rows.size(), L}), Allowed::where(Mask(xt::zeros<bool>({rows.size(), L}))),
               IndexArray::from_shape({rows.size()})};
  Mask real = xt::zeros<bool>({rows.size(), L});
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t l = 0; l < cut[i].size(); ++l) b.ids(i, l) = cut[i][l], real(i, l) = true;
    b.labels(i) = s.labels(rows[i]);
  }
  b.real = Allowed::where(real);
  return b;
}

// Class probabilities (N, K) of every entry of a set, from their beginnings.
Array<F> topic_probabilities(nn::EncoderModel<F>& model, const TopicSet& s, std::size_t context) {
  model.eval();
  return rows_in_batches(s.size(), 64, [&](const std::vector<std::size_t>& rows) {
    const ClassBatch b = class_batch(s, rows, context, nullptr);
    return softmax(model.forward(b.ids, b.real), -1).value();
  });
}

struct FineTuned {
  std::unique_ptr<nn::MaskedLM<F>> bert;
  History history;
  IndexArray test_predicted;
  double test_accuracy = 0;
};

// The same recipe for both starts: AdamW, a 10 % warm-up then a cosine decay, batches of the
// recipe's size, the same epochs and the same batches. No dropout: at this size it costs as much
// as the rest of the step (the attention weights' mask) and the few epochs do not overfit.
FineTuned fine_tune(const Corpus& c, const TopicData& d, const BertSettings& r, const std::string& label,
                    const std::string& pretrained_weights) {
  FineTuned f{new_bert(c, r, 0.0), {}, {}, 0};
  if (!pretrained_weights.empty()) nn::load_checkpoint(pretrained_weights, f.bert->named_parameters());
  nn::EncoderModel<F>& model = f.bert->model;
  nn::AdamW<F> opt(model.parameters(), r.finetune_lr, 0.9, 0.999, 1e-8, 0.01);
  FitOptions fo;
  fo.label = label;
  fo.epochs = r.finetune_epochs;
  fo.batch = r.finetune_batch;
  fo.seed = seed() + 31;  // the same batches for both models
  fo.clip = 1.0;
  const long steps = fit_steps(d.train.size(), fo);
  fo.lr = nn::warmup_cosine_lr(r.finetune_lr, std::max(1L, steps / 10), steps, r.finetune_lr / 20);
  fo.validate = [&] { return class_scores(topic_probabilities(model, d.validation, r.context()), d.validation.labels); };
  Generator crop(seed() + 32);
  f.history = fit(model, opt, d.train.size(),
                  [&](const std::vector<std::size_t>& rows) {
                    const ClassBatch b = class_batch(d.train, rows, r.context(), &crop);
                    return cross_entropy(model.forward(b.ids, b.real), b.labels);
                  },
                  fo);
  f.test_predicted = nn::argmax_last(topic_probabilities(model, d.test, r.context()));
  f.test_accuracy = nn::accuracy(f.test_predicted, d.test.labels);
  return f;
}

// A linear classifier on fixed features (N, k), standardized with the training set's means and
// spreads, trained to convergence: full-batch AdamW, weight decay 0.05. Returns its validation
// and test accuracy.
struct LinearClassifier : nn::Module<F> {
  LinearClassifier(std::size_t features, Generator& gen) : linear(features, kTopics.size(), gen) {
    register_module("linear", linear);
  }
  nn::Linear<F> linear;
};

struct ProbeScores {
  double validation = 0, test = 0;
};

constexpr int kProbeSteps = 300;

ProbeScores linear_probe(Array<F> train, Array<F> validation, Array<F> test, const TopicData& d, const std::string& label) {
  const Array<F> mu = xt::mean(train, {0});
  const Array<F> sd = xt::sqrt(xt::mean(xt::square(train - mu), {0})) + F(1e-3);
  for (Array<F>* a : {&train, &validation, &test}) *a = (*a - mu) / sd;
  Generator gen(seed() + 41);
  LinearClassifier probe(train.shape()[1], gen);
  nn::AdamW<F> opt(probe.parameters(), 1e-2, 0.9, 0.999, 1e-8, 0.05);
  FitOptions fo;
  fo.label = label;
  fo.epochs = full_or_quick(kProbeSteps, kProbeSteps / 3);
  fo.batch = 0;  // the whole training set each step
  fo.seed = seed();
  fit(probe, opt, d.train.size(),
      [&](const std::vector<std::size_t>& rows) {
        return cross_entropy(probe.linear(Tensor<F>(data::take_rows(train, rows))), data::take_rows(d.train.labels, rows));
      },
      fo);
  NoGrad no_grad;
  const auto accuracy = [&](const Array<F>& x, const IndexArray& y) {
    return nn::accuracy(nn::argmax_last(probe.linear(Tensor<F>(x)).value()), y);
  };
  return {accuracy(validation, d.validation.labels), accuracy(test, d.test.labels)};
}

// The characters' frequencies in the window the models read (the first context - 2 characters).
Array<F> character_frequencies(const Corpus& c, const TopicSet& s, std::size_t context) {
  const std::size_t V = c.vocab.size();
  Array<F> x = xt::zeros<F>({s.size(), V});
  for (std::size_t i = 0; i < s.size(); ++i) {
    const std::size_t n = std::min(s.entries[i].size(), context) - 2;
    for (std::size_t l = 1; l <= n; ++l) x(i, std::size_t(s.entries[i][l])) += F(1) / F(n);
  }
  return x;
}

// A frozen encoder's output for every entry: [CLS]'s final vector, or the mean of the real tokens'.
Array<F> encoder_features(nn::EncoderModel<F>& model, const TopicSet& s, std::size_t context, bool mean_of_tokens) {
  model.eval();
  const std::size_t d = model.config().layer.d_model;
  return rows_in_batches(s.size(), 64, [&](const std::vector<std::size_t>& rows) {
    const ClassBatch b = class_batch(s, rows, context, nullptr);
    const Array<F> h = model.features(b.ids, b.real).value();  // (B, L, d)
    Array<F> f = xt::zeros<F>({rows.size(), d});
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::size_t n = 0;
      for (std::size_t l = 0; l < h.shape()[1]; ++l) {
        if (mean_of_tokens ? !b.real.mask()(i, l) : l > 0) continue;
        xt::view(f, i) += xt::view(h, i, l);
        ++n;
      }
      xt::view(f, i) /= F(std::max<std::size_t>(n, 1));
    }
    return f;
  });
}

double bag_of_characters(const Corpus& c, const TopicData& d, const BertSettings& r) {
  const ProbeScores s = linear_probe(character_frequencies(c, d.train, r.context()), character_frequencies(c, d.validation, r.context()),
                                     character_frequencies(c, d.test, r.context()), d, "bag of characters");
  say("The baseline: a linear classifier on the ", c.vocab.size(), " character frequencies of the same window the "
      "models read, trained to convergence (", full_or_quick(kProbeSteps, kProbeSteps / 3), " full-batch AdamW steps, "
      "weight decay 0.05): validation ", fixed(s.validation, 3), ", test ", fixed(s.test, 3), ". Characters alone say "
      "a good deal: definitions are full of commas and colons, songs of line breaks, Zippy of capitals and "
      "exclamation marks.");
  return s.test;
}

// What pretraining put into the features, with nothing fine-tuned: the same linear classifier on
// the frozen encoder's outputs, pretrained against the random start.
void frozen_probes(const Corpus& c, const TopicData& d, const BertSettings& r, nn::MaskedLM<F>& pretrained) {
  const auto initial = new_bert(c, r, 0.0);
  std::vector<std::vector<std::string>> rows;
  for (bool mean : {false, true}) {
    std::vector<std::string> cells = {mean ? "mean of the tokens' vectors" : "[CLS]'s vector"};
    for (nn::MaskedLM<F>* m : {initial.get(), &pretrained}) {
      nn::EncoderModel<F>& e = m->model;
      const ProbeScores s = linear_probe(encoder_features(e, d.train, r.context(), mean),
                                         encoder_features(e, d.validation, r.context(), mean),
                                         encoder_features(e, d.test, r.context(), mean), d, "probe");
      cells.push_back(fixed(s.test, 3));
      metric(text("probe_test_accuracy_", m == &pretrained ? "pretrained" : "random", mean ? "_mean" : "_cls"), s.test);
    }
    rows.push_back(cells);
  }
  say("Before fine-tuning anything: how much of the topic can a linear classifier read off the frozen encoder's "
      "output? Once from the random weights pretraining started from, once from the pretrained ones, with the "
      "probe of the bag of characters:");
  table({"frozen encoder, linear classifier on", "random weights: test accuracy", "pretrained: test accuracy"}, rows);
}

void fine_tuning(const Corpus& c, const BertSettings& r, nn::MaskedLM<F>* bert, FineTuned& pretrained, FineTuned& scratch) {
  TopicData d{topic_set(c, c.split.train, r.finetune_per_topic), topic_set(c, c.split.validation), topic_set(c, c.split.test)};
  say("The task: which of ", listing(kTopics), " does an entry come from? Each split keeps the same number of "
      "entries of every topic, so chance is ", percent(1.0 / double(kTopics.size()), 0), ": ", d.train.size(),
      " training entries (", d.train.size() / kTopics.size(), " per topic: labels are what costs, and what pretraining "
      "is meant to save), ", d.validation.size(), " validation and ", d.test.size(), " test entries (the rarest "
      "topic's count in those splits). The test entries were held out of pretraining too. The classifier reads the "
      "[CLS] token's vector after the last layer; in pretraining [CLS] was never a target, so whatever it gathers "
      "it learns now.");
  config({{"topics", kTopics}, {"finetune_epochs", r.finetune_epochs}, {"finetune_batch", r.finetune_batch},
          {"finetune_peak_lr", r.finetune_lr}});
  const double bag = bag_of_characters(c, d, r);
  frozen_probes(c, d, r, *bert);
  say("Now the same network twice, with the same recipe (", r.finetune_epochs, " epochs, batches of ", r.finetune_batch,
      ", AdamW with peak ", r.finetune_lr, ", 10 % warm-up, cosine decay, weight decay 0.01) and the same batches: once "
      "from the pretrained weights, once from the random ones pretraining started from.");
  pretrained = fine_tune(c, d, r, "fine-tune pretrained", lesson().path("bert_mlm.npz"));
  scratch = fine_tune(c, d, r, "fine-tune from scratch", "");
  nn::save_checkpoint(lesson().path("bert_topics.npz"), pretrained.bert->named_parameters());
  nn::save_checkpoint(lesson().path("scratch_topics.npz"), scratch.bert->named_parameters());

  const auto& pa = pretrained.history.validation_of("accuracy");
  const auto& sa = scratch.history.validation_of("accuracy");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t e = 0; e < pa.size(); ++e)
    rows.push_back(row(e + 1, fixed(pretrained.history.epoch_loss[e], 3), fixed(pa[e], 3),
                       fixed(scratch.history.epoch_loss[e], 3), fixed(sa[e], 3)));
  table({"epoch", "pretrained: training loss", "validation accuracy", "from scratch: training loss", "validation accuracy"}, rows);
  table({"model", "test accuracy"},
        {row("chance", fixed(1.0 / double(kTopics.size()), 3)), row("bag of characters, linear", fixed(bag, 3)),
         row("BERT from scratch", fixed(scratch.test_accuracy, 3)), row("BERT pretrained, fine-tuned", fixed(pretrained.test_accuracy, 3))});
  // Where the two disagree: entries only one of them gets right (a paired look at one test set).
  std::size_t only_pretrained = 0, only_scratch = 0;
  for (std::size_t i = 0; i < d.test.size(); ++i) {
    const bool p_right = pretrained.test_predicted(i) == d.test.labels(i), s_right = scratch.test_predicted(i) == d.test.labels(i);
    only_pretrained += p_right && !s_right;
    only_scratch += s_right && !p_right;
  }
  const double gap = pretrained.test_accuracy - scratch.test_accuracy;
  // With n entries on which the two disagree, chance alone moves the gap by about sqrt(n) entries.
  const double noise = std::sqrt(double(only_pretrained + only_scratch)) / double(d.test.size());
  say("Scored once on the ", d.test.size(), " test entries: pretrained and fine-tuned ", percent(pretrained.test_accuracy, 1),
      ", the same network from scratch ", percent(scratch.test_accuracy, 1), ", the bag of characters ", percent(bag, 1),
      ". The pretrained model alone gets ", only_pretrained, " entries right, the one from scratch alone ", only_scratch,
      ": a gap of ", fixed(100 * gap, 1), " points.");
  claim({"pretraining_pays", "finetune_gap > 2 * finetune_test_gap_noise",
         text("The gap is more than twice the ", fixed(100 * noise, 1), " points that chance alone would move it by: "
              "pretraining pays."),
         text("The gap is within twice the ", fixed(100 * noise, 1), " points that chance alone would move it by (or the "
              "pretrained start is the worse one): at this pretraining budget the labels teach the network about as much "
              "as the pretraining did. The topics show in which words an entry uses, and a model that restores a "
              "minority of masked characters has learned spelling more than meaning; BERT's gains came from pretraining "
              "thousands of times longer."),
         Expect::either_way, {{"finetune_gap", gap}, {"finetune_test_gap_noise", noise}}});
  metric("finetune_test_gap_noise", noise);
  metric("finetune_test_accuracy_pretrained", pretrained.test_accuracy);
  metric("finetune_test_accuracy_scratch", scratch.test_accuracy);
  metric("finetune_test_accuracy_bag_of_characters", bag);
  metric("finetune_validation_accuracy_pretrained", pa.back());
  metric("finetune_validation_accuracy_scratch", sa.back());
  timing("finetune_seconds_pretrained", pretrained.history.seconds);
  timing("finetune_seconds_scratch", scratch.history.seconds);

  plots::Figure fig(2800, 1000, 1, 2);
  fig.title("Fine-tuning on five topics: the pretrained encoder against the same network from scratch");
  const auto by_step = [](const History& h) { return windowed(h.loss, std::max<std::size_t>(1, h.steps_per_epoch / 2)); };
  const Windowed wp = by_step(pretrained.history), ws = by_step(scratch.history);
  plots::line_plot(fig.panel(0).title("Training loss").xlabel("step").ylabel("cross-entropy"),
                   {curve("pretrained", wp.x, wp.y), curve("from scratch", ws.x, ws.y)});
  plots::LineOptions lo;
  lo.markers = true;
  lo.ymin = 0.0;
  lo.ymax = 1.0;
  std::vector<double> x(pa.size());
  std::iota(x.begin(), x.end(), 1.0);
  plots::Series chance = curve("chance", {1.0, double(pa.size())}, {1.0 / double(kTopics.size()), 1.0 / double(kTopics.size())});
  chance.dashed = true;
  chance.color = plots::Color{0.6, 0.6, 0.6};
  plots::Series bag_line = curve("bag of characters (test)", {1.0, double(pa.size())}, {bag, bag});
  bag_line.dashed = true;
  bag_line.color = plots::series_color(2);
  plots::line_plot(fig.panel(1).title("Validation accuracy").xlabel("epoch").ylabel("accuracy"),
                   {curve("pretrained", x, pa), curve("from scratch", x, sa), bag_line, chance}, lo);
  save_figure(fig, "finetuning",
              "Fine-tuning the pretrained BERT and the same network from its random start, same recipe and batches: "
              "training loss by step (means of half epochs) and validation accuracy after each epoch, with the "
              "bag-of-characters classifier and chance.");

  // The confusion matrix of the pretrained model on the test entries.
  const std::size_t K = kTopics.size();
  const Array<double> confusion = nn::confusion_rates(d.test.labels, pretrained.test_predicted, K);
  plots::Figure cf(1800, 1500);
  cf.title("Pretrained BERT, fine-tuned: true topic (rows) against predicted (columns), test entries");
  confusion_panel(cf.panel(0), confusion, kTopics, "share of the true topic");
  save_figure(cf, "confusion", "Confusion matrix of the fine-tuned pretrained model on the test entries; each row sums to 1.");
  std::size_t worst_t = 0, worst_p = 1;
  for (std::size_t t = 0; t < K; ++t)
    for (std::size_t q = 0; q < K; ++q)
      if (t != q && confusion(t, q) > confusion(worst_t, worst_p)) worst_t = t, worst_p = q;
  say("Its most frequent confusion: ", kTopics[worst_t], " taken for ", kTopics[worst_p], " (",
      percent(confusion(worst_t, worst_p), 0), " of the ", kTopics[worst_t], " test entries).");
}

// ---------------------------------------------------------------------------------------------
// 4. What the encoder attends to.

// Runs one sequence through a model and returns each layer's weights (h, L, L).
std::vector<xt::xarray<double>> attention_on(nn::EncoderModel<F>& model, const std::vector<Index>& ids) {
  NoGrad no_grad;
  model.eval();
  model.features(xt::adapt(ids, {std::size_t(1), ids.size()}));
  std::vector<xt::xarray<double>> out;
  for (const Tensor<F>& w : model.attention_weights()) out.push_back(xt::cast<double>(xt::view(w.value(), 0)));
  return out;
}

// [CLS]'s attention in every layer over one held-out entry the fine-tuned model gets right.
void cls_attention(const Corpus& c, const FineTuned& f, const BertSettings& r) {
  const TopicSet d = topic_set(c, c.split.test);
  std::optional<std::size_t> pick;
  for (std::size_t i = 0; i < d.size() && !pick; ++i)
    if (d.entries[i].size() >= 40 && d.entries[i].size() <= 80 && f.test_predicted(i) == d.labels(i)) pick = i;
  if (!pick) pick = 0;
  std::vector<Index> ids = d.entries[*pick];
  if (ids.size() > r.context()) ids.resize(r.context());
  const auto layers = attention_on(f.bert->model, ids);
  const std::size_t L = layers.size(), H = layers[0].shape()[0];
  xt::xarray<double> rows = xt::zeros<double>({L + H, ids.size()});
  std::vector<std::string> labels, cells;
  for (std::size_t l = 0; l < L; ++l) {
    xt::view(rows, l) = xt::mean(xt::view(layers[l], xt::all(), 0, xt::all()), {0});
    labels.push_back(text("layer ", l + 1, " (mean of heads)"));
  }
  for (std::size_t h = 0; h < H; ++h) {
    xt::view(rows, L + h) = xt::view(layers[L - 1], h, 0, xt::all());
    labels.push_back(text("layer ", L, ", head ", h + 1));
  }
  for (std::size_t k = 0; k < L + H; ++k)
    for (Index id : ids) cells.push_back(shown(c.vocab, id));
  plots::HeatmapOptions ho;
  ho.cell_text = cells;
  ho.y_labels = labels;
  ho.x_labels = number_labels(ids.size(), 10);
  ho.colorbar_label = "attention weight of [CLS]";
  ho.cmap = plots::Colormap::reds();
  HeatmapFigureOptions hs;
  hs.title = text("Where [CLS] looks in a held-out ", kTopics[std::size_t(d.labels(*pick))], " entry (fine-tuned model)");
  hs.xlabel = "position";
  hs.width = 3200;
  hs.height = int(300 + 2700 / ids.size() * (L + H));
  save_figure(heatmap_figure(rows, ho, hs), "cls_attention",
              "The fine-tuned pretrained model's [CLS] query over a test entry it classifies correctly: each layer's "
              "weights (mean of the heads), then each head of the last layer, over the characters.");

  // Over every test entry: how much of [CLS]'s attention lands on the specials, on spaces and
  // punctuation, and on letters and digits, per layer, against those tokens' share of the text.
  std::vector<std::array<double, 3>> mass(L, std::array<double, 3>{});
  std::array<double, 3> share{};
  const auto kind = [&](Index id) {
    if (id < c.first || id >= c.end) return 0;
    const std::string& t = c.vocab.token(id);
    return (t.size() == 1 && std::isalnum(static_cast<unsigned char>(t[0]))) ? 2 : 1;
  };
  for (std::size_t i = 0; i < d.size(); ++i) {
    std::vector<Index> e = d.entries[i];
    if (e.size() > r.context()) e.resize(r.context());
    const auto a = attention_on(f.bert->model, e);
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t j = 0; j < e.size(); ++j)
        mass[l][std::size_t(kind(e[j]))] += xt::mean(xt::view(a[l], xt::all(), 0, j))() / double(d.size());
    for (Index id : e) share[std::size_t(kind(id))] += 1.0 / double(e.size()) / double(d.size());
  }
  std::vector<std::vector<std::string>> table_rows = {
      row("share of the tokens", percent(share[0], 1), percent(share[1], 1), percent(share[2], 1))};
  for (std::size_t l = 0; l < L; ++l)
    table_rows.push_back(row(text("layer ", l + 1, ": [CLS]'s attention"), percent(mass[l][0], 1), percent(mass[l][1], 1),
                             percent(mass[l][2], 1)));
  table({"over the " + std::to_string(d.size()) + " test entries", "[CLS] and <eos>", "spaces and punctuation", "letters and digits"},
        table_rows);
  metric("cls_attention_on_specials_last_layer", mass[L - 1][0]);
  metric("cls_attention_on_letters_last_layer", mass[L - 1][2]);
}

// Every head of every layer of the pretrained model on one held-out sentence.
void head_grid_of_one_sentence(const Corpus& c, nn::MaskedLM<F>& bert) {
  const data::Fortune* pick = nullptr;
  for (const auto& e : c.split.test)
    if (!pick && e.text.size() >= 24 && e.text.size() <= 34 && e.text.find('\n') == std::string::npos) pick = &e;
  if (!pick) pick = &c.split.test.front();
  std::vector<Index> ids = {c.cls};
  for (Index id : data::encode_fortune(c.vocab, pick->text)) ids.push_back(id);
  ids.push_back(data::Vocab::eos);
  const auto layers = attention_on(bert.model, ids);
  const std::size_t L = layers.size(), H = layers[0].shape()[0], n = ids.size();
  xt::xarray<double> all = xt::zeros<double>({L * H, n, n});
  std::vector<std::string> titles, labels;
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t h = 0; h < H; ++h) {
      xt::view(all, l * H + h) = xt::view(layers[l], h);
      titles.push_back(text("Layer ", l + 1, ", head ", h + 1));
    }
  for (Index id : ids) labels.push_back(shown(c.vocab, id));
  plots::HeatmapGridOptions g;
  g.heatmap.x_labels = g.heatmap.y_labels = labels;
  g.heatmap.vmin = 0.0;  // the top of the scale is the largest weight of any head
  g.heatmap.colorbar_label = "attention weight";
  g.panel_titles = titles;
  g.cols = int(H);
  g.title = "Every head of the pretrained BERT on one held-out sentence";
  g.width_px = int(850 * H + 250);
  g.height_px = int(850 * L + 250);
  save_figure(plots::heatmap_grid(all, g), "head_grid",
              text("The ", L * H, " heads of the pretrained model (no fine-tuning) reading \"", pick->text,
                   "\". Each panel: row i is query character i's attention over all characters."));
}

// The mean weight each head puts at each offset from the query, over held-out windows.
void attention_by_offset(const Corpus& c, nn::MaskedLM<F>& bert, const BertSettings& r) {
  const long reach = 8;
  const std::size_t windows = full_or_quick<std::size_t>(64, 16);
  std::vector<Index> flat;
  for (std::size_t w = 0; w < windows; ++w) {
    const std::size_t start = w * (r.context() - 1);
    flat.push_back(c.cls);
    for (std::size_t l = 0; l + 1 < r.context(); ++l) flat.push_back(c.validation[(start + l) % c.validation.size()]);
  }
  NoGrad no_grad;
  bert.eval();
  bert.model.features(xt::adapt(flat, {windows, r.context()}));
  const auto weights = bert.model.attention_weights();
  const std::size_t L = weights.size(), H = weights[0].shape()[1];
  xt::xarray<double> by_offset = xt::zeros<double>({L * H, std::size_t(2 * reach + 1)});
  std::vector<std::string> heads, offsets;
  for (long o = -reach; o <= reach; ++o) offsets.push_back(o > 0 ? "+" + std::to_string(o) : std::to_string(o));
  std::vector<double> left(L * H, 0.0), right(L * H, 0.0);
  for (std::size_t l = 0; l < L; ++l) {
    for (long o = -reach; o <= reach; ++o) {
      // offset_mass counts keys `offset` places to the left of the query; the figure puts the
      // left (earlier characters) at negative offsets.
      const std::vector<double> m = offset_mass(weights[l].value(), -o);
      for (std::size_t h = 0; h < H; ++h) by_offset(l * H + h, std::size_t(o + reach)) = m[h];
    }
    const Array<F>& w = weights[l].value();
    for (std::size_t b = 0; b < windows; ++b)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t i = 1; i < r.context(); ++i)
          for (std::size_t j = 1; j < r.context(); ++j) {
            if (j < i) left[l * H + h] += w(b, h, i, j);
            if (j > i) right[l * H + h] += w(b, h, i, j);
          }
    for (std::size_t h = 0; h < H; ++h) heads.push_back(text("layer ", l + 1, ", head ", h + 1));
  }
  plots::HeatmapOptions ho;
  ho.x_labels = offsets;
  ho.y_labels = heads;
  ho.vmin = 0.0;
  ho.colorbar_label = "mean attention weight";
  ho.square_cells = false;
  ho.annotate = true;
  HeatmapFigureOptions hs;
  hs.title = "Attention by relative position, per head (pretrained model, held-out text)";
  hs.xlabel = "key position minus query position (negative: to the left)";
  hs.width = 2600;
  hs.height = int(250 + 95 * L * H);
  save_figure(heatmap_figure(by_offset, ho, hs), "offsets",
              text("For every head, the mean weight a query character puts on the character at each offset from it, over ",
                   windows, " validation windows of ", r.context() - 1, " characters."));
  // The sharpest head at -1 and at +1, and how many heads look more to the right than to the left.
  std::size_t prev = 0, next = 0, rightward = 0;
  for (std::size_t k = 0; k < L * H; ++k) {
    if (by_offset(k, std::size_t(reach - 1)) > by_offset(prev, std::size_t(reach - 1))) prev = k;
    if (by_offset(k, std::size_t(reach + 1)) > by_offset(next, std::size_t(reach + 1))) next = k;
    rightward += right[k] > left[k];
  }
  say("A query spread evenly over a window of ", r.context() - 1, " characters would give each ",
      percent(1.0 / double(r.context() - 1), 1), ". The heads prefer the characters next to the query: ", heads[prev],
      " puts ", percent(by_offset(prev, std::size_t(reach - 1)), 1), " of its weight on the character just before it, ",
      heads[next], " ", percent(by_offset(next, std::size_t(reach + 1)), 1), " on the one just after, and nothing "
      "stops them from looking right: ", rightward, " of the ", L * H, " heads put more weight to the right of the "
      "query than to its left. The rows repeat from layer to layer because T5's bias is one table shared by all "
      "layers (32 distance buckets x ", H, " heads): head k of every layer is given the same preference for where "
      "to look, and the layers differ in what the queries and keys match on top of it (the head grid above).");
  metric("best_previous_character_head_mass", by_offset(prev, std::size_t(reach - 1)));
  metric("best_next_character_head_mass", by_offset(next, std::size_t(reach + 1)));
  metric("heads_looking_right", double(rightward));
}

// ---------------------------------------------------------------------------------------------
// 5. The checkpoints.

void checkpoints() {
  say("The checkpoints are in the output folder: bert_mlm.npz (the pretrained model and its AdamW state; --from that "
      "folder continues pretraining from it), bert_topics.npz and scratch_topics.npz (the two fine-tuned models); "
      "numpy reads them with np.load.");
}

}  // namespace

int main(int argc, char** argv) {
  return run_lesson({"12_bert", "BERT: masked language modelling on fortunes, then fine-tuning",
                     "The 80/10/10 masking rule, a small BERT pretrained on characters of the fortunes corpus, fine-tuned "
                     "to tell topics apart against the same model from scratch, and what its heads attend to",
                     "mlm_test_accuracy", "", {"bert_mlm.npz"}},
                    argc, argv, [] {
                      const BertSettings r = recipe();
                      checkpoint_from("bert_mlm.npz");  // a bad --from fails here, before any work
                      const Corpus c = load_corpus();
                      section("1. Text, characters and the masking rule");
                      the_corpus(c);
                      the_masking_rule(c, r);
                      both_directions();
                      section("2. Pretraining: fill in the masked characters");
                      Pretrained p = pretrain(c, r);
                      pretraining_results(c, p, r);
                      fill_in(c, *p.bert);
                      section("3. Fine-tuning: which file is an entry from?");
                      FineTuned pre, scratch;
                      fine_tuning(c, r, p.bert.get(), pre, scratch);
                      section("4. What the encoder attends to");
                      cls_attention(c, pre, r);
                      head_grid_of_one_sentence(c, *p.bert);
                      attention_by_offset(c, *p.bert, r);
                      section("5. The checkpoints");
                      checkpoints();
                    });
}
