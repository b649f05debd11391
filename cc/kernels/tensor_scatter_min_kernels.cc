// CPU kernels of TfScatter>TensorScatterMin, one per value type.
#include "scatter_kernels.h"

namespace tf_scatter_ops {

#define REGISTER(T) \
  TFSO_REGISTER_CPU("TensorScatterMin", "T", T, TensorScatterOp<T, MinOp>);
TFSO_CALL_MINMAX_TYPES(REGISTER)
#undef REGISTER

}  // namespace tf_scatter_ops
