// TensorFlow's unsorted segment reductions on the CPU core: segment ids are
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
#ifndef TF_SCATTER_OPS_CC_KERNELS_TF_SEGMENT_KERNELS_H_
#define TF_SCATTER_OPS_CC_KERNELS_TF_SEGMENT_KERNELS_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "common/reducers.h"
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

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_TF_SEGMENT_KERNELS_H_
