// GPU update (last write wins) and gather: they move bits, one instantiation
// per element width.
#include "cuda/scatter_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {

#define INSTANTIATE(T) TFSO_INSTANTIATE_SCATTER(T, AssignOp) TFSO_INSTANTIATE_GATHER(T)
TFSO_GPU_BITS_TYPES(INSTANTIATE)
#undef INSTANTIATE

}  // namespace gpu
}  // namespace tf_scatter_ops
