// The Transformer (Vaswani et al. 2017) from its blocks:
//
//   EncoderLayer   x -> self-attention -> feed-forward, each wrapped in a residual and a LayerNorm
//   DecoderLayer   y -> masked self-attention -> cross-attention on the encoder's memory -> FF
//   Encoder, Decoder        N layers ("layers.0.self_attn.in_proj_weight"), optional final norm "norm"
//   Transformer             PyTorch's nn.Transformer: Encoder and Decoder with final norms, on vectors
//   Seq2SeqTransformer      embeddings * sqrt(d) + sinusoidal positions, encoder, decoder, output
//   EncoderModel            encoder-only: classification (pooled) or tagging (per token)
//   MaskedLM                BERT: an EncoderModel with the masked-language-model head (tied output)
//   CausalLM                decoder-only language model (GPT): causal self-attention blocks
// Blocks, stacks and Transformer carry PyTorch's names and layouts: a state_dict of
// nn.TransformerEncoderLayer, ...DecoderLayer, ...Encoder, ...Decoder or nn.Transformer loads by name.
//
// Post-norm (the paper):  x = norm(x + drop(sublayer(x)))
// Pre-norm (GPT-2, ViT):  x = x + drop(sublayer(norm(x)))   -- the residual path stays an identity,
//                         which is why deep pre-norm stacks train without warm-up tricks; they
//                         need a final norm after the last layer.
#pragma once

#include "nn/transformer/causal_lm.hpp"
#include "nn/transformer/encoder_decoder.hpp"
#include "nn/transformer/encoder_model.hpp"
#include "nn/transformer/layers.hpp"
#include "nn/transformer/masked_lm.hpp"
#include "nn/transformer/scheme.hpp"
#include "nn/transformer/seq2seq.hpp"
#include "nn/transformer/stacks.hpp"
