// Finite-difference gradient checks, in double precision.
//
// For inputs x and a seeded random upstream gradient g, one scalar F(x) = <f(x), g> tests the
// whole vector-Jacobian product at once: dF/dx_i = (J^T g)_i, which is exactly what backward()
// computes. Each analytic entry is compared with the central difference
//     (F(x + h e_i) - F(x - h e_i)) / 2h,
// and the error is measured relative to max(|analytic|, |numeric|, 1): relative for large
// gradients, absolute below 1 (the absolute floor).
//
// It also checks the contract every backward must keep (after dlib's test_layer): gradients are
// *added* into whatever the inputs already hold. Each input's gradient is pre-filled with random
// values before backward; the analytic gradient is what backward added on top.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace attnlab {

struct GradcheckOptions {
  double step = 1e-6;        // h
  double tolerance = 1e-6;   // on the floored relative error
  std::uint64_t seed = 20261122;
};

struct GradcheckResult {
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;
  std::size_t checked = 0;    // entries compared
  bool finite = true;         // forward and gradients free of NaN and inf
  bool ok = false;
  std::string detail;         // what failed, where
};

// f maps the inputs to any tensor; the inputs are perturbed in place, so f may also ignore its
// argument and read the same tensors through a module that owns them (module parameters).
using GradFn = std::function<Tensor<double>(const std::vector<Tensor<double>>&)>;
GradcheckResult gradcheck(const GradFn& f, std::vector<Tensor<double>> inputs,
                          const GradcheckOptions& options = {});

// ---- the registry behind build/bin/gradcheck (and the test that every op has a row)

struct GradcheckCase {
  std::string name;     // starts with the op's or module's name: "matmul batched broadcast"
  std::string shapes;   // "(2,3,4) x (4,5)"
  std::function<GradcheckResult()> run;
};

std::vector<GradcheckCase>& gradcheck_registry();

struct RegisterGradcheck {
  RegisterGradcheck(std::string name, std::string shapes, std::function<GradcheckResult()> run);
};

#define ATTNLAB_GC_CAT2(a, b) a##b
#define ATTNLAB_GC_CAT(a, b) ATTNLAB_GC_CAT2(a, b)
// GRADCHECK_CASE("softmax axis 0", "(3,4)", [] { ... return gradcheck(...); });
#define GRADCHECK_CASE(name, shapes, ...)                                                 \
  static ::attnlab::RegisterGradcheck ATTNLAB_GC_CAT(attnlab_gradcheck_case_, __COUNTER__)( \
      name, shapes, __VA_ARGS__)

}  // namespace attnlab
