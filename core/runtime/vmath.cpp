// The array forms of core/runtime/vmath.hpp. No trapping math here: the only effect is on floating-point
// exception flags, which nothing reads; values are bit for bit the same. It lets GCC if-convert
// the selects of the float kernels, so every loop below runs 4 (SSE) or 8 (AVX) lanes at a time.
#if defined(__GNUC__) && !defined(__clang__)  // clang (the fuzz build) has no such pragma: it would warn
#pragma GCC optimize("no-trapping-math")
#endif

#include "core/runtime/vmath.hpp"

namespace attnlab::vmath {

#define ATTNLAB_VMATH_ARRAY(name, f)                                        \
  void name(const float* x, float* y, std::size_t n) {                     \
    for (std::size_t k = 0; k < n; ++k) y[k] = f(x[k]);                    \
  }                                                                         \
  void name(const double* x, double* y, std::size_t n) {                   \
    for (std::size_t k = 0; k < n; ++k) y[k] = f(x[k]);                    \
  }
ATTNLAB_VMATH_ARRAY(exp_n, vmath::exp)
ATTNLAB_VMATH_ARRAY(exp_nonpositive_n, vmath::exp_nonpositive)
ATTNLAB_VMATH_ARRAY(tanh_n, vmath::tanh)
ATTNLAB_VMATH_ARRAY(sigmoid_n, vmath::sigmoid)
ATTNLAB_VMATH_ARRAY(normal_cdf_n, vmath::normal_cdf)
#undef ATTNLAB_VMATH_ARRAY

// y = x Phi(x) and slope = Phi(x) + x phi(x) for one entry; every loop below computes them so.
template <class T>
inline void gelu_entry(T x, T& y, T& slope) {
  T gauss;
  const T phi_cdf = vmath::normal_cdf(x, gauss);
  y = x * phi_cdf;
  slope = phi_cdf + x * T(0.39894228040143267794) * gauss;
}

// Two loops, so that the forward without the tape does not pay for the slope.
template <class T>
void gelu_array(const T* x, T* y, T* slope, std::size_t n) {
  if (!slope) {
    for (std::size_t k = 0; k < n; ++k) y[k] = x[k] * vmath::normal_cdf(x[k]);
    return;
  }
  for (std::size_t k = 0; k < n; ++k) gelu_entry(x[k], y[k], slope[k]);
}
void gelu_n(const float* x, float* y, float* slope, std::size_t n) { gelu_array(x, y, slope, n); }
void gelu_n(const double* x, double* y, double* slope, std::size_t n) { gelu_array(x, y, slope, n); }

// The slope written over x: one array, read and written at the same index, so the compiler needs
// no overlap check between the input and the slope (only against y) to run whole vectors.
template <class T>
void gelu_slope_over_input_array(T* x, T* y, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) gelu_entry(x[k], y[k], x[k]);
}
void gelu_n_slope_over_input(float* x, float* y, std::size_t n) { gelu_slope_over_input_array(x, y, n); }
void gelu_n_slope_over_input(double* x, double* y, std::size_t n) { gelu_slope_over_input_array(x, y, n); }

}  // namespace attnlab::vmath
