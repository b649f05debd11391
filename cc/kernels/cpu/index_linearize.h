// Index rows -> flat slot numbers, with bounds checks. TensorFlow-free.
//
// Canonical form: indices [n, depth] address the first `depth` dimensions of
// a tensor whose outer dims are `dims[0..depth)`; a row's slot is its
// row-major position in those outer dims (64-bit). A row with any coordinate
// outside [0, dims[d]) is bad: its slot is -1 (dropped by IGNORE) and the
// first bad row is reported.
//
// The CPU core linearises rows as it first reads them, a batch at a time,
// into a buffer that stays in L1 (IndexRows::Fill, ForEachBatch): gathers
// copy straight from it, the grouping passes keep a 4-byte slot per row for
// their second pass, and only the serial and long-slice paths store every
// row's 64-bit slot (Linearize).
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_INDEX_LINEARIZE_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_INDEX_LINEARIZE_H_

#include <atomic>
#include <cstdint>

#include "cpu/cpu_features.h"
#include "cpu/thresholds.h"
#include "cpu/parallel.h"

namespace tf_scatter_ops {

// Linearises rows [begin, end) into out[0, end - begin). Returns the first
// bad row in the range, or -1. kDepth > 0 fixes the depth at compile time
// (unrolled); 0 reads `depth`. The loop has no branch (the first bad row is
// looked for only in a range that has one), so with kDepth > 0 the compiler
// vectorises it where the target has 64-bit vector compares and multiplies
// (FillRows below).
template <typename Index, int kDepth>
inline __attribute__((always_inline)) int64_t LinearizeRange(
    const Index* indices, int runtime_depth, const int64_t* dims,
    const int64_t* strides, int64_t begin, int64_t end, int64_t* out) {
  const int depth = kDepth > 0 ? kDepth : runtime_depth;
  // Copies: read through the pointers, dims and strides would be reloaded
  // after every store to `out`, which may alias them.
  constexpr int kCopies = kDepth > 0 ? kDepth : 1;
  uint64_t dim[kCopies], stride[kCopies];
  for (int d = 0; d < kDepth; ++d) {
    dim[d] = static_cast<uint64_t>(dims[d]);
    stride[d] = static_cast<uint64_t>(strides[d]);
  }
  uint64_t any_bad = 0;
  for (int64_t i = begin; i < end; ++i) {
    const Index* row = indices + i * depth;
    uint64_t slot = 0;  // unsigned: a bad row may overflow, harmlessly
    uint64_t ok = 1;
    for (int d = 0; d < depth; ++d) {
      // Sign-extended, so one unsigned compare catches negatives and values
      // >= dims[d].
      const uint64_t v = static_cast<uint64_t>(static_cast<int64_t>(row[d]));
      ok &= v < (kDepth > 0 ? dim[d] : static_cast<uint64_t>(dims[d]));
      slot += v * (kDepth > 0 ? stride[d] : static_cast<uint64_t>(strides[d]));
    }
    out[i - begin] = ok ? static_cast<int64_t>(slot) : -1;
    any_bad |= ok ^ 1;
  }
  if (!any_bad) return -1;
  for (int64_t i = begin; i < end; ++i) {
    if (out[i - begin] < 0) return i;
  }
  return -1;
}

// The index rows of one call. `strides[d]` is the product of dims[d+1..depth).
struct IndexRows {
  const void* indices = nullptr;
  int64_t n = 0;
  int depth = 0;
  const int64_t* dims = nullptr;
  const int64_t* strides = nullptr;
  int64_t (*fill)(const IndexRows&, int64_t, int64_t, int64_t*) = nullptr;

  // Slots of rows [begin, end) into out[0, end - begin); the first bad row
  // in the range, or -1.
  int64_t Fill(int64_t begin, int64_t end, int64_t* out) const {
    return fill(*this, begin, end, out);
  }
};

namespace internal {
template <typename Index, int kDepth>
int64_t FillRows(const IndexRows& r, int64_t begin, int64_t end, int64_t* out) {
  return LinearizeRange<Index, kDepth>(static_cast<const Index*>(r.indices),
                                       r.depth, r.dims, r.strides, begin, end,
                                       out);
}

#if defined(TF_SCATTER_OPS_AVX2)
// The same loop built for AVX-512 and for AVX2, chosen at run time by the
// active ISA (cpu_features.h). AVX-512 has the 64-bit vector compares and
// multiplies the loop needs; AVX2 has 4-wide 64-bit adds and compares, and
// the compiler builds the multiply from 32-bit ones.
template <typename Index, int kDepth>
__attribute__((target(TF_SCATTER_OPS_AVX512))) int64_t FillRowsAvx512(
    const IndexRows& r, int64_t begin, int64_t end, int64_t* out) {
  return LinearizeRange<Index, kDepth>(static_cast<const Index*>(r.indices),
                                       r.depth, r.dims, r.strides, begin, end,
                                       out);
}

template <typename Index, int kDepth>
__attribute__((target(TF_SCATTER_OPS_AVX2))) int64_t FillRowsAvx2(
    const IndexRows& r, int64_t begin, int64_t end, int64_t* out) {
  return LinearizeRange<Index, kDepth>(static_cast<const Index*>(r.indices),
                                       r.depth, r.dims, r.strides, begin, end,
                                       out);
}
#endif

// The vectorised builds where they gain: every depth 1-3 for 2- and 4-byte
// indices, depth 1 for 8-byte ones (deeper 8-byte rows are as fast or faster
// with the portable loop; `make linearize-bench` prints ns per row per ISA).
template <typename Index, int kDepth>
auto PickFillRows() {
#if defined(TF_SCATTER_OPS_AVX2)
  constexpr bool kVectorises = kDepth > 0 && (sizeof(Index) < 8 || kDepth == 1);
  if (kVectorises && ActiveIsa() == Isa::kAvx512) return FillRowsAvx512<Index, kDepth>;
  if (kVectorises && ActiveIsa() == Isa::kAvx2) return FillRowsAvx2<Index, kDepth>;
#endif
  return FillRows<Index, kDepth>;
}
}  // namespace internal

// Rows of `indices` [n, depth] (Index is int16, int32 or int64) into `dims`.
// The pointers must outlive the IndexRows.
template <typename Index>
IndexRows MakeIndexRows(const Index* indices, int64_t n, int depth,
                        const int64_t* dims, const int64_t* strides) {
  IndexRows r;
  r.indices = indices;
  r.n = n;
  r.depth = depth;
  r.dims = dims;
  r.strides = strides;
  switch (depth) {
    case 1: r.fill = internal::PickFillRows<Index, 1>(); break;
    case 2: r.fill = internal::PickFillRows<Index, 2>(); break;
    case 3: r.fill = internal::PickFillRows<Index, 3>(); break;
    default: r.fill = internal::FillRows<Index, 0>;
  }
  return r;
}

// Calls body(begin, end, slots) for consecutive batches of rows [begin, end),
// until done() (checked before each batch), and returns the first bad row
// among them, or -1.
template <typename Body, typename Done>
int64_t ForEachBatch(const IndexRows& rows, int64_t begin, int64_t end, const Body& body,
                     const Done& done) {
  int64_t buf[kRowBatch];
  int64_t first_bad = -1;
  for (int64_t b = begin; b < end && !done(); b += kRowBatch) {
    const int64_t e = end - b < kRowBatch ? end : b + kRowBatch;
    const int64_t bad = rows.Fill(b, e, buf);
    if (first_bad < 0) first_bad = bad;
    body(b, e, buf);
  }
  return first_bad;
}

template <typename Body>
int64_t ForEachBatch(const IndexRows& rows, int64_t begin, int64_t end, const Body& body) {
  return ForEachBatch(rows, begin, end, body, [] { return false; });
}

// Lowers `*first` to `row` (row >= 0) atomically: the first bad row of a
// parallel pass, whatever the split.
inline void KeepFirstBad(std::atomic<int64_t>* first, int64_t row) {
  if (row < 0) return;
  int64_t seen = first->load(std::memory_order_relaxed);
  while (row < seen && !first->compare_exchange_weak(seen, row)) {
  }
}

// Linearises all rows into slots[0, n) in parallel (slots may be null: only
// the check). Returns the first bad row (lowest row number), or -1.
inline int64_t Linearize(const IndexRows& rows, int64_t* slots,
                         const Parallel& parallel) {
  std::atomic<int64_t> first_bad{INT64_MAX};
  parallel.For(rows.n, 2 + 4 * rows.depth, [&](int64_t begin, int64_t end) {
    KeepFirstBad(&first_bad,
                 slots != nullptr
                     ? rows.Fill(begin, end, slots + begin)
                     : ForEachBatch(rows, begin, end,
                                    [](int64_t, int64_t, const int64_t*) {}));
  });
  const int64_t bad = first_bad.load();
  return bad == INT64_MAX ? -1 : bad;
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_INDEX_LINEARIZE_H_
