// GPU segment_* (sorted ids, index order) and the fill of the unsorted
// segment reductions' empty segments (UnsortedSegmentEmpty), on the real
// numbers (the complex products and means: complex_gpu.cu.cc).
#include "cuda/segment_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {

#define SUM(T) TFSO_INSTANTIATE_SORTED_SEGMENT(T, AddOp, Order::kIndex, T)
TFSO_ADD_DTYPES(TFSO_GPU_DTYPE, SUM)
#undef SUM
#define REAL(T)                                                     \
  TFSO_INSTANTIATE_SORTED_SEGMENT(T, MulOp, Order::kIndex, T)        \
  TFSO_INSTANTIATE_SORTED_SEGMENT(T, MeanOp, Order::kIndex, T)       \
  TFSO_INSTANTIATE_SORTED_SEGMENT(T, SegmentMinOp, Order::kIndex, T) \
  TFSO_INSTANTIATE_SORTED_SEGMENT(T, SegmentMaxOp, Order::kIndex, T) \
  TFSO_INSTANTIATE_FILL(T)
TFSO_MINMAX_DTYPES(TFSO_GPU_DTYPE, REAL)
#undef REAL

}  // namespace gpu
}  // namespace tf_scatter_ops
