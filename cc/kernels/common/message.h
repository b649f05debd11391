// Message passing's arithmetic, shared by the CPU core (cpu/message_cpu.h)
// and the CUDA core (cuda/message_gpu.h): one definition of what an edge
// contributes, so both give the same bits. TensorFlow-free, device-free.
//
//   gather_reduce: out[v] = reduce over the edges e with dst[e] = v, in edge
//     order, of params[src[e]] * weights[e]: a weighted element is rounded
//     to T before it is reduced (as the composed multiply rounds it); sums
//     start from 0; max and min keep the arg reductions' rule
//     (common/arg_reducers.h: the first edge takes an empty element, ties
//     keep the earlier edge) and the edge that holds each element.
//   edge_combine: out[e] = a[src[e]] op b[dst[e]]; `dot` sums the products
//     of the last axis in order, in the accumulator A (float for 16-bit
//     floats), each product and sum rounded once (no fused multiply-add).
#ifndef TF_SCATTER_OPS_CC_KERNELS_COMMON_MESSAGE_H_
#define TF_SCATTER_OPS_CC_KERNELS_COMMON_MESSAGE_H_

#include <cstdint>
#include <type_traits>

#include "common/arg_reducers.h"
#include "common/fp_ops.h"
#include "common/reducers.h"

namespace tf_scatter_ops {

enum class EdgeReduce { kSum, kMean, kMax, kMin };
enum class EdgeOp { kAdd, kSub, kMul, kDot };

// Max and min: they output the edge that holds each element too.
template <EdgeReduce kReduce>
constexpr bool kArgReduce = kReduce == EdgeReduce::kMax || kReduce == EdgeReduce::kMin;
inline bool IsArgReduce(EdgeReduce r) { return r == EdgeReduce::kMax || r == EdgeReduce::kMin; }

// x * w rounded to T (one IEEE multiply for float and double, never fused
// into a following add; the 16-bit types multiply in float and round).
template <typename T>
TFSO_HD T ScaleByWeight(T x, T w) {
  if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
    return fp::Mul(x, w);
  } else {
    T r = x;
    r *= w;
    return r;
  }
}

// Offers edge e's element x to the output element `out` (and, for max and
// min, `pos`: the edge that holds it, -1 while none does).
template <EdgeReduce kReduce, typename T>
TFSO_HD void OfferEdge(T& out, int64_t& pos, const T& x, int64_t e) {
  if constexpr (kArgReduce<kReduce>) {
    using Arg = typename std::conditional<kReduce == EdgeReduce::kMax, ArgMaxOp, ArgMinOp>::type;
    if (pos < 0 || Arg::Takes(x, out)) {
      out = x;
      pos = e;
    }
  } else {
    AddOp::Apply(out, x);
  }
}

// One step of a dot product in the accumulator A: acc + a * b, each
// rounded.
template <typename A>
TFSO_HD A DotStep(A acc, A a, A b) {
  return fp::Add(acc, fp::Mul(a, b));
}

// a op b for add, sub and mul, rounded to T.
template <EdgeOp kOp, typename T>
TFSO_HD T CombineElements(const T& a, const T& b) {
  T r = a;
  if constexpr (kOp == EdgeOp::kAdd) r += b;
  if constexpr (kOp == EdgeOp::kSub) r -= b;
  if constexpr (kOp == EdgeOp::kMul) r *= b;
  return r;
}

// The first edge whose src is outside [0, src_rows) or whose dst is outside
// [0, dst_rows) (a negative dst only when !negative_dst_ok), or -1.
template <typename Index>
int64_t FirstBadEdge(const Index* src, const Index* dst, int64_t nedges, int64_t src_rows,
                     int64_t dst_rows, bool negative_dst_ok) {
  for (int64_t e = 0; e < nedges; ++e) {
    const int64_t s = static_cast<int64_t>(src[e]), d = static_cast<int64_t>(dst[e]);
    if (s < 0 || s >= src_rows || d >= dst_rows || (d < 0 && !negative_dst_ok)) return e;
  }
  return -1;
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_COMMON_MESSAGE_H_
