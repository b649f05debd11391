// The group-wise functions over segments (segment_softmax and friends): one
// definition of each, its forward and its gradient per segment, shared by
// the CPU core (cpu/groupwise_cpu.h) and any device core. TensorFlow-free.
//
// A segment is the rows of `data` whose id is that segment, in index order;
// each function is computed per column of a row's slice. C is the compute
// type (float for 16-bit floats, else the value type). Every loop over a
// segment's rows goes in index order, so the sums, and the results, do not
// depend on how the segments are split among threads.
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

// The divisor of a variance: n - ddof, NaN where not positive.
template <typename C>
inline C VarDivisor(int64_t n, int64_t ddof) {
  return n - ddof > 0 ? static_cast<C>(n - ddof) : std::numeric_limits<C>::quiet_NaN();
}

}  // namespace groupwise
}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_COMMON_GROUPWISE_H_
