// The family as XLA's own instructions (scatter, gather), for the call sites
// where XLA's code beats a call of our kernel: it fuses with its neighbours,
// updates a loop-carried buffer in place and takes operands with bounded
// dynamic dimensions. Our policy is kept around them: with the default policy
// a side-effecting custom call that reads only the indices raises our
// message for the first bad row (for indices with a dynamic dimension after
// the first, fused instructions find that row and the call only reports it); with "IGNORE"
// XLA's scatter drops bad rows as ours does, and a gather's bad rows are set
// to zeros.
//
// Every function takes the operands in TensorFlow's N-d form (indices
// [outer..., depth]), which XLA's dimension numbers express without reshapes,
// so dynamic dimensions need no special case. Built when TFSO_XLA is set.
#ifndef TF_SCATTER_OPS_CC_KERNELS_XLA_XLA_HLO_H_
#define TF_SCATTER_OPS_CC_KERNELS_XLA_XLA_HLO_H_

#if TFSO_XLA

#include "xla/hlo/builder/xla_builder.h"

namespace tf_scatter_ops {

// How a scatter combines the value it finds with an update.
enum class Combine { kUpdate, kAdd, kSub, kMin, kMax, kMul, kDiv };

// `target` with `updates` combined in at `indices` (bad rows dropped).
absl::StatusOr<xla::XlaOp> HloScatter(Combine combine, xla::XlaOp target,
                                      xla::XlaOp indices, xla::XlaOp updates);

// A zero tensor shaped like `target`'s static shape, for scatter_nd.
xla::XlaOp HloZeros(xla::XlaBuilder* b, const xla::Shape& shape);

// params at indices; rows with bad indices give zeros when `ignore`, else
// they are clamped (the caller checks them first).
absl::StatusOr<xla::XlaOp> HloGather(xla::XlaOp params, xla::XlaOp indices, bool ignore);

// Raises, when the computation runs, the error of the first row of `indices`
// that does not index into `target` (the gather's message when `gather`).
// Adds nothing for depth 0 or for indices that have no rows.
absl::Status HloCheckIndices(xla::XlaOp indices, xla::XlaOp target, bool gather);

}  // namespace tf_scatter_ops

#endif  // TFSO_XLA
#endif  // TF_SCATTER_OPS_CC_KERNELS_XLA_XLA_HLO_H_
