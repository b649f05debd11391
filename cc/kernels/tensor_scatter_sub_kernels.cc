// CPU kernels of TfScatter>TensorScatterSub, one per value type.
#include "scatter_kernels.h"

namespace tf_scatter_ops {

#define REGISTER(T) \
  TFSO_REGISTER_CPU("TensorScatterSub", "T", T, TensorScatterOp<T, SubOp>);
TFSO_CALL_ADD_TYPES(REGISTER)
#undef REGISTER

}  // namespace tf_scatter_ops
