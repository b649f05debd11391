// CPU and GPU kernels of TfScatter>ScatterNd and its XLA target, one per
// value type.
#include "scatter_kernels.h"
#include "xla_targets.h"

namespace tf_scatter_ops {

#define REGISTER_CPU(T) \
  TFSO_REGISTER_CPU("ScatterNd", "T", T, ScatterNdOp); \
  TFSO_REGISTER_XLA_TARGET("ScatterNd", T, ScatterNdTarget);
TFSO_CALL_ALL_TYPES(REGISTER_CPU)
#undef REGISTER_CPU

#define REGISTER_GPU(T) \
  TFSO_REGISTER_GPU("ScatterNd", "T", T, .HostMemory("shape"), ScatterNdOp);
TFSO_CALL_GPU_ALL_TYPES(REGISTER_GPU)
#undef REGISTER_GPU

}  // namespace tf_scatter_ops
