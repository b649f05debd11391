// The CPU core (cc/kernels/cpu/), as production calls it, for the CUDA
// core's harness (tests/cc/gpu_harness.cu): the harness compares every GPU
// result with it bit for bit. Declared on the CUDA core's element types
// (common/element_types.h); cpu_core_ref.cc runs the CPU core on the types
// the TensorFlow glue gives it (Eigen::half, Eigen::bfloat16, std::complex,
// the bit types of update and gather), reinterpreting the arrays as the glue
// does. No CUDA, Eigen or TensorFlow header here, so nvcc and g++ both take
// it; cpu_core_ref.cc is built with g++ and Eigen (TensorFlow's headers).
// Serial (the CPU core's result does not depend on its threads: core_test.cc).
#ifndef TF_SCATTER_OPS_TESTS_CC_CPU_CORE_REF_H_
#define TF_SCATTER_OPS_TESTS_CC_CPU_CORE_REF_H_

#include <cstdint>

#include "common/init_mode.h"
#include "common/segment_order.h"

namespace tfso_cpu {

// n index rows of `depth` coordinates (index_bytes 2, 4 or 8: int16/32/64),
// host memory, into the outer dims `dims`.
struct Rows {
  const void* indices = nullptr;
  int index_bytes = 4;
  int64_t n = 0;
  int depth = 0;
  const int64_t* dims = nullptr;
};

// ScatterCpu: returns the first bad row (or -1), whatever `ignore` says.
template <typename T, typename Op>
int64_t Scatter(const Rows& rows, int64_t nslots, int64_t slice, bool ignore, const T* updates,
                const T* init, tf_scatter_ops::Init mode, T* out);

// GatherCpu: returns the first bad row (or -1); bad rows give zeros.
template <typename T>
int64_t Gather(const Rows& rows, int64_t nslots, int64_t slice, const T* params, T* out);

// SortedSegmentCpu on the segments of CSR `offsets` [nsegments + 1] (the
// runs the glue would find), data rows `rows` (null: positions) and the
// accumulator the glue picks (float for the 16-bit floats under kGroups8).
template <typename T, typename Op, tf_scatter_ops::Order kOrder>
void SortedSegment(const int64_t* offsets, int64_t nsegments, const int64_t* rows, int64_t slice,
                   const T* data, T gap, T* out);

}  // namespace tfso_cpu

#endif  // TF_SCATTER_OPS_TESTS_CC_CPU_CORE_REF_H_
