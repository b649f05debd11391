// GPU div (tensor_scatter_nd_div): floating types, in index order.
#include "cuda/scatter_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {

#define INSTANTIATE(T) TFSO_INSTANTIATE_SCATTER(T, DivOp)
TFSO_FLOAT_DTYPES(TFSO_GPU_DTYPE, INSTANTIATE)
#undef INSTANTIATE

}  // namespace gpu
}  // namespace tf_scatter_ops
