// What the CPU cores (scatter_cpu.h, gather_cpu.h) are called with, and the
// element loops they share. TensorFlow-free.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_CPU_CALL_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_CPU_CALL_H_

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/init_mode.h"
#include "common/scatter_form.h"
#include "cpu/index_linearize.h"

namespace tf_scatter_ops {

// One call in canonical form: its sizes and its index rows (form.n rows of
// form.depth coordinates), each of which names a flat destination slot or is
// bad (index_linearize.h).
struct CpuCall {
  ScatterForm form;
  IndexRows rows;
};

// What a scatter returns when its scratch could not be allocated.
constexpr int64_t kNoScratch = -2;

namespace internal {

// out[begin, end) = zeros or init[begin, end), per mode (kInPlace: as is).
template <typename T>
void InitElements(T* out, const T* init, Init mode, int64_t begin,
                  int64_t end) {
  if (mode == Init::kInPlace || begin >= end) return;
  if constexpr (std::is_trivially_copyable<T>::value) {
    // All-zero bits are zero for every numeric type we register.
    if (mode == Init::kZero) {
      std::memset(static_cast<void*>(out + begin), 0, (end - begin) * sizeof(T));
    } else {
      std::memcpy(static_cast<void*>(out + begin), init + begin,
                  (end - begin) * sizeof(T));
    }
  } else {
    for (int64_t k = begin; k < end; ++k) out[k] = mode == Init::kZero ? T() : init[k];
  }
}

template <typename T, typename Op>
inline void ApplyRow(T* dst, const T* src, int64_t len) {
  for (int64_t k = 0; k < len; ++k) Op::Apply(dst[k], src[k]);
}

}  // namespace internal
}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_CPU_CALL_H_
