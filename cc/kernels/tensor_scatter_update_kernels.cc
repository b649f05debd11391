// CPU and GPU kernels of TfScatter>TensorScatterUpdate and of the variable ops
// ResourceScatterNdUpdate and ScatterNdUpdate (ref), one per value type: they
// share the core's instantiations.
#include "variable_kernels.h"
#include "xla_targets.h"

namespace tf_scatter_ops {

#define REGISTER_CPU(T) \
  TFSO_REGISTER_CPU("TensorScatterUpdate", "T", T, TensorScatterOp, AssignOp); \
  TFSO_REGISTER_XLA_TARGET("TensorScatterUpdate", T, TensorScatterTarget, AssignOp); \
  TFSO_REGISTER_VARIABLE_CPU("ScatterNdUpdate", T, AssignOp);
TFSO_CALL_ALL_TYPES(REGISTER_CPU)
#undef REGISTER_CPU

#define REGISTER_GPU(T) \
  TFSO_REGISTER_GPU("TensorScatterUpdate", "T", T, , TensorScatterOp, AssignOp); \
  TFSO_REGISTER_VARIABLE_GPU("ScatterNdUpdate", T, AssignOp);
TFSO_CALL_GPU_ALL_TYPES(REGISTER_GPU)
#undef REGISTER_GPU

}  // namespace tf_scatter_ops
