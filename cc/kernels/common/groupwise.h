// The group-wise functions over segments (segment_softmax and friends): one
// definition of each, its forward and its gradient per segment, shared by
// the CPU core (cpu/groupwise_cpu.h) and any device core. TensorFlow-free.
//
// A segment is the rows of `data` whose id is that segment, in index order;
// each function is computed per element of a row's slice, in a compute type
// C (float for 16-bit floats, else the value type). Its sums are in index
// order, so the results do not depend on the thread count.
//
//   softmax      y = exp(x - m) / sum(exp(x - m))
//   log_softmax  y = (x - m) - log(sum(exp(x - m)))
//   logsumexp    z = m + log(sum(exp(x - m)))          one value per segment
//   var          z = sum((x - mean)^2) / (n - ddof)     one value per segment
//   std          z = sqrt(var)                          one value per segment
//
// m is the segment's maximum, or 0 where that is not finite (SciPy's
// logsumexp rule: a segment of -inf gives logsumexp -inf and a softmax of
// 0 / 0 = NaN; a +inf gives logsumexp +inf). The variance is two-pass (the
// mean first), NaN where n - ddof <= 0 (NumPy's value). An empty segment's
// logsumexp is -inf. Gradients (g: the incoming gradient, y / z: the output):
//
//   softmax      dx = y * (g - sum(g * y))
//   log_softmax  dx = g - exp(y) * sum(g)
//   logsumexp    dx = g_seg * exp(x - z)
//   var          dx = g_seg * 2 (x - mean) / (n - ddof)
//   std          dx = g_seg * (x - mean) / ((n - ddof) z)
#ifndef TF_SCATTER_OPS_CC_KERNELS_COMMON_GROUPWISE_H_
#define TF_SCATTER_OPS_CC_KERNELS_COMMON_GROUPWISE_H_

#include <cmath>
#include <cstdint>
#include <limits>

namespace tf_scatter_ops {

enum class Groupwise { kSoftmax, kLogSoftmax, kLogSumExp, kVar, kStd };

// The op table's reducer column of a group-wise row: which function, and
// whether its output has a row per segment (else one per data row).
template <Groupwise kF>
struct GroupwiseFn {
  static constexpr Groupwise kFunction = kF;
  static constexpr bool kPerSegment =
      kF == Groupwise::kLogSumExp || kF == Groupwise::kVar || kF == Groupwise::kStd;
  static constexpr bool kMoments = kF == Groupwise::kVar || kF == Groupwise::kStd;
};
using SoftmaxFn = GroupwiseFn<Groupwise::kSoftmax>;
using LogSoftmaxFn = GroupwiseFn<Groupwise::kLogSoftmax>;
using LogSumExpFn = GroupwiseFn<Groupwise::kLogSumExp>;
using VarFn = GroupwiseFn<Groupwise::kVar>;
using StdFn = GroupwiseFn<Groupwise::kStd>;

namespace groupwise {

// The shift of the exponentials: the maximum where finite, else 0.
template <typename C>
inline C Shift(C m) {
  using std::isfinite;
  return isfinite(m) ? m : C(0);
}

// The maximum of a segment's column, NaN if any element is NaN (so that a
// NaN reaches every output of its segment, as in the formulas above).
template <typename C>
inline void Max(C& m, C x) {
  m = (x > m || x != x) ? x : m;
}

// exp for the group-wise functions: for float a branch-free polynomial (a
// Cody-Waite reduction to r in [-ln2/2, ln2/2], Cephes' degree-6 polynomial,
// then the exponent; within 1 ulp of std::exp over every float) that the
// compiler vectorises across a row; std::exp for double. NaN, +-inf,
// underflow and overflow as std::exp (results below FLT_MIN are flushed to
// 0). The range tests compare the bits as integers and select with masks:
// the compiler turns neither float comparisons (they may trap) nor nested
// selects into vector code.
inline uint32_t SelectBits(bool c, uint32_t a, uint32_t b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return (m & a) | (~m & b);
}

inline float Exp(float x) {
  constexpr uint32_t kLow = 0xC2AEAC50u;   // about -87.3365f: below, exp is 0
  constexpr int32_t kHigh = 0x42B17218;    // about 88.7228f: above, exp is +inf
  constexpr float kMagic = 12582912.0f;    // 1.5 * 2^23: adding it rounds to an integer
  const uint32_t bits = __builtin_bit_cast(uint32_t, x);
  const bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
  const bool low = bits > kLow;  // x below kLow (or a NaN with the sign bit)
  const bool high = static_cast<int32_t>(bits) > kHigh;  // x above kHigh (or a NaN)
  const float c = __builtin_bit_cast(
      float, SelectBits(low, kLow, SelectBits(high, static_cast<uint32_t>(kHigh), bits)));
  const float t = c * 1.44269504088896341f + kMagic;
  const float n = t - kMagic;
  const float r = (c - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * r * r + r + 1.0f;
  // 2^k in two factors, each a normal float (k is in [-126, 128])
  const int32_t k = static_cast<int32_t>(__builtin_bit_cast(uint32_t, t) -
                                         __builtin_bit_cast(uint32_t, kMagic));
  const int32_t half = k >> 1;
  const float y = e * __builtin_bit_cast(float, static_cast<uint32_t>(half + 127) << 23) *
                  __builtin_bit_cast(float, static_cast<uint32_t>(k - half + 127) << 23);
  uint32_t out = SelectBits(low, 0u, __builtin_bit_cast(uint32_t, y));
  out = SelectBits(high, 0x7f800000u, out);
  return __builtin_bit_cast(float, SelectBits(nan, bits, out));
}
inline double Exp(double x) { return std::exp(x); }

// The divisor of a variance: n - ddof, NaN where not positive.
template <typename C>
inline C VarDivisor(int64_t n, int64_t ddof) {
  return n - ddof > 0 ? static_cast<C>(n - ddof) : std::numeric_limits<C>::quiet_NaN();
}

}  // namespace groupwise
}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_COMMON_GROUPWISE_H_
