// The sorted segment core's arithmetic on the CUDA core's element types
// (common/element_types.h), for host and device alike: the kernels
// (segment_gpu.cuh) and the harness's serial reference use it. No CUDA or
// TensorFlow header.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CUDA_SEGMENT_ELEMENTS_H_
#define TF_SCATTER_OPS_CC_KERNELS_CUDA_SEGMENT_ELEMENTS_H_

#include <cstdint>
#include <type_traits>

#include "common/element_types.h"
#include "common/reducers.h"

namespace tf_scatter_ops {
namespace gpu {

// kGroups8's accumulator: float for the 16-bit floats, as on the CPU.
template <typename T>
using Groups8Accumulator =
    typename std::conditional<std::is_same<T, F16>::value || std::is_same<T, BF16>::value,
                              float, T>::type;

// The accumulator's view of an element and back (A is T, or float for the
// 16-bit floats).
template <typename A, typename T>
TFSO_HD A Widen(const T& v) {
  if constexpr (std::is_same<A, T>::value) {
    return v;
  } else {
    return ToFloat(v);
  }
}
template <typename T, typename A>
TFSO_HD T Narrow(const A& v) {
  if constexpr (std::is_same<A, T>::value) {
    return v;
  } else if constexpr (std::is_same<T, F16>::value) {
    return ToF16(v);
  } else {
    return ToBF16(v);
  }
}

// Finalize<Op> (common/reducers.h) on the stand-ins too: Eigen's half(n)
// rounds n to the type, and its division is float's, rounded; a complex
// mean divides as std::complex does on the CPU (element_types.h).
template <typename Op, typename T>
TFSO_HD void FinalizeElement(T& v, int64_t n, bool by_reciprocal) {
  if constexpr (std::is_same<T, Complex<float>>::value ||
                std::is_same<T, Complex<double>>::value) {
    static_assert(!std::is_same<Op, SqrtNOp>::value, "no complex sqrt_n");
    if constexpr (std::is_same<Op, MeanOp>::value) {
      // (segment_mean only: the sparse means, which scale by a reciprocal,
      // take no complex numbers)
      v = DivideByCount(v, n);
    }
  } else if constexpr (std::is_same<T, F16>::value) {
    if constexpr (std::is_same<Op, MeanOp>::value) {
      v = ToF16(ToFloat(v) / ToFloat(ToF16(static_cast<float>(n))));
    }
  } else if constexpr (std::is_same<T, BF16>::value) {
    if constexpr (std::is_same<Op, MeanOp>::value) {
      v = ToBF16(ToFloat(v) / ToFloat(ToBF16(static_cast<float>(n))));
    }
  } else {
    Finalize<Op>(v, n, by_reciprocal);
  }
}

}  // namespace gpu
}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CUDA_SEGMENT_ELEMENTS_H_
