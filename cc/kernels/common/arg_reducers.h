// The one definition of the arg reductions (*_with_argmax, *_with_argmin):
// which update takes an output element, so that the element ends with the
// maximum (minimum) and the position of the update that holds it. Shared by
// the CPU core (cpu/arg_scatter_cpu.h) and any device core. TensorFlow-free.
//
// Updates are offered in index order; one takes the element when it is
// strictly greater (smaller), so ties keep the first in index order. NaN
// counts as greater (smaller) than every number, as in NumPy's and
// PyTorch's argmax: the first NaN wins and no later update replaces it. An
// element that starts from a tensor's value (tensor_scatter_nd_*) keeps it,
// with position -1, unless an update takes it; an element that starts empty
// (a segment) is taken by its first update.
#ifndef TF_SCATTER_OPS_CC_KERNELS_COMMON_ARG_REDUCERS_H_
#define TF_SCATTER_OPS_CC_KERNELS_COMMON_ARG_REDUCERS_H_

#include "common/reducers.h"

namespace tf_scatter_ops {

struct ArgMaxOp {
  template <typename T>
  static TFSO_HD bool Takes(const T& upd, const T& out) {
    return out < upd || (upd != upd && out == out);
  }
};

struct ArgMinOp {
  template <typename T>
  static TFSO_HD bool Takes(const T& upd, const T& out) {
    return upd < out || (upd != upd && out == out);
  }
};

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_COMMON_ARG_REDUCERS_H_
