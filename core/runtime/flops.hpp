// Counting floating-point work: every matrix product attnlab runs adds its 2 m n k operations
// (a multiply and an add per term) to a process-wide count, so a profiler or a benchmark can say
// how many GFLOP a training step did and what rate that is against the machine's sgemm (model
// FLOP utilization). Only products are counted: they are nearly all of a model's arithmetic, and
// the "model FLOPs" that utilization figures are quoted in. A softmax or a layer norm adds time
// but no counted work, which is the point: the rate says how much of the step is spent outside
// the products.
//
// Counted where a product is run, once per product: gemm() (core/runtime/blas.hpp) and a
// generated kernel's call (GemmPlan). A product split into parts on the pool is counted once.
// Each thread adds to its own slot (no shared cache line between the pool's threads), so
// counting costs a few nanoseconds a product, and it is always on.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnlab {

// Adds the 2 m n k operations of an (m x k) by (k x n) product.
void count_product(std::size_t m, std::size_t n, std::size_t k);

// Operations counted so far, by all threads together. Monotonic: a step's work is the
// difference of two readings taken around it (with no other thread running products meanwhile).
std::uint64_t flops_counted();

}  // namespace attnlab
