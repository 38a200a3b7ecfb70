// The recurrent encoder-decoder (nn/rnn/seq2seq): the decoder without
// attention reads the encoder's one summary vector and nothing else.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include <xtensor/xview.hpp>

#include "nn/data/date_task.hpp"
#include "nn/rnn/seq2seq.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::nn;
namespace data = attnlab::nn::data;

namespace {

rnn::Seq2SeqConfig tiny(const std::string& score) {
  rnn::Seq2SeqConfig c;
  c.score = score;
  c.embed = 4;
  c.encoder_hidden = 3;
  c.decoder_hidden = 5;
  c.attention_hidden = 6;
  return c;
}

data::EncodedPairs pairs() {
  data::EncodedPairs p;
  p.source = {{4, 5, 6, 7}, {5, 4}};
  p.target = {{6, 4, 5}, {7}};
  return p;
}

}  // namespace

TEST_CASE("score \"none\": no attention parameters, the context is the encoder's summary") {
  Generator g1(3), g2(3);
  rnn::Seq2Seq plain(tiny("none"), 8, 9, g1), additive(tiny("additive"), 8, 9, g2);
  CHECK_FALSE(plain.decoder->has_attention());
  CHECK(additive.decoder->has_attention());
  CHECK(plain.attention_parameters() == 0);
  // additive attention: W_q (Hd -> A), W_k (2He -> A), v (A): 5*6 + 6*6 + 6 = 72, no biases.
  CHECK(additive.attention_parameters() == 72);
  CHECK(plain.parameter_count() + 72 == additive.parameter_count());
  for (const auto& [name, p] : plain.named_parameters()) CHECK(name.find("attention") == std::string::npos);
  CHECK_THROWS_AS(plain.decoder->attention(), std::logic_error);

  const data::Seq2SeqBatch b = data::make_seq2seq_batch(pairs(), {0, 1});
  NoGrad ng;
  rnn::Encoded e = plain.encoder.forward(b.source);
  CHECK(e.summary.shape() == Shape{2, 6});  // [fwd_last; bwd_first], 2He wide
  const IndexArray prev = xt::view(b.decoder_input.ids, xt::all(), 0);
  const rnn::Step before = plain.decoder->step(e, prev, e.init);
  CHECK_FALSE(before.weights.defined());
  // The annotations are never read: zeroing them changes nothing. The summary is: changing it does.
  rnn::Encoded blank = e;
  blank.annotations = Tensor<float>::zeros(e.annotations.shape());
  CHECK(plain.decoder->step(blank, prev, e.init).logits.value() == before.logits.value());
  rnn::Encoded other = e;
  other.summary = Tensor<float>::zeros(e.summary.shape());
  CHECK(plain.decoder->step(other, prev, e.init).logits.value() != before.logits.value());
  // With attention, the annotations are what it reads.
  rnn::Encoded ea = additive.encoder.forward(b.source), ea_blank = ea;
  ea_blank.annotations = Tensor<float>::zeros(ea.annotations.shape());
  CHECK(additive.decoder->step(ea_blank, prev, ea.init).logits.value() !=
        additive.decoder->step(ea, prev, ea.init).logits.value());

  // Teacher forcing and greedy decoding work without attention maps.
  Tensor<float> w;
  CHECK(plain.forward(b, &w).shape() == Shape{2, 4, 9});
  CHECK_FALSE(w.defined());
  const rnn::Decoded d = plain.greedy(b.source, 3);
  CHECK(d.ids.size() == 2);
  CHECK(d.attention.empty());
  CHECK(additive.greedy(b.source, 3).attention.size() == 2);
}

TEST_CASE("score \"none\" is for the Bahdanau decoder only") {
  Generator gen(1);
  rnn::Seq2SeqConfig c = tiny("none");
  c.style = rnn::DecoderStyle::Luong;
  CHECK_THROWS_AS(rnn::Seq2Seq(c, 8, 9, gen), std::invalid_argument);
}


TEST_CASE("the date task: held-out splits, char vocabularies from the training split, and bad sizes named") {
  const data::DateTask t = data::make_date_task(200, 5);
  CHECK(t.train.size() + t.validation.size() + t.test.size() == 200);
  CHECK(t.pairs.test.size() == t.test.size());
  CHECK(data::split_overlap(t.pairs) == 0);
  data::Splits<data::Pair> leaky = t.pairs;
  leaky.test.push_back(leaky.train.front());  // a training input in the test split
  CHECK(data::split_overlap(leaky) == 1);
  CHECK_THROWS_WITH_AS(data::make_date_task(5, 1), doctest::Contains("5 dates cannot fill three splits"), std::invalid_argument);
}

TEST_CASE("year_attention: the year steps' weight on the year's digits, against uniform") {
  // "3 march 1997" -> "1997-03-03": the year sits at characters 8..11 of a 12-character input.
  const std::vector<data::Pair> pairs = {{"3 march 1997", "1997-03-03"}, {"03/03/97", "1997-03-03"}};
  xt::xarray<double> on_year = xt::zeros<double>({10, 12});
  for (std::size_t r = 0; r < 4; ++r) on_year(r, 8 + r) = 1.0;  // each year step on its digit
  const xt::xarray<double> two_digit = xt::ones<double>({10, 8}) / 8.0;  // no "1997" in the input: skipped
  const data::YearAttention y = data::year_attention({on_year, two_digit}, pairs);
  CHECK(y.examples == 1);
  CHECK(y.mass == doctest::Approx(1.0));
  CHECK(y.uniform == doctest::Approx(4.0 / 12.0));
  CHECK_THROWS_WITH_AS(data::year_attention({on_year}, pairs), doctest::Contains("1 attention maps for 2 examples"),
                       std::invalid_argument);
}

TEST_CASE("year_window: the year's digit within D of the window's centre, against a window at the middle") {
  // "3 march 1997": the year at characters 8..11 of 12, the middle at 6; "1997-03-03": at 0..3, middle 5.
  const std::vector<data::Pair> pairs = {{"3 march 1997", "1997-03-03"}, {"1997-03-03", "1997-03-03"},
                                         {"03/03/97", "1997-03-03"}};
  const std::vector<std::vector<double>> centres = {{8, 9, 10, 11, 0, 0, 0, 0, 0, 0, 0},  // on each digit
                                                    {4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0},    // 4 behind
                                                    {0, 1, 2, 3}};                        // no "1997": skipped
  const data::YearWindow near = data::year_window(centres, pairs, 4.0), tight = data::year_window(centres, pairs, 3.0);
  CHECK(near.steps == 8);
  CHECK(near.within == doctest::Approx(1.0));
  CHECK(near.mean_distance == doctest::Approx(2.0));
  CHECK(tight.within == doctest::Approx(0.5));
  // Middle at 6: digits 8..11 are 2..5 away (3 of 4 within 4); middle at 5: digits 0..3 are 5..2 away (3 of 4).
  CHECK(near.middle_within == doctest::Approx(0.75));
  CHECK_THROWS_WITH_AS(data::year_window({{1, 2, 3, 4}}, pairs, 4.0), doctest::Contains("1 rows of centres for 3 examples"),
                       std::invalid_argument);
}

TEST_CASE("year_digits_at: the last place the input spells the year with four digits, none for two") {
  CHECK(data::year_digits_at({"3 march 1997", "1997-03-03"}) == std::optional<std::size_t>(8));
  CHECK(data::year_digits_at({"1997, day 1997", "1997-01-01"}) == std::optional<std::size_t>(10));  // the last one
  CHECK_FALSE(data::year_digits_at({"03/03/97", "1997-03-03"}).has_value());
}

TEST_CASE("first_long_form: the first long written form with a comma, else the last row; none named") {
  const std::vector<data::Pair> pairs = {{"1/2/99", ""}, {"march 3, 99", ""}, {"Tuesday, March 4, 1997", ""},
                                         {"Wednesday, March 5, 1997", ""}};
  CHECK_FALSE(data::long_written_form("march 3, 99"));  // a comma, but 20 characters or fewer
  CHECK(data::long_written_form("Tuesday, March 4, 1997"));
  CHECK(data::first_long_form(pairs) == 2);
  CHECK(data::first_long_form({pairs[0], pairs[1]}) == 1);  // none: the last row
  CHECK(data::varied_examples(pairs, 1) == std::vector<std::size_t>{2});  // the same form, among varied_examples'
  CHECK_THROWS_WITH_AS(data::first_long_form({}), doctest::Contains("first_long_form: no pairs"), std::invalid_argument);
}

TEST_CASE("lengths_apart: the first source of each band of lengths, up to the number wanted") {
  const std::vector<data::Pair> pairs = {{"1/2/99", ""}, {"3/4/99", ""}, {"12 march 1999", ""}, {"1999-03-12", ""},
                                         {"friday 12th march 1999", ""}};
  // Lengths 6, 6, 13, 10, 22: bands of 4 are 1, 1, 3, 2, 5.
  CHECK(data::lengths_apart(pairs, 10, 4) == std::vector<std::size_t>{0, 2, 3, 4});
  CHECK(data::lengths_apart(pairs, 2, 4) == std::vector<std::size_t>{0, 2});
  CHECK(data::lengths_apart(pairs, 10, 100) == std::vector<std::size_t>{0});
  CHECK_THROWS_WITH_AS(data::lengths_apart(pairs, 2, 0), doctest::Contains("lengths_apart"), std::invalid_argument);
}

TEST_CASE("row_shares: each row scaled to sum to 1, a row of zeros left alone") {
  const std::vector<xt::xarray<double>> maps = data::row_shares({xt::xarray<double>{{0.1, 0.3}, {0.0, 0.0}}});
  CHECK(maps[0](0, 0) == doctest::Approx(0.25));
  CHECK(maps[0](0, 1) == doctest::Approx(0.75));
  CHECK(maps[0](1, 0) == 0.0);
  CHECK(maps[0](1, 1) == 0.0);
}

TEST_CASE("date_fields and iso_shaped: each field of a prediction scored on its own; mismatched counts named") {
  CHECK(data::iso_shaped("1997-03-03"));
  CHECK_FALSE(data::iso_shaped("1997-3-03"));
  CHECK_FALSE(data::iso_shaped("1997-03-0x"));
  CHECK_FALSE(data::iso_shaped("1997/03/03"));
  const std::vector<data::Pair> pairs = {{"a", "1997-03-03"}, {"b", "2001-12-25"}, {"c", "1950-01-01"}, {"d", "2049-06-30"}};
  // Right; month wrong; only the year's digits, cut short; nothing.
  const data::DateFields f = data::date_fields({"1997-03-03", "2001-11-25", "1950", ""}, pairs);
  CHECK(f.year == doctest::Approx(0.75));
  CHECK(f.month == doctest::Approx(0.25));
  CHECK(f.day == doctest::Approx(0.5));
  CHECK(f.iso_shaped == doctest::Approx(0.5));
  CHECK_THROWS_WITH_AS(data::date_fields({"1997-03-03"}, pairs), doctest::Contains("date_fields: 1 predictions for 4 examples"),
                       std::invalid_argument);
  CHECK_THROWS_AS(data::date_fields({}, {}), std::invalid_argument);
}

TEST_CASE("varied_examples: one of each written form first, then the first rows not taken") {
  const std::vector<data::Pair> pairs = {{"19970303", ""}, {"03.03.1997", ""}, {"3rd of March 1997", ""},
                                         {"19970304", ""}, {"03-Mar-97", ""}};
  CHECK(data::varied_examples(pairs, 3) == std::vector<std::size_t>{2, 4, 1});
  CHECK(data::varied_examples(pairs, 5) == std::vector<std::size_t>{2, 4, 1, 0, 3});
  CHECK(data::varied_examples(pairs, 9).size() == 5);
  CHECK(data::varied_examples({}, 3).empty());
}

TEST_CASE("evaluate and mean_loss: every example decoded in order, scored; empty splits and mismatches named") {
  Generator gen(2);
  rnn::Seq2Seq model(tiny("additive"), 8, 9, gen);
  const data::EncodedPairs p = pairs();
  const data::Vocab v = data::Vocab::build({data::tokenize("abcde", data::Tokenizer::chars)});
  const std::vector<data::Pair> strings = {{"ab", "ab"}, {"c", "c"}};
  const rnn::Evaluation ev = rnn::evaluate(model, p, strings, v, 1);
  CHECK(ev.predictions.size() == 2);
  CHECK(ev.decoded.attention.size() == 2);
  CHECK(ev.decoded.attention[0].shape()[1] == 5);  // over the first input's 4 tokens and its <eos>
  CHECK(ev.exact_match >= 0.0);
  CHECK(rnn::mean_loss(model, p, 1) == doctest::Approx(rnn::mean_loss(model, p, 2)));  // per token, any batching
  CHECK_THROWS_WITH_AS(rnn::evaluate(model, p, {strings[0]}, v), doctest::Contains("1 pairs for a split of 2"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(rnn::mean_loss(model, data::EncodedPairs{}, 4), doctest::Contains("mean_loss: the split is empty"),
                       std::invalid_argument);
}

TEST_CASE("luong_query_keys: the states and read keys whose q . k * scale makes each greedy step's attention") {
  const data::EncodedPairs p = pairs();
  const data::PaddedBatch one = data::make_seq2seq_batch(p, {0}).source;
  for (const std::string score : {"dot", "scaled dot", "general", "concat", "additive"}) {
    CAPTURE(score);
    rnn::Seq2SeqConfig c = tiny(score);
    c.style = rnn::DecoderStyle::Luong;
    c.decoder_hidden = 6;  // a dot score needs Hd == 2He
    Generator g(11);
    rnn::Seq2Seq model(c, 8, 9, g);
    const rnn::Decoded d = model.greedy(one, 6);
    const std::optional<rnn::QueryKeys> qk = rnn::luong_query_keys(model, one, d.ids[0]);
    if (score == "concat" || score == "additive") {
      CHECK_FALSE(qk.has_value());  // a tanh between the query and the key: no per-dimension split
      continue;
    }
    REQUIRE(qk.has_value());
    const xt::xarray<double>& w = d.attention[0];
    REQUIRE(qk->queries.shape() == std::vector<std::size_t>{d.ids[0].size(), 6});
    REQUIRE(qk->keys.shape() == std::vector<std::size_t>{w.shape(1), 6});
    CHECK(qk->scale == doctest::Approx(score == "scaled dot" ? 1.0 / std::sqrt(6.0) : 1.0));
    for (std::size_t t = 0; t < w.shape(0); ++t) {
      std::vector<double> s(w.shape(1));
      double total = 0;
      for (std::size_t j = 0; j < s.size(); ++j) {
        for (std::size_t c_ = 0; c_ < 6; ++c_) s[j] += qk->queries(t, c_) * qk->keys(j, c_);
        total += s[j] = std::exp(s[j] * qk->scale);
      }
      for (std::size_t j = 0; j < s.size(); ++j) CHECK(s[j] / total == doctest::Approx(w(t, j)).epsilon(1e-4));
    }
    if (score == "general") {  // the keys are W h_s, not the annotations themselves
      NoGrad ng;
      const Tensor<float> h = model.encoder.forward(one).annotations;
      CHECK(std::abs(qk->keys(0, 0) - double(h.value()(0, 0, 0))) > 1e-6);
    }
    const data::PaddedBatch two = data::make_seq2seq_batch(p, {0, 1}).source;
    CHECK(attnlab::testing::contains(attnlab::testing::error_of<std::invalid_argument>([&] { rnn::luong_query_keys(model, two, d.ids[0]); }),
                                     "luong_query_keys: a batch of 2 sources, not one"));
    CHECK(attnlab::testing::contains(attnlab::testing::error_of<std::invalid_argument>([&] { rnn::luong_query_keys(model, one, {}); }),
                                     "no output ids"));
  }
  Generator g(11);
  rnn::Seq2Seq bahdanau(tiny("additive"), 8, 9, g);
  CHECK(attnlab::testing::contains(attnlab::testing::error_of<std::invalid_argument>([&] { rnn::luong_query_keys(bahdanau, one, {4}); }),
                                   "not Luong's with global attention"));
}
