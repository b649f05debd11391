// TensorFlow's segment reductions on the CPU and CUDA cores (CpuSegments,
// GpuSegments). Their shape rules and messages are ops/shape_checks.h's
// (rules::UnsortedSegment, SortedSegment, SparseSegment), shared with the
// ops' shape functions; the ids' rules and messages are here.
//
// Unsorted (unsorted_segment_*): segment ids are
// depth-1 indices into an output viewed as [num_segments, slice], so
// unsorted_segment_<op>(data, ids, num) is the scatter of data's rows by
// their ids with the row's reducer, in row order, on the same parallel
// strategies as the scatters. What differs from a scatter:
//
// - the output starts at TensorFlow's value for an empty segment
//   (UnsortedSegmentEmpty, common/reducers.h: lowest() for max, not -inf);
// - negative ids are dropped, as TensorFlow drops them, whatever the policy;
//   an id >= num_segments is TensorFlow's error naming the first one, unless
//   "IGNORE" (then dropped too).
//
// Sorted (segment_*, sparse_segment_*): the ids are validated into runs
// (SortedRuns, SparseRuns) and each run reduced by the sorted core
// (cpu/segment_cpu.h, cuda/segment_gpu.h; an empty segment holds
// SortedSegmentEmpty), with TensorFlow's errors for ids that are not sorted;
// "IGNORE" drops the ids out of range (negative ones, or for sparse_segment_*
// ids >= num_segments and indices out of data's rows) instead of failing.
#ifndef TF_SCATTER_OPS_CC_KERNELS_TF_SEGMENT_KERNELS_H_
#define TF_SCATTER_OPS_CC_KERNELS_TF_SEGMENT_KERNELS_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "common/reducers.h"
#include "cpu/segment_cpu.h"
#include "ops/shape_checks.h"
#include "tf/scatter_kernels.h"
#if TFSO_WITH_CUDA
#include "cuda/segment_gpu.h"
#endif
#include "tensorflow/core/framework/numeric_types.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor_shape.h"

namespace tf_scatter_ops {

// The first id >= num_segments from row `from` on, as TensorFlow's error;
// OK if there is none (the core's bad rows from `from` on were negative).
Status FirstSegmentIdOutOfRange(const Tensor& ids, int64_t from, int64_t num_segments);

// The CPU core on the segment form: bad rows dropped; then, unless `ignore`,
// the error for the first id >= num_segments (the core reports the first bad
// row, which may be a dropped negative one).
template <typename T, typename Op>
Status CpuSegment(const Tensor& ids, const ScatterForm& f, const TensorShape& target,
                  bool ignore, const T* data, Init mode, T* out, const Parallel& parallel,
                  StatusScratch& scratch, ScatterHints hints = {}) {
  CpuCallState s;
  TF_RETURN_IF_ERROR(PrepareCpuCall(ids, f, target, &s));
  // Every id is read (ignore): the first one out of range is found below.
  const int64_t bad =
      ScatterHintedCpu<T, Op>(s.call, /*ignore=*/true, /*report_false=*/!ignore, &hints, data,
                              nullptr, mode, out, parallel, scratch);
  if (bad == kFalseHint) {  // an id out of range is named first, as a scatter's bad row is
    TF_RETURN_IF_ERROR(FirstSegmentIdOutOfRange(ids, 0, f.nslots));
    return FalseHintError(ids, f, hints.false_at, hints.unique, /*segment_ids=*/true);
  }
  if (bad == kNoScratch) return scratch.status();
  if (bad < 0 || ignore) return absl::OkStatus();
  return FirstSegmentIdOutOfRange(ids, bad, f.nslots);
}

// unsorted_segment_{sum,prod,min,max}: inputs data, segment_ids, num_segments
// (on a GPU in host memory), on the backend's core (CpuSegments, GpuSegments).
template <typename Backend, typename T, typename Op>
class UnsortedSegmentOp : public HintedKernel {
 public:
  using HintedKernel::HintedKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& data = c->input(0);
    const Tensor& ids = c->input(1);
    TensorShape shape;
    int64_t slice = 1;
    OP_REQUIRES_OK(c, UnsortedSegmentOutput(data, ids, c->input(2), &shape, &slice));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const ScatterForm f{ids.NumElements(), 1, shape.dim_size(0), slice};
    OP_REQUIRES_OK(c, Backend::template Unsorted<T, Op>(c, ids, f, shape, ignore_, data, out,
                                                         hints_));
  }
};

// The output rows of sorted ids (segment_*, and sparse_segment_* with
// num_segments < 0: not given): the last id + 1, or num_segments, which must
// exceed every id; TensorFlow's errors for a last id that is negative or too
// large to add 1 to (unless `ignore`: then at least 0).
Status SortedOutputRows(const Tensor& ids, int64_t num_segments, bool ignore, int64_t* rows);

// The runs of segment_*'s sorted 1-D ids, found in parallel; the first error
// in TensorFlow's order (an id below the one before it, or a run's id outside
// [0, rows)), unless `ignore` (then negative ids are dropped).
Status SortedRuns(const Tensor& ids, int64_t rows, bool ignore, const Parallel& parallel,
                  Runs* runs);

// sparse_segment_*'s gathered rows (indices checked against data_rows) and
// the runs of its sorted segment ids into `rows` output rows, with the
// first error in TensorFlow's order, or (ignore) bad rows dropped.
Status SparseRuns(const Tensor& indices, const Tensor& ids, int64_t data_rows, int64_t rows,
                  bool ignore, std::vector<int64_t>* gathered, Runs* runs);

// A 16-bit float's sums accumulate in float (sparse_segment_*, as TensorFlow's).
template <typename T>
using SegmentAccumulator =
    typename std::conditional<std::is_same<T, Eigen::half>::value ||
                                  std::is_same<T, Eigen::bfloat16>::value,
                              float, T>::type;

// data's shape with dim 0 = rows (TensorFlow's error if its element count
// overflows), and its slice (the elements per row).
inline Status RowsOf(const TensorShape& data, int64_t rows, TensorShape* shape,
                     int64_t* slice) {
  *shape = data;
  *slice = 1;
  for (int d = 1; d < data.dims(); ++d) *slice *= data.dim_size(d);
  return shape->SetDimWithStatus(0, rows);
}

// segment_mean on integers: every run's row count as T must not be 0 (it is
// the divisor, as in TensorFlow's kernel, which crashes there).
template <typename T>
Status CountsFit(const Runs& runs) {
  for (int64_t k = 0; k < runs.count(); ++k) {
    const int64_t rows = runs.first[k + 1] - runs.first[k];
    if (static_cast<T>(rows) == T(0)) {
      return absl::InvalidArgumentError(messages::SegmentCountWraps(
          runs.segment[k], rows, ::tensorflow::DataTypeString(::tensorflow::DataTypeToEnum<T>::v())));
    }
  }
  return absl::OkStatus();
}

// segment_{sum,prod,min,max,mean}: inputs data, segment_ids (sorted, 1-D;
// on a GPU in host memory); gaps 0 (1 for prod), as TensorFlow's.
template <typename Backend, typename T, typename Op>
class SortedSegmentOp : public PolicyKernel {
 public:
  using PolicyKernel::PolicyKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& data = c->input(0);
    const Tensor& ids = c->input(1);
    OP_REQUIRES_OK(c, CheckSortedSegment(data.shape(), ids.shape()));
    int64_t nsegments = 0, slice = 1;
    OP_REQUIRES_OK(c, SortedOutputRows(ids, /*num_segments=*/-1, ignore_, &nsegments));
    TensorShape shape;
    OP_REQUIRES_OK(c, RowsOf(data.shape(), nsegments, &shape, &slice));
    Runs runs;
    OP_REQUIRES_OK(c, SortedRuns(ids, nsegments, ignore_, CpuParallel(c), &runs));
    if constexpr (std::is_same<Op, MeanOp>::value && std::is_integral<T>::value) {
      OP_REQUIRES_OK(c, CountsFit<T>(runs));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return;
    OP_REQUIRES_OK(c, (Backend::template Sorted<T, Op, Order::kIndex, T>(
                          c, runs, data, nullptr, slice, nsegments, SortedSegmentEmpty<Op, T>(),
                          out)));
  }
};

// sparse_segment_{sum,mean,sqrt_n}: inputs data, indices, segment_ids
// (sorted), num_segments (< 0: the last id + 1; on a GPU the last three in
// host memory); gaps 0.
template <typename Backend, typename T, typename Op>
class SparseSegmentOp : public PolicyKernel {
 public:
  using PolicyKernel::PolicyKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& data = c->input(0);
    const Tensor& indices = c->input(1);
    const Tensor& ids = c->input(2);
    const Tensor& num_segments = c->input(3);
    // num_segments = -1 is the wrappers' "not given".
    int64_t num = -1;
    OP_REQUIRES_OK(c, CheckSparseSegment(data.shape(), indices.shape(), ids.shape(),
                                         num_segments, &num));
    int64_t nsegments = 0, slice = 1;
    OP_REQUIRES_OK(c, SortedOutputRows(ids, num, ignore_, &nsegments));
    TensorShape shape;
    OP_REQUIRES_OK(c, RowsOf(data.shape(), nsegments, &shape, &slice));
    std::vector<int64_t> rows;
    Runs runs;
    OP_REQUIRES_OK(c, SparseRuns(indices, ids, data.dim_size(0), nsegments, ignore_, &rows,
                                 &runs));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return;
    OP_REQUIRES_OK(c, (Backend::template Sorted<T, Op, Order::kGroups8, SegmentAccumulator<T>>(
                          c, runs, data, rows.data(), slice, nsegments,
                          SortedSegmentEmpty<Op, T>(), out)));
  }
};

// The CPU cores of the segment kernels.
struct CpuSegments {
  template <typename T, typename Op>
  static constexpr bool kTakes = true;  // every dtype of the row

  template <typename T, typename Op>
  static Status Unsorted(OpKernelContext* c, const Tensor& ids, const ScatterForm& f,
                         const TensorShape& shape, bool ignore, const Tensor& data,
                         Tensor* out, const ScatterHints& hints) {
    T* o = out->flat<T>().data();
    Init mode = Init::kZero;
    if constexpr (!std::is_same<Op, AddOp>::value) {
      std::fill(o, o + out->NumElements(), UnsortedSegmentEmpty<Op, T>());
      mode = Init::kInPlace;
    }
    TfScratch scratch(c);
    return CpuSegment<T, Op>(ids, f, shape, ignore, data.flat<T>().data(), mode, o,
                             CpuParallel(c), scratch, hints);
  }

  template <typename T, typename Op, Order kOrder, typename A>
  static Status Sorted(OpKernelContext* c, const Runs& runs, const Tensor& data,
                       const int64_t* rows, int64_t slice, int64_t nsegments, T gap,
                       Tensor* out) {
    SortedSegmentCpu<T, Op, kOrder, A, int64_t>(runs, data.flat<T>().data(), rows, slice,
                                                nsegments, gap, out->flat<T>().data(),
                                                CpuParallel(c));
    return absl::OkStatus();
  }
};

#if TFSO_WITH_CUDA
// The segments of `runs` in CSR form: nsegments + 1 offsets (gap: empty).
std::vector<int64_t> SegmentOffsets(const Runs& runs, int64_t nsegments);

// TensorFlow's error for the core's first bad row of unsorted segment ids.
Status GpuSegmentStatus(const GpuCallState& s, const char* error, const TensorShape& ids);

// The CUDA cores of the segment kernels: the unsorted ones on the scatter core
// (negative ids dropped), the sorted ones on the CSR core.
struct GpuSegments {
  // Every dtype of the row (complex products and means: cuda/complex_gpu.cu.cc).
  template <typename T, typename Op>
  static constexpr bool kTakes = true;

  // The hints are not used (nor checked): the GPU core sorts anyway.
  template <typename T, typename Op>
  static Status Unsorted(OpKernelContext* c, const Tensor& ids, const ScatterForm& f,
                         const TensorShape& shape, bool ignore, const Tensor& data,
                         Tensor* out, const ScatterHints& = {}) {
    using E = GpuT<T, Op>;
    GpuCallState s(c);
    TF_RETURN_IF_ERROR(PrepareGpuCall(ids, f, shape, ignore, &s));
    s.call.drop_negative = true;
    E* o = As<E>(out->flat<T>().data());
    Init mode = Init::kZero;
    if constexpr (!std::is_same<Op, AddOp>::value) {
      const T empty = UnsortedSegmentEmpty<Op, T>();
      const char* error = gpu::Fill<E>(s.call.stream, o, out->NumElements(), BitCast<E>(empty));
      if (error != nullptr) return GpuSegmentStatus(s, error, ids.shape());
      mode = Init::kInPlace;
    }
    const char* error = gpu::Scatter<E, Op>(s.call, As<E>(data.flat<T>().data()), nullptr, mode, o);
    return GpuSegmentStatus(s, error, ids.shape());
  }

  template <typename T, typename Op, Order kOrder, typename A>
  static Status Sorted(OpKernelContext* c, const Runs& runs, const Tensor& data,
                       const int64_t* rows, int64_t slice, int64_t nsegments, T gap,
                       Tensor* out) {
    using E = GpuT<T, Op>;
    using GA = typename std::conditional<std::is_same<A, T>::value, E, A>::type;
    TfScratch scratch(c);
    const std::vector<int64_t> offsets = SegmentOffsets(runs, nsegments);
    gpu::SegmentCall call;
    call.nsegments = nsegments;
    call.slice = slice;
    call.offsets = offsets.data();
    call.rows = rows;
    call.scratch = &scratch;
    TF_RETURN_IF_ERROR(GpuStreamOf(c, &call.stream));
    const char* error = gpu::SortedSegment<E, Op, kOrder, GA>(
        call, As<E>(data.flat<T>().data()), BitCast<E>(gap), As<E>(out->flat<T>().data()));
    return GpuCoreStatus(scratch, error);
  }
};
#endif  // TFSO_WITH_CUDA

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_TF_SEGMENT_KERNELS_H_
