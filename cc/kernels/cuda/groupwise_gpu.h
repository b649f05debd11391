// The group-wise functions (segment_softmax, _log_softmax, _logsumexp,
// _var, _std) and their fused gradients on the GPU, as seen from the host:
// no CUDA or TensorFlow header (shared by the glue and the harness).
//
// The ids are unsorted_segment_*'s, on the device: a scatter call of depth 1
// (Call: form {n, 1, nsegments, slice}, drop_negative) whose plan
// (scatter_gpu.cuh's MakePlan) checks them, reports the first id >=
// nsegments unless call.ignore (then nothing is written), and sorts the rows
// stably by segment. One thread per (segment with rows, column) then walks
// that segment's rows in index order through every pass of the function:
// the maximum (MaxOp from -inf), the sums (from +0, in index order) and the
// element-wise steps of common/groupwise.h, in the compute type C (float for
// the 16-bit floats). That is the order of the CPU kernels' segment
// reductions, with the same definitions, so the results are the CPU's bit
// for bit (a NaN's sign and payload aside). Dropped rows' outputs and
// gradients are 0; an empty segment's output the function of no rows
// (logsumexp -inf, var and std 0 / (0 - ddof)).
#ifndef TF_SCATTER_OPS_CC_KERNELS_CUDA_GROUPWISE_GPU_H_
#define TF_SCATTER_OPS_CC_KERNELS_CUDA_GROUPWISE_GPU_H_

#include <cstdint>

#include "common/groupwise.h"
#include "cuda/scatter_gpu.h"

namespace tf_scatter_ops {
namespace gpu {

// The function kF of rows x [n, slice] into y ([n, slice], or [nsegments,
// slice] for logsumexp, var and std). Returns nullptr or a static error
// message; call.bad_row as Scatter's.
template <typename T, Groupwise kF>
const char* GroupwiseForward(Call& call, int64_t ddof, const T* x, T* y);

// Its gradient dx [n, slice] from x, the output y and its gradient g (each
// shaped as the forward's output).
template <typename T, Groupwise kF>
const char* GroupwiseBackward(Call& call, int64_t ddof, const T* x, const T* y, const T* g,
                              T* dx);

}  // namespace gpu
}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CUDA_GROUPWISE_GPU_H_
