// The order in which the sorted segment reductions reduce a segment's rows,
// shared by the CPU core (cpu/segment_cpu.h) and the CUDA core
// (cuda/segment_gpu.cuh), so both give the same bits. TensorFlow-free.
//
//   Order::kIndex    out = row0, then Op::Apply(out, row_i) for i = 1, 2, ...
//                    in T (segment_*; the order of TensorFlow's unsorted
//                    kernels);
//   Order::kGroups8  sums in TensorFlow's sparse_segment_* order: the first
//                    Groups8Head(n) rows in index order, then each next 8
//                    summed in index order and added, in an accumulator
//                    type (float for 16-bit floats, as TensorFlow's); a mean
//                    or sqrt_n of at most kGroups8ReciprocalRows rows scales
//                    by the reciprocal of its divisor, as TensorFlow's.
#ifndef TF_SCATTER_OPS_CC_KERNELS_COMMON_SEGMENT_ORDER_H_
#define TF_SCATTER_OPS_CC_KERNELS_COMMON_SEGMENT_ORDER_H_

#include <cstdint>

#include "common/reducers.h"

namespace tf_scatter_ops {

enum class Order { kIndex, kGroups8 };

// The rows summed before the first group of 8 in a segment of n rows:
// n mod 8, 8 for 0, 9 for 1 (never more than n). Measured on TensorFlow's
// CPU kernels for n = 1..19.
TFSO_HD int64_t Groups8Head(int64_t n) {
  const int64_t head = (n & 7) == 0 ? 8 : (n & 7) == 1 ? 9 : (n & 7);
  return head < n ? head : n;
}

// A segment of at most this many rows (no group after the head) is scaled
// by the reciprocal (Finalize's by_reciprocal).
constexpr int64_t kGroups8ReciprocalRows = 9;

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_COMMON_SEGMENT_ORDER_H_
