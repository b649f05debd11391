// GPU products and means of complex numbers: segment_prod, segment_mean
// (the sorted core) and unsorted_segment_prod (the scatter core), with the
// CPU's complex arithmetic (common/element_types.h: Annex G's product and
// libgcc's quotient, one IEEE operation a step), so the bits are the CPU
// kernels'. The real numbers' are in segment_gpu_sorted.cu.cc and
// scatter_gpu_segment.cu.cc.
#include "cuda/segment_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {

#define COMPLEX(T)                                             \
  TFSO_INSTANTIATE_SORTED_SEGMENT(T, MulOp, Order::kIndex, T)  \
  TFSO_INSTANTIATE_SORTED_SEGMENT(T, MeanOp, Order::kIndex, T) \
  TFSO_INSTANTIATE_SCATTER(T, MulOp)                           \
  TFSO_INSTANTIATE_FILL(T)
TFSO_COMPLEX_DTYPES(TFSO_GPU_DTYPE, COMPLEX)
#undef COMPLEX

}  // namespace gpu
}  // namespace tf_scatter_ops
