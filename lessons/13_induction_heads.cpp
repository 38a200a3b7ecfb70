// Lesson 13: induction heads, how a two-layer Transformer copies from its context.
//
// A trained language model copies: having seen "Mr. Dursley" once, it predicts "ursley" the next time
// it sees "Mr. D". Olsson et al. (2022) traced this to two heads in two layers: a previous-token head
// writes into each position which token came before it, and an induction head in the next layer
// looks for the earlier position whose previous token is the current one and copies what follows.
// We isolate the mechanism on sequences of random tokens that repeat, where the first pass cannot be
// predicted and the repeat can only be copied, train a two-layer GPT on them (lesson 11's model),
// and read its loss at every position and every head's weights.
#include <cmath>
#include <memory>

#include <xtensor/xview.hpp>

#include "lessons/kit/explorer.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/self_attention_input.hpp"
#include "nn/attention/induction.hpp"
#include "nn/transformer/causal_lm.hpp"

using namespace attnlab;
using namespace attnlab::lessons;

namespace {

using F = float;

constexpr double kCopyLr = 3e-3;  // the model's peak learning rate

// What a run trains: full and --quick.
struct Settings {
  std::size_t copy_vocab = 64, copy_half = 16, copy_batch = 32;
  long copy_steps = 1200;
};

Settings settings_of_run() {
  Settings r;
  if (quick()) r.copy_steps = 500;
  return r;
}

// ---------------------------------------------------------------------------------------------
// 1. The task.

// Sequences <bos> x_1 .. x_2N that repeat a segment of `period` tokens drawn uniformly from
// `copy_vocab` symbols (ids 1 .. copy_vocab; 0 is <bos>): x_i = segment[(i - 1) mod period]. The
// first period tokens cannot be predicted (log copy_vocab nats); every later one is a copy. With
// period 0 each sequence draws its own period from N/2 .. N, so no fixed look-back distance works:
// the model has to find the previous occurrence by content.
IndexArray repeated_tokens(std::size_t batch, const Settings& r, Generator& gen, std::size_t period = 0) {
  const std::size_t N = r.copy_half;
  IndexArray ids = IndexArray::from_shape({batch, 2 * N + 1});
  for (std::size_t b = 0; b < batch; ++b) {
    const std::size_t m = period ? period : N / 2 + gen.below(N / 2 + 1);
    std::vector<Index> segment(m);
    for (Index& v : segment) v = Index(1 + gen.below(r.copy_vocab));
    ids(b, 0) = 0;
    for (std::size_t i = 1; i <= 2 * N; ++i) ids(b, i) = segment[(i - 1) % m];
  }
  return ids;
}

void the_task(const Settings& r, Generator& gen) {
  const std::size_t N = r.copy_half;
  say("A trained language model also copies: having seen \"Mr. Dursley\" once, it predicts \"ursley\" the next time it "
      "sees \"Mr. D\". Olsson et al. (2022) traced this to a pair of heads in two layers: a previous-token head writes "
      "into each position which token came before it, and an induction head in the next layer searches for earlier "
      "positions whose previous token is the current one, i.e. the token right after the last occurrence of the "
      "current token, and copies what it finds. To see it alone we train a two-layer GPT on sequences of random tokens "
      "(", r.copy_vocab, " symbols) that repeat: a segment of ", N / 2, " to ", N, " tokens, then the same again, ",
      2 * N, " tokens in all. The first pass is noise that no model can predict (", fixed(std::log(double(r.copy_vocab)), 2),
      " nats a token), the rest is a copy. The segment's length varies from sequence to sequence, so looking back a "
      "fixed distance does not work (with one fixed length, rotary positions let a single head learn exactly that "
      "shortcut): the model has to find where the current token occurred before. Two drawn sequences (after <bos>; "
      "the bar marks the middle):");
  const IndexArray two = repeated_tokens(2, r, gen);
  std::string shown;
  for (std::size_t b = 0; b < 2; ++b) {
    for (std::size_t t = 1; t < two.shape()[1]; ++t) shown += std::to_string(two(b, t)) + (t % N == 0 ? " | " : " ");
    shown += "\n";
  }
  verbatim(shown);
}

// ---------------------------------------------------------------------------------------------
// 2. A two-layer GPT, trained on them.

struct Copier {
  std::unique_ptr<nn::CausalLM<F>> model;
  History history;
};

Copier train_copier(const Settings& r) {
  const std::size_t L = 2 * r.copy_half + 1;
  nn::CausalLMConfig cfg;
  cfg.vocab = r.copy_vocab + 1;
  cfg.num_layers = 2;
  cfg.max_length = L;
  cfg.layer = nn::LayerConfig{64, 4, 256, 0.0, true, nn::Activation::GELU, 1e-5};
  cfg.positional = nn::Positional::Rotary;
  Generator gen(seed() + 7);
  Copier c{std::make_unique<nn::CausalLM<F>>(cfg, gen), {}};
  nn::CausalLM<F>& model = *c.model;
  say("The model: lesson 11's GPT with two pre-norm layers of ", cfg.layer.heads, " heads each, $d_{\\text{model}} = ",
      cfg.layer.d_model, "$, rotary positions, ", model.parameter_count(), " parameters. It reads <bos> and the first ",
      L - 2, " tokens and predicts each next one, trained on the mean cross-entropy over all positions.");
  Generator draws(seed() + 8);
  Recipe recipe;
  recipe.label = "induction", recipe.batch = r.copy_batch, recipe.seed = seed();
  recipe.lr = kCopyLr, recipe.weight_decay = 0.01, recipe.beta2 = 0.99, recipe.clip = 1.0;
  recipe.warmup = 50, recipe.floor = 0.1, recipe.checkpoint = "induction.npz";
  const std::size_t sequences = std::size_t(r.copy_steps) * r.copy_batch;
  say("Training: ", describe(recipe, fit_steps(sequences, recipe)), ", every batch freshly drawn.");
  c.history = train(model, sequences, [&](const std::vector<std::size_t>& rows) {
    const IndexArray ids = repeated_tokens(rows.size(), r, draws);
    const IndexArray in = xt::view(ids, xt::all(), xt::range(0, L - 1));
    const IndexArray out = xt::view(ids, xt::all(), xt::range(1, L));
    return cross_entropy(model.forward(in), out);
  }, recipe);
  timing("induction_train_seconds", c.history.seconds);
  return c;
}

// ---------------------------------------------------------------------------------------------
// 3. The loss at each position.

// Held-out sequences (fresh draws), each a segment of N tokens and its repeat.
struct HeldOut {
  IndexArray ids, in;           // (256, 2N + 1) and the model's input, without the last token
  double first = 0, second = 0; // mean loss over the first half's targets and the repeat's
};

HeldOut loss_by_position(nn::CausalLM<F>& model, const Settings& r, const History& h) {
  const std::size_t N = r.copy_half, L = 2 * N + 1;
  Generator held_out(seed() + 9);
  HeldOut d{repeated_tokens(256, r, held_out, N), {}};
  const IndexArray& ids = d.ids;
  d.in = xt::view(ids, xt::all(), xt::range(0, L - 1));
  const IndexArray& in = d.in;
  std::vector<double> by_pos(L - 1, 0.0);
  {
    NoGrad no_grad;
    model.eval();
    const Array<F> logp = log_softmax(model.forward(in), -1).value();
    for (std::size_t b = 0; b < 256; ++b)
      for (std::size_t t = 0; t + 1 < L; ++t) by_pos[t] -= double(logp(b, t, std::size_t(ids(b, t + 1)))) / 256.0;
  }
  // Targets 1 .. N are the first half (positions 0 .. N-1), N+1 .. 2N the second.
  const double first = d.first = mean_over(by_pos, 0, N);
  const double second = d.second = mean_over(by_pos, N);
  say("After ", h.steps, " steps (", fixed(h.seconds, 0), " s), on 256 fresh sequences of ", N, " tokens and their "
      "repeat, the loss is ", fixed(first, 3), " nats a token on the first half ($\\log ", r.copy_vocab, " = ",
      fixed(std::log(double(r.copy_vocab)), 3), "$: nothing to learn there; a little more, since in training the segment was 8 to 16 tokens long and the repeat "
      "often began sooner) and ", fixed(second, 3), " on the second.");
  metric("induction_loss_first_half", first);
  metric("induction_loss_second_half", second);
  claim({"first_half_at_chance", "induction_loss_first_half >= log_vocab - 0.1",
         text("On the first half the model does no better than chance (", fixed(first, 3), " nats against $\\log ",
              r.copy_vocab, " = ", fixed(std::log(double(r.copy_vocab)), 3), "$): the mask keeps it from reading the "
              "tokens it predicts."),
         text("The first half scores ", fixed(first, 3), " nats, below chance ($\\log ", r.copy_vocab, " = ",
              fixed(std::log(double(r.copy_vocab)), 3), "$): something lets the model see what it predicts."),
         Expect::every_run, {{"log_vocab", std::log(double(r.copy_vocab))}}});
  claim({"repeat_is_copied", "induction_loss_second_half <= 0.5 * induction_loss_first_half",
         text("On the repeat the loss falls to ", fixed(second, 3), " nats, ", percent(second / first, 0),
              " of the first half's: the model copies from its context."),
         text("On the repeat the loss is ", fixed(second, 3), " nats, ", percent(second / first, 0),
              " of the first half's: little copying.")});
  claim({"repeat_near_zero", "induction_loss_second_half < 0.3",
         text("That is near zero: ", fixed(second, 3), " nats, a geometric-mean probability of ",
              fixed(std::exp(-second), 2), " on the right token."),
         text("That is not yet near zero (", fixed(second, 3), " nats, a geometric-mean probability of ",
              fixed(std::exp(-second), 2), " on the right token): the quick run trains ", h.steps,
              " steps; the full run's repeat falls to about 0.1 nats."),
         Expect::full_run});
  std::vector<double> pos(L - 1);
  for (std::size_t t = 0; t + 1 < L; ++t) pos[t] = double(t + 1);
  LineFigureOptions style;
  style.title = "In-context loss: random tokens, then the same tokens again";
  style.xlabel = "position of the predicted token";
  style.ylabel = "held-out loss (nats)";
  save_figure(line_figure({curve("two-layer GPT", pos, by_pos),
                           reference(text("log ", r.copy_vocab, " (a uniform guess)"), {1.0, double(L - 1)},
                                     {std::log(double(r.copy_vocab)), std::log(double(r.copy_vocab))})},
                          style),
              "induction_loss",
              text("The loss at each position on fresh sequences: ", fixed(first, 2), " nats a token on average over "
                   "the first half (chance: ", fixed(std::log(double(r.copy_vocab)), 2), "), ", fixed(second, 2),
                   " over the repeat."));
  return d;
}

// ---------------------------------------------------------------------------------------------
// 4. The two heads.

// Over the layers: the head with the largest induction score, and its weights on example 0.
HeadPick head_for_induction(const std::vector<Tensor<F>>& layers, const IndexArray& ids, std::size_t first_query) {
  HeadPick best;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const std::vector<double> mass = nn::induction_mass(layers[l].value(), ids, first_query);
    for (std::size_t h = 0; h < mass.size(); ++h)
      if (mass[h] > best.mass)
        best = {l, h, mass[h], xt::xarray<double>(xt::cast<double>(xt::view(layers[l].value(), 0, h, xt::all(), xt::all())))};
  }
  return best;
}

void the_heads(nn::CausalLM<F>& model, const Settings& r, const HeldOut& d) {
  const std::size_t N = r.copy_half, L = 2 * N + 1;
  const IndexArray& in = d.in;
  {
    NoGrad no_grad;
    model.blocks.keep_score_parts(true);  // the queries and keys too, for the explorer's neuron view
    model.forward(in);
  }
  const std::vector<Tensor<F>> weights = model.attention_weights();
  const HeadPick previous = head_for_offset(weights, 1);
  const HeadPick induction = head_for_induction(weights, in, N + 1);
  std::vector<std::vector<std::string>> rows;
  for (std::size_t l = 0; l < weights.size(); ++l) {
    const std::vector<double> p = offset_mass(weights[l].value(), 1), q = nn::induction_mass(weights[l].value(), in, N + 1);
    for (std::size_t hd = 0; hd < p.size(); ++hd)
      rows.push_back(row(l + 1, hd + 1, fixed(p[hd], 3), fixed(q[hd], 3)));
  }
  say("Each head's weight on the previous position (the previous-token score) and, over the second half, on the "
      "token after the previous occurrence of the current one (the induction score), averaged over the held-out "
      "sequences. With $A^{(h)}$ a head's weights and $s(t)$ the last position before $t$ holding the same token, "
      "$$\\text{previous-token score} = \\operatorname{mean}_t A^{(h)}_{t,\\,t-1}, \\qquad "
      "\\text{induction score} = \\operatorname{mean}_{t > N} A^{(h)}_{t,\\,s(t)+1}.$$");
  table({"layer", "head", "previous-token score", "induction score"}, rows);
  say("The previous-token head is layer ", previous.layer + 1, ", head ", previous.head + 1, " (", percent(previous.mass, 0),
      " of its weight one step back); the induction head is layer ", induction.layer + 1, ", head ", induction.head + 1,
      " (", percent(induction.mass, 0), " on the token after the previous occurrence).");
  metric("previous_token_score", previous.mass);
  metric("induction_score", induction.mass);
  metric("induction_head_layer", double(induction.layer + 1));
  metric("previous_token_head_layer", double(previous.layer + 1));
  claim({"induction_after_previous", "induction_head_layer > previous_token_head_layer",
         "The induction head sits in the layer after the previous-token head, as the mechanism needs: it can only "
         "search by 'which token came before' once a head below has written that into every position.",
         "Here the two are not in the order the mechanism suggests (both best heads in the same layer, or the "
         "induction head below): the scores above show how the work is spread.",
         Expect::either_way});

  std::vector<std::string> labels{"<bos>"};
  for (std::size_t t = 1; t + 1 < L; ++t) labels.push_back(std::to_string(in(0, t)));
  std::vector<std::string> sparse = labels;
  for (std::size_t t = 0; t < sparse.size(); ++t)
    if (t % 4 != 0) sparse[t] = "";
  AttentionFigureOptions af;
  af.title = "Two heads (one held-out sequence, repeated after position " + std::to_string(N) + ")";
  af.cols = 1;
  af.width = 1400;
  af.height = 2500;
  save_figure(attention_figure({{previous.weights, sparse, sparse,
                                 text("Previous-token head (layer ", previous.layer + 1, ", head ", previous.head + 1, ")")},
                                {induction.weights, sparse, sparse,
                                 text("Induction head (layer ", induction.layer + 1, ", head ", induction.head + 1, ")")}},
                               af),
              "induction_heads",
              "Top: a head that looks one token back. Bottom: in the second half, a head that looks at the position "
              "after the previous occurrence of the current token (the stripe N - 1 below the diagonal).");

  // The attention explorer (lessons/kit/explorer.hpp): every head on the first held-out sequence,
  // with each head's queries and keys, so the neuron view shows how the induction head's query
  // finds the key one past the earlier copy of its token.
  ExplorerPage page{"Lesson 13: both layers on a held-out repeated sequence", "tokens (queries)", "tokens (keys)",
                    text("The sequence repeats after position ", N, ". Choose the induction head (layer ",
                         induction.layer + 1, ", head ", induction.head + 1, ") and hover a token of the second half; "
                         "click it for the neuron view: its scores split into query-key products."),
                    {with_score_parts(self_attention_input("held-out sequence 1", labels, weights),
                                      model.blocks.score_parts())}};
  model.blocks.keep_score_parts(false);
  show_explorer(page, "explorer",
                "The attention explorer: every head of the two-layer model on a held-out repeated sequence; click a "
                "token to see its scores split into query-key products");
}

}  // namespace

int main(int argc, char** argv) {
  LessonInfo info{"13_induction_heads", "Induction heads: copying from the context",
                  "a two-layer GPT on repeated random tokens: a previous-token head and an induction head",
                  "induction_loss_second_half", "", {"induction.npz"}};
  info.lead_figure = "induction_loss";
  return run_lesson(info, argc, argv, [] {
    const Settings r = settings_of_run();
    Generator gen(seed());
    section("1. Random tokens, then the same tokens again");
    the_task(r, gen);
    section("2. A two-layer GPT trained on them");
    Copier c = train_copier(r);
    section("3. The loss at each position");
    const HeldOut d = loss_by_position(*c.model, r, c.history);
    section("4. The two heads");
    the_heads(*c.model, r, d);
  });
}
