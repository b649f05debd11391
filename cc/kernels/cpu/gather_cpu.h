// The CPU gather core, in canonical form (cpu_call.h). TensorFlow-free.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_GATHER_CPU_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_GATHER_CPU_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/init_mode.h"
#include "cpu/cpu_call.h"
#include "cpu/index_linearize.h"
#include "cpu/parallel.h"
#include "cpu/row_copy.h"

namespace tf_scatter_ops {

// output row i = params row slot(i), or zeros for a bad row. Returns the
// first bad row, or -1; the output is then written all the same (it is
// discarded unless the caller ignores bad rows). Rows are linearised a batch
// at a time and copied straight from the batch; outputs that do not stay in
// cache are written with streaming stores where the ISA allows (row_copy.h).
template <typename T>
int64_t GatherCpu(const CpuCall& s, const T* params, T* out,
                  const Parallel& parallel) {
  const int64_t S = s.form.slice;
  if (S == 0) return Linearize(s.rows, nullptr, parallel);
  std::atomic<int64_t> first_bad{INT64_MAX};
  const int64_t row_bytes = S * static_cast<int64_t>(sizeof(T));
  const StreamRowFn stream = std::is_trivially_copyable<T>::value
                                 ? PickStreamRow(out, row_bytes, s.form.n * row_bytes)
                                 : nullptr;
  parallel.For(s.form.n, S + 6, [&](int64_t begin, int64_t end) {
    KeepFirstBad(&first_bad, ForEachBatch(s.rows, begin, end, [&](int64_t b, int64_t e,
                                                                  const int64_t* slots) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t slot = slots[i - b];
        T* dst = out + i * S;
        if (slot < 0) {
          internal::InitElements<T>(dst, nullptr, Init::kZero, 0, S);
        } else if (stream) {
          if (i + kRowPrefetch < e && slots[i + kRowPrefetch - b] >= 0) {
            PrefetchRow(params + slots[i + kRowPrefetch - b] * S, row_bytes);
          }
          stream(dst, params + slot * S, row_bytes);
        } else if constexpr (std::is_trivially_copyable<T>::value) {
          std::memcpy(static_cast<void*>(dst), params + slot * S, S * sizeof(T));
        } else {
          std::copy(params + slot * S, params + (slot + 1) * S, dst);
        }
      }
    }));
    if (stream) StreamFence();
  });
  const int64_t bad = first_bad.load();
  return bad == INT64_MAX ? -1 : bad;
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_GATHER_CPU_H_
