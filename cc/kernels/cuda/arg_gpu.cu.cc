// GPU *_with_argmax / *_with_argmin (arg_gpu.cuh) for the real dtypes.
#include "cuda/arg_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {

#define ARG(T)                               \
  TFSO_INSTANTIATE_ARG_SCATTER(T, ArgMaxOp)  \
  TFSO_INSTANTIATE_ARG_SCATTER(T, ArgMinOp)
TFSO_MINMAX_DTYPES(TFSO_GPU_DTYPE, ARG)
#undef ARG

}  // namespace gpu
}  // namespace tf_scatter_ops
