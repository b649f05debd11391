// GPU sub (tensor_scatter_nd_sub).
#include "cuda/scatter_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {

#define INSTANTIATE(T) TFSO_INSTANTIATE_SCATTER(T, SubOp)
TFSO_ADD_DTYPES(TFSO_GPU_DTYPE, INSTANTIATE)
#undef INSTANTIATE

}  // namespace gpu
}  // namespace tf_scatter_ops
