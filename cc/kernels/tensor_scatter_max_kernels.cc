// CPU and GPU kernels of TfScatter>TensorScatterMax, one per value type.
#include "scatter_kernels.h"

namespace tf_scatter_ops {

#define REGISTER_CPU(T) \
  TFSO_REGISTER_CPU("TensorScatterMax", "T", T, TensorScatterOp, MaxOp);
TFSO_CALL_MINMAX_TYPES(REGISTER_CPU)
#undef REGISTER_CPU

#define REGISTER_GPU(T) \
  TFSO_REGISTER_GPU("TensorScatterMax", "T", T, , TensorScatterOp, MaxOp);
TFSO_CALL_GPU_MINMAX_TYPES(REGISTER_GPU)
#undef REGISTER_GPU

}  // namespace tf_scatter_ops
