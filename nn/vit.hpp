// The Vision Transformer (Dosovitskiy et al. 2020): an image is a sequence of patches.
//
//   (B, C, H, W) -> patches (B, N, C p p), N = (H/p)(W/p) -> Linear -> (B, N, d)
//   prepend a learned class token, add learned positions (N + 1 of them)
//   pre-norm Transformer encoder, final norm, head on the class token -> logits (B, classes)
//   (or, with Readout::patch_mean, head on the mean of the N patch tokens' final vectors)
#pragma once

#include <vector>

#include "nn/layers.hpp"
#include "nn/module.hpp"
#include "nn/positional/positional.hpp"
#include "nn/transformer/transformer.hpp"

namespace attnlab::nn {

// Cut (B, C, H, W) into non-overlapping p x p patches, row-major over the patch grid, each
// flattened channel-major: out[b, r (W/p) + s, c p p + i p + j] = x[b, c, r p + i, s p + j].
// A permutation of the entries, so the backward scatters every dy entry back to where it came.
template <class T>
Tensor<T> patchify(const Tensor<T>& images, std::size_t patch);

template <class T>
class PatchEmbedding : public Module<T> {
 public:
  PatchEmbedding(std::size_t channels, std::size_t patch, std::size_t d_model, Generator& gen);
  // images (B, C, H, W), or (B, H, W) when channels == 1 -> (B, (H/p)(W/p), d_model).
  // p must divide H and W.
  Tensor<T> forward(const Tensor<T>& images) const;
  Tensor<T> operator()(const Tensor<T>& images) const { return forward(images); }
  std::size_t patch() const { return patch_; }
  std::size_t channels() const { return channels_; }

  Linear<T> proj;  // (C p p) -> d_model

 private:
  std::size_t channels_, patch_;
};

// What the head reads. class_token: the class token's final vector (Dosovitskiy et al. 2020), so
// everything must reach the head through the class token's attention. patch_mean: the mean of the
// N patch tokens' final vectors (global average pooling, as in Beyer et al. 2022's plain ViT); the
// class token stays in the sequence, one more token the patches may read, but the head does not
// read it, and every patch's vector reaches the head directly from the first step.
enum class Readout { class_token, patch_mean };

struct ViTConfig {
  std::size_t image_height = 28, image_width = 28, channels = 1, patch = 4;
  std::size_t num_classes = 10, num_layers = 4;
  LayerConfig layer{64, 4, 128, 0.1, /*norm_first=*/true, Activation::GELU, 1e-6};
  Readout readout = Readout::class_token;
};

template <class T>
struct ViTOutput {
  Tensor<T> logits;                  // (B, classes)
  std::vector<Tensor<T>> attention;  // one (B, h, N + 1, N + 1) per layer; token 0 is the class
};

template <class T>
class ViT : public Module<T> {
 public:
  ViT(const ViTConfig& config, Generator& gen);
  Tensor<T> forward(const Tensor<T>& images);
  ViTOutput<T> forward_with_attention(const Tensor<T>& images);
  std::vector<Tensor<T>> attention_weights() const { return encoder.attention_weights(); }
  std::size_t num_patches() const { return num_patches_; }
  const ViTConfig& config() const { return config_; }

  PatchEmbedding<T> patch_embed;
  Tensor<T> cls_token;  // (1, 1, d)
  LearnedPositionalEmbedding<T> pos_embed;  // (N + 1, d)
  Dropout<T> dropout;
  Encoder<T> encoder;   // pre-norm, with the final norm "encoder.norm"
  Linear<T> head;

 private:
  ViTConfig config_;
  std::size_t num_patches_;
};

}  // namespace attnlab::nn
