// Index rows -> flat slot numbers, with bounds checks. TensorFlow-free.
//
// Canonical form: indices [n, depth] address the first `depth` dimensions of
// a tensor whose outer dims are `dims[0..depth)`; a row's slot is its
// row-major position in those outer dims (64-bit). A row with any coordinate
// outside [0, dims[d]) is bad: its slot becomes -1 (dropped by IGNORE) and
// the first bad row is reported.
#ifndef TF_SCATTER_OPS_CC_KERNELS_INDEX_LINEARIZE_H_
#define TF_SCATTER_OPS_CC_KERNELS_INDEX_LINEARIZE_H_

#include <atomic>
#include <cstdint>

#include "parallel.h"

namespace tf_scatter_ops {

// Linearises rows [begin, end). Returns the first bad row in the range, or -1.
// kDepth > 0 fixes the depth at compile time (unrolled); 0 reads `depth`.
template <typename Index, int kDepth>
int64_t LinearizeRange(const Index* indices, int runtime_depth,
                       const int64_t* dims, const int64_t* strides,
                       int64_t begin, int64_t end, int64_t* slots) {
  const int depth = kDepth > 0 ? kDepth : runtime_depth;
  int64_t first_bad = -1;
  for (int64_t i = begin; i < end; ++i) {
    const Index* row = indices + i * depth;
    uint64_t slot = 0;  // unsigned: a bad row may overflow, harmlessly
    bool ok = true;
    for (int d = 0; d < depth; ++d) {
      const int64_t v = static_cast<int64_t>(row[d]);
      // One unsigned compare catches negatives and values >= dims[d].
      ok &= static_cast<uint64_t>(v) < static_cast<uint64_t>(dims[d]);
      slot += static_cast<uint64_t>(v) * static_cast<uint64_t>(strides[d]);
    }
    if (ok) {
      slots[i] = static_cast<int64_t>(slot);
    } else {
      slots[i] = -1;
      if (first_bad < 0) first_bad = i;
    }
  }
  return first_bad;
}

// Linearises all n rows in parallel. `strides[d]` is the product of
// dims[d+1..depth). Returns the first bad row (lowest row number), or -1.
template <typename Index>
int64_t Linearize(const Index* indices, int64_t n, int depth,
                  const int64_t* dims, const int64_t* strides, int64_t* slots,
                  const Parallel& parallel) {
  std::atomic<int64_t> first_bad{INT64_MAX};
  parallel.For(n, 2 + 4 * depth, [&](int64_t begin, int64_t end) {
    int64_t bad;
    switch (depth) {
      case 1:
        bad = LinearizeRange<Index, 1>(indices, 1, dims, strides, begin, end, slots);
        break;
      case 2:
        bad = LinearizeRange<Index, 2>(indices, 2, dims, strides, begin, end, slots);
        break;
      case 3:
        bad = LinearizeRange<Index, 3>(indices, 3, dims, strides, begin, end, slots);
        break;
      default:
        bad = LinearizeRange<Index, 0>(indices, depth, dims, strides, begin, end, slots);
    }
    if (bad < 0) return;
    int64_t seen = first_bad.load(std::memory_order_relaxed);
    while (bad < seen && !first_bad.compare_exchange_weak(seen, bad)) {
    }
  });
  const int64_t bad = first_bad.load();
  return bad == INT64_MAX ? -1 : bad;
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_INDEX_LINEARIZE_H_
