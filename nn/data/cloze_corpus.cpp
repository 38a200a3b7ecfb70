#include "nn/data/cloze_corpus.hpp"

#include <algorithm>
#include <stdexcept>

#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>

namespace attnlab::nn::data {

namespace {
std::vector<Index> stream_of(const Vocab& vocab, const std::vector<Fortune>& entries) {
  std::vector<Index> s;
  for (const auto& e : entries) {
    const std::vector<Index> ids = encode_fortune(vocab, e.text);
    s.insert(s.end(), ids.begin(), ids.end());
    s.push_back(Vocab::eos);
  }
  return s;
}
}  // namespace

ClozeCorpus cloze_corpus(FortuneSplits split) {
  if (split.train.empty()) throw std::invalid_argument("cloze_corpus: the training split has no entries");
  ClozeCorpus c;
  c.split = std::move(split);
  c.vocab = fortune_vocab(c.split.train);
  c.ids.first = Index(Vocab::num_specials), c.ids.end = Index(c.vocab.size());
  c.ids.mask = c.vocab.add("<mask>");
  c.ids.cls = c.vocab.add("<cls>");
  c.train = stream_of(c.vocab, c.split.train);
  c.validation = stream_of(c.vocab, c.split.validation);
  c.test = stream_of(c.vocab, c.split.test);
  return c;
}

std::vector<Index> entry_ids(const ClozeCorpus& c, const std::string& text) {
  std::vector<Index> ids = {c.ids.cls};
  for (Index id : encode_fortune(c.vocab, text)) ids.push_back(id);
  ids.push_back(Vocab::eos);
  return ids;
}

const Fortune& one_line_entry(const std::vector<Fortune>& entries, std::size_t lo, std::size_t hi) {
  if (entries.empty()) throw std::invalid_argument("one_line_entry: no entries to choose from");
  for (const auto& e : entries)
    if (e.text.size() >= lo && e.text.size() <= hi && e.text.find('\n') == std::string::npos) return e;
  return entries.front();
}

TopicSet topic_set(const ClozeCorpus& c, const std::vector<Fortune>& split, const std::vector<std::string>& topics,
                   std::size_t cap) {
  std::vector<std::vector<const Fortune*>> by(topics.size());
  for (const auto& e : split)
    for (std::size_t t = 0; t < topics.size(); ++t)
      if (e.topic == topics[t]) by[t].push_back(&e);
  std::size_t n = split.size();
  for (std::size_t t = 0; t < topics.size(); ++t) {
    if (by[t].empty()) throw std::invalid_argument("topic_set: topic '" + topics[t] + "' has no entry in the split");
    n = std::min(n, by[t].size());
  }
  if (cap) n = std::min(n, cap);
  TopicSet s;
  std::vector<Index> labels;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t t = 0; t < topics.size(); ++t) {
      s.entries.push_back(entry_ids(c, by[t][i]->text));
      labels.push_back(Index(t));
    }
  s.labels = xt::adapt(labels, {labels.size()});
  return s;
}

TopicSet topic_subset(const TopicSet& s, std::size_t topics, std::size_t per_topic, std::uint64_t seed) {
  std::vector<std::vector<std::size_t>> by(topics);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const Index t = s.labels(i);
    if (t < 0 || std::size_t(t) >= topics)
      throw std::invalid_argument("topic_subset: label " + std::to_string(t) + " of entry " + std::to_string(i) +
                                  " outside [0, " + std::to_string(topics) + ")");
    by[std::size_t(t)].push_back(i);
  }
  for (std::size_t t = 0; t < topics; ++t)
    if (per_topic == 0 || per_topic > by[t].size())
      throw std::invalid_argument("topic_subset: " + std::to_string(per_topic) + " entries per topic asked, topic " +
                                  std::to_string(t) + " has " + std::to_string(by[t].size()));
  Generator gen(seed);
  for (auto& rows : by)  // Fisher-Yates, the whole list: the first per_topic of it do not depend on per_topic
    for (std::size_t i = rows.size(); i > 1; --i) std::swap(rows[i - 1], rows[gen.below(i)]);
  TopicSet out;
  std::vector<Index> labels;
  for (std::size_t i = 0; i < per_topic; ++i)
    for (std::size_t t = 0; t < topics; ++t) {
      out.entries.push_back(s.entries[by[t][i]]);
      labels.push_back(Index(t));
    }
  out.labels = xt::adapt(labels, {labels.size()});
  return out;
}

TopicBatch topic_batch(const TopicSet& s, const std::vector<std::size_t>& rows, std::size_t context, Generator* crop) {
  if (context < 2) throw std::invalid_argument("topic_batch: context " + std::to_string(context) + " (need 2 or more)");
  std::size_t L = 0;
  std::vector<std::vector<Index>> cut;
  for (std::size_t r : rows) {
    if (r >= s.size())
      throw std::invalid_argument("topic_batch: row " + std::to_string(r) + " of a set of " + std::to_string(s.size()));
    const std::vector<Index>& e = s.entries[r];
    std::vector<Index> ids = e;
    if (e.size() > context) {
      const std::size_t body = e.size() - 1, keep = context - 1;  // the tokens after [CLS]
      const std::size_t start = crop ? 1 + crop->below(body - keep + 1) : 1;
      ids = {e[0]};
      ids.insert(ids.end(), e.begin() + long(start), e.begin() + long(start + keep));
    }
    L = std::max(L, ids.size());
    cut.push_back(std::move(ids));
  }
  Mask real = xt::zeros<bool>({rows.size(), L});
  TopicBatch b{xt::zeros<Index>({rows.size(), L}), Allowed::where(real), IndexArray::from_shape({rows.size()})};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t l = 0; l < cut[i].size(); ++l) b.ids(i, l) = cut[i][l], real(i, l) = true;
    b.labels(i) = s.labels(rows[i]);
  }
  b.real = Allowed::where(real);
  return b;
}

Array<float> character_frequencies(const TopicSet& s, std::size_t vocab_size, std::size_t context) {
  Array<float> x = xt::zeros<float>({s.size(), vocab_size});
  for (std::size_t i = 0; i < s.size(); ++i) {
    const std::size_t len = std::min(s.entries[i].size(), context);
    const std::size_t n = len > 2 ? len - 2 : 0;  // between [CLS] and the last token read
    for (std::size_t l = 1; l <= n; ++l) {
      const Index id = s.entries[i][l];
      if (id < 0 || std::size_t(id) >= vocab_size)
        throw std::invalid_argument("character_frequencies: id " + std::to_string(id) + " of entry " + std::to_string(i) +
                                    " is outside a vocabulary of " + std::to_string(vocab_size));
      x(i, std::size_t(id)) += 1.0f / float(n);
    }
  }
  return x;
}

}  // namespace attnlab::nn::data
