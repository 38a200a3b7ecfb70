#include "nn/data/batch.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "core/random.hpp"

namespace attnlab::nn::data {

namespace {

// Pad rows[i] of seqs, optionally with one token before (<bos>) and one after (<eos>).
PaddedBatch pad_rows(const char* where, const std::vector<Sequence>& seqs, const std::vector<std::size_t>& rows,
                     Index pad_id, const Index* prefix, const Index* suffix) {
  check(!rows.empty(), where, "a batch needs at least one sequence, got 0");
  const std::size_t extra = (prefix ? 1 : 0) + (suffix ? 1 : 0);
  std::size_t lmax = 0;
  for (std::size_t r : rows) {
    check(r < seqs.size(), where, "row ", r, " out of range for ", seqs.size(), " sequences");
    lmax = std::max(lmax, seqs[r].size() + extra);
  }
  const std::size_t B = rows.size();
  PaddedBatch out;
  out.ids = IndexArray::from_shape({B, lmax});
  out.real = Mask::from_shape({B, lmax});
  out.lengths = IndexArray::from_shape({B});
  std::fill(out.ids.begin(), out.ids.end(), pad_id);
  std::fill(out.real.begin(), out.real.end(), false);
  for (std::size_t b = 0; b < B; ++b) {
    Index* ids = out.ids.data() + b * lmax;
    bool* real = out.real.data() + b * lmax;
    std::size_t n = 0;
    if (prefix) ids[n++] = *prefix;
    for (Index t : seqs[rows[b]]) ids[n++] = t;
    if (suffix) ids[n++] = *suffix;
    std::fill(real, real + n, true);
    out.lengths(b) = static_cast<Index>(n);
  }
  return out;
}

}  // namespace

std::vector<std::size_t> first_rows(std::size_t n) {
  std::vector<std::size_t> r(n);
  std::iota(r.begin(), r.end(), std::size_t(0));
  return r;
}

EncodedPairs first_pairs(const EncodedPairs& set, std::size_t n) {
  const std::size_t kept = std::min(n, set.size());
  return {std::vector<Sequence>(set.source.begin(), set.source.begin() + long(kept)),
          std::vector<Sequence>(set.target.begin(), set.target.begin() + long(kept))};
}

PaddedBatch pad_sequences(const std::vector<Sequence>& seqs, Index pad_id) {
  return pad_rows("pad_sequences", seqs, first_rows(seqs.size()), pad_id, nullptr, nullptr);
}

Seq2SeqBatch make_seq2seq_batch(const EncodedPairs& data, const std::vector<std::size_t>& rows, bool source_eos) {
  check(data.source.size() == data.target.size(), "make_seq2seq_batch", "source and target counts differ: ",
        data.source.size(), " vs ", data.target.size());
  const Index bos = Vocab::bos, eos = Vocab::eos;
  Seq2SeqBatch b;
  b.source = pad_rows("make_seq2seq_batch", data.source, rows, Vocab::pad, nullptr, source_eos ? &eos : nullptr);
  b.decoder_input = pad_rows("make_seq2seq_batch", data.target, rows, Vocab::pad, &bos, nullptr);
  b.decoder_target = pad_rows("make_seq2seq_batch", data.target, rows, Vocab::pad, nullptr, &eos);
  b.rows = rows;
  return b;
}

std::vector<std::size_t> epoch_order(std::size_t n, std::uint64_t seed, std::size_t epoch, bool shuffle) {
  std::vector<std::size_t> order = first_rows(n);
  if (shuffle) {
    // An odd-constant multiple keeps per-epoch seeds distinct; splitmix64 inside reseed decorrelates them.
    Generator gen(seed ^ (0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(epoch) + 1)));
    attnlab::shuffle(order, gen);
  }
  return order;
}

std::vector<std::vector<std::size_t>> batch_slices(const std::vector<std::size_t>& order, std::size_t batch_size) {
  check(batch_size > 0, "batch_slices", "batch_size must be positive, got 0");
  std::vector<std::vector<std::size_t>> out;
  for (std::size_t i = 0; i < order.size(); i += batch_size)
    out.emplace_back(order.begin() + i, order.begin() + std::min(order.size(), i + batch_size));
  return out;
}

template <class T>
Array<T> take_rows(const Array<T>& a, const std::vector<std::size_t>& rows) {
  check(a.dimension() >= 1, "take_rows", "needs at least one axis, got shape ", shape_str(a.shape()));
  Shape shape = shape_of(a);
  const std::size_t n = shape[0];
  const std::size_t row = shape_size(shape) / std::max<std::size_t>(n, 1);
  shape[0] = rows.size();
  auto out = Array<T>::from_shape(shape);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    check(rows[i] < n, "take_rows", "row ", rows[i], " out of range for shape ", shape_str(a.shape()));
    std::copy_n(a.data() + rows[i] * row, row, out.data() + i * row);
  }
  return out;
}

template Array<float> take_rows<float>(const Array<float>&, const std::vector<std::size_t>&);
template Array<double> take_rows<double>(const Array<double>&, const std::vector<std::size_t>&);
template IndexArray take_rows<Index>(const IndexArray&, const std::vector<std::size_t>&);

Seq2SeqLoader::Seq2SeqLoader(EncodedPairs data, std::size_t batch_size, std::uint64_t seed, bool shuffle,
                             bool source_eos)
    : data_(std::move(data)), batch_size_(batch_size), seed_(seed), shuffle_(shuffle), source_eos_(source_eos) {
  check(batch_size > 0, "Seq2SeqLoader", "batch_size must be positive, got 0");
  check(data_.source.size() == data_.target.size(), "Seq2SeqLoader", "source and target counts differ: ",
        data_.source.size(), " vs ", data_.target.size());
  check(data_.size() > 0, "Seq2SeqLoader", "no examples");
}

Seq2SeqLoader::Epoch Seq2SeqLoader::epoch(std::size_t e) const {
  return Epoch(this, batch_slices(epoch_order(data_.size(), seed_, e, shuffle_), batch_size_));
}

}  // namespace attnlab::nn::data
