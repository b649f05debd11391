// GPU sparse_segment_* (the gather fused in, TensorFlow's groups of 8).
#include "cuda/segment_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {

#define SUM(T) TFSO_INSTANTIATE_SORTED_SEGMENT(T, AddOp, Order::kGroups8, Groups8Accumulator<T>)
TFSO_MINMAX_DTYPES(TFSO_GPU_DTYPE, SUM)
#undef SUM
#define SCALED(T)                                                                          \
  TFSO_INSTANTIATE_SORTED_SEGMENT(T, MeanOp, Order::kGroups8, Groups8Accumulator<T>)       \
  TFSO_INSTANTIATE_SORTED_SEGMENT(T, SqrtNOp, Order::kGroups8, Groups8Accumulator<T>)
TFSO_FLOAT_DTYPES(TFSO_GPU_DTYPE, SCALED)
#undef SCALED

}  // namespace gpu
}  // namespace tf_scatter_ops
