// The group-wise functions over segments (segment_softmax and friends): one
// definition of each, its forward and its gradient per segment, shared by
// the CPU core (cpu/groupwise_cpu.h, the glue tf/groupwise_kernels.h) and
// the CUDA core (cuda/groupwise_gpu.cuh). TensorFlow-free.
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
// logsumexp is -inf. exp and log are this file's own (Exp, Log: not the C
// library's, whose bits differ between libms and from CUDA's), and every step
// is one IEEE operation (fp_ops.h), so a device computes the same bits as
// the CPU. Gradients (g: the incoming gradient, y / z: the output):
//
//   softmax      dx = y * (g - sum(g * y))
//   log_softmax  dx = g - exp(y) * sum(g)
//   logsumexp    dx = g_seg * exp(x - z)
//   var          dx = g_seg * 2 (x - mean) / (n - ddof)
//   std          dx = g_seg * (x - mean) / ((n - ddof) z)
#ifndef TF_SCATTER_OPS_CC_KERNELS_COMMON_GROUPWISE_H_
#define TF_SCATTER_OPS_CC_KERNELS_COMMON_GROUPWISE_H_

#include <cstdint>
#include <limits>

#include "common/fp_ops.h"
#include "common/reducers.h"

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
TFSO_HD C Shift(C m) {
  return fp::IsFinite(m) ? m : C(0);
}

// The maximum of a segment's column, NaN if any element is NaN (so that a
// NaN reaches every output of its segment, as in the formulas above).
template <typename C>
TFSO_HD void Max(C& m, C x) {
  m = (x > m || x != x) ? x : m;
}

// exp for the group-wise functions: for float a branch-free polynomial (a
// Cody-Waite reduction to r in [-ln2/2, ln2/2], Cephes' degree-6 polynomial,
// then the exponent; within 1 ulp of std::exp over every float) that the
// compiler vectorises across a row. NaN, +-inf, underflow and overflow as
// std::exp (results below FLT_MIN are flushed to 0). The range tests compare
// the bits as integers and select with masks: the compiler turns neither
// float comparisons (they may trap) nor nested selects into vector code.
// Every step is one rounding (fp_ops.h), so a device gives the same bits.
TFSO_HD uint32_t SelectBits(bool c, uint32_t a, uint32_t b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return (m & a) | (~m & b);
}

TFSO_HD float Exp(float x) {
  using fp::Add;
  using fp::Mul;
  using fp::Sub;
  constexpr uint32_t kLow = 0xC2AEAC50u;   // about -87.3365f: below, exp is 0
  constexpr int32_t kHigh = 0x42B17218;    // about 88.7228f: above, exp is +inf
  constexpr float kMagic = 12582912.0f;    // 1.5 * 2^23: adding it rounds to an integer
  const uint32_t bits = __builtin_bit_cast(uint32_t, x);
  const bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
  const bool low = bits > kLow;  // x below kLow (or a NaN with the sign bit)
  const bool high = static_cast<int32_t>(bits) > kHigh;  // x above kHigh (or a NaN)
  const float c = __builtin_bit_cast(
      float, SelectBits(low, kLow, SelectBits(high, static_cast<uint32_t>(kHigh), bits)));
  const float t = Add(Mul(c, 1.44269504088896341f), kMagic);
  const float n = Sub(t, kMagic);
  const float r = Sub(Sub(c, Mul(n, 0.693359375f)), Mul(n, -2.12194440e-4f));
  float p = 1.9875691500e-4f;
  p = Add(Mul(p, r), 1.3981999507e-3f);
  p = Add(Mul(p, r), 8.3334519073e-3f);
  p = Add(Mul(p, r), 4.1665795894e-2f);
  p = Add(Mul(p, r), 1.6666665459e-1f);
  p = Add(Mul(p, r), 5.0000001201e-1f);
  const float e = Add(Add(Mul(Mul(p, r), r), r), 1.0f);
  // 2^k in two factors, each a normal float (k is in [-126, 128])
  const int32_t k = static_cast<int32_t>(__builtin_bit_cast(uint32_t, t) -
                                         __builtin_bit_cast(uint32_t, kMagic));
  const int32_t half = k >> 1;
  const float y =
      Mul(Mul(e, __builtin_bit_cast(float, static_cast<uint32_t>(half + 127) << 23)),
          __builtin_bit_cast(float, static_cast<uint32_t>(k - half + 127) << 23));
  uint32_t out = SelectBits(low, 0u, __builtin_bit_cast(uint32_t, y));
  out = SelectBits(high, 0x7f800000u, out);
  return __builtin_bit_cast(float, SelectBits(nan, bits, out));
}

// exp for double: the same reduction (n = round(x / ln2), r = x - n ln2 in
// two parts, exact for the n that occur) and exp(r)'s Taylor polynomial to
// r^13 (its truncation below 2^-60 for |r| <= ln2 / 2), in double. Within
// 1 ulp; +-inf, NaN, overflow and gradual underflow as std::exp.
TFSO_HD double Exp(double x) {
  using fp::Add;
  using fp::Mul;
  using fp::Sub;
  if (fp::IsNan(x)) return x;
  if (x > 709.782712893384) return fp::Infinity<double>();  // past log(DBL_MAX)
  if (x < -745.1332191019412) return 0.0;  // below log of half the least subnormal
  constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52
  constexpr double kLn2Hi = 0x1.62e42fefa38p-1;  // ln 2 to 42 bits: n * kLn2Hi is exact
  constexpr double kLn2Lo = 0x1.ef35793c7673p-45;  // ln 2 - kLn2Hi
  const double n = Sub(Add(Mul(x, 1.4426950408889634), kMagic), kMagic);
  const double a = Sub(x, Mul(n, kLn2Hi));  // exact
  const double c = Mul(n, kLn2Lo);
  const double r = Sub(a, c);
  double p = 1.6059043836821613e-10;  // 1/13!
  p = Add(Mul(p, r), 2.08767569878681e-09);
  p = Add(Mul(p, r), 2.505210838544172e-08);
  p = Add(Mul(p, r), 2.755731922398589e-07);
  p = Add(Mul(p, r), 2.7557319223985893e-06);
  p = Add(Mul(p, r), 2.48015873015873e-05);
  p = Add(Mul(p, r), 0.0001984126984126984);
  p = Add(Mul(p, r), 0.001388888888888889);
  p = Add(Mul(p, r), 0.008333333333333333);
  p = Add(Mul(p, r), 0.041666666666666664);
  p = Add(Mul(p, r), 0.16666666666666666);
  p = Add(Mul(p, r), 0.5);
  const double e = Add(1.0, Add(a, Sub(Mul(Mul(r, r), p), c)));  // 1 + (a - c + r^2 p)
  // 2^k in two factors, each a normal double (k is in [-1075, 1024])
  const int64_t k = static_cast<int64_t>(n);
  const int64_t half = k / 2;
  const double lo = fp::FromBits<double>(static_cast<uint64_t>(half + 1023) << 52);
  const double hi = fp::FromBits<double>(static_cast<uint64_t>(k - half + 1023) << 52);
  return Mul(Mul(e, lo), hi);
}

// The natural logarithm in double: x = 2^k m with m in (sqrt(2)/2, sqrt(2)],
// f = m - 1 (exact), s = f / (2 + f), and log(1 + f) = 2 atanh(s) written as
// f - s (f - R), R = 2 s^2 (1/3 + s^2/5 + ... + s^18/21) (the series' rest
// below 2^-60 of the result). Within about 1 ulp; log(0) = -inf, log(+inf) =
// +inf, NaN for NaN and for x < 0. For float: the double's, rounded (so
// almost always the correctly rounded float).
TFSO_HD double Log(double x) {
  using fp::Add;
  using fp::Mul;
  using fp::Sub;
  if (fp::IsNan(x)) return x;
  if (x < 0.0) return fp::QuietNan<double>();
  if (x == 0.0) return -fp::Infinity<double>();
  if (fp::IsInf(x)) return x;
  int64_t k = 0;
  if (x < 0x1p-1022) {  // subnormal: scale into the normal range
    x = Mul(x, 0x1p54);
    k = -54;
  }
  const uint64_t bits = fp::ToBits(x);
  k += static_cast<int64_t>((bits >> 52) & 0x7ff) - 1023;
  double m = fp::FromBits<double>((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  if (m > 1.4142135623730951) {  // m / 2, exactly
    m = fp::FromBits<double>((bits & 0x000fffffffffffffull) | 0x3fe0000000000000ull);
    ++k;
  }
  constexpr double kLn2Hi = 0x1.62e42fefa38p-1;  // ln 2 to 42 bits: k * kLn2Hi is exact
  constexpr double kLn2Lo = 0x1.ef35793c7673p-45;
  const double f = Sub(m, 1.0);
  const double s = fp::Div(f, Add(2.0, f));
  const double z = Mul(s, s);
  double q = 0.09523809523809523;  // 2/21
  q = Add(Mul(q, z), 0.10526315789473684);
  q = Add(Mul(q, z), 0.11764705882352941);
  q = Add(Mul(q, z), 0.13333333333333333);
  q = Add(Mul(q, z), 0.15384615384615385);
  q = Add(Mul(q, z), 0.18181818181818182);
  q = Add(Mul(q, z), 0.2222222222222222);
  q = Add(Mul(q, z), 0.2857142857142857);
  q = Add(Mul(q, z), 0.4);
  q = Add(Mul(q, z), 0.6666666666666666);
  const double R = Mul(z, q);
  const double dk = static_cast<double>(k);
  return Add(Mul(dk, kLn2Hi), Sub(f, Sub(Mul(s, Sub(f, R)), Mul(dk, kLn2Lo))));
}
TFSO_HD float Log(float x) { return static_cast<float>(Log(static_cast<double>(x))); }

// The divisor of a variance: n - ddof, NaN where not positive.
template <typename C>
TFSO_HD C VarDivisor(int64_t n, int64_t ddof) {
  return n - ddof > 0 ? static_cast<C>(n - ddof) : fp::QuietNan<C>();
}

// The element-wise steps of the functions, each written once for the CPU
// and the device (fp_ops.h: no step is fused with the next). Sums of a
// segment's column start from +0 and add its rows in index order; its
// maximum starts from -inf and takes MaxOp (common/reducers.h) in index
// order.
template <typename C>
TFSO_HD C Centered(C x, C shift) {  // x - m
  return fp::Sub(x, shift);
}
template <typename C>
TFSO_HD C ExpCentered(C x, C shift) {  // exp(x - m)
  return Exp(fp::Sub(x, shift));
}
template <typename C>
TFSO_HD C LogSumExp(C shift, C total) {  // m + log(sum)
  return fp::Add(shift, Log(total));
}
template <typename C>
TFSO_HD C LogSoftmax(C x, C shift, C log_total) {  // (x - m) - log(sum)
  return fp::Sub(fp::Sub(x, shift), log_total);
}
template <typename C>
TFSO_HD C Reciprocal(C total) {
  return fp::Div(C(1), total);
}
template <typename C>
TFSO_HD C Softmax(C e, C reciprocal) {  // exp(x - m) * (1 / sum)
  return fp::Mul(e, reciprocal);
}
template <typename C>
TFSO_HD C Mean(C sum, int64_t count) {  // NaN for an empty segment (0 / 0)
  return fp::Div(sum, static_cast<C>(count));
}
template <typename C>
TFSO_HD C Square(C x, C mean) {  // (x - mean)^2
  const C d = fp::Sub(x, mean);
  return fp::Mul(d, d);
}
template <Groupwise kF, typename C>
TFSO_HD C Moment(C total, C divisor) {  // var, or std = sqrt(var)
  const C v = fp::Div(total, divisor);
  return kF == Groupwise::kStd ? fp::Sqrt(v) : v;
}

// Gradients.
template <typename C>
TFSO_HD C SoftmaxGradTerm(C g, C y) {  // g * y, summed per segment
  return fp::Mul(g, y);
}
template <typename C>
TFSO_HD C SoftmaxGrad(C g, C y, C total) {  // y * (g - sum(g * y))
  return fp::Mul(y, fp::Sub(g, total));
}
template <typename C>
TFSO_HD C LogSoftmaxGrad(C g, C y, C total) {  // g - exp(y) * sum(g)
  return fp::Sub(g, fp::Mul(Exp(y), total));
}
template <typename C>
TFSO_HD C LogSumExpGrad(C x, C z, C g_segment) {  // g_seg * exp(x - z)
  return fp::Mul(g_segment, Exp(fp::Sub(x, z)));
}
// The factor of (x - mean) in a moment's gradient: 2 g / (n - ddof) for
// var, g / ((n - ddof) z) for std.
template <Groupwise kF, typename C>
TFSO_HD C MomentGradScale(C g_segment, C divisor, C z) {
  return kF == Groupwise::kVar ? fp::Div(fp::Mul(C(2), g_segment), divisor)
                               : fp::Div(g_segment, fp::Mul(divisor, z));
}
template <typename C>
TFSO_HD C MomentGrad(C scale, C x, C mean) {  // scale * (x - mean)
  return fp::Mul(scale, fp::Sub(x, mean));
}

}  // namespace groupwise
}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_COMMON_GROUPWISE_H_
