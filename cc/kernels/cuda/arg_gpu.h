// The arg reductions (tensor_scatter_nd_{max_with_argmax,min_with_argmin},
// unsorted_segment_{max_with_argmax,min_with_argmin}) on the GPU, as seen
// from the host: no CUDA or TensorFlow header (shared by the glue and the
// harness).
//
// The scatter core's plan (scatter_gpu.cuh's MakePlan: bounds checks, the
// first bad row unless call.ignore, a stable sort of the rows by
// destination) and one thread per (destination, column) that offers the
// destination's updates to its element in row order with common/
// arg_reducers.h's rule: the CPU core's order and definition
// (cpu/arg_scatter_cpu.h), so the values and positions are the CPU's bit
// for bit.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CUDA_ARG_GPU_H_
#define TF_SCATTER_OPS_CC_KERNELS_CUDA_ARG_GPU_H_

#include <cstdint>

#include "common/arg_reducers.h"
#include "cuda/scatter_gpu.h"

namespace tf_scatter_ops {
namespace gpu {

// out[nslots, slice] = init per `mode` (kCopy: a copy of `init`; kInPlace:
// out already holds the tensor, or an empty segment's value), arg[nslots, slice]
// = -1, then each update row offered to its slot's elements with Op
// (ArgMaxOp, ArgMinOp): an update that takes an element leaves its value and
// its row there. `seeded`: the initial values stay unless an update takes
// them (tensor_scatter_nd_*); else the first update takes each element (a
// segment). Nothing is written when a bad row is reported. Returns nullptr
// or a static error message.
template <typename T, typename Op>
const char* ArgScatter(Call& call, bool seeded, const T* updates, const T* init, Init mode,
                       T* out, int64_t* arg);

}  // namespace gpu
}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CUDA_ARG_GPU_H_
