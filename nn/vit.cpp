// The Vision Transformer: patches as tokens, plus a class token whose final vector is classified.
#include "nn/vit.hpp"

#include "nn/init.hpp"

namespace attnlab::nn {

namespace {
// Index map of patchify, shared by forward (gather) and backward (scatter): calls f(src, dst)
// for every entry, src an offset into (B, C, H, W), dst into (B, N, C p p).
template <class F>
void for_each_patch_entry(std::size_t B, std::size_t C, std::size_t H, std::size_t W,
                          std::size_t p, F&& f) {
  const std::size_t gh = H / p, gw = W / p, k = C * p * p;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t r = 0; r < gh; ++r)
      for (std::size_t s = 0; s < gw; ++s) {
        const std::size_t dst_row = (b * gh * gw + r * gw + s) * k;
        for (std::size_t c = 0; c < C; ++c)
          for (std::size_t i = 0; i < p; ++i) {
            const std::size_t src = ((b * C + c) * H + r * p + i) * W + s * p;
            const std::size_t dst = dst_row + (c * p + i) * p;
            for (std::size_t j = 0; j < p; ++j) f(src + j, dst + j);
          }
      }
}

std::string image_size(const Shape& s) {
  return std::to_string(s[s.size() - 2]) + "x" + std::to_string(s.back());
}
}  // namespace

// y[dst] = x[src] over a bijection; dx[src] = dy[dst].
template <class T>
Tensor<T> patchify(const Tensor<T>& images, std::size_t p) {
  need("patchify", images, "images");
  const Shape s = images.shape();
  check(s.size() == 4, "patchify", "expected images (B, C, H, W), got ", shape_str(s));
  const std::size_t B = s[0], C = s[1], H = s[2], W = s[3];
  check(p > 0 && H % p == 0 && W % p == 0, "patchify", "patch size ", p,
        " does not divide the image size ", image_size(s));
  Array<T> out = Array<T>::from_shape({B, (H / p) * (W / p), C * p * p});
  const T* x = images.value().data();
  T* y = out.data();
  for_each_patch_entry(B, C, H, W, p, [&](std::size_t src, std::size_t dst) { y[dst] = x[src]; });
  return record<T>("patchify", std::move(out), {&images}, [s, p](Node<T>& n) {
    Array<T> g = Array<T>::from_shape(s);
    const T* dy = n.grad.data();
    T* dx = g.data();
    for_each_patch_entry(s[0], s[1], s[2], s[3], p,
                         [&](std::size_t src, std::size_t dst) { dx[src] = dy[dst]; });
    n.add_grad(0, std::move(g));
  });
}

template <class T>
PatchEmbedding<T>::PatchEmbedding(std::size_t channels, std::size_t patch, std::size_t d_model,
                                  Generator& gen)
    : proj((check(channels > 0 && patch > 0 && d_model > 0, "PatchEmbedding",
                  "channels, patch and d_model must be positive, got ", channels, ", ", patch,
                  ", ", d_model),
            channels * patch * patch),
           d_model, gen),
      channels_(channels), patch_(patch) {
  this->register_module("proj", proj);
}

template <class T>
Tensor<T> PatchEmbedding<T>::forward(const Tensor<T>& images) const {
  need("PatchEmbedding", images, "images");
  Shape s = images.shape();
  const bool gray = s.size() == 3 && channels_ == 1;
  check(gray || (s.size() == 4 && s[1] == channels_), "PatchEmbedding", "expected images (B, ",
        channels_, ", H, W)", channels_ == 1 ? " or (B, H, W)" : "", ", got ", shape_str(s));
  check(s[s.size() - 2] % patch_ == 0 && s.back() % patch_ == 0, "PatchEmbedding", "patch size ",
        patch_, " does not divide the image size ", image_size(s));
  const Tensor<T> x = gray ? unsqueeze(images, 1) : images;
  return proj(patchify(x, patch_));
}

template <class T>
ViT<T>::ViT(const ViTConfig& c, Generator& gen)
    : patch_embed(c.channels, c.patch, c.layer.d_model, gen),
      pos_embed((check(c.patch > 0 && c.image_height % c.patch == 0 &&
                           c.image_width % c.patch == 0,
                       "ViT", "patch size ", c.patch, " does not divide the image size ",
                       c.image_height, "x", c.image_width),
                 (c.image_height / c.patch) * (c.image_width / c.patch) + 1),
                c.layer.d_model, gen),
      dropout(c.layer.dropout, gen),
      encoder(c.num_layers, c.layer, gen, /*final_norm=*/true),
      head(c.layer.d_model, c.num_classes, gen),
      config_(c),
      num_patches_((c.image_height / c.patch) * (c.image_width / c.patch)) {
  cls_token = this->register_parameter("cls_token", Tensor<T>::zeros({1, 1, c.layer.d_model}));
  {
    NoGrad no_grad;
    trunc_normal(cls_token, gen, 0.0, 0.02);
  }
  this->register_module("patch_embed", patch_embed);
  this->register_module("pos_embed", pos_embed);
  this->register_module("dropout", dropout);
  this->register_module("encoder", encoder);
  this->register_module("head", head);
}

template <class T>
Tensor<T> ViT<T>::forward(const Tensor<T>& images) {
  need("ViT", images, "images");
  const Shape s = images.shape();
  check(s.size() >= 3 && s[s.size() - 2] == config_.image_height &&
            s.back() == config_.image_width,
        "ViT", "expected images of ", config_.image_height, "x", config_.image_width, ", got ",
        shape_str(s));
  Tensor<T> x = patch_embed(images);  // (B, N, d)
  const std::size_t B = x.shape()[0];
  // The class token attends to every patch and is the only vector the head reads.
  Tensor<T> cls = broadcast_to(cls_token, {B, 1, config_.layer.d_model});
  x = dropout(pos_embed.forward(concat(std::vector<Tensor<T>>{cls, x}, 1)));
  Tensor<T> h = encoder.forward(x);  // (B, N + 1, d)
  if (config_.readout == Readout::patch_mean) return head(mean(slice(h, 1, 1, num_patches_ + 1), {1}));
  return head(squeeze(slice(h, 1, 0, 1), 1));
}

template <class T>
ViTOutput<T> ViT<T>::forward_with_attention(const Tensor<T>& images) {
  Tensor<T> logits = forward(images);
  return {logits, attention_weights()};
}

#define ATTNLAB_INSTANTIATE(T)                                      \
  template Tensor<T> patchify<T>(const Tensor<T>&, std::size_t);    \
  template class PatchEmbedding<T>;                                 \
  template class ViT<T>;
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab::nn
