// CPU and GPU kernels of TfScatter>TensorScatterMin, one per value type.
#include "scatter_kernels.h"

namespace tf_scatter_ops {

#define REGISTER_CPU(T) \
  TFSO_REGISTER_CPU("TensorScatterMin", "T", T, TensorScatterOp, MinOp);
TFSO_CALL_MINMAX_TYPES(REGISTER_CPU)
#undef REGISTER_CPU

#define REGISTER_GPU(T) \
  TFSO_REGISTER_GPU("TensorScatterMin", "T", T, , TensorScatterOp, MinOp);
TFSO_CALL_GPU_MINMAX_TYPES(REGISTER_GPU)
#undef REGISTER_GPU

}  // namespace tf_scatter_ops
