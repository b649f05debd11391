// The one table of the family's ops: each row is written once here, and
// everything that lists ops is made from it: the op definitions
// (cc/ops/scatter_ops.cc), the CPU, GPU and XLA kernels and targets (one
// registration unit per row, kernels_<op>.cc; xla_kernels.cc), and what
// Python iterates over (library_info.cc hands the rows to
// tf_scatter_ops/_base/table.py: the wrappers, the variable methods, the patch,
// the gradients and the tests). TensorFlow-free.
//
// TFSO_OPS(X) expands X(OP, PY, KIND, REDUCER, DTYPES, VARIABLE, GRADIENT, TF,
// ALIAS) per op:
//   OP        the op type after the TfScatter> prefix
//   PY        the Python function (tf_scatter_ops.PY, and tf.PY under the patch)
//   KIND      ScatterNd (zeros, then the updates: init mode kZero),
//             TensorScatter (a copy of `tensor`, then the updates: kCopy, or
//             in place when TensorFlow forwards the buffer), GatherNd, or
//             UnsortedSegment (segment ids as depth-1 indices into
//             [num_segments, slice]: TensorFlow's value for an empty
//             segment, UnsortedSegmentEmpty in common/reducers.h, then the
//             rows; negative ids dropped),
//             SortedSegment, SparseSegment, or Groupwise (a function of each
//             unsorted segment's rows, common/groupwise.h: REDUCER is the
//             function; the row also registers its fused gradient
//             <OP>Grad), ArgScatter (TensorScatter's inputs) or
//             ArgSegment (UnsortedSegment's): two outputs, the maximum or
//             minimum and the position of the update that holds it
//             (common/arg_reducers.h), GatherReduce (message passing:
//             params' rows gathered by edge source, weighted, reduced by
//             destination; its `reduce` attr picks the reduction) or
//             EdgeCombine (a per-edge function of two row sets, its `op`
//             attr). Every kind has CPU and GPU kernels (register_kernels.h),
//             the GPU's for DTYPES less string, but the message-passing ones
//             (CPU only: cpu/message_cpu.h)
//   REDUCER   the reduction of common/reducers.h that applies each update
//             (Groupwise: the function, common/groupwise.h; ArgScatter,
//             ArgSegment: ArgMaxOp or ArgMinOp, common/arg_reducers.h)
//   DTYPES    the value dtypes, a list of common/dtypes.h (ALL, ADD, MINMAX,
//             FLOAT); on a GPU the same without string
//   VARIABLE  the stateful ops' base name: Resource<VARIABLE> (resource
//             variables) and <VARIABLE> (ref variables) for a scatter,
//             <VARIABLE> for a gather; `none` for no variable op
//   GRADIENT  the gradient rule (tf_scatter_ops/gradients.py)
//   TF        TensorFlow's op of the same meaning (under XLA where ours do not
//             apply, and for parity tests), or `none` (then the wrapper builds
//             the function from TensorFlow's ops there: a tensor
//             scatter's in tf_scatter_ops/_dispatch/forms.py, scatter_product)
//   ALIAS     TensorFlow's second Python name for it, or `none`
//
// Adding an op: a row here, its reducer in common/reducers.h if it is new,
// its registration unit (kernels_<op>.cc, three lines), its gradient, its
// tests (tests/test_op_table.py fails until every list agrees).
#ifndef TF_SCATTER_OPS_CC_OPS_OP_TABLE_H_
#define TF_SCATTER_OPS_CC_OPS_OP_TABLE_H_

// clang-format off
#define TFSO_OP_ScatterNd(X)           X(ScatterNd, scatter_nd, ScatterNd, AddOp, ALL, none, scatter_nd, ScatterNd, none)
#define TFSO_OP_TensorScatterUpdate(X) X(TensorScatterUpdate, tensor_scatter_nd_update, TensorScatter, AssignOp, ALL, ScatterNdUpdate, update, TensorScatterUpdate, tensor_scatter_update)
#define TFSO_OP_TensorScatterAdd(X)    X(TensorScatterAdd, tensor_scatter_nd_add, TensorScatter, AddOp, ADD, ScatterNdAdd, add, TensorScatterAdd, tensor_scatter_add)
#define TFSO_OP_TensorScatterSub(X)    X(TensorScatterSub, tensor_scatter_nd_sub, TensorScatter, SubOp, ADD, ScatterNdSub, sub, TensorScatterSub, tensor_scatter_sub)
#define TFSO_OP_TensorScatterMin(X)    X(TensorScatterMin, tensor_scatter_nd_min, TensorScatter, MinOp, MINMAX, ScatterNdMin, min_max, TensorScatterMin, none)
#define TFSO_OP_TensorScatterMax(X)    X(TensorScatterMax, tensor_scatter_nd_max, TensorScatter, MaxOp, MINMAX, ScatterNdMax, min_max, TensorScatterMax, none)
#define TFSO_OP_TensorScatterMul(X)    X(TensorScatterMul, tensor_scatter_nd_mul, TensorScatter, MulOp, MINMAX, none, mul, none, none)
#define TFSO_OP_TensorScatterDiv(X)    X(TensorScatterDiv, tensor_scatter_nd_div, TensorScatter, DivOp, FLOAT, none, div, none, none)
#define TFSO_OP_GatherNd(X)            X(GatherNd, gather_nd, GatherNd, AssignOp, ALL, ResourceGatherNd, gather_nd, GatherNd, none)
#define TFSO_OP_UnsortedSegmentSum(X)  X(UnsortedSegmentSum, unsorted_segment_sum, UnsortedSegment, AddOp, ADD, none, segment_sum, UnsortedSegmentSum, none)
#define TFSO_OP_UnsortedSegmentProd(X) X(UnsortedSegmentProd, unsorted_segment_prod, UnsortedSegment, MulOp, ADD, none, segment_prod, UnsortedSegmentProd, none)
#define TFSO_OP_UnsortedSegmentMin(X)  X(UnsortedSegmentMin, unsorted_segment_min, UnsortedSegment, SegmentMinOp, MINMAX, none, segment_min_max, UnsortedSegmentMin, none)
#define TFSO_OP_UnsortedSegmentMax(X)  X(UnsortedSegmentMax, unsorted_segment_max, UnsortedSegment, SegmentMaxOp, MINMAX, none, segment_min_max, UnsortedSegmentMax, none)
#define TFSO_OP_SegmentSum(X)          X(SegmentSum, segment_sum, SortedSegment, AddOp, ADD, none, segment_sum, SegmentSum, none)
#define TFSO_OP_SegmentProd(X)         X(SegmentProd, segment_prod, SortedSegment, MulOp, ADD, none, segment_prod, SegmentProd, none)
#define TFSO_OP_SegmentMin(X)          X(SegmentMin, segment_min, SortedSegment, SegmentMinOp, MINMAX, none, segment_min_max, SegmentMin, none)
#define TFSO_OP_SegmentMax(X)          X(SegmentMax, segment_max, SortedSegment, SegmentMaxOp, MINMAX, none, segment_min_max, SegmentMax, none)
#define TFSO_OP_SegmentMean(X)         X(SegmentMean, segment_mean, SortedSegment, MeanOp, ADD, none, segment_mean, SegmentMean, none)
#define TFSO_OP_SparseSegmentSum(X)    X(SparseSegmentSum, sparse_segment_sum, SparseSegment, AddOp, MINMAX, none, sparse_segment, SparseSegmentSumWithNumSegments, none)
#define TFSO_OP_SparseSegmentMean(X)   X(SparseSegmentMean, sparse_segment_mean, SparseSegment, MeanOp, FLOAT, none, sparse_segment, SparseSegmentMeanWithNumSegments, none)
#define TFSO_OP_SparseSegmentSqrtN(X)  X(SparseSegmentSqrtN, sparse_segment_sqrt_n, SparseSegment, SqrtNOp, FLOAT, none, sparse_segment, SparseSegmentSqrtNWithNumSegments, none)
#define TFSO_OP_SegmentSoftmax(X)      X(SegmentSoftmax, segment_softmax, Groupwise, SoftmaxFn, FLOAT, none, groupwise, none, none)
#define TFSO_OP_SegmentLogSoftmax(X)   X(SegmentLogSoftmax, segment_log_softmax, Groupwise, LogSoftmaxFn, FLOAT, none, groupwise, none, none)
#define TFSO_OP_SegmentLogsumexp(X)    X(SegmentLogsumexp, segment_logsumexp, Groupwise, LogSumExpFn, FLOAT, none, groupwise, none, none)
#define TFSO_OP_SegmentVar(X)          X(SegmentVar, segment_var, Groupwise, VarFn, FLOAT, none, groupwise, none, none)
#define TFSO_OP_SegmentStd(X)          X(SegmentStd, segment_std, Groupwise, StdFn, FLOAT, none, groupwise, none, none)
#define TFSO_OP_TensorScatterMaxWithArgmax(X)   X(TensorScatterMaxWithArgmax, tensor_scatter_nd_max_with_argmax, ArgScatter, ArgMaxOp, MINMAX, none, arg, none, none)
#define TFSO_OP_TensorScatterMinWithArgmin(X)   X(TensorScatterMinWithArgmin, tensor_scatter_nd_min_with_argmin, ArgScatter, ArgMinOp, MINMAX, none, arg, none, none)
#define TFSO_OP_UnsortedSegmentMaxWithArgmax(X) X(UnsortedSegmentMaxWithArgmax, unsorted_segment_max_with_argmax, ArgSegment, ArgMaxOp, MINMAX, none, arg, none, none)
#define TFSO_OP_UnsortedSegmentMinWithArgmin(X) X(UnsortedSegmentMinWithArgmin, unsorted_segment_min_with_argmin, ArgSegment, ArgMinOp, MINMAX, none, arg, none, none)
#define TFSO_OP_GatherReduce(X)        X(GatherReduce, gather_reduce, GatherReduce, AddOp, FLOAT, none, gather_reduce, none, none)
#define TFSO_OP_EdgeCombine(X)         X(EdgeCombine, edge_combine, EdgeCombine, AddOp, FLOAT, none, edge_combine, none, none)
// clang-format on

#define TFSO_OPS(X)               \
  TFSO_OP_ScatterNd(X)            \
  TFSO_OP_TensorScatterUpdate(X)  \
  TFSO_OP_TensorScatterAdd(X)     \
  TFSO_OP_TensorScatterSub(X)     \
  TFSO_OP_TensorScatterMin(X)     \
  TFSO_OP_TensorScatterMax(X)     \
  TFSO_OP_TensorScatterMul(X)     \
  TFSO_OP_TensorScatterDiv(X)     \
  TFSO_OP_GatherNd(X)             \
  TFSO_OP_UnsortedSegmentSum(X)   \
  TFSO_OP_UnsortedSegmentProd(X)  \
  TFSO_OP_UnsortedSegmentMin(X)   \
  TFSO_OP_UnsortedSegmentMax(X)   \
  TFSO_OP_SegmentSum(X)           \
  TFSO_OP_SegmentProd(X)          \
  TFSO_OP_SegmentMin(X)           \
  TFSO_OP_SegmentMax(X)           \
  TFSO_OP_SegmentMean(X)          \
  TFSO_OP_SparseSegmentSum(X)     \
  TFSO_OP_SparseSegmentMean(X)    \
  TFSO_OP_SparseSegmentSqrtN(X)   \
  TFSO_OP_SegmentSoftmax(X)       \
  TFSO_OP_SegmentLogSoftmax(X)    \
  TFSO_OP_SegmentLogsumexp(X)     \
  TFSO_OP_SegmentVar(X)           \
  TFSO_OP_SegmentStd(X)           \
  TFSO_OP_TensorScatterMaxWithArgmax(X) \
  TFSO_OP_TensorScatterMinWithArgmin(X) \
  TFSO_OP_UnsortedSegmentMaxWithArgmax(X) \
  TFSO_OP_UnsortedSegmentMinWithArgmin(X) \
  TFSO_OP_GatherReduce(X)         \
  TFSO_OP_EdgeCombine(X)

#endif  // TF_SCATTER_OPS_CC_OPS_OP_TABLE_H_
