// nn_only OUT_DIR: attnlab's nn alone, from its installed CMake package (no figures, so the
// program needs neither cairo nor Graphviz).
//
// A multi-head self-attention layer learns to copy, into every position, the token three places
// to its left (a causal mask keeps it from looking ahead). The program trains it with AdamW,
// checkpoints it with named optimizer state, reloads it, and reports the held-out share of
// positions whose largest attention weight sits exactly three to the left. Exits 0 when above 0.9.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

#include <attnlab/core/ops.hpp>
#include <attnlab/nn/attention/multi_head.hpp>
#include <attnlab/nn/checkpoint.hpp>
#include <attnlab/nn/optim.hpp>

using namespace attnlab;

constexpr std::size_t kLength = 12, kDim = 16, kHeads = 2, kOffset = 3;

// Random one-hot-ish inputs: each position a random vector plus its position's own code, so a
// head can find "three to the left" by position; the target is the input three places back.
struct Batch {
  Tensor<float> x, target;
};

Batch make_batch(std::size_t n, Generator& gen) {
  Array<float> x = xt::zeros<float>({n, kLength, kDim}), t = x;
  for (std::size_t b = 0; b < n; ++b)
    for (std::size_t i = 0; i < kLength; ++i) {
      for (std::size_t c = 0; c < kDim / 2; ++c) x(b, i, c) = float(gen.normal(0.0, 1.0));
      x(b, i, kDim / 2 + i % (kDim / 2)) = 3.0f;  // the position, as a code in the second half
    }
  for (std::size_t b = 0; b < n; ++b)
    for (std::size_t i = kOffset; i < kLength; ++i)
      for (std::size_t c = 0; c < kDim / 2; ++c) t(b, i, c) = x(b, i - kOffset, c);
  return {Tensor<float>(x), Tensor<float>(t)};
}

int run(const std::filesystem::path& out) {
  std::filesystem::create_directories(out);
  Generator gen(11);
  nn::MultiHeadAttention<float> layer(kDim, kHeads, gen);
  nn::AdamW<float> optimizer(layer.parameters(), 0.01, 0.9, 0.999, 1e-8, 0.01);
  nn::MultiHeadOptions<float> causal;
  causal.causal = true;
  for (int step = 1; step <= 400; ++step) {
    const Batch b = make_batch(32, gen);
    const Tensor<float> loss = mse(layer.forward(b.x, b.x, b.x, causal).output, b.target);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    if (step % 100 == 0) std::printf("step %3d  loss %.4f\n", step, double(loss.value()()));
  }
  NoGrad no_grad;
  const Batch test = make_batch(256, gen);
  const AttentionResult<float> r = layer.forward(test.x, test.x, test.x, causal);
  // weights (B, heads, L, L): the heads' mean weight, its peak per query past the offset.
  const Array<float> w = xt::mean(r.weights.value(), {1});
  std::size_t hits = 0, seen = 0;
  for (std::size_t b = 0; b < 256; ++b)
    for (std::size_t i = kOffset; i < kLength; ++i, ++seen)
      hits += xt::argmax(xt::view(w, b, i, xt::all()))() == i - kOffset;
  const double share = double(hits) / double(seen);
  std::printf("held-out positions looking three to the left: %.3f\n", share);

  const std::string ckpt = (out / "nn_only.npz").string();
  nn::save_checkpoint(ckpt, layer.named_parameters(), &optimizer);
  Generator other(5);
  nn::MultiHeadAttention<float> reloaded(kDim, kHeads, other);
  nn::AdamW<float> fresh(reloaded.parameters(), 0.01);
  nn::load_checkpoint(ckpt, reloaded.named_parameters(), &fresh);
  const double gap = xt::amax(xt::abs(reloaded.forward(test.x, test.x, test.x, causal).output.value() -
                                      r.output.value()))();
  std::printf("checkpoint %s reloaded with its optimizer (%lld steps): largest output difference %.1g\n", ckpt.c_str(),
              static_cast<long long>(fresh.steps()), gap);
  return share > 0.9 && gap == 0.0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]).rfind("-", 0) == 0) {
    std::fprintf(stderr, "usage: nn_only OUT_DIR\n");
    return 2;
  }
  try {
    return run(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nn_only: error: %s\n", e.what());
    return 1;
  }
}
