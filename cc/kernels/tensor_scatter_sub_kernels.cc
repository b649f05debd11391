// CPU and GPU kernels of TfScatter>TensorScatterSub and of the variable ops
// ResourceScatterNdSub and ScatterNdSub (ref), one per value type: they
// share the core's instantiations.
#include "variable_kernels.h"
#include "xla_targets.h"

namespace tf_scatter_ops {

#define REGISTER_CPU(T) \
  TFSO_REGISTER_CPU("TensorScatterSub", "T", T, TensorScatterOp, SubOp); \
  TFSO_REGISTER_XLA_TARGET("TensorScatterSub", T, TensorScatterTarget, SubOp); \
  TFSO_REGISTER_VARIABLE_CPU("ScatterNdSub", T, SubOp);
TFSO_CALL_ADD_TYPES(REGISTER_CPU)
#undef REGISTER_CPU

#define REGISTER_GPU(T) \
  TFSO_REGISTER_GPU("TensorScatterSub", "T", T, , TensorScatterOp, SubOp); \
  TFSO_REGISTER_VARIABLE_GPU("ScatterNdSub", T, SubOp);
TFSO_CALL_GPU_ADD_TYPES(REGISTER_GPU)
#undef REGISTER_GPU

}  // namespace tf_scatter_ops
