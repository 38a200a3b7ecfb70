// Lesson 06: the backward pass of attention, by hand, and the tape drawn as a graph.
//
// Every other lesson calls backward() and trusts it. This one opens it. The engine records each op
// on a tape as it runs; backward walks the tape from the loss to the inputs, and each op turns the
// gradient of its output into gradients of its inputs by a rule derived by hand. For attention,
//   S = Q K^T / sqrt(d),  A = softmax(S) row by row,  O = A V,
// the rules are (dX means dL/dX):
//   dV = A^T dO,   dA = dO V^T,   dS = A * (dA - rowsum(dA * A)),
//   dQ = dS K / sqrt(d),   dK = dS^T Q / sqrt(d).
// We draw the tape, derive the softmax Jacobian three ways, compute the five gradients above with
// plain xtensor and hold them against the engine and against finite differences, break a backward
// on purpose three ways and watch the gradient check catch each, and measure what backward costs.
#include <algorithm>
#include <cmath>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "core/gradcheck.hpp"
#include "core/tape_graph.hpp"
#include "lessons/kit/forward_backward_time.hpp"
#include "lessons/kit/gradcheck_table.hpp"
#include "lessons/kit/hand_gradients_figure.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/plain_matrices.hpp"
#include "lessons/kit/scored_heads.hpp"
#include "lessons/kit/tape_table.hpp"

using namespace attnlab;
using namespace attnlab::lessons;

namespace {

using TD = Tensor<double>;
using Mat = Array<double>;

// ---------------------------------------------------------------------------------------------
// Plain xtensor, double precision: the math of the lesson with no tape underneath, written with
// lessons/kit/plain_matrices.hpp: mm(a, b), tr(a), rowsum(a), inner(a, b), softmax_rows(s, allowed),
// and, to check it, central_differences(F, x) and max_relative_error(a, reference).

struct Forward { Mat S, A, O; };
Forward attention_forward(const Mat& Q, const Mat& K, const Mat& V, const Mask& allowed = {}) {
  Forward f;
  f.S = mm(Q, tr(K)) * (1.0 / std::sqrt(double(Q.shape(1))));
  f.A = softmax_rows(f.S, allowed);
  f.O = mm(f.A, V);
  return f;
}

// The ways a hand-written backward goes wrong in section 5.
enum class Fault { none, wrong_sign, missing_scale, overwrite };

struct Grads { Mat dV, dA, dS, dQ, dK; };
// The backward of attention, one line per rule. fault slips one rule (section 5).
Grads attention_backward(const Mat& Q, const Mat& K, const Mat& V, const Mat& A, const Mat& dO,
                         Fault fault = Fault::none) {
  const double scale = fault == Fault::missing_scale ? 1.0 : 1.0 / std::sqrt(double(Q.shape(1)));
  Grads g;
  g.dV = mm(tr(A), dO);                           // O = A V is linear in V
  g.dA = mm(dO, tr(V));                           // ... and in A
  const Mat r = rowsum(g.dA * A);                 // sum_l dA_il A_il, one number per query
  g.dS = fault == Fault::wrong_sign ? Mat(A * (g.dA + r)) : Mat(A * (g.dA - r));  // softmax's Jacobian, row by row
  g.dQ = mm(g.dS, K) * scale;                     // S = scale Q K^T
  g.dK = mm(tr(g.dS), Q) * scale;
  return g;
}


// ---------------------------------------------------------------------------------------------
// Custom nodes through the engine's public API, record(op, value, inputs, backward): the same
// call every op of core/ops makes.

// Adds g into input i's gradient, or (the broken way) replaces whatever was there.
void deliver(Node<double>& n, std::size_t i, Mat g, bool overwrite) {
  if (!overwrite) return n.add_grad(i, std::move(g));
  Node<double>& p = *n.parents[i];
  if (!p.requires_grad) return;
  p.grad = std::move(g);
  p.has_grad = true;
}

// An identity whose backward writes down the gradient that reaches it, then passes it on.
TD watch(const TD& x, const std::string& label, std::vector<std::pair<std::string, Mat>>& log) {
  return record<double>("watch", Mat(x.value()), {&x}, [label, &log](Node<double>& n) {
    log.push_back({label, n.grad});
    n.add_grad(0, Mat(n.grad));
  });
}

// y = a * b (same shapes) whose backward assigns instead of adding.
TD mul_overwriting(const TD& a, const TD& b) {
  return record<double>("mul_overwriting", Mat(a.value() * b.value()), {&a, &b}, [](Node<double>& n) {
    const Mat g = n.grad;
    deliver(n, 0, g * n.input(1), true);
    deliver(n, 1, g * n.input(0), true);
  });
}

// Attention as one custom node whose backward is the hand-written one above.
TD hand_attention(const TD& Q, const TD& K, const TD& V, Fault fault = Fault::none) {
  Forward f = attention_forward(Q.value(), K.value(), V.value());
  return record<double>("hand_attention", std::move(f.O), {&Q, &K, &V}, [A = f.A, fault](Node<double>& n) {
    const Grads g = attention_backward(n.input(0), n.input(1), n.input(2), A, n.grad, fault);
    const bool overwrite = fault == Fault::overwrite;
    deliver(n, 0, g.dQ, overwrite);
    deliver(n, 1, g.dK, overwrite);
    deliver(n, 2, g.dV, overwrite);
  });
}

// Softmax of each row whose backward has the wrong sign: -y * (dy - sum(dy * y)).
TD softmax_negated(const TD& x) {
  Mat y = softmax_rows(x.value());
  return record<double>("softmax_negated", Mat(y), {&x}, [y](Node<double>& n) {
    n.add_grad(0, Mat(-(y * (n.grad - rowsum(n.grad * y)))));
  });
}

// ---------------------------------------------------------------------------------------------
// 1. Reverse mode in one screen.

// L = sum(softmax(x W) * y), optionally with watch nodes on x, W, z = x W and p = softmax(z).
struct Tiny { TD x, W, y, z, p, py, L; };
Tiny tiny(const Mat& x0, const Mat& W0, const Mat& y0, std::vector<std::pair<std::string, Mat>>* log) {
  Tiny t{TD(x0, true), TD(W0, true), TD(y0), {}, {}, {}, {}};
  auto seen = [&](const TD& v, const char* label) { return log ? watch(v, label, *log) : v; };
  t.z = seen(matmul(seen(t.x, "dL/dx"), seen(t.W, "dL/dW")), "dL/dz");
  t.p = seen(softmax(t.z, -1), "dL/dp");
  t.py = t.p * t.y;
  t.L = sum(t.py);
  return t;
}

void reverse_mode(Generator& gen) {
  const Mat x0 = random_normal<double>({2, 3}, gen), W0 = random_normal<double>({3, 4}, gen),
            y0 = random_uniform<double>({2, 4}, gen);
  say("A tiny computation: $x$ ($2 \\times 3$) and $W$ ($3 \\times 4$) require gradients, $y$ ($2 \\times 4$) is a "
      "constant, and $L = \\sum \\mathrm{softmax}(xW) \\odot y$. Running it records one node per op on the tape. Here "
      "are the nodes in topological order (each after its inputs), as describe_tape(L) returns them:");
  const Tiny t = tiny(x0, W0, y0, nullptr);
  const TapeGraph g = describe_tape(t.L, TapeNames<double>{{t.x, "x"}, {t.W, "W"}, {t.y, "y"}, {t.z, "z"},
                                                            {t.p, "p"}, {t.py, "p*y"}, {t.L, "L"}});
  tape_table(g);
  say("Backward walks the same list from the bottom up. It has to: an op's backward needs the gradient of its "
      "output, $\\partial L / \\partial\\,\\mathrm{output}$, which is complete only once every consumer of that output has sent its share, and the "
      "consumers come later in the forward order. Reversed, each node is visited after all its consumers. To watch "
      "it happen we run the computation again with `watch` nodes (an identity whose backward writes down the "
      "gradient that arrives, a custom node made with the engine's public record()), then call L.backward():");
  std::vector<std::pair<std::string, Mat>> log;
  const Tiny w = tiny(x0, W0, y0, &log);
  w.L.backward();
  for (std::size_t i = 0; i < log.size(); ++i)
    matrix(text(i + 1, ". ", log[i].first, " arrives, shape ", shape_str(shape_of(log[i].second))), log[i].second);
  say("$\\partial L / \\partial p = y$ first ($L$ is linear in $p$), then the softmax turns it into "
      "$\\partial L / \\partial z = p \\odot (\\partial L / \\partial p - \\mathrm{rowsum}(\\partial L / \\partial p "
      "\\odot p))$, then the matmul sends $(\\partial L / \\partial z)\\, W^\\top$ to $x$ and $x^\\top (\\partial L / "
      "\\partial z)$ to $W$: the order reversed, one rule per op.");
  double watched = -1;
  for (const auto& [label, grad] : log)
    if (label == "dL/dx") watched = max_abs_diff(grad, w.x.grad());
  metric("watched_dx_vs_engine_max_abs", watched);
  claim({"watch_sees_engine_gradient", "watched_dx_vs_engine_max_abs == 0",
         "The gradient the watch node on $x$ wrote down is, bit for bit, the one the engine left in x.grad().",
         text("The gradient the watch node on $x$ wrote down differs from x.grad() by ", sci(watched, 1), ".")});

  say("A tensor used twice. $L = \\sum x \\odot x$ uses $x$ as both inputs of one multiplication; the mul node's "
      "backward sends $g \\odot$ (second input) to its first input and $g \\odot$ (first input) to its second, both "
      "$x$. The engine adds the two (every contribution is `+=`), so $\\partial L / \\partial x = 2x$. A backward that "
      "assigns instead of adding keeps only the last one, $x$:");
  const Mat v0{1.0, -2.0, 0.5};
  std::vector<std::pair<std::string, Mat>> uses;
  const TD a(v0, true), b(v0, true);
  sum(watch(a, "use 1", uses) * watch(a, "use 2", uses)).backward();
  sum(mul_overwriting(b, b)).backward();
  const Mat fd = central_differences([](const Mat& x) { return inner(x, x); }, v0);
  const std::vector<TD> shown = {TD(v0), TD(uses[0].second), TD(uses[1].second), TD(a.grad()), TD(b.grad()), TD(fd)};
  matrix("contributions and totals (columns: entries of x)", stack(shown, 0).value(),
         {"x", "use 1 sends", "use 2 sends", "engine (adds)", "overwrite", "finite differences"}, {}, 6);
  const double adds = max_abs_diff(a.grad(), fd), overwrites = max_abs_diff(b.grad(), fd);
  metric("used_twice_engine_vs_fd_max_abs", adds);
  metric("used_twice_overwrite_vs_fd_max_abs", overwrites);
  claim({"contributions_add", "used_twice_engine_vs_fd_max_abs <= 1e-9 and used_twice_overwrite_vs_fd_max_abs >= 0.5",
         text("The engine's sum matches finite differences (to ", sci(adds, 1), "); the overwriting backward is off by ",
              fixed(overwrites, 2), ", one whole contribution."),
         text("The engine's gradient is ", sci(adds, 1), " from finite differences and the overwriting one ",
              sci(overwrites, 1), ": not the split the argument predicts.")});
}

// ---------------------------------------------------------------------------------------------
// 2. The tape drawn as a graph.

void tape_graph(Generator& gen) {
  const std::size_t Lq = 4, Lk = 5, d = 3, dv = 2;
  Mask real = xt::ones<bool>({std::size_t(1), Lk});
  real(0, Lk - 1) = false;  // the last key is <pad>
  const TD Q(random_normal<double>({Lq, d}, gen), true), K(random_normal<double>({Lk, d}, gen), true),
      V(random_normal<double>({Lk, dv}, gen), true), G(random_normal<double>({Lq, dv}, gen));
  say("One small attention call written op by op: $Q$ (", Lq, " x ", d, "), $K$ (", Lk, " x ", d, "), $V$ (", Lk, " x ",
      dv, "); $S = QK^\\top$, scaled by $1/\\sqrt{", d, "}$; a padding mask hides the last key; $A$ = masked_softmax; "
      "$O = AV$; and a loss $L = \\sum O \\odot G$ with a fixed random $G$, so that $\\partial L / \\partial O = G$. "
      "The boxes come from tape_dot(L): op, shape, blue for leaves that need a gradient, dashed for constants; an edge "
      "per input, numbered when order matters.");
  const TD S = matmul(Q, K, false, true);
  const TD Ss = S * (1.0 / std::sqrt(double(d)));
  const TD A = masked_softmax(Ss, Allowed::where(real));
  const TD O = matmul(A, V);
  const TD L = sum(O * G);
  const TapeNames<double> named{{Q, "Q"}, {K, "K"}, {V, "V"}, {G, "G"}, {S, "S"}, {Ss, "S/√d"}, {A, "A"}, {O, "O"}, {L, "L"}};
  save_diagram(tape_dot(L, named, "The tape of L = sum(softmax(mask(Q Kᵀ/√d)) V * G), before backward"), "tape_before",
               "The tape of one attention call, op by op, before backward: one box per node (op and shape)");
  retain_tape_grads(L);
  L.backward(/*retain_graph=*/true);
  const TapeGraph after = describe_tape(L, named);
  save_diagram(to_dot(after, "The same tape after backward: ‖dL/d(node)‖ in every box"), "tape_after",
               "After backward, with every gradient kept (retain_tape_grads and retain_graph): the norm of $\\partial L / \\partial\\,\\mathrm{node}$");
  say("Backward frees what it no longer needs: each intermediate gradient once it has been passed on, each op's "
      "saved arrays and its links to its inputs. To draw the gradients we asked for the opposite: "
      "retain_tape_grads(L) keeps every node's gradient and backward(/*retain_graph=*/true) keeps the links. "
      "(After a plain backward() the description is one box, L, marked freed.) Norms read off the tape:");
  tape_gradient_table(after);

  const TD Qf(Q.value(), true), Kf(K.value(), true), Vf(V.value(), true);
  AttentionOptions<double> o;
  o.allowed = Allowed::where(real);
  const TD Lf = sum(scaled_dot_product_attention(Qf, Kf, Vf, o).output * G);
  const TapeGraph fused = describe_tape(Lf, TapeNames<double>{{Qf, "Q"}, {Kf, "K"}, {Vf, "V"}, {G, "G"}, {Lf, "L"}});
  save_diagram(to_dot(fused, "The fused op: scale, mask, softmax and A V in one node"), "tape_fused",
               "The same loss through the fused scaled_dot_product_attention: one node whose backward is section 4");
  say("The models call the fused scaled_dot_product_attention instead: the same computation is ", fused.nodes.size(),
      " nodes (", after.nodes.size(), " op by op). Its one backward runs all the rules of section 4 at once and keeps "
      "one saved array, the weights $A$.");
  metric("tape_nodes_op_by_op", double(after.nodes.size()));
  metric("tape_nodes_fused", double(fused.nodes.size()));
}

// ---------------------------------------------------------------------------------------------
// 3. The softmax Jacobian, three ways.

void softmax_jacobian(Generator& gen) {
  const std::size_t n = 6;
  const Mat x = random_normal<double>({std::size_t(1), n}, gen, 0.0, 1.5);
  const Mat y = softmax_rows(x);
  say("One row $x$ of length ", n, " and its softmax $y$. The derivative is $\\partial y_j / \\partial x_l = y_j "
      "(\\delta_{jl} - y_l)$, so the Jacobian is $J = \\mathrm{diag}(y) - yy^\\top$. Three ways to get it:");
  const Mat yc = xt::view(y, 0);
  const Mat by_formula = xt::diag(yc) - mm(tr(y), y);
  Mat by_differences = xt::zeros<double>({n, n}), by_backward = xt::zeros<double>({n, n});
  for (std::size_t j = 0; j < n; ++j) {
    // Row j of J from central differences of y_j; row j from backward with the upstream vector e_j.
    xt::view(by_differences, j) =
        xt::view(central_differences([j](const Mat& v) { return softmax_rows(v)(0, j); }, x), 0);
    const TD xt_(x, true);
    Mat e = xt::zeros<double>({std::size_t(1), n});
    e(0, j) = 1;
    softmax(xt_, -1).backward(e);  // x.grad = e_j^T J, row j
    xt::view(by_backward, j) = xt::view(xt_.grad(), 0);
  }
  const double by_fd = max_abs_diff(by_differences, by_formula), by_bw = max_abs_diff(by_backward, by_formula);
  table({"way", "$\\max \\lvert J - \\mathrm{formula} \\rvert$"},
        {row("1. $\\mathrm{diag}(y) - yy^\\top$", "0 (the reference)"), row("2. central differences, $h = 10^{-5}$", sci(by_fd, 2)),
         row("3. backward of $e_j$, $j = 1..n$", sci(by_bw, 2))});
  plots::Figure fig(1800, 800, 1, 3);
  fig.title("Softmax Jacobian dy/dx of one row (n = 6), three ways");
  plots::HeatmapOptions ho;
  ho.cmap = plots::Colormap::rdbu(), ho.vmin = -0.25, ho.vmax = 0.25, ho.annotate = true, ho.colorbar = false;
  ho.x_labels = numbered("x", n, 1), ho.y_labels = numbered("y", n, 1);
  const std::vector<std::pair<std::string, Mat>> panels = {
      {"diag(y) − y yᵀ", by_formula}, {"central differences", by_differences}, {"backward of each eⱼ", by_backward}};
  for (std::size_t i = 0; i < panels.size(); ++i)
    plots::heatmap(fig.panel(int(i)).title(panels[i].first).xlabel("input x_l").ylabel(i == 0 ? "output y_j" : ""),
                   panels[i].second, ho);
  fig.shared_colorbar({ho.cmap, *ho.vmin, *ho.vmax, "dy_j / dx_l"});
  save_figure(fig, "softmax_jacobian", "The softmax Jacobian of one row by the formula, by central differences and by backward");
  metric("jacobian_fd_vs_formula_max_abs", by_fd);
  metric("jacobian_backward_vs_formula_max_abs", by_bw);
  claim({"jacobian_three_ways", "jacobian_fd_vs_formula_max_abs <= 1e-9 and jacobian_backward_vs_formula_max_abs <= 1e-12",
         text("The three agree: central differences to ", sci(by_fd, 1), " (their own accuracy), backward to ", sci(by_bw, 1),
              " (rounding)."),
         text("The three disagree: central differences by ", sci(by_fd, 1), ", backward by ", sci(by_bw, 1), ".")});
  const double row_sums = xt::amax(xt::abs(xt::sum(by_formula, {1})))();
  metric("jacobian_row_sum_max_abs", row_sums);
  claim({"jacobian_rows_sum_to_zero", "jacobian_row_sum_max_abs <= 1e-14",
         text("Each row of $J$ sums to 0 (largest row sum ", sci(row_sums, 1), "): adding a constant to every $x_l$ leaves "
              "$y$ alone. The diagonal $y_j(1 - y_j)$ is positive, everything else, $-y_j y_l$, negative."),
         text("A row of $J$ sums to ", sci(row_sums, 1), ", more than rounding.")});

  say("Backward never builds $J$. It needs $\\partial L / \\partial x = J^\\top dy$, and with $J = \\mathrm{diag}(y) - "
      "yy^\\top$ that is $y \\odot dy - y\\,(y \\cdot dy) = y \\odot (dy - y \\cdot dy)$: one dot product and two "
      "passes over the row. For a row of length $n$ (in double):");
  std::vector<std::vector<std::string>> rows;
  for (double m : {6.0, 64.0, 512.0, 4096.0, 32768.0}) {
    const double jac_bytes = m * m * 8, jac_flops = m * m /* build */ + 2 * m * m /* J^T dy */;
    const double fused_flops = 2 * m /* dot */ + 2 * m /* subtract, multiply */;
    rows.push_back(row(m, text(rounded(jac_bytes / 1024), " KiB"), rounded(jac_flops), text(rounded(m * 8 / 1024), " KiB"),
                       rounded(fused_flops), text(fixed(jac_flops / fused_flops, 0), "x")));
  }
  table({"$n$", "Jacobian: memory", "Jacobian: FLOPs", "fused: memory ($dx$)", "fused: FLOPs", "FLOPs saved"}, rows);
  say("Attention runs this once per query row of every head and batch: with $n = 4096$ keys the Jacobian of a "
      "single row would be 128 MiB; the fused rule needs nothing beyond the row itself.");
}

// ---------------------------------------------------------------------------------------------
// 4. Attention backward, step by step.

struct Problem { Mat Q, K, V, dO; };

void attention_by_hand(Generator& gen) {
  const std::size_t Lq = 4, Lk = 5, d = 4, dv = 3;
  const Problem p{random_normal<double>({Lq, d}, gen), random_normal<double>({Lk, d}, gen),
                  random_normal<double>({Lk, dv}, gen), random_normal<double>({Lq, dv}, gen)};
  say("$Q$ (", Lq, " x ", d, "), $K$ (", Lk, " x ", d, "), $V$ (", Lk, " x ", dv, ") and an upstream gradient $dO$ (", Lq,
      " x ", dv, "), all random, in double. The loss is $L = \\sum O \\odot dO$, so $\\partial L / \\partial O = dO$ "
      "(below, $dX$ means $\\partial L / \\partial X$). The derivation, one step at a time (each line is one plain "
      "xtensor expression in attention_backward() in this file):");
  say("$$\\begin{aligned} O &= AV \\text{ is linear in each factor:} & dV &= A^\\top dO, \\quad dA = dO\\, V^\\top \\\\ "
      "A &= \\mathrm{softmax}(S) \\text{ row by row (section 3):} & dS_i &= J_i^\\top dA_i = A_i \\odot (dA_i - A_i "
      "\\cdot dA_i) \\\\ & & dS &= A \\odot (dA - \\mathrm{rowsum}(dA \\odot A)) \\\\ S &= QK^\\top / \\sqrt{d}: & "
      "dQ &= dS\\, K / \\sqrt{d}, \\quad dK = dS^\\top Q / \\sqrt{d} \\end{aligned}$$");
  const Forward f = attention_forward(p.Q, p.K, p.V);
  const Grads hand = attention_backward(p.Q, p.K, p.V, f.A, p.dO);

  // The engine: the fused op for dQ, dK, dV; the op-by-op tape (section 2) for dA and dS.
  const TD Q(p.Q, true), K(p.K, true), V(p.V, true);
  scaled_dot_product_attention(Q, K, V).output.backward(p.dO);
  const TD Q2(p.Q, true), K2(p.K, true), V2(p.V, true);
  const TD S = matmul(Q2, K2, false, true) * (1.0 / std::sqrt(double(d)));
  const TD A = softmax(S, -1);
  S.retain_grad();
  A.retain_grad();
  matmul(A, V2).backward(p.dO);

  // Central differences of L = <O, dO> in each input; for dA and dS, L as a function of A or of S.
  const auto L = [&](const Mat& Qx, const Mat& Kx, const Mat& Vx) { return inner(attention_forward(Qx, Kx, Vx).O, p.dO); };
  const Grads fd{central_differences([&](const Mat& v) { return L(p.Q, p.K, v); }, p.V),
                 central_differences([&](const Mat& a) { return inner(mm(a, p.V), p.dO); }, f.A),
                 central_differences([&](const Mat& s) { return inner(mm(softmax_rows(s), p.V), p.dO); }, f.S),
                 central_differences([&](const Mat& q) { return L(q, p.K, p.V); }, p.Q),
                 central_differences([&](const Mat& k) { return L(p.Q, k, p.V); }, p.K)};
  struct Line { const char* name; const Mat &hand, &engine, &fd; const char* engine_from; };
  const std::vector<Line> lines = {{"dV", hand.dV, V.grad(), fd.dV, "fused op"},
                                   {"dA", hand.dA, A.grad(), fd.dA, "op-by-op tape"},
                                   {"dS", hand.dS, S.grad(), fd.dS, "op-by-op tape"},
                                   {"dQ", hand.dQ, Q.grad(), fd.dQ, "fused op"},
                                   {"dK", hand.dK, K.grad(), fd.dK, "fused op"}};
  std::vector<std::vector<std::string>> rows;
  double worst_engine = 0, worst_fd = 0;
  for (const Line& l : lines) {
    const double e = max_relative_error(l.hand, l.engine), fe = max_relative_error(l.hand, l.fd);
    worst_engine = std::max(worst_engine, e);
    worst_fd = std::max(worst_fd, fe);
    rows.push_back(row(l.name, shape_str(shape_of(l.hand)), l.engine_from, sci(e, 2), sci(fe, 2)));
    metric(text("max_rel_error_", l.name, "_vs_engine"), e);
    metric(text("max_rel_error_", l.name, "_vs_fd"), fe);
  }
  table({"gradient", "shape", "engine's from", "rel. error vs engine", "rel. error vs central differences"}, rows);
  say("Relative error here is $\\max \\lvert \\mathrm{hand} - \\mathrm{other} \\rvert / \\max \\lvert \\mathrm{other} "
      "\\rvert$.");
  metric("max_rel_error_vs_engine", worst_engine);
  metric("max_rel_error_vs_fd", worst_fd);
  claim({"hand_matches_engine_and_fd", "max_rel_error_vs_engine <= 1e-12 and max_rel_error_vs_fd <= 1e-9",
         text("Against the engine the hand-written lines agree to rounding (", sci(worst_engine, 1), "); against central "
              "differences ($h = 10^{-5}$) to ", sci(worst_fd, 1), ", the accuracy of the differences themselves: every "
              "gradient is below the $10^{-9}$ target."),
         text("The hand-written gradients are ", sci(worst_engine, 1), " from the engine's and ", sci(worst_fd, 1),
              " from central differences: not all below the targets ($10^{-12}$ and $10^{-9}$).")});

  // Rows and columns of each gradient: queries q, keys k, feature dimensions c.
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> ticks = {
      {numbered("k", Lk, 1), numbered("c", dv, 1)}, {numbered("q", Lq, 1), numbered("k", Lk, 1)}, {numbered("q", Lq, 1), numbered("k", Lk, 1)},
      {numbered("q", Lq, 1), numbered("c", d, 1)}, {numbered("k", Lk, 1), numbered("c", d, 1)}};
  std::vector<HandGradient> drawn;  // lessons/kit/hand_gradients_figure.hpp
  for (std::size_t i = 0; i < lines.size(); ++i)
    drawn.push_back({lines[i].name, lines[i].hand, lines[i].fd, ticks[i].first, ticks[i].second});
  save_figure(hand_gradients_figure("Gradients by hand (left), distance from differences (right)", drawn), "attention_gradients",
              "$dV$, $dA$, $dS$, $dQ$, $dK$ computed by hand (left, blue negative, red positive) and their absolute "
              "difference from central differences (right, each on its own scale)");

  // Masks: a hidden key has A = 0, so dS = A * (...) = 0 there exactly.
  Mask allowed = xt::ones<bool>({Lq, Lk});
  xt::view(allowed, xt::all(), xt::range(Lk - 2, Lk)) = false;  // the last two keys are <pad> ...
  xt::view(allowed, 0) = false;                                  // ... and query 1 may see nothing
  const Forward fm = attention_forward(p.Q, p.K, p.V, allowed);
  const Grads gm = attention_backward(p.Q, p.K, p.V, fm.A, p.dO);
  matrix("dS with the last two keys hidden and query 1 fully masked", gm.dS, numbered("q", Lq, 1), numbered("k", Lk, 1), 6);
  double hidden_max = 0, nans = 0;
  for (std::size_t i = 0; i < Lq; ++i)
    for (std::size_t j = 0; j < Lk; ++j)
      if (!allowed(i, j)) hidden_max = std::max(hidden_max, std::abs(gm.dS(i, j)));
  const TD Qm(p.Q, true), Km(p.K, true), Vm(p.V, true);
  AttentionOptions<double> o;
  o.allowed = Allowed::where(allowed);
  const auto r = scaled_dot_product_attention(Qm, Km, Vm, o);
  r.output.backward(p.dO);
  for (const Mat* m : {&r.output.value(), &Qm.grad(), &Km.grad(), &Vm.grad(), &gm.dQ, &gm.dK, &gm.dV})
    for (double v : *m) nans += std::isnan(v) ? 1 : 0;
  const double empty_row = std::max({double(xt::amax(xt::abs(xt::view(r.output.value(), 0)))()),
                                     double(xt::amax(xt::abs(xt::view(Qm.grad(), 0)))()),
                                     double(xt::amax(xt::abs(xt::view(gm.dQ, 0)))())});
  const double masked_engine = std::max({max_relative_error(gm.dQ, Qm.grad()), max_relative_error(gm.dK, Km.grad()),
                                         max_relative_error(gm.dV, Vm.grad())});
  say("Where a key is hidden, $A = 0$, so $dS = A \\odot (dA - \\mathrm{rowsum}(dA \\odot A))$ is 0 there, whatever "
      "$dA$ is. Query 1 sees no key: its row of $A$ is all zeros, so by the formula its output row, its $dS$ row and "
      "its $dQ$ row are zeros too.");
  metric("masked_dS_max_abs", hidden_max);
  metric("fully_masked_row_max_abs", empty_row);
  metric("masked_nan_count", nans);
  metric("masked_max_rel_error_vs_engine", masked_engine);
  claim({"masked_gradients_exact", "masked_dS_max_abs == 0 and fully_masked_row_max_abs == 0 and masked_nan_count == 0 "
                                   "and masked_max_rel_error_vs_engine <= 1e-12",
         text("Measured: no gradient leaks to a <pad> key (largest $\\lvert dS \\rvert$ on a hidden entry: ",
              sci(hidden_max), "); query 1's output and $dQ$ rows are exactly zero, by hand and in the engine, never NaN; "
              "the masked gradients by hand and from the engine agree to ", sci(masked_engine, 1), "."),
         text("Measured: largest $\\lvert dS \\rvert$ on a hidden entry ", sci(hidden_max), ", largest entry of the "
              "fully masked rows ", sci(empty_row), ", ", int(nans), " NaNs, hand against engine ", sci(masked_engine, 1),
              ": not the exact zeros the formula promises.")});
  // The attention explorer on this problem, without and with the mask (lessons/kit/scored_heads.hpp): the neuron
  // view splits a query's scores into q.k terms, the gradient view its row of dS into A, dA and D.
  show_explorer({"Lesson 06: attention backward on section 4's problem", "queries", "keys", "Section 4's Q, K, V and "
                 "dO; the second input hides k4 and k5 from every query, and every key from q1. Click a query.",
                 gradient_run_inputs(p.Q, p.K, {{"every key visible", f.A, hand.dA, hand.dS},
                                                {"k4, k5 hidden, q1 sees none", fm.A, gm.dA, gm.dS, allowed}})},
                "explorer", "The attention explorer on this problem: click a query to see its scores term by term "
                            "and its row of $dS = A \\odot (dA - D)$ worked out");
}

// ---------------------------------------------------------------------------------------------
// 5. Reading a gradient check.

// Each check named and shown as build/bin/gradcheck shows it: lessons/kit/gradcheck_table.hpp.
TD input(const Shape& s, Generator& gen) { return TD(random_uniform<double>(s, gen, -1.0, 1.0), true); }

std::vector<NamedCheck> correct_checks(Generator& gen) {
  Mask pad = xt::ones<bool>({std::size_t(1), std::size_t(5)});
  pad(0, 4) = false;
  AttentionOptions<double> masked;
  masked.allowed = Allowed::where(pad);
  return {
      named_check("softmax", "(3,5)", [](const auto& x) { return softmax(x[0], -1); }, {input({3, 5}, gen)}),
      named_check("matmul", "(3,4) x (4,2)", [](const auto& x) { return matmul(x[0], x[1]); },
            {input({3, 4}, gen), input({4, 2}, gen)}),
      named_check("layer_norm", "(3,6), γ β (6)", [](const auto& x) { return layer_norm(x[0], x[1], x[2]); },
            {input({3, 6}, gen), input({6}, gen), input({6}, gen)}),
      named_check("scaled_dot_product_attention, pad mask", "(2,4,3), (2,5,3), (2,5,2)",
            [masked](const auto& x) { return scaled_dot_product_attention(x[0], x[1], x[2], masked).output; },
            {input({2, 4, 3}, gen), input({2, 5, 3}, gen), input({2, 5, 2}, gen)}),
      named_check("hand_attention (this lesson's backward)", "(4,3), (5,3), (5,2)",
            [](const auto& x) { return hand_attention(x[0], x[1], x[2]); },
            {input({4, 3}, gen), input({5, 3}, gen), input({5, 2}, gen)})};
}

void reading_a_check(Generator& gen) {
  say("gradcheck(f, inputs) (core/gradcheck.hpp, the library behind build/bin/gradcheck) draws a random upstream "
      "gradient $g$, so that one scalar $F = \\langle f(x), g \\rangle$ tests the whole backward at once; compares each "
      "entry of the analytic $\\partial F / \\partial x$ with the central difference $(F(x + he_i) - F(x - he_i)) / 2h$; "
      "measures the error as $\\lvert a - n \\rvert / \\max(\\lvert a \\rvert, \\lvert n \\rvert, 1)$ (analytic $a$, "
      "numeric $n$); and passes below $10^{-6}$. Before backward it fills every "
      "input's gradient with random numbers and reads the analytic gradient as what backward added on top. Live, on "
      "a few ops of the engine and on section 4's backward wrapped as a custom node (hand_attention, built with the "
      "engine's public record()):");
  const std::vector<NamedCheck> good = correct_checks(gen);
  gradcheck_table(good);
  const double good_failed = double(failed_count(good));
  metric("gradcheck_correct_failed", good_failed);
  claim({"correct_backwards_pass", "gradcheck_correct_failed == 0", "All five pass.",
         text(int(good_failed), " of the five fail: a backward of the engine or this lesson's is wrong.")});

  say("Now three broken copies of hand_attention, each with one slip in section 4's lines, and a softmax whose whole "
      "backward is negated, checked twice: through $\\sum$, and directly with the random upstream gradient.");
  say("$$\\begin{aligned} &\\text{wrong sign:} & dS &= A \\odot (dA + \\mathrm{rowsum}(dA \\odot A)) \\\\ "
      "&\\text{missing } 1/\\sqrt{d}: & dQ &= dS\\, K, \\quad dK = dS^\\top Q \\\\ "
      "&\\text{overwrite:} & Q.\\mathrm{grad} &= dQ \\text{ (and } K, V\\text{) instead of } Q.\\mathrm{grad} \\mathrel{+}= dQ \\\\ "
      "&\\text{negated softmax:} & dx &= -y \\odot (dy - y \\cdot dy) \\end{aligned}$$");
  const std::vector<std::pair<std::string, Fault>> faults = {
      {"hand_attention, wrong sign in dS", Fault::wrong_sign},
      {"hand_attention, missing 1/sqrt(d)", Fault::missing_scale},
      {"hand_attention, overwrite instead of add", Fault::overwrite}};
  std::vector<NamedCheck> broken;
  for (const auto& [name, fault] : faults)
    broken.push_back(named_check(name, "(4,3), (5,3), (5,2)",
                           [fault = fault](const auto& x) { return hand_attention(x[0], x[1], x[2], fault); },
                           {input({4, 3}, gen), input({5, 3}, gen), input({5, 2}, gen)}));
  const NamedCheck blind = named_check("softmax_negated, through sum(.)", "(3,5)",
                               [](const auto& x) { return sum(softmax_negated(x[0])); }, {input({3, 5}, gen)});
  broken.push_back(named_check("softmax_negated", "(3,5)", [](const auto& x) { return softmax_negated(x[0]); },
                         {input({3, 5}, gen)}));
  std::vector<NamedCheck> shown = broken;
  shown.push_back(blind);
  gradcheck_table(shown);
  const double caught = double(failed_count(broken));

  // Without pre-filled gradients the overwrite is invisible: each input is used once and starts empty.
  const Mat Qv = random_normal<double>({4, 3}, gen), Kv = random_normal<double>({5, 3}, gen),
            Vv = random_normal<double>({5, 2}, gen), g = random_normal<double>({4, 2}, gen);
  const TD Q(Qv, true), K(Kv, true), V(Vv, true);
  hand_attention(Q, K, V, Fault::overwrite).backward(g);
  const Mat fdQ = central_differences([&](const Mat& q) { return inner(attention_forward(q, Kv, Vv).O, g); }, Qv);
  const double fresh = max_relative_error(Q.grad(), fdQ);
  metric("broken_caught", caught);
  metric("broken_total", double(broken.size()));
  metric("wrong_sign_rel_error", broken[0].result.max_rel_error);
  metric("missing_scale_rel_error", broken[1].result.max_rel_error);
  metric("overwrite_fresh_vs_fd_rel_error", fresh);
  metric("negated_softmax_through_sum_rel_error", blind.result.max_rel_error);
  claim({"slips_of_order_one", "wrong_sign_rel_error >= 0.01 and missing_scale_rel_error >= 0.01",
         text("The wrong sign and the missing scale give errors far above the $10^{-6}$ bar (",
              sci(broken[0].result.max_rel_error, 1), " and ", sci(broken[1].result.max_rel_error, 1), "): the analytic "
              "and the numeric gradients simply disagree."),
         text("The wrong sign and the missing scale give errors of only ", sci(broken[0].result.max_rel_error, 1), " and ",
              sci(broken[1].result.max_rel_error, 1), ".")});
  claim({"overwrite_invisible_on_fresh_inputs", "overwrite_fresh_vs_fd_rel_error <= 1e-9",
         text("The overwrite is subtler: computed on fresh inputs its $dQ$ matches central differences to ", sci(fresh, 1),
              ", because an input used once starts with no gradient and assigning equals adding. It is caught only "
              "because gradcheck pre-fills the gradients: the assignment throws away the pre-filled values, and \"what "
              "backward added\" comes out wrong. In a real model the same bug silently drops the other contributions to "
              "a tensor used twice (a residual connection, tied weights, section 1)."),
         text("Computed on fresh inputs, the overwriting backward's $dQ$ is ", sci(fresh, 1), " from central differences.")});
  claim({"sum_is_blind_to_negated_softmax", "negated_softmax_through_sum_rel_error <= 1e-6 and broken_caught == broken_total",
         text("The negated softmax passes when checked through $\\sum$: every row of a softmax sums to 1 whatever $x$ is, "
              "so $\\sum \\mathrm{softmax}(x)$ is constant, its true gradient is 0, and 0 negated is still 0 (max rel err ",
              sci(blind.result.max_rel_error, 1), "). An all-ones upstream gradient is blind to this bug; a random $g$ is "
              "not: broken backwards caught, ", int(caught), " of ", broken.size(), "."),
         text("Through $\\sum$ the negated softmax shows a max rel err of ", sci(blind.result.max_rel_error, 1), ", and ",
              int(caught), " of ", broken.size(), " broken backwards were caught.")});

  const std::vector<std::string> labels = {"softmax", "matmul", "layer_norm", "attn (engine)", "attn (by hand)",
                                           "wrong sign", "no 1/√d", "overwrite", "negated softmax"};
  std::vector<double> digits;  // the five correct checks, then the four broken ones
  for (const NamedCheck& c : good) digits.push_back(digits_of_agreement(c.result));
  for (const NamedCheck& c : broken) digits.push_back(digits_of_agreement(c.result));
  plots::Figure fig(1800, 1000);
  fig.title("Gradient check: digits of agreement; OK needs ≥ 6");
  bar_panel(fig.panel(0).ylabel("−log10(max rel err), 0 if ≥ 1"), labels, {{"digits of agreement", digits}}, 1, 12.0);
  save_figure(fig, "gradcheck_caught",
              "Digits of agreement with central differences: the engine's ops and the hand-written backward "
              "(left five) against the four broken backwards (right), each caught");
}

// ---------------------------------------------------------------------------------------------
// 6. What backward costs.

void backward_cost(Generator& gen) {
  const std::size_t B = 8, d = 64;
  const std::vector<std::size_t> sizes = full_or_quick(std::vector<std::size_t>{64, 128, 256, 512, 1024},
                                                       std::vector<std::size_t>{32, 64, 128, 256, 512});
  const int rounds = full_or_quick(21, 7);
  config({{"cost_batch", B}, {"cost_d", d}, {"cost_rounds", rounds}});
  say("The fused op in float, as the models run it: ", B, " sequences of $n$ tokens, $d = ", d, "$, at several $n$. "
      "Each round times one forward and the backward that follows it (medians of ", rounds, " rounds). Saved for "
      "backward: the weights $A$, $n \\times n$ per sequence ($Q$, $K$, $V$ are read back from the inputs, not copied).");
  std::vector<std::vector<std::string>> rows;
  std::vector<double> ns, fwd, bwd, saved, inputs;
  for (std::size_t n : sizes) {
    const Tensor<float> Q(random_normal<float>({B, n, d}, gen), true), K(random_normal<float>({B, n, d}, gen), true),
        V(random_normal<float>({B, n, d}, gen), true);
    const auto [f, b] = forward_backward_medians([&] { return scaled_dot_product_attention(Q, K, V).output; },
                                                 random_normal<float>({B, n, d}, gen),
                                                 [&] { Q.zero_grad(), K.zero_grad(), V.zero_grad(); }, rounds);
    const double bytes_A = double(B * n * n * sizeof(float)), bytes_in = double(3 * B * n * d * sizeof(float));
    ns.push_back(double(n)), fwd.push_back(f), bwd.push_back(b);
    saved.push_back(bytes_A / (1024.0 * 1024.0)), inputs.push_back(bytes_in / (1024.0 * 1024.0));
    rows.push_back(row(n, fixed(f, 3), fixed(b, 3), fixed(b / f, 2), text(fixed(saved.back(), 2), " MiB"),
                       fixed(bytes_A / bytes_in, 2)));
    timing(text("forward_ms_n", n), f);
    timing(text("backward_ms_n", n), b);
  }
  table({"$n$", "forward ms", "backward ms", "backward / forward", "saved $A$", "saved $A$ / ($Q$, $K$, $V$)"}, rows);
  const double ratio = bwd.back() / fwd.back();
  timing("backward_over_forward_largest_n", ratio);
  claim({"backward_about_twice", "ratio >= 1 and ratio <= 4",
         text("Backward does twice the forward's matrix products (four, $dV$, $dA$, $dQ$, $dK$, against two, $S$ and "
              "$O$), plus the softmax rule, and it took ", fixed(ratio, 1), " times the forward at $n = ", sizes.back(), "$."),
         text("Backward does twice the forward's matrix products, yet it took ", fixed(ratio, 1), " times the forward at "
              "$n = ", sizes.back(), "$: on this machine other costs dominate."),
         Expect::either_way, {{"ratio", ratio}}});
  say("The memory is the real bill: $A$ grows like $n^2$, the inputs like $n$. At $n = ", sizes.back(), "$ the saved "
      "weights are ", fixed(saved.back(), 1), " MiB, ", fixed(saved.back() / inputs.back(), 1), " times $Q$, $K$ and "
      "$V$ together. Lesson 17 (tiled attention) does not save $A$ at all: it recomputes it, block by block, during "
      "backward.");
  // Log-log: the plots library labels 2 and 5 between the decades too when it spans only a few.
  const LineFigureOptions time{text("Time of the fused attention op, B = ", B, ", d = ", d, " (float)"),
                               "sequence length n (log scale)", "milliseconds, median (log scale)", true, true, true};
  save_figure(line_figure({curve("forward", ns, fwd), curve("backward", ns, bwd)}, time), "backward_cost",
              "Measured forward and backward time of the fused attention op against sequence length, both axes "
              "logarithmic");
  const LineFigureOptions memory{text("Memory of the fused attention op, B = ", B, ", d = ", d, " (float)"),
                                 "sequence length n (log scale)", "MiB (log scale)", true, true, true};
  save_figure(line_figure({curve("A, saved for backward (n²)", ns, saved), curve("Q, K, V (n)", ns, inputs)}, memory),
              "backward_memory", "The bytes the fused op saves for backward ($A$, $n^2$ per sequence) against its "
              "inputs ($n$), both axes logarithmic");
}

}  // namespace

int main(int argc, char** argv) {
  LessonInfo info{"06_attention_backward", "The backward pass of attention, by hand",
                  "Reverse mode on the tape, the tape drawn as a graph, the softmax Jacobian, attention's five "
                  "gradients by hand against the engine and finite differences, gradient checks catching broken "
                  "backwards, and what backward costs",
                  "max_rel_error_vs_fd"};
  info.lead_figure = "gradcheck_caught";
  return run_lesson(info, argc, argv, [] {
                      Generator gen(seed());
                      section("1. Reverse mode in one screen");
                      reverse_mode(gen);
                      section("2. The tape drawn as a graph");
                      tape_graph(gen);
                      section("3. The softmax Jacobian, and why backward never builds it");
                      softmax_jacobian(gen);
                      section("4. Attention backward, step by step");
                      attention_by_hand(gen);
                      section("5. Reading a gradient check");
                      reading_a_check(gen);
                      section("6. What backward costs");
                      backward_cost(gen);
                    });
}
