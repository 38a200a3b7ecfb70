// Lesson 08's translation Transformer as files another program runs: <stem>.npz, the weights (the
// recipe's checkpoint), and <stem>.json, the model card (lessons/kit/model_card.hpp): the sizes,
// how positions enter the model, both vocabularies in id order, the task's options (so that its
// held-out sentences can be made again), the lesson and seed, the held-out BLEU and the probe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lessons/kit/explorer.hpp"
#include "lessons/kit/model_card.hpp"
#include "nn/data/translation_task.hpp"
#include "nn/transformer/seq2seq.hpp"

namespace attnlab::lessons {

// How this code's Seq2SeqTransformer places sinusoidal positions, as the card says it (a model
// with another method names it instead: relative, rope, alibi).
extern const char* const kTransformerPositions;

// Writes <stem>.json into the lesson's output folder (atomically).
void write_transformer_card(const std::string& stem, nn::Seq2SeqTransformer<float>& model,
                            const nn::data::TranslationTaskOptions& task, const nn::data::Vocab& source,
                            const nn::data::Vocab& target, const HeldOut& held_out);

struct LoadedTransformer {
  std::unique_ptr<nn::Seq2SeqTransformer<float>> model;  // in eval mode
  nn::data::Vocab source, target;
  nn::data::TranslationTaskOptions task;  // make_translation_task(task) gives the lesson's splits again
  std::string lesson;
  long long seed = 0;
  HeldOut held_out;
};

// folder/<stem>.json and folder/<stem>.npz. IoError naming the file when one is missing or
// unreadable; std::runtime_error naming the card for a missing field, positions this code does not
// build, or weights that no longer compute the card's probe with this code (the
// model was trained by other code); ShapeError listing the mismatches when the weights do not fit
// the card's sizes.
LoadedTransformer load_transformer(const std::string& folder, const std::string& stem);

// The explorer's input (lessons/kit/explorer.hpp) for sentence i of `split`, its target what the
// model wrote: the sentence run alone, teacher-forced, every decoder layer's cross-attention heads
// with their queries and keys (the neuron view); the queries the target's words and <eos>, the
// keys the source words; named "source" -> translation.
AttentionInput translated_sentence_input(nn::Seq2SeqTransformer<float>& model, const nn::data::EncodedPairs& split,
                                         std::size_t i, const nn::data::Vocab& source, const nn::data::Vocab& target);

// The same sentence's every attention, from one teacher-forced forward, each with its queries, keys
// and bias (the neuron view): the encoder's self-attention over the source words (layers "encoder
// layer N"), the decoder's self-attention over its input, <bos> and the words it wrote (layers
// "decoder layer N", causal), and the cross-attention as translated_sentence_input gives it. The
// first two are named "\"source\"" and "<bos> translation"; lesson 09 shows its four Transformers'
// on one long sentence this way.
struct SentenceAttention {
  AttentionInput encoder, decoder, cross;
};
SentenceAttention translated_sentence_attention(nn::Seq2SeqTransformer<float>& model, const nn::data::EncodedPairs& split,
                                                std::size_t i, const nn::data::Vocab& source,
                                                const nn::data::Vocab& target);

}  // namespace attnlab::lessons
