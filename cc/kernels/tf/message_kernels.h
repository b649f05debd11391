// The message-passing kernels on the CPU core (cpu/message_cpu.h):
// gather_reduce and edge_combine. Their shape rules are ops/shape_checks.h's
// (rules::GatherReduce, rules::EdgeCombine); the ids' rules are here:
//
// - gather_reduce: src indexes params' rows, dst the output's rows
//   (num_segments). An edge with a negative dst is dropped, as
//   unsorted_segment_* drops a negative id; any other id out of range is an
//   error naming the first such edge, unless "IGNORE" (then the edge is
//   dropped).
// - edge_combine: src indexes a's rows, dst b's; an edge with either out of
//   range is an error, unless "IGNORE" (then its output row is 0).
//
// A gather_reduce kernel keeps the grouping of the last edges it saw (a copy
// of dst, under IGNORE of src too, and the groups): a training step calls
// each of its nodes with the same graph every time, so the counting sort
// runs once per graph, and a call whose edges differ (compared in full)
// groups them anew.
#ifndef TF_SCATTER_OPS_CC_KERNELS_TF_MESSAGE_KERNELS_H_
#define TF_SCATTER_OPS_CC_KERNELS_TF_MESSAGE_KERNELS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "common/reducers.h"
#include "cpu/message_cpu.h"
#include "ops/shape_checks.h"
#include "tf/scatter_kernels.h"
#include "tf/segment_kernels.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor_shape.h"
#include "tensorflow/core/util/overflow.h"

namespace tf_scatter_ops {

namespace message_detail {

// The first edge whose src (in [0, src_rows)) or dst (in [0, dst_rows); below
// 0 too when `negative_dst_ok`) is out of range, as an error; OK if none.
template <typename Index>
Status FirstBadEdge(const Index* src, const Index* dst, int64_t nedges, int64_t src_rows,
                    int64_t dst_rows, bool negative_dst_ok, const char* src_of,
                    const char* dst_of) {
  for (int64_t e = 0; e < nedges; ++e) {
    const int64_t s = src[e], d = dst[e];
    if (s < 0 || s >= src_rows) {
      return absl::InvalidArgumentError(
          messages::EdgeIdOutOfRange("src", e, s, src_rows, src_of));
    }
    if (d >= dst_rows || (d < 0 && !negative_dst_ok)) {
      return absl::InvalidArgumentError(
          messages::EdgeIdOutOfRange("dst", e, d, dst_rows, dst_of));
    }
  }
  return absl::OkStatus();
}

// The elements of a row (dims 1 on), checked: with 0 rows TensorShape does
// not bound the other dims' product.
inline Status RowElements(const TensorShape& shape, int64_t* slice) {
  *slice = 1;
  for (int k = 1; k < shape.dims(); ++k) {
    *slice = ::tensorflow::MultiplyWithoutOverflow(*slice, shape.dim_size(k));
    if (*slice < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the rows of shape ", shape.DebugString(), " have too many elements for int64"));
    }
  }
  return absl::OkStatus();
}

}  // namespace message_detail

// gather_reduce: inputs params, src, dst, num_segments, weights (read when
// `weighted`); outputs the reduction and, for max and min, the edge that
// holds each element (else an empty vector).
template <typename Backend, typename T>
class GatherReduceOp : public PolicyKernel {
 public:
  explicit GatherReduceOp(OpKernelConstruction* c) : PolicyKernel(c) {
    std::string reduce;
    OP_REQUIRES_OK(c, c->GetAttr("reduce", &reduce));
    OP_REQUIRES_OK(c, c->GetAttr("weighted", &weighted_));
    reduce_ = reduce == "mean" ? EdgeReduce::kMean
              : reduce == "max" ? EdgeReduce::kMax
              : reduce == "min" ? EdgeReduce::kMin
                                : EdgeReduce::kSum;
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& src = c->input(1);
    if (src.dtype() == ::tensorflow::DT_INT16) return Run<int16_t>(c);
    if (src.dtype() == ::tensorflow::DT_INT32) return Run<int32_t>(c);
    return Run<int64_t>(c);
  }

 private:
  template <typename Index>
  void Run(OpKernelContext* c) {
    const Tensor& params = c->input(0);
    const Tensor& src = c->input(1);
    const Tensor& dst = c->input(2);
    const Tensor& weights = c->input(4);
    int64_t num = 0;
    OP_REQUIRES_OK(c, CheckGatherReduce(params.shape(), src.shape(), dst.shape(), c->input(3),
                                        weighted_ ? &weights.shape() : nullptr, &num));
    TensorShape shape;
    int64_t slice = 1;
    OP_REQUIRES_OK(c, message_detail::RowElements(params.shape(), &slice));
    OP_REQUIRES_OK(c, RowsOf(params.shape(), num, &shape, &slice));
    const bool arg = reduce_ == EdgeReduce::kMax || reduce_ == EdgeReduce::kMin;
    Tensor* out = nullptr;
    Tensor* positions = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    OP_REQUIRES_OK(c, c->allocate_output(1, arg ? shape : TensorShape({0}), &positions));
    const int64_t nedges = src.NumElements(), rows = params.dim_size(0);
    const Index* s = src.flat<Index>().data();
    const Index* d = dst.flat<Index>().data();
    if (!ignore_) {
      OP_REQUIRES_OK(c, message_detail::FirstBadEdge(s, d, nedges, rows, num,
                                                     /*negative_dst_ok=*/true,
                                                     "the rows of params", "num_segments"));
    }
    if (out->NumElements() == 0) return;
    const std::shared_ptr<const EdgeGroups> held = Groups(src, dst, s, d, nedges, num, rows);
    const EdgeGroups& groups = *held;
    // The weights' values per edge (heads), each scaling `width` elements.
    const int64_t heads = weighted_ && nedges > 0 ? weights.NumElements() / nedges : 1;
    const int64_t width = heads == 0 ? 0 : slice / heads;
    const T* w = weighted_ ? weights.flat<T>().data() : nullptr;
    const T* p = params.flat<T>().data();
    T* o = out->flat<T>().data();
    int64_t* pos = arg ? positions->flat<int64_t>().data() : nullptr;
    const Parallel parallel = CpuParallel(c);
    const auto run = [&](auto reduce, T empty) {
      GatherReduceCpu<decltype(reduce)::value>(groups, p, s, w, heads, width, empty, o, pos,
                                               parallel);
    };
    using R = EdgeReduce;
    switch (reduce_) {
      case R::kSum: return run(std::integral_constant<R, R::kSum>(), T(0));
      case R::kMean: return run(std::integral_constant<R, R::kMean>(), T(0));
      case R::kMax:
        return run(std::integral_constant<R, R::kMax>(), UnsortedSegmentEmpty<SegmentMaxOp, T>());
      case R::kMin:
        return run(std::integral_constant<R, R::kMin>(), UnsortedSegmentEmpty<SegmentMinOp, T>());
    }
  }

  // The edges grouped by destination: the last call's groups where the
  // edges are the same (dst, and under IGNORE, which leaves out edges with a
  // bad source, src and params' rows too).
  template <typename Index>
  std::shared_ptr<const EdgeGroups> Groups(const Tensor& src, const Tensor& dst, const Index* s,
                                           const Index* d, int64_t nedges, int64_t num,
                                           int64_t rows) {
    const absl::string_view dst_bytes = dst.tensor_data();
    const absl::string_view src_bytes = ignore_ ? src.tensor_data() : absl::string_view();
    const int64_t cached_rows = ignore_ ? rows : -1;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (cached_ != nullptr && cached_num_ == num && cached_rows_ == cached_rows &&
          cached_dst_ == dst_bytes && cached_src_ == src_bytes) {
        return cached_;
      }
    }
    auto groups = std::make_shared<EdgeGroups>();
    GroupEdges(d, nedges, num,
               [&](int64_t e) { return d[e] >= 0 && d[e] < num && s[e] >= 0 && s[e] < rows; },
               groups.get());
    std::lock_guard<std::mutex> lock(mu_);
    cached_dst_.assign(dst_bytes.data(), dst_bytes.size());
    cached_src_.assign(src_bytes.data(), src_bytes.size());
    cached_num_ = num;
    cached_rows_ = cached_rows;
    cached_ = groups;
    return groups;
  }

  EdgeReduce reduce_ = EdgeReduce::kSum;
  bool weighted_ = false;
  std::mutex mu_;
  std::string cached_dst_, cached_src_;  // (guarded by mu_, as the three below)
  int64_t cached_num_ = -1, cached_rows_ = -1;
  std::shared_ptr<const EdgeGroups> cached_;
};

// edge_combine: inputs a, b, src, dst; output [edges] + a.shape[1:] (dot:
// without the last axis).
template <typename Backend, typename T>
class EdgeCombineOp : public PolicyKernel {
 public:
  explicit EdgeCombineOp(OpKernelConstruction* c) : PolicyKernel(c) {
    std::string op;
    OP_REQUIRES_OK(c, c->GetAttr("op", &op));
    op_ = op == "sub" ? EdgeOp::kSub
          : op == "mul" ? EdgeOp::kMul
          : op == "dot" ? EdgeOp::kDot
                        : EdgeOp::kAdd;
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& src = c->input(2);
    if (src.dtype() == ::tensorflow::DT_INT16) return Run<int16_t>(c);
    if (src.dtype() == ::tensorflow::DT_INT32) return Run<int32_t>(c);
    return Run<int64_t>(c);
  }

 private:
  template <typename Index>
  void Run(OpKernelContext* c) {
    const Tensor& a = c->input(0);
    const Tensor& b = c->input(1);
    const Tensor& src = c->input(2);
    const Tensor& dst = c->input(3);
    const bool dot = op_ == EdgeOp::kDot;
    OP_REQUIRES_OK(c, CheckEdgeCombine(a.shape(), b.shape(), src.shape(), dst.shape(), dot));
    const int64_t nedges = src.NumElements();
    TensorShape shape;
    OP_REQUIRES_OK(c, shape.AddDimWithStatus(nedges));
    for (int k = 1; k < a.dims() - (dot ? 1 : 0); ++k) {
      OP_REQUIRES_OK(c, shape.AddDimWithStatus(a.dim_size(k)));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const Index* s = src.flat<Index>().data();
    const Index* d = dst.flat<Index>().data();
    const int64_t arows = a.dim_size(0), brows = b.dim_size(0);
    if (!ignore_) {
      OP_REQUIRES_OK(c, message_detail::FirstBadEdge(s, d, nedges, arows, brows,
                                                     /*negative_dst_ok=*/false, "the rows of a",
                                                     "the rows of b"));
    }
    if (out->NumElements() == 0) return;
    int64_t slice = 1;
    OP_REQUIRES_OK(c, message_detail::RowElements(a.shape(), &slice));
    const int64_t width = dot ? a.dim_size(a.dims() - 1) : 1;
    const int64_t out_slice = out->NumElements() / nedges;  // (nedges > 0: out has elements)
    const auto keep = [&](int64_t e) {
      return s[e] >= 0 && s[e] < arows && d[e] >= 0 && d[e] < brows;
    };
    const T* x = a.flat<T>().data();
    const T* y = b.flat<T>().data();
    T* o = out->flat<T>().data();
    const Parallel parallel = CpuParallel(c);
    const auto run = [&](auto op) {
      EdgeCombineCpu<decltype(op)::value, T, SegmentAccumulator<T>>(
          x, y, s, d, nedges, slice, width, out_slice, keep, o, parallel);
    };
    switch (op_) {
      case EdgeOp::kAdd: return run(std::integral_constant<EdgeOp, EdgeOp::kAdd>());
      case EdgeOp::kSub: return run(std::integral_constant<EdgeOp, EdgeOp::kSub>());
      case EdgeOp::kMul: return run(std::integral_constant<EdgeOp, EdgeOp::kMul>());
      case EdgeOp::kDot: return run(std::integral_constant<EdgeOp, EdgeOp::kDot>());
    }
  }

  EdgeOp op_ = EdgeOp::kAdd;
};

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_TF_MESSAGE_KERNELS_H_
