// The CPU core of the arg reductions (common/arg_reducers.h), in canonical
// form (cpu_call.h): one pass over the update rows in index order that
// leaves in each output element the maximum (minimum) and, in `arg`, the
// row that holds it (-1: none). TensorFlow-free.
//
// The caller initialises `out` (the tensor's values, or the reduction's
// identity for a segment) and `arg` (-1). Returns the first bad row, -1, or
// kNoScratch; with bad rows and !ignore nothing is written.
//
// Deterministic by construction, as the scatter core: every output element
// has one owner that offers it its updates in row order. Long slices (or
// one slot) are split by columns; otherwise each thread owns a range of
// slots and reads every row's slot, applying its own rows (the slots are
// 8 bytes a row, so a thread's extra reading is small beside the rows').
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_ARG_SCATTER_CPU_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_ARG_SCATTER_CPU_H_

#include <algorithm>
#include <cstdint>

#include "common/arg_reducers.h"
#include "common/scratch.h"
#include "cpu/cpu_call.h"
#include "cpu/index_linearize.h"
#include "cpu/parallel.h"
#include "cpu/thresholds.h"

namespace tf_scatter_ops {
namespace internal {

// Row `row`'s columns [c0, c1) offered to its slot's elements.
template <typename T, typename Op>
inline void OfferRow(int64_t row, const T* upd, T* out, int64_t* arg, int64_t c0,
                     int64_t c1, bool seeded) {
  for (int64_t j = c0; j < c1; ++j) {
    if ((!seeded && arg[j] < 0) || Op::Takes(upd[j], out[j])) {
      out[j] = upd[j];
      arg[j] = row;
    }
  }
}

}  // namespace internal

// `seeded`: out starts from a tensor's values (which keep position -1 and
// win ties); else each element starts empty.
template <typename T, typename Op>
int64_t ArgScatterCpu(const CpuCall& s, bool ignore, bool seeded, const T* updates,
                      T* out, int64_t* arg, const Parallel& parallel, Scratch& scratch) {
  using internal::OfferRow;
  const int64_t S = s.form.slice;
  const int64_t n = s.form.n;
  const int64_t nslots = s.form.nslots;
  if (nslots * S == 0) return Linearize(s.rows, nullptr, parallel);
  int64_t* slots = n == 0 ? nullptr
                          : static_cast<int64_t*>(scratch.Allocate(n * sizeof(int64_t)));
  if (n > 0 && slots == nullptr) return kNoScratch;
  const int64_t first_bad = Linearize(s.rows, slots, parallel);
  if (first_bad >= 0 && !ignore) return first_bad;
  const int64_t work = n * S;
  const int threads = parallel.threads;
  if (threads <= 1 || work < kSerialBelowCycles) {
    for (int64_t i = 0; i < n; ++i) {
      if (slots[i] >= 0) {
        OfferRow<T, Op>(i, updates + i * S, out + slots[i] * S, arg + slots[i] * S, 0, S,
                        seeded);
      }
    }
  } else if (S >= kColumnSplitSlice || nslots == 1) {
    parallel.For(S, std::max<int64_t>(n, 1), [&](int64_t c0, int64_t c1) {
      for (int64_t i = 0; i < n; ++i) {
        if (slots[i] >= 0) {
          OfferRow<T, Op>(i, updates + i * S, out + slots[i] * S, arg + slots[i] * S, c0, c1,
                          seeded);
        }
      }
    });
  } else {
    // One range of slots per thread, each as costly as the whole pass.
    const int64_t parts = std::min<int64_t>(threads, nslots);
    parallel.For(parts, work + n, [&](int64_t p0, int64_t p1) {
      const int64_t lo = p0 * nslots / parts, hi = p1 * nslots / parts;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t slot = slots[i];
        if (slot >= lo && slot < hi) {
          OfferRow<T, Op>(i, updates + i * S, out + slot * S, arg + slot * S, 0, S, seeded);
        }
      }
    });
  }
  return first_bad;
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_ARG_SCATTER_CPU_H_
