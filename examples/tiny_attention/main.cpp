// tiny_attention OUT_DIR: attnlab used as a library, from its installed CMake package.
//
// The task is a lookup. Each example holds 6 keys and 6 values (random vectors) and a query that
// is a noisy copy of one of the keys; the answer is that key's value. One attention layer with a
// learned bilinear score s = q^T W k learns to put its weight on the matching key: W grows from
// small random numbers towards a multiple of the identity. The program trains it, saves a
// checkpoint, loads it into a fresh model (outputs must agree), and draws the weights of eight
// held-out queries as a heatmap. Exits 0 when the model has learned the lookup.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

#include <attnlab/core/ops.hpp>
#include <attnlab/nn/attention/attention.hpp>
#include <attnlab/nn/checkpoint.hpp>
#include <attnlab/nn/optim.hpp>
#include <attnlab/plots/plots.hpp>

using namespace attnlab;

constexpr std::size_t kKeys = 6, kDim = 8;

struct Lookup {
  Tensor<float> query, keys, values, answer;  // (B,1,d), (B,L,d), (B,L,d), (B,1,d)
  std::vector<std::size_t> target;             // which key each query copies
};

Lookup make_lookup(std::size_t batch, Generator& gen) {
  Lookup b;
  b.keys = Tensor<float>::randn({batch, kKeys, kDim}, gen);
  b.values = Tensor<float>::randn({batch, kKeys, kDim}, gen);
  Array<float> q = xt::zeros<float>({batch, std::size_t(1), kDim}), a = q;
  for (std::size_t i = 0; i < batch; ++i) {
    const std::size_t j = gen.below(kKeys);
    b.target.push_back(j);
    for (std::size_t c = 0; c < kDim; ++c) {
      q(i, 0, c) = b.keys.value()(i, j, c) + float(gen.normal(0.0, 0.3));
      a(i, 0, c) = b.values.value()(i, j, c);
    }
  }
  b.query = Tensor<float>(q);
  b.answer = Tensor<float>(a);
  return b;
}

nn::Attention<float> make_model(Generator& gen) {
  return nn::Attention<float>(nn::make_score<float>("general", kDim, kDim, gen));
}

// The share of queries whose largest weight falls on the key they copy.
double hit_rate(const Tensor<float>& weights, const std::vector<std::size_t>& target) {
  std::size_t hits = 0;
  for (std::size_t i = 0; i < target.size(); ++i)
    hits += xt::argmax(xt::view(weights.value(), i, 0, xt::all()))() == target[i];
  return double(hits) / double(target.size());
}

int run(const std::filesystem::path& out) {
  std::filesystem::create_directories(out);
  Generator gen(7);
  nn::Attention<float> model = make_model(gen);
  nn::Adam<float> optimizer(model.parameters(), 0.05);

  for (int step = 1; step <= 300; ++step) {
    const Lookup b = make_lookup(64, gen);
    const Tensor<float> loss = mse(model(b.query, b.keys, b.values).output, b.answer);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    if (step % 100 == 0) std::printf("step %3d  loss %.4f\n", step, double(loss.value()()));
  }

  // Held out: examples the model never trained on.
  NoGrad no_grad;
  const Lookup test = make_lookup(512, gen);
  const AttentionResult<float> r = model(test.query, test.keys, test.values);
  const double hits = hit_rate(r.weights, test.target);
  std::printf("held-out queries answered from the right key: %.3f\n", hits);

  // A checkpoint, and a fresh model (other random weights) loaded from it.
  const std::string ckpt = (out / "tiny_attention.npz").string();
  nn::save_checkpoint(ckpt, model.named_parameters(), &optimizer);
  Generator other(99);
  nn::Attention<float> reloaded = make_model(other);
  nn::load_checkpoint(ckpt, reloaded.named_parameters());
  const double gap = xt::amax(xt::abs(reloaded(test.query, test.keys, test.values).output.value() -
                                      r.output.value()))();
  std::printf("checkpoint %s reloaded: largest output difference %.1g\n", ckpt.c_str(), gap);

  // Eight held-out queries over their six keys: one row per query, its target in the label.
  const Array<float> w = xt::view(r.weights.value(), xt::range(0, 8), 0, xt::all());
  plots::HeatmapOptions o;
  for (std::size_t j = 0; j < kKeys; ++j) o.x_labels.push_back("key " + std::to_string(j));
  for (std::size_t i = 0; i < 8; ++i) o.y_labels.push_back("copies key " + std::to_string(test.target[i]));
  o.annotate = true;
  o.vmin = 0.0;
  o.vmax = 1.0;
  o.colorbar_label = "attention weight";
  plots::Figure fig(1400, 1100, 1, 1, 2.0);
  fig.title("A learned score q\u1d40Wk finds the key each query copies");
  plots::heatmap(fig.panel(0, 0), w, o);
  fig.save((out / "weights.png").string());
  std::printf("wrote %s\n", (out / "weights.png").c_str());

  return hits > 0.9 && gap == 0.0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]).rfind("-", 0) == 0) {
    std::fprintf(stderr, "usage: tiny_attention OUT_DIR\n");
    return 2;
  }
  try {
    return run(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tiny_attention: %s\n", e.what());
    return 1;
  }
}
