// The Transformer (Vaswani et al. 2017) from its blocks:
//
//   EncoderLayer   x -> self-attention -> feed-forward, each wrapped in a residual and a LayerNorm
//   DecoderLayer   y -> masked self-attention -> cross-attention on the encoder's memory -> FF
//   Encoder, Decoder        N layers ("layers.0.self_attn.w_q.weight"), optional final norm "norm"
//   Seq2SeqTransformer      embeddings * sqrt(d) + sinusoidal positions, encoder, decoder, output
//   EncoderModel            encoder-only: classification (pooled) or tagging (per token)
//   CausalLM                decoder-only language model (GPT): causal self-attention blocks
//
// Post-norm (the paper):  x = norm(x + drop(sublayer(x)))
// Pre-norm (GPT-2, ViT):  x = x + drop(sublayer(norm(x)))   -- the residual path stays an identity,
//                         which is why deep pre-norm stacks train without warm-up tricks; they
//                         need a final norm after the last layer.
#pragma once

#include "nn/transformer/causal_lm.hpp"
#include "nn/transformer/encoder_model.hpp"
#include "nn/transformer/layers.hpp"
#include "nn/transformer/scheme.hpp"
#include "nn/transformer/seq2seq.hpp"
#include "nn/transformer/stacks.hpp"
