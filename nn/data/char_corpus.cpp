#include "nn/data/char_corpus.hpp"

#include <stdexcept>
#include <string>

namespace attnlab::nn::data {

std::size_t predicted_characters(const Sequences& entries) {
  std::size_t n = 0;
  for (const auto& e : entries) n += e.size() + 1;
  return n;
}

namespace {
Sequences encoded(const Vocab& vocab, const std::vector<Fortune>& entries) {
  Sequences out;
  for (const auto& e : entries) out.push_back(encode_fortune(vocab, e.text));
  return out;
}
void cut(std::vector<Fortune>& v, std::size_t n) {
  if (n > 0 && v.size() > n) v.resize(n);
}
}  // namespace

CharCorpus char_corpus(const std::vector<Fortune>& entries, const CharCorpusOptions& o) {
  if (!(o.held_out_share >= 0.0 && o.held_out_share < 0.5))
    throw std::invalid_argument("char_corpus: the held-out share must be in [0, 0.5), got " +
                                std::to_string(o.held_out_share));
  CharCorpus c;
  c.split = split_fortunes(entries, o.held_out_share, o.held_out_share, o.split_seed);
  cut(c.split.train, o.train_entries);
  cut(c.split.validation, o.held_out_entries);
  cut(c.split.test, o.held_out_entries);
  if (c.split.train.empty())
    throw std::invalid_argument("char_corpus: no training entry among the " + std::to_string(entries.size()) +
                                " entries given");
  c.vocab = fortune_vocab(c.split.train);
  c.train = encoded(c.vocab, c.split.train);
  c.validation = encoded(c.vocab, c.split.validation);
  c.test = encoded(c.vocab, c.split.test);
  for (const auto& e : c.train) {
    c.stream.push_back(Vocab::bos);
    c.stream.insert(c.stream.end(), e.begin(), e.end());
    c.stream.push_back(Vocab::eos);
  }
  return c;
}

CharCorpus load_char_corpus(const CharCorpusOptions& o) { return char_corpus(read_fortunes(), o); }

std::pair<IndexArray, IndexArray> random_windows(const std::vector<Index>& stream, std::size_t batch,
                                                 std::size_t length, Generator& gen) {
  if (stream.size() <= length + 1)
    throw std::invalid_argument("random_windows: a stream of " + std::to_string(stream.size()) +
                                " ids has no window of length " + std::to_string(length) + " and its next id");
  IndexArray ids = IndexArray::from_shape({batch, length}), targets = IndexArray::from_shape({batch, length});
  for (std::size_t b = 0; b < batch; ++b) {
    const std::size_t s = gen.below(stream.size() - length - 1);
    for (std::size_t t = 0; t < length; ++t) ids(b, t) = stream[s + t], targets(b, t) = stream[s + t + 1];
  }
  return {ids, targets};
}

std::vector<Index> opening(const std::vector<Index>& entry, std::size_t n) {
  std::vector<Index> ids{Vocab::bos};
  for (std::size_t i = 0; i + 1 < n && i < entry.size(); ++i) ids.push_back(entry[i]);
  return ids;
}

std::string char_text(const Vocab& vocab, const std::vector<Index>& ids) {
  std::string s;
  for (Index id : ids)
    if (id >= Index(Vocab::num_specials)) s += vocab.token(id);
    else if (id == Vocab::unk) s += "?";
  return s;
}

}  // namespace attnlab::nn::data
