// CPU and GPU kernels of TfScatter>TensorScatterMin and of the variable ops
// ResourceScatterNdMin and ScatterNdMin (ref), one per value type: they
// share the core's instantiations.
#include "variable_kernels.h"
#include "xla_targets.h"

namespace tf_scatter_ops {

#define REGISTER_CPU(T) \
  TFSO_REGISTER_CPU("TensorScatterMin", "T", T, TensorScatterOp, MinOp); \
  TFSO_REGISTER_XLA_TARGET("TensorScatterMin", T, TensorScatterTarget, MinOp); \
  TFSO_REGISTER_VARIABLE_CPU("ScatterNdMin", T, MinOp);
TFSO_CALL_MINMAX_TYPES(REGISTER_CPU)
#undef REGISTER_CPU

#define REGISTER_GPU(T) \
  TFSO_REGISTER_GPU("TensorScatterMin", "T", T, , TensorScatterOp, MinOp); \
  TFSO_REGISTER_VARIABLE_GPU("ScatterNdMin", T, MinOp);
TFSO_CALL_GPU_MINMAX_TYPES(REGISTER_GPU)
#undef REGISTER_GPU

}  // namespace tf_scatter_ops
