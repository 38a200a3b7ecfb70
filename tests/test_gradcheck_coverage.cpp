// Every op of the core and every module of nn has at least one row in build/bin/gradcheck,
// whose name starts with the op's or module's name. A new op without its check fails here.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/gradcheck.hpp"

namespace {

bool has_row(const std::string& name) {
  for (const auto& c : attnlab::gradcheck_registry())
    if (c.name == name || c.name.rfind(name + " ", 0) == 0) return true;
  return false;
}

void check_all_have_rows(const std::vector<std::string>& names) {
  for (const auto& n : names) CHECK_MESSAGE(has_row(n), "no gradcheck row for ", n);
}

}  // namespace

TEST_CASE("every core op has a gradcheck row") {
  check_all_have_rows({"add", "sub", "mul", "div", "neg", "exp", "log", "sqrt", "pow", "tanh", "sigmoid",
                       "relu", "leaky_relu", "gelu", "where", "masked_fill", "sum", "mean", "max", "var", "reshape",
                       "transpose", "permute", "slice", "concat", "stack", "split", "gather", "index_select",
                       "broadcast_to", "matmul", "linear", "softmax", "log_softmax", "masked_softmax", "cross_entropy", "mse",
                       "layer_norm", "dropout", "scaled_dot_product_attention", "multi_head_attention",
                       "multi_head_self_attention", "tiled_attention", "local_attention", "sparse_attention", "linear_attention",
                       "additive_score", "log_of_chosen", "repeat_heads"});
}

TEST_CASE("every nn module has a gradcheck row") {
  check_all_have_rows({"Linear", "Embedding", "LayerNorm", "FeedForward", "GRUCell", "GRU",
                       "Attention additive", "Attention dot", "Attention scaled dot", "Attention general",
                       "Attention concat", "gaussian_window", "LocalPAttention", "local_m_attention", "MultiHeadAttention", "MultiHeadAttention head gate",
                       "MultiHeadAttention causal", "MultiHeadAttention padding mask",
                       "MultiHeadAttention no bias", "MultiHeadAttention grouped-query",
                       "MultiHeadAttention multi-query",
                       "SinusoidalPositionalEncoding", "LearnedPositionalEmbedding", "RelativePositionBias",
                       "RotaryEmbedding", "ALiBi", "relative_key_scores", "ShawRelativePosition",
                       "EncoderModel shaw", "EncoderLayer pre-norm", "EncoderLayer post-norm",
                       "DecoderLayer pre-norm", "DecoderLayer post-norm", "Encoder", "Decoder",
                       "Transformer", "Seq2SeqTransformer", "Seq2SeqTransformer relative",
                       "Seq2SeqTransformer rotary", "Seq2SeqTransformer alibi", "PatchEmbedding", "ViT", "ViT tiny, patch-mean readout", "Linformer", "GraphAttention",
                       "MeanAggregation", "PatchEncoder", "Captioner soft", "Captioner hard",
                       "doubly_stochastic_penalty"});
}

TEST_CASE("the check itself catches a wrong gradient and a backward that overwrites") {
  using namespace attnlab;
  Generator g(1);
  Tensor<double> x(random_uniform<double>({3}, g, -1, 1));
  // A deliberately wrong backward: d(x^2) claimed to be x instead of 2x.
  auto wrong = [](const std::vector<Tensor<double>>& in) {
    const Tensor<double>& a = in[0];
    return record<double>("wrong_square", Array<double>(a.value() * a.value()), {&a},
                          [](Node<double>& n) { n.add_grad(0, Array<double>(n.grad * n.input(0))); });
  };
  CHECK_FALSE(gradcheck(wrong, {x}).ok);
  // A backward that assigns instead of adding: correct values, broken contract.
  auto overwrite = [](const std::vector<Tensor<double>>& in) {
    const Tensor<double>& a = in[0];
    return record<double>("overwrite_square", Array<double>(a.value() * a.value()), {&a},
                          [](Node<double>& n) {
                            Node<double>& p = *n.parents[0];
                            p.grad = 2.0 * n.grad * n.input(0);
                            p.has_grad = true;
                          });
  };
  CHECK_FALSE(gradcheck(overwrite, {x}).ok);
  auto right = [](const std::vector<Tensor<double>>& in) {
    const Tensor<double>& a = in[0];
    return record<double>("square", Array<double>(a.value() * a.value()), {&a},
                          [](Node<double>& n) { n.add_grad(0, Array<double>(2.0 * n.grad * n.input(0))); });
  };
  CHECK(gradcheck(right, {x}).ok);
}
