// Gradient checks of the basic layers and the GRU: every parameter and every differentiable
// input is perturbed (double, tiny sizes, dropout off).
#include "gradcheck/cases.hpp"
#include "nn/gru.hpp"
#include "nn/layers.hpp"

namespace attnlab::cases {

namespace {
Inputs with_params(const nn::Module<D>& m, Inputs inputs) {
  for (const TD& p : m.parameters()) inputs.push_back(p);
  return inputs;
}

// One tensor out of several, so that one gradcheck covers them all.
TD flat_concat(const std::vector<TD>& ts) {
  std::vector<TD> flat;
  for (const TD& t : ts) flat.push_back(reshape(t, {-1}));
  return concat(flat, 0);
}

GradcheckResult feed_forward(nn::Activation act) {
  Generator gen(31);
  nn::FeedForward<D> ff(4, 6, gen, 0.0, act);
  return gradcheck([&](const Inputs& x) { return ff(x[0]); }, with_params(ff, {rnd({2, 3, 4}, 1)}));
}
}  // namespace

GRADCHECK_CASE("Linear", "(2,3,4) -> 5, with bias", [] {
  Generator gen(1);
  nn::Linear<D> lin(4, 5, gen);
  return gradcheck([&](const Inputs& x) { return lin(x[0]); }, with_params(lin, {rnd({2, 3, 4}, 1)}));
});

GRADCHECK_CASE("Linear no bias", "(3,4) -> 2", [] {
  Generator gen(2);
  nn::Linear<D> lin(4, 2, gen, false);
  return gradcheck([&](const Inputs& x) { return lin(x[0]); }, with_params(lin, {rnd({3, 4}, 1)}));
});

GRADCHECK_CASE("Embedding padding_idx", "ids (2,4) into (6,3), padding 0, repeats", [] {
  Generator gen(3);
  nn::Embedding<D> emb(6, 3, gen, Index(0));
  const IndexArray ids = {{1, 5, 0, 1}, {0, 2, 2, 4}};
  return gradcheck([&](const Inputs&) { return emb(ids); }, with_params(emb, {}));
});

GRADCHECK_CASE("LayerNorm", "(2,3,5), affine", [] {
  nn::LayerNorm<D> ln(5);
  Generator gen(4);
  for (const TD& p : ln.parameters()) p.mutable_value() += random_uniform<D>(p.shape(), gen, -0.5, 0.5);
  return gradcheck([&](const Inputs& x) { return ln(x[0]); }, with_params(ln, {rnd({2, 3, 5}, 1)}));
});

GRADCHECK_CASE("FeedForward relu", "(2,3,4), d_ff 6", [] { return feed_forward(nn::Activation::ReLU); });
GRADCHECK_CASE("FeedForward gelu", "(2,3,4), d_ff 6", [] { return feed_forward(nn::Activation::GELU); });

GRADCHECK_CASE("GRUCell", "x (2,3), h (2,4)", [] {
  Generator gen(5);
  nn::GRUCell<D> cell(3, 4, gen);
  return gradcheck([&](const Inputs& x) { return cell.forward(x[0], x[1]); },
                   with_params(cell, {rnd({2, 3}, 1), rnd({2, 4}, 2)}));
});

GRADCHECK_CASE("GRU bidirectional 2 layers lengths", "x (2,4,3), H 3, h0 (4,2,3), lengths {4,2}", [] {
  Generator gen(6);
  nn::GRUOptions o;
  o.num_layers = 2;
  o.bidirectional = true;
  nn::GRU<D> gru(3, 3, gen, o);
  const std::vector<std::size_t> lengths = {4, 2};
  return gradcheck(
      [&](const Inputs& x) {
        auto r = gru.forward(x[0], x[1], lengths);
        return flat_concat({r.output, r.state});
      },
      with_params(gru, {rnd({2, 4, 3}, 1), rnd({4, 2, 3}, 2)}));
});

}  // namespace attnlab::cases
