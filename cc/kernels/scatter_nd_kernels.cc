// CPU kernels of TfScatter>ScatterNd, one per value type.
#include "scatter_kernels.h"

namespace tf_scatter_ops {

#define REGISTER(T) \
  TFSO_REGISTER_CPU("ScatterNd", "T", T, ScatterNdOp<T>);
TFSO_CALL_ALL_TYPES(REGISTER)
#undef REGISTER

}  // namespace tf_scatter_ops
