// The kit's cost harness for the encoder-decoder's attention scores (lessons/kit/seq2seq): one
// step time and one attention time per score, measured; nothing to time refused.
#include <doctest/doctest.h>

#include <stdexcept>

#include "lessons/kit/seq2seq.hpp"
#include "nn/data/batch.hpp"

using namespace attnlab;
using namespace attnlab::lessons;

TEST_CASE("time_scores: a training step and the attention alone, timed for each score; no scores or rounds refused") {
  nn::rnn::Seq2SeqConfig c;
  c.style = nn::rnn::DecoderStyle::Luong, c.embed = 4, c.encoder_hidden = 3, c.decoder_hidden = 6, c.attention_hidden = 5;
  nn::data::EncodedPairs p;
  p.source = {{4, 5, 6, 7}, {5, 4}};
  p.target = {{6, 4, 5}, {7}};
  const nn::data::Seq2SeqBatch b = nn::data::make_seq2seq_batch(p, {0, 1});
  const std::vector<ScoreCost> costs = time_scores(c, {"dot", "additive"}, 8, 9, b, 2, 3);
  REQUIRE(costs.size() == 2);
  for (const ScoreCost& cost : costs) {
    CHECK(cost.step.wall_ms > 0.0);
    CHECK(cost.attention.wall_ms > 0.0);
    CHECK(cost.step.cpu_ms >= 0.0);
  }
  CHECK_THROWS_WITH_AS(time_scores(c, {}, 8, 9, b, 2, 3), doctest::Contains("time_scores: need at least one score"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(time_scores(c, {"dot"}, 8, 9, b, 0, 3), doctest::Contains("0 rounds"), std::invalid_argument);
}
