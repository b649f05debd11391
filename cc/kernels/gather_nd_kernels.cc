// CPU and GPU kernels of TfScatter>GatherNd and ResourceGatherNd, one per
// value type.
#include "variable_kernels.h"
#include "xla_targets.h"

namespace tf_scatter_ops {

#define REGISTER_CPU(T) \
  TFSO_REGISTER_CPU("GatherNd", "Tparams", T, GatherNdOp); \
  TFSO_REGISTER_XLA_TARGET("GatherNd", T, GatherNdTarget); \
  TFSO_REGISTER_CPU("ResourceGatherNd", "dtype", T, ResourceGatherNdOp);
TFSO_CALL_ALL_TYPES(REGISTER_CPU)
#undef REGISTER_CPU

#define REGISTER_GPU(T) \
  TFSO_REGISTER_GPU("GatherNd", "Tparams", T, , GatherNdOp); \
  TFSO_REGISTER_GPU("ResourceGatherNd", "dtype", T, .HostMemory("resource"), \
                    ResourceGatherNdOp);
TFSO_CALL_GPU_ALL_TYPES(REGISTER_GPU)
#undef REGISTER_GPU

}  // namespace tf_scatter_ops
