// GPU unsorted_segment_{prod,min,max}: the scatter core with the segment
// reducers (unsorted_segment_sum is the add of scatter_gpu_add.cu.cc).
// The real numbers (the complex product: complex_gpu.cu.cc).
#include "cuda/scatter_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {

#define INSTANTIATE(T)                        \
  TFSO_INSTANTIATE_SCATTER(T, MulOp)          \
  TFSO_INSTANTIATE_SCATTER(T, SegmentMinOp)   \
  TFSO_INSTANTIATE_SCATTER(T, SegmentMaxOp)
TFSO_MINMAX_DTYPES(TFSO_GPU_DTYPE, INSTANTIATE)
#undef INSTANTIATE

}  // namespace gpu
}  // namespace tf_scatter_ops
