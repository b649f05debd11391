// CPU kernels of TfScatter>TensorScatterMax, one per value type.
#include "scatter_kernels.h"

namespace tf_scatter_ops {

#define REGISTER(T) \
  TFSO_REGISTER_CPU("TensorScatterMax", "T", T, TensorScatterOp<T, MaxOp>);
TFSO_CALL_MINMAX_TYPES(REGISTER)
#undef REGISTER

}  // namespace tf_scatter_ops
