// CPU and GPU kernels of TfScatter>TensorScatterAdd, one per value type.
#include "scatter_kernels.h"

namespace tf_scatter_ops {

#define REGISTER_CPU(T) \
  TFSO_REGISTER_CPU("TensorScatterAdd", "T", T, TensorScatterOp, AddOp);
TFSO_CALL_ADD_TYPES(REGISTER_CPU)
#undef REGISTER_CPU

#define REGISTER_GPU(T) \
  TFSO_REGISTER_GPU("TensorScatterAdd", "T", T, , TensorScatterOp, AddOp);
TFSO_CALL_GPU_ADD_TYPES(REGISTER_GPU)
#undef REGISTER_GPU

}  // namespace tf_scatter_ops
