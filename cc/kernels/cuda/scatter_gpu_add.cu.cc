// GPU add (tensor_scatter_nd_add and scatter_nd; bool ORs for scatter_nd).
#include "cuda/scatter_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {

#define INSTANTIATE(T) TFSO_INSTANTIATE_SCATTER(T, AddOp)
TFSO_GPU_ALL_DTYPES(TFSO_GPU_DTYPE, INSTANTIATE)
#undef INSTANTIATE

}  // namespace gpu
}  // namespace tf_scatter_ops
