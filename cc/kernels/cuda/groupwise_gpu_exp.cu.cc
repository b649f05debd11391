// GPU segment_softmax, segment_log_softmax and segment_logsumexp and their
// gradients (groupwise_gpu.cuh), for the floating dtypes.
#include "cuda/groupwise_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {

#define EXP(T)                                             \
  TFSO_INSTANTIATE_GROUPWISE(T, Groupwise::kSoftmax)       \
  TFSO_INSTANTIATE_GROUPWISE(T, Groupwise::kLogSoftmax)    \
  TFSO_INSTANTIATE_GROUPWISE(T, Groupwise::kLogSumExp)
TFSO_FLOAT_DTYPES(TFSO_GPU_DTYPE, EXP)
#undef EXP

}  // namespace gpu
}  // namespace tf_scatter_ops
