// GPU min and max (tensor_scatter_nd_min / _max).
#include "cuda/scatter_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {

#define INSTANTIATE(T) TFSO_INSTANTIATE_SCATTER(T, MinOp) TFSO_INSTANTIATE_SCATTER(T, MaxOp)
TFSO_MINMAX_DTYPES(TFSO_GPU_DTYPE, INSTANTIATE)
#undef INSTANTIATE

}  // namespace gpu
}  // namespace tf_scatter_ops
