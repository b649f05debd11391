// CPU kernels of TfScatter>TensorScatterUpdate, one per value type.
#include "scatter_kernels.h"

namespace tf_scatter_ops {

#define REGISTER(T) \
  TFSO_REGISTER_CPU("TensorScatterUpdate", "T", T, TensorScatterOp<T, AssignOp>);
TFSO_CALL_ALL_TYPES(REGISTER)
#undef REGISTER

}  // namespace tf_scatter_ops
