// The CPU kernels of the ops that gained GPU kernels with issue 46 (the
// group-wise functions and their gradients, the arg reductions, complex
// products and means), as production computes them, for tests/cc/
// gpu_new_ops.cu: it compares every GPU result with these bit for bit.
// Declared on the CUDA core's element types (common/element_types.h);
// new_ops_cpu_ref.cc runs the CPU code on the types the TensorFlow glue gives
// it (Eigen::half, Eigen::bfloat16, std::complex), serially:
//
// - the group-wise functions: cpu/groupwise_cpu.h's GroupwiseForwardCpu /
//   GroupwiseBackwardCpu (the sequence of passes the glue runs), with the
//   glue's passes (tf/groupwise_kernels.h: SegmentPasses) rebuilt on the CPU
//   scatter core without TensorFlow;
// - the arg reductions: cpu/arg_scatter_cpu.h's ArgScatterCpu, initialised
//   as tf/arg_kernels.h does;
// - complex segment_prod / segment_mean: cpu/segment_cpu.h's
//   SortedSegmentCpu; unsorted_segment_prod: cpu/scatter_cpu.h's ScatterCpu;
// - gather_reduce and edge_combine (issue 49): cpu/message_cpu.h, after the
//   glue's check of the edges.
//
// No CUDA, Eigen or TensorFlow header here: nvcc and g++ both take it.
#ifndef TF_SCATTER_OPS_TESTS_CC_NEW_OPS_CPU_REF_H_
#define TF_SCATTER_OPS_TESTS_CC_NEW_OPS_CPU_REF_H_

#include <cstdint>

#include "common/groupwise.h"
#include "common/init_mode.h"
#include "common/message.h"

namespace tfso_new_ops {

// Depth-1 ids or depth-`depth` index rows (int64), host memory.
struct Ids {
  const int64_t* values = nullptr;
  int64_t n = 0;
  int depth = 1;
  const int64_t* dims = nullptr;  // [depth]
};

// The group-wise function kF of x [n, slice] into y, segment ids `ids`
// (depth 1, dims[0] = nsegments), negative ids dropped: returns the first
// row whose id is >= nsegments unless `ignore` (then -1), and then nothing
// is meant to be compared.
template <typename T, tf_scatter_ops::Groupwise kF>
int64_t GroupwiseForward(const Ids& ids, int64_t slice, bool ignore, int64_t ddof, const T* x,
                         T* y);
template <typename T, tf_scatter_ops::Groupwise kF>
int64_t GroupwiseBackward(const Ids& ids, int64_t slice, bool ignore, int64_t ddof, const T* x,
                          const T* y, const T* g, T* dx);

// The arg reduction Op (ArgMaxOp, ArgMinOp): `segment` as
// unsorted_segment_*_with_arg* (out starts at ArgSegmentEmpty, negative ids
// dropped, the first id >= nsegments returned unless ignore), else as
// tensor_scatter_nd_*_with_arg* (out starts as `init`; the first bad row
// returned unless ignore). arg is -1 where no row holds an element.
template <typename T, typename Op>
T ArgSegmentEmpty();  // an empty segment's value, as the glue fills it (UnsortedSegmentEmpty)
template <typename T, typename Op>
int64_t ArgScatter(const Ids& ids, int64_t slice, bool ignore, bool segment, const T* updates,
                   const T* init, T* out, int64_t* arg);

// Complex: unsorted_segment_prod (out starts at 1; the first id >= nslots
// returned unless ignore) and segment_prod / segment_mean on CSR segments
// (gaps: `gap`).
template <typename T>
int64_t UnsortedProd(const Ids& ids, int64_t slice, bool ignore, const T* data, T* out);
template <typename T, typename Op>
void SortedSegment(const int64_t* offsets, int64_t nsegments, int64_t slice, const T* data,
                   T gap, T* out);

// Message passing (issue 49), as the glue runs the CPU core (tf/
// message_kernels.h, cpu/message_cpu.h) on int64 ids: gather_reduce of
// params [rows, heads * width] with weights (null, or [nedges, heads]) into
// out [num, heads * width] (positions: max and min only); edge_combine of a
// [arows, slice] and b [brows, slice] into out [nedges, out_slice] (kDot:
// out_slice parts of `width`). Each returns the first bad edge unless
// `ignore` (then -1), and then nothing is meant to be compared.
template <typename T, tf_scatter_ops::EdgeReduce kReduce>
int64_t GatherReduce(const int64_t* src, const int64_t* dst, int64_t nedges, int64_t rows,
                     int64_t num, int64_t heads, int64_t width, bool ignore, const T* params,
                     const T* weights, T* out, int64_t* positions);
template <typename T>
T GatherReduceEmpty(tf_scatter_ops::EdgeReduce reduce);  // an empty destination's max / min
template <typename T, tf_scatter_ops::EdgeOp kOp>
int64_t EdgeCombine(const int64_t* src, const int64_t* dst, int64_t nedges, int64_t arows,
                    int64_t brows, int64_t slice, int64_t width, int64_t out_slice, bool ignore,
                    const T* a, const T* b, T* out);

// The CUDA core's complex product and mean division (common/
// element_types.h), run on the host, against std::complex's operator*= and
// operator/ (the CPU kernels'): every combination of special values (zeros,
// infinities, NaNs, extremes, subnormals) and random ones. Returns the
// number of results that differ other than in a NaN's bits, printing the
// first few.
int CheckComplexArithmetic();

}  // namespace tfso_new_ops

#endif  // TF_SCATTER_OPS_TESTS_CC_NEW_OPS_CPU_REF_H_
