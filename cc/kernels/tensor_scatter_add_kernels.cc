// CPU kernels of TfScatter>TensorScatterAdd, one per value type.
#include "scatter_kernels.h"

namespace tf_scatter_ops {

#define REGISTER(T) \
  TFSO_REGISTER_CPU("TensorScatterAdd", "T", T, TensorScatterOp<T, AddOp>);
TFSO_CALL_ADD_TYPES(REGISTER)
#undef REGISTER

}  // namespace tf_scatter_ops
