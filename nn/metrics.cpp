#include "nn/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <xtensor/xreducer.hpp>
#include <xtensor/xview.hpp>

#include "core/error.hpp"

namespace attnlab::nn {

double accuracy(const IndexArray& predictions, const IndexArray& targets, Index ignore_id) {
  check(predictions.shape() == targets.shape(), "accuracy", "predictions ", shape_str(predictions.shape()),
        " and targets ", shape_str(targets.shape()), " differ in shape");
  std::size_t counted = 0, correct = 0;
  const Index* p = predictions.data();
  const Index* t = targets.data();
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (t[i] == ignore_id) continue;
    ++counted;
    correct += p[i] == t[i];
  }
  check(counted > 0, "accuracy", "no targets to score in shape ", shape_str(targets.shape()),
        " (all equal the ignore id ", ignore_id, ")");
  return static_cast<double>(correct) / static_cast<double>(counted);
}

PairedComparison paired_comparison(const IndexArray& a, const IndexArray& b, const IndexArray& labels) {
  check(a.shape() == labels.shape() && b.shape() == labels.shape() && labels.size() > 0, "paired_comparison",
        "predictions ", shape_str(a.shape()), " and ", shape_str(b.shape()), " of labels ", shape_str(labels.shape()),
        ": need the same non-empty shape");
  PairedComparison p;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const bool a_right = a.data()[i] == labels.data()[i], b_right = b.data()[i] == labels.data()[i];
    p.only_a += a_right && !b_right;
    p.only_b += b_right && !a_right;
  }
  p.gap = accuracy(a, labels) - accuracy(b, labels);
  p.noise = std::sqrt(double(p.only_a + p.only_b)) / double(labels.size());
  return p;
}

template <class T>
IndexArray argmax_last(const Array<T>& scores) {
  check(scores.dimension() >= 1 && scores.shape().back() > 0, "argmax_last", "needs a non-empty last axis, got ",
        shape_str(scores.shape()));
  Shape out_shape(scores.shape().begin(), scores.shape().end() - 1);
  const std::size_t C = scores.shape().back(), rows = scores.size() / C;
  IndexArray out = IndexArray::from_shape(out_shape);
  const T* s = scores.data();
  for (std::size_t r = 0; r < rows; ++r) {
    const T* row = s + r * C;
    out.data()[r] = static_cast<Index>(std::max_element(row, row + C) - row);
  }
  return out;
}

Array<double> confusion_rates(const IndexArray& targets, const IndexArray& predictions, std::size_t classes) {
  check(predictions.shape() == targets.shape(), "confusion_rates", "predictions ", shape_str(predictions.shape()),
        " and targets ", shape_str(targets.shape()), " differ in shape");
  Array<double> rates = xt::zeros<double>({classes, classes});
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const Index t = targets.data()[i], p = predictions.data()[i];
    check(t >= 0 && Index(classes) > t && p >= 0 && Index(classes) > p, "confusion_rates", "class ids must lie in 0 .. ",
          classes - 1, ", got target ", t, " and prediction ", p, " at ", i);
    rates(std::size_t(t), std::size_t(p)) += 1;
  }
  for (std::size_t t = 0; t < classes; ++t) xt::view(rates, t) /= std::max(1.0, double(xt::sum(xt::view(rates, t))()));
  return rates;
}

template <class T>
double log_loss(const Array<T>& p, const IndexArray& targets) {
  check(p.dimension() == 2 && targets.dimension() == 1 && targets.size() == p.shape()[0] && targets.size() > 0,
        "log_loss", "expected probabilities (N, C) and N > 0 class ids, got ", shape_str(p.shape()), " and ",
        shape_str(targets.shape()));
  const std::size_t classes = p.shape()[1];
  double nll = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const Index t = targets(i);
    check(t >= 0 && Index(classes) > t, "log_loss", "class ids must lie in 0 .. ", classes - 1, ", got ", t, " at ", i);
    nll -= std::log(std::max(double(p(i, std::size_t(t))), 1e-30));
  }
  return nll / double(targets.size());
}

template <class T>
double accuracy_from_scores(const Array<T>& scores, const IndexArray& targets, Index ignore_id) {
  return accuracy(argmax_last(scores), targets, ignore_id);
}

template <class S>
double exact_match(const std::vector<S>& hyps, const std::vector<S>& refs) {
  check(hyps.size() == refs.size(), "exact_match", hyps.size(), " hypotheses but ", refs.size(), " references");
  check(!refs.empty(), "exact_match", "no sequences to score");
  std::size_t same = 0;
  for (std::size_t i = 0; i < refs.size(); ++i) same += hyps[i] == refs[i];
  return static_cast<double>(same) / static_cast<double>(refs.size());
}

double exact_match_rows(const IndexArray& predictions, const IndexArray& targets, Index ignore_id) {
  check(predictions.shape() == targets.shape() && targets.dimension() == 2, "exact_match_rows",
        "expected two (B, L) arrays of one shape, got ", shape_str(predictions.shape()), " and ",
        shape_str(targets.shape()));
  const std::size_t B = targets.shape()[0], L = targets.shape()[1];
  check(B > 0, "exact_match_rows", "no rows to score in shape ", shape_str(targets.shape()));
  std::size_t same = 0;
  for (std::size_t b = 0; b < B; ++b) {
    const Index* p = predictions.data() + b * L;
    const Index* t = targets.data() + b * L;
    bool ok = true;
    for (std::size_t i = 0; i < L && ok; ++i) ok = t[i] == ignore_id || p[i] == t[i];
    same += ok;
  }
  return static_cast<double>(same) / static_cast<double>(B);
}

template <class S>
double token_accuracy(const std::vector<S>& hyps, const std::vector<S>& refs) {
  check(hyps.size() == refs.size(), "token_accuracy", hyps.size(), " hypotheses but ", refs.size(), " references");
  std::size_t total = 0, correct = 0;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    total += refs[i].size();
    const std::size_t n = std::min(hyps[i].size(), refs[i].size());
    for (std::size_t t = 0; t < n; ++t) correct += hyps[i][t] == refs[i][t];
  }
  check(total > 0, "token_accuracy", "references hold no tokens");
  return static_cast<double>(correct) / static_cast<double>(total);
}

namespace {
template <class Tok>
std::map<std::vector<Tok>, std::size_t> ngram_counts(const std::vector<Tok>& s, std::size_t n) {
  std::map<std::vector<Tok>, std::size_t> counts;
  for (std::size_t i = 0; i + n <= s.size(); ++i) ++counts[std::vector<Tok>(s.begin() + i, s.begin() + i + n)];
  return counts;
}
}  // namespace

template <class Tok>
BleuScore corpus_bleu(const std::vector<std::vector<Tok>>& hyps, const std::vector<std::vector<Tok>>& refs,
                      BleuSmoothing smoothing, int max_order) {
  check(hyps.size() == refs.size(), "corpus_bleu", hyps.size(), " hypotheses but ", refs.size(), " references");
  check(!refs.empty(), "corpus_bleu", "empty corpus");
  check(max_order >= 1, "corpus_bleu", "max_order must be >= 1, got ", max_order);
  const std::size_t N = static_cast<std::size_t>(max_order);
  BleuScore b;
  b.matches.assign(N, 0);
  b.totals.assign(N, 0);
  b.precisions.assign(N, 0.0);
  for (std::size_t i = 0; i < refs.size(); ++i) {
    b.hypothesis_length += hyps[i].size();
    b.reference_length += refs[i].size();
    for (std::size_t n = 1; n <= N; ++n) {
      const auto h = ngram_counts(hyps[i], n);
      const auto r = ngram_counts(refs[i], n);
      for (const auto& [gram, count] : h) {
        b.totals[n - 1] += count;
        auto it = r.find(gram);
        if (it != r.end()) b.matches[n - 1] += std::min(count, it->second);  // clipping
      }
    }
  }
  double log_sum = 0.0;
  bool zero = false;
  for (std::size_t n = 0; n < N; ++n) {
    double m = static_cast<double>(b.matches[n]), t = static_cast<double>(b.totals[n]);
    if (smoothing == BleuSmoothing::add_one && n > 0) {
      m += 1.0;
      t += 1.0;
    }
    b.precisions[n] = t > 0 ? m / t : 0.0;
    if (b.precisions[n] == 0.0) zero = true;
    else log_sum += std::log(b.precisions[n]);
  }
  const double c = static_cast<double>(b.hypothesis_length), r = static_cast<double>(b.reference_length);
  b.brevity_penalty = c == 0 ? 0.0 : c > r ? 1.0 : std::exp(1.0 - r / c);
  b.score = zero ? 0.0 : b.brevity_penalty * std::exp(log_sum / static_cast<double>(N));
  return b;
}

template <class Tok>
std::vector<GroupBleu> bleu_by_group(const std::vector<std::vector<Tok>>& hyps, const std::vector<std::vector<Tok>>& refs,
                                     const std::vector<std::size_t>& groups, BleuSmoothing smoothing, int max_order) {
  check(hyps.size() == refs.size() && refs.size() == groups.size(), "bleu_by_group", hyps.size(), " hypotheses, ",
        refs.size(), " references and ", groups.size(), " group labels: one of each per sentence");
  std::map<std::size_t, std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < groups.size(); ++i) members[groups[i]].push_back(i);
  std::vector<GroupBleu> out;
  for (const auto& [group, rows] : members) {
    std::vector<std::vector<Tok>> h, r;
    for (std::size_t i : rows) {
      h.push_back(hyps[i]);
      r.push_back(refs[i]);
    }
    out.push_back({group, rows.size(), corpus_bleu(h, r, smoothing, max_order)});
  }
  return out;
}

template <class T>
double alignment_accuracy(const Array<T>& attention, const std::vector<Index>& alignment) {
  check(attention.dimension() == 2, "alignment_accuracy", "attention must be (T, S), got ",
        shape_str(attention.shape()));
  const std::size_t rows = attention.shape()[0], cols = attention.shape()[1];
  check(!alignment.empty() && alignment.size() <= rows, "alignment_accuracy", "alignment of ", alignment.size(),
        " target words does not fit attention ", shape_str(attention.shape()));
  const IndexArray peak = argmax_last(attention);
  std::size_t hits = 0;
  for (std::size_t j = 0; j < alignment.size(); ++j) {
    check(alignment[j] >= 0 && static_cast<std::size_t>(alignment[j]) < cols, "alignment_accuracy",
          "target word ", j, " aligned to source ", alignment[j], " outside attention ", shape_str(attention.shape()));
    hits += peak(j) == alignment[j];
  }
  return static_cast<double>(hits) / static_cast<double>(alignment.size());
}

template IndexArray argmax_last<float>(const Array<float>&);
template IndexArray argmax_last<double>(const Array<double>&);
template double log_loss<float>(const Array<float>&, const IndexArray&);
template double log_loss<double>(const Array<double>&, const IndexArray&);
template double accuracy_from_scores<float>(const Array<float>&, const IndexArray&, Index);
template double accuracy_from_scores<double>(const Array<double>&, const IndexArray&, Index);
template double alignment_accuracy<float>(const Array<float>&, const std::vector<Index>&);
template double alignment_accuracy<double>(const Array<double>&, const std::vector<Index>&);

template double exact_match<std::string>(const std::vector<std::string>&, const std::vector<std::string>&);
template double exact_match<std::vector<Index>>(const std::vector<std::vector<Index>>&, const std::vector<std::vector<Index>>&);
template double exact_match<std::vector<std::string>>(const std::vector<std::vector<std::string>>&,
                                                      const std::vector<std::vector<std::string>>&);
template double token_accuracy<std::string>(const std::vector<std::string>&, const std::vector<std::string>&);
template double token_accuracy<std::vector<Index>>(const std::vector<std::vector<Index>>&,
                                                   const std::vector<std::vector<Index>>&);
template double token_accuracy<std::vector<std::string>>(const std::vector<std::vector<std::string>>&,
                                                         const std::vector<std::vector<std::string>>&);
template BleuScore corpus_bleu<std::string>(const std::vector<std::vector<std::string>>&,
                                            const std::vector<std::vector<std::string>>&, BleuSmoothing, int);
template std::vector<GroupBleu> bleu_by_group<std::string>(const std::vector<std::vector<std::string>>&,
                                                           const std::vector<std::vector<std::string>>&,
                                                           const std::vector<std::size_t>&, BleuSmoothing, int);
template std::vector<GroupBleu> bleu_by_group<Index>(const std::vector<std::vector<Index>>&,
                                                     const std::vector<std::vector<Index>>&,
                                                     const std::vector<std::size_t>&, BleuSmoothing, int);
template BleuScore corpus_bleu<Index>(const std::vector<std::vector<Index>>&, const std::vector<std::vector<Index>>&,
                                      BleuSmoothing, int);

}  // namespace attnlab::nn
