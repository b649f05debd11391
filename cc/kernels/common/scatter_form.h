// The canonical form every op of the family is brought to before a core
// runs, on the CPU and on the GPU alike: `n` index rows of `depth`
// coordinates address the first `depth` dimensions of a target viewed as
// [nslots, slice]; updates (and a gather's output) are [n, slice].
//
//   scatter_nd, tensor_scatter_nd_*:  indices [n, depth], updates [n, slice],
//                                     output [nslots, slice]
//   gather_nd:                        params [nslots, slice] -> [n, slice]
//
// nslots is the product of the target's first `depth` dimensions (1 for
// depth 0), slice the product of the rest.
#ifndef TF_SCATTER_OPS_CC_KERNELS_COMMON_SCATTER_FORM_H_
#define TF_SCATTER_OPS_CC_KERNELS_COMMON_SCATTER_FORM_H_

#include <cstdint>

namespace tf_scatter_ops {

struct ScatterForm {
  int64_t n = 0;       // index rows
  int depth = 0;       // coordinates per row
  int64_t nslots = 1;  // destination rows of the target
  int64_t slice = 1;   // elements per row
};

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_COMMON_SCATTER_FORM_H_
