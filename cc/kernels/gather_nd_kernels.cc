// CPU kernels of TfScatter>GatherNd, one per value type.
#include "scatter_kernels.h"

namespace tf_scatter_ops {

#define REGISTER(T) \
  TFSO_REGISTER_CPU("GatherNd", "Tparams", T, GatherNdOp<T>);
TFSO_CALL_ALL_TYPES(REGISTER)
#undef REGISTER

}  // namespace tf_scatter_ops
