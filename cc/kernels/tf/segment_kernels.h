// TensorFlow's segment reductions on the CPU cores.
//
// Unsorted (unsorted_segment_*): segment ids are
// depth-1 indices into an output viewed as [num_segments, slice], so
// unsorted_segment_<op>(data, ids, num) is the scatter of data's rows by
// their ids with the row's reducer, in row order, on the same parallel
// strategies as the scatters. What differs from a scatter:
//
// - the output starts at the reduction's identity (TensorFlow's values for
//   an empty segment: 0, 1 for prod, lowest() for max, highest() for min);
// - negative ids are dropped, as TensorFlow drops them, whatever the policy;
//   an id >= num_segments is TensorFlow's error naming the first one, unless
//   "IGNORE" (then dropped too).
//
// Sorted (segment_*, sparse_segment_*): the ids are validated into runs
// (SortedRuns, SparseRuns) and each run reduced by the sorted core
// (cpu/segment_cpu.h), with TensorFlow's errors for ids that are not sorted;
// "IGNORE" drops the ids out of range (negative ones, or for sparse_segment_*
// ids >= num_segments and indices out of data's rows) instead of failing.
#ifndef TF_SCATTER_OPS_CC_KERNELS_TF_SEGMENT_KERNELS_H_
#define TF_SCATTER_OPS_CC_KERNELS_TF_SEGMENT_KERNELS_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "common/reducers.h"
#include "cpu/segment_cpu.h"
#include "ops/shape_checks.h"
#include "tf/scatter_kernels.h"
#include "tensorflow/core/framework/numeric_types.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor_shape.h"

namespace tf_scatter_ops {

// What an empty segment holds.
template <typename T, typename Op>
T SegmentIdentity() {
  if constexpr (std::is_same<Op, MulOp>::value) {
    return T(1);
  } else if constexpr (std::is_same<Op, SegmentMaxOp>::value) {
    return Eigen::NumTraits<T>::lowest();
  } else if constexpr (std::is_same<Op, SegmentMinOp>::value) {
    return Eigen::NumTraits<T>::highest();
  } else {
    return T(0);
  }
}

// The first id >= num_segments from row `from` on, as TensorFlow's error;
// OK if there is none (the core's bad rows from `from` on were negative).
Status FirstSegmentIdOutOfRange(const Tensor& ids, int64_t from, int64_t num_segments);

// The CPU core on the segment form: bad rows dropped; then, unless `ignore`,
// the error for the first id >= num_segments (the core reports the first bad
// row, which may be a dropped negative one).
template <typename T, typename Op>
Status CpuSegment(const Tensor& ids, const ScatterForm& f, const TensorShape& target,
                  bool ignore, const T* data, Init mode, T* out, const Parallel& parallel,
                  StatusScratch& scratch) {
  CpuCallState s;
  TF_RETURN_IF_ERROR(PrepareCpuCall(ids, f, target, &s));
  const int64_t bad = ScatterCpu<T, Op>(s.call, /*ignore=*/true, data, nullptr, mode, out,
                                        parallel, scratch);
  if (bad == kNoScratch) return scratch.status();
  if (bad < 0 || ignore) return absl::OkStatus();
  return FirstSegmentIdOutOfRange(ids, bad, f.nslots);
}

// unsorted_segment_{sum,prod,min,max}: inputs data, segment_ids, num_segments.
template <typename T, typename Op>
class UnsortedSegmentOp : public PolicyKernel {
 public:
  using PolicyKernel::PolicyKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& data = c->input(0);
    const Tensor& ids = c->input(1);
    const Tensor& num_segments = c->input(2);
    OP_REQUIRES(c, ::tensorflow::TensorShapeUtils::IsScalar(num_segments.shape()),
                absl::InvalidArgumentError(absl::StrCat(
                    "num_segments should be a scalar, not shape ",
                    num_segments.shape().DebugString())));
    const int64_t num = num_segments.dtype() == ::tensorflow::DT_INT32
                            ? num_segments.scalar<int32_t>()()
                            : num_segments.scalar<int64_t>()();
    OP_REQUIRES(c, num >= 0, absl::InvalidArgumentError(messages::NegativeNumSegments(num)));
    OP_REQUIRES(c, ::tensorflow::TensorShapeUtils::StartsWith(data.shape(), ids.shape()),
                absl::InvalidArgumentError(messages::SegmentIdsNotPrefix(
                    data.shape().DebugString(), ids.shape().DebugString())));
    TensorShape shape({num});
    int64_t slice = 1;
    for (int d = ids.dims(); d < data.dims(); ++d) {
      shape.AddDim(data.dim_size(d));
      slice *= data.dim_size(d);
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    T* o = out->flat<T>().data();
    Init mode = Init::kZero;
    if constexpr (!std::is_same<Op, AddOp>::value) {
      std::fill(o, o + out->NumElements(), SegmentIdentity<T, Op>());
      mode = Init::kInPlace;
    }
    const ScatterForm f{ids.NumElements(), 1, num, slice};
    TfScratch scratch(c);
    OP_REQUIRES_OK(c, CpuSegment<T, Op>(ids, f, shape, ignore_, data.flat<T>().data(), mode,
                                        o, CpuParallel(c), scratch));
  }
};

// The runs of segment_*'s sorted 1-D ids (output rows: the last id + 1).
Status SortedRuns(const Tensor& ids, bool ignore, Runs* runs, int64_t* nsegments);

// sparse_segment_*'s gathered rows (indices checked against data_rows) and
// the runs of its sorted segment ids; num_segments < 0: the last id + 1.
Status SparseRuns(const Tensor& indices, const Tensor& ids, int64_t data_rows,
                  int64_t num_segments, bool ignore, std::vector<int64_t>* rows, Runs* runs,
                  int64_t* nsegments);

// A 16-bit float's sums accumulate in float (sparse_segment_*, as TensorFlow's).
template <typename T>
using SegmentAccumulator =
    typename std::conditional<std::is_same<T, Eigen::half>::value ||
                                  std::is_same<T, Eigen::bfloat16>::value,
                              float, T>::type;

// data's shape with dim 0 = rows, and its slice (the elements per row).
inline TensorShape RowsOf(const TensorShape& data, int64_t rows, int64_t* slice) {
  TensorShape shape = data;
  *slice = 1;
  for (int d = 1; d < data.dims(); ++d) *slice *= data.dim_size(d);
  shape.set_dim(0, rows);
  return shape;
}

// segment_{sum,prod,min,max,mean}: inputs data, segment_ids (sorted, 1-D);
// gaps 0 (1 for prod), as TensorFlow's.
template <typename T, typename Op>
class SortedSegmentOp : public PolicyKernel {
 public:
  using PolicyKernel::PolicyKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& data = c->input(0);
    const Tensor& ids = c->input(1);
    OP_REQUIRES(c, data.dims() >= 1,
                absl::InvalidArgumentError(messages::SegmentDataRank(data.shape().DebugString())));
    OP_REQUIRES(c, ::tensorflow::TensorShapeUtils::IsVector(ids.shape()),
                absl::InvalidArgumentError("segment_ids should be a vector."));
    OP_REQUIRES(c, ids.NumElements() == data.dim_size(0),
                absl::InvalidArgumentError(
                    "segment_ids should be the same size as dimension 0 of input."));
    Runs runs;
    int64_t nsegments = 0, slice = 1;
    OP_REQUIRES_OK(c, SortedRuns(ids, ignore_, &runs, &nsegments));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, RowsOf(data.shape(), nsegments, &slice), &out));
    const T gap = std::is_same<Op, MulOp>::value ? T(1) : T(0);
    SortedSegmentCpu<T, Op, Order::kIndex, T, int64_t>(runs, data.flat<T>().data(), nullptr,
                                                       slice, nsegments, gap,
                                                       out->flat<T>().data(), CpuParallel(c));
  }
};

// sparse_segment_{sum,mean,sqrt_n}: inputs data, indices, segment_ids
// (sorted), num_segments (< 0: the last id + 1); gaps 0.
template <typename T, typename Op>
class SparseSegmentOp : public PolicyKernel {
 public:
  using PolicyKernel::PolicyKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& data = c->input(0);
    const Tensor& indices = c->input(1);
    const Tensor& ids = c->input(2);
    const Tensor& num_segments = c->input(3);
    OP_REQUIRES(c, data.dims() >= 1,
                absl::InvalidArgumentError(messages::SegmentDataRank(data.shape().DebugString())));
    OP_REQUIRES(c, ::tensorflow::TensorShapeUtils::IsVector(indices.shape()),
                absl::InvalidArgumentError("indices should be a vector."));
    OP_REQUIRES(c, ::tensorflow::TensorShapeUtils::IsVector(ids.shape()),
                absl::InvalidArgumentError("segment_ids should be a vector."));
    OP_REQUIRES(c, ::tensorflow::TensorShapeUtils::IsScalar(num_segments.shape()),
                absl::InvalidArgumentError(absl::StrCat(
                    "num_segments should be a scalar, not shape ",
                    num_segments.shape().DebugString())));
    OP_REQUIRES(c, indices.NumElements() == ids.NumElements(),
                absl::InvalidArgumentError("segment_ids and indices should have same size."));
    const int64_t num = num_segments.dtype() == ::tensorflow::DT_INT32
                            ? num_segments.scalar<int32_t>()()
                            : num_segments.scalar<int64_t>()();
    std::vector<int64_t> rows;
    Runs runs;
    int64_t nsegments = 0, slice = 1;
    OP_REQUIRES_OK(c, SparseRuns(indices, ids, data.dim_size(0), num, ignore_, &rows, &runs,
                                 &nsegments));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, RowsOf(data.shape(), nsegments, &slice), &out));
    SortedSegmentCpu<T, Op, Order::kGroups8, SegmentAccumulator<T>, int64_t>(
        runs, data.flat<T>().data(), rows.data(), slice, nsegments, T(0),
        out->flat<T>().data(), CpuParallel(c));
  }
};

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_TF_SEGMENT_KERNELS_H_
