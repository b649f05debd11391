// CPU and GPU kernels of TfScatter>TensorScatterMax and of the variable ops
// ResourceScatterNdMax and ScatterNdMax (ref), one per value type: they
// share the core's instantiations.
#include "variable_kernels.h"
#include "xla_targets.h"

namespace tf_scatter_ops {

#define REGISTER_CPU(T) \
  TFSO_REGISTER_CPU("TensorScatterMax", "T", T, TensorScatterOp, MaxOp); \
  TFSO_REGISTER_XLA_TARGET("TensorScatterMax", T, TensorScatterTarget, MaxOp); \
  TFSO_REGISTER_VARIABLE_CPU("ScatterNdMax", T, MaxOp);
TFSO_CALL_MINMAX_TYPES(REGISTER_CPU)
#undef REGISTER_CPU

#define REGISTER_GPU(T) \
  TFSO_REGISTER_GPU("TensorScatterMax", "T", T, , TensorScatterOp, MaxOp); \
  TFSO_REGISTER_VARIABLE_GPU("ScatterNdMax", T, MaxOp);
TFSO_CALL_GPU_MINMAX_TYPES(REGISTER_GPU)
#undef REGISTER_GPU

}  // namespace tf_scatter_ops
