#include "lessons/kit/in_batches.hpp"

#include <string>

#include "core/tensor.hpp"

namespace attnlab::lessons {

Array<float> rows_in_batches(std::size_t n, std::size_t batch,
                             const std::function<Array<float>(const std::vector<std::size_t>& rows)>& block) {
  if (n == 0) throw std::invalid_argument("rows_in_batches: no rows to compute");
  NoGrad no_grad;
  Array<float> out;
  std::size_t row_size = 0;
  in_batches(n, batch, [&](const std::vector<std::size_t>& rows) {
    const Array<float> b = block(rows);
    if (b.dimension() == 0 || b.shape()[0] != rows.size())
      throw std::invalid_argument("rows_in_batches: a block for " + std::to_string(rows.size()) + " rows has shape " +
                                  shape_str(b.shape()));
    if (rows.front() == 0) {
      Shape s(b.shape().begin(), b.shape().end());
      s[0] = n;
      out = Array<float>::from_shape(s);
      row_size = b.size() / rows.size();
    } else if (b.size() != rows.size() * row_size) {
      throw std::invalid_argument("rows_in_batches: the block of rows from " + std::to_string(rows.front()) +
                                  " has shape " + shape_str(b.shape()) + ", unlike the first block's rows");
    }
    std::copy(b.begin(), b.end(), out.data() + rows.front() * row_size);
  });
  return out;
}

}  // namespace attnlab::lessons
