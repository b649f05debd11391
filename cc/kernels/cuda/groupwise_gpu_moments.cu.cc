// GPU segment_var and segment_std and their gradients (groupwise_gpu.cuh),
// for the floating dtypes.
#include "cuda/groupwise_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {

#define MOMENTS(T)                                  \
  TFSO_INSTANTIATE_GROUPWISE(T, Groupwise::kVar)    \
  TFSO_INSTANTIATE_GROUPWISE(T, Groupwise::kStd)
TFSO_FLOAT_DTYPES(TFSO_GPU_DTYPE, MOMENTS)
#undef MOMENTS

}  // namespace gpu
}  // namespace tf_scatter_ops
