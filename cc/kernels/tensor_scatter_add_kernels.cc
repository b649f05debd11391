// CPU and GPU kernels of TfScatter>TensorScatterAdd and of the variable ops
// ResourceScatterNdAdd and ScatterNdAdd (ref), one per value type: they
// share the core's instantiations.
#include "variable_kernels.h"
#include "xla_targets.h"

namespace tf_scatter_ops {

#define REGISTER_CPU(T) \
  TFSO_REGISTER_CPU("TensorScatterAdd", "T", T, TensorScatterOp, AddOp); \
  TFSO_REGISTER_XLA_TARGET("TensorScatterAdd", T, TensorScatterTarget, AddOp); \
  TFSO_REGISTER_VARIABLE_CPU("ScatterNdAdd", T, AddOp);
TFSO_CALL_ADD_TYPES(REGISTER_CPU)
#undef REGISTER_CPU

#define REGISTER_GPU(T) \
  TFSO_REGISTER_GPU("TensorScatterAdd", "T", T, , TensorScatterOp, AddOp); \
  TFSO_REGISTER_VARIABLE_GPU("ScatterNdAdd", T, AddOp);
TFSO_CALL_GPU_ADD_TYPES(REGISTER_GPU)
#undef REGISTER_GPU

}  // namespace tf_scatter_ops
