// The group-wise segment functions (segment_softmax, _log_softmax,
// _logsumexp, _var, _std) and their fused gradients on the CPU core
// (cpu/groupwise_cpu.h), with unsorted_segment_*'s inputs and rules:
// segment ids of any shape that is a prefix of data's, num_segments a
// scalar, negative ids dropped, an id >= num_segments TensorFlow's error
// naming the first one unless IGNORE (then dropped). A dropped row's output
// (softmax, log_softmax) and gradient are 0.
#ifndef TF_SCATTER_OPS_CC_KERNELS_TF_GROUPWISE_KERNELS_H_
#define TF_SCATTER_OPS_CC_KERNELS_TF_GROUPWISE_KERNELS_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "common/groupwise.h"
#include "cpu/groupwise_cpu.h"
#include "tf/segment_kernels.h"

namespace tf_scatter_ops {

// The rows of data grouped by their segment ids (the first id >=
// num_segments is the error unless `ignore`).
Status GroupSegmentRows(const Tensor& ids, int64_t nsegments, bool ignore, Groups* groups);

// Zeroes the rows of `out` ([ids.NumElements(), slice]) that no segment holds.
template <typename T>
void ZeroDroppedRows(const Groups& groups, int64_t n, int64_t slice, T* out) {
  if (groups.offsets.back() == n) return;
  std::vector<char> kept(n, 0);
  for (int64_t r : groups.rows) kept[r] = 1;
  for (int64_t i = 0; i < n; ++i) {
    if (!kept[i]) std::fill_n(out + i * slice, slice, T(0));
  }
}

// 16-bit floats compute in float.
template <typename T>
using GroupwiseCompute = SegmentAccumulator<T>;

// segment_<function>(data, segment_ids, num_segments; ddof).
template <typename T, typename Fn>
class GroupwiseOp : public PolicyKernel {
 public:
  explicit GroupwiseOp(OpKernelConstruction* c) : PolicyKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("ddof", &ddof_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& data = c->input(0);
    const Tensor& ids = c->input(1);
    TensorShape shape;
    int64_t slice = 1;
    OP_REQUIRES_OK(c, UnsortedSegmentOutput(data, ids, c->input(2), &shape, &slice));
    const int64_t nsegments = shape.dim_size(0);
    Groups groups;
    OP_REQUIRES_OK(c, GroupSegmentRows(ids, nsegments, ignore_, &groups));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, Fn::kPerSegment ? shape : data.shape(), &out));
    T* y = out->flat<T>().data();
    if constexpr (!Fn::kPerSegment) ZeroDroppedRows(groups, ids.NumElements(), slice, y);
    GroupwiseCpu<Fn, T, GroupwiseCompute<T>>(groups, nsegments, data.flat<T>().data(), slice,
                                             ddof_, y, CpuParallel(c));
  }

 private:
  int64_t ddof_ = 0;
};

// Its gradient: inputs data, output, the output's gradient, segment_ids,
// num_segments; the data's gradient.
template <typename T, typename Fn>
class GroupwiseGradOp : public PolicyKernel {
 public:
  explicit GroupwiseGradOp(OpKernelConstruction* c) : PolicyKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("ddof", &ddof_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& data = c->input(0);
    const Tensor& output = c->input(1);
    const Tensor& grad = c->input(2);
    const Tensor& ids = c->input(3);
    TensorShape shape;
    int64_t slice = 1;
    OP_REQUIRES_OK(c, UnsortedSegmentOutput(data, ids, c->input(4), &shape, &slice));
    const TensorShape& expected = Fn::kPerSegment ? shape : data.shape();
    OP_REQUIRES(c, output.shape() == expected && grad.shape() == expected,
                absl::InvalidArgumentError(absl::StrCat(
                    "the output and its gradient must have shape ", expected.DebugString(),
                    ", got ", output.shape().DebugString(), " and ",
                    grad.shape().DebugString())));
    const int64_t nsegments = shape.dim_size(0);
    Groups groups;
    OP_REQUIRES_OK(c, GroupSegmentRows(ids, nsegments, ignore_, &groups));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, data.shape(), &out));
    T* dx = out->flat<T>().data();
    ZeroDroppedRows(groups, ids.NumElements(), slice, dx);
    GroupwiseGradCpu<Fn, T, GroupwiseCompute<T>>(
        groups, nsegments, data.flat<T>().data(), output.flat<T>().data(),
        grad.flat<T>().data(), slice, ddof_, dx, CpuParallel(c));
  }

 private:
  int64_t ddof_ = 0;
};

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_TF_GROUPWISE_KERNELS_H_
