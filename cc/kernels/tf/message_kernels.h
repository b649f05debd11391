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
// A CPU gather_reduce kernel keeps the grouping of the last edges it saw (a
// copy of src and dst, and the groups with their sources): a training step
// calls each of its nodes with the same graph every time, so the counting
// sort runs once per graph, and a call whose edges differ (compared in full)
// groups them anew.
//
// On a GPU the CUDA core (cuda/message_gpu.h: the same definitions and
// order, so the CPU's bits), with the ids on the device and num_segments in
// host memory.
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
#if TFSO_WITH_CUDA
#include "cuda/message_gpu.h"
#endif

namespace tf_scatter_ops {

namespace message_detail {

// The error for bad edge e (ids s and d): its src when that is outside
// [0, src_rows), else its dst.
inline Status BadEdgeError(int64_t e, int64_t s, int64_t d, int64_t src_rows, int64_t dst_rows,
                           const char* src_of, const char* dst_of) {
  if (s < 0 || s >= src_rows) {
    return absl::InvalidArgumentError(messages::EdgeIdOutOfRange("src", e, s, src_rows, src_of));
  }
  return absl::InvalidArgumentError(messages::EdgeIdOutOfRange("dst", e, d, dst_rows, dst_of));
}

// The first bad edge (common/message.h's FirstBadEdge) as an error; OK if
// none.
template <typename Index>
Status CheckEdges(const Index* src, const Index* dst, int64_t nedges, int64_t src_rows,
                  int64_t dst_rows, bool negative_dst_ok, const char* src_of,
                  const char* dst_of) {
  const int64_t e = FirstBadEdge(src, dst, nedges, src_rows, dst_rows, negative_dst_ok);
  if (e < 0) return absl::OkStatus();
  return BadEdgeError(e, static_cast<int64_t>(src[e]), static_cast<int64_t>(dst[e]), src_rows,
                      dst_rows, src_of, dst_of);
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

// Whether a backend is the GPU's.
template <typename Backend>
constexpr bool kOnGpu = false;

#if TFSO_WITH_CUDA
template <>
constexpr bool kOnGpu<GpuBackend> = true;

// A GPU call on the edges src -> dst, on the op's stream and scratch.
template <typename Index>
Status PrepareEdgeCall(OpKernelContext* c, const Tensor& src, const Tensor& dst,
                       int64_t src_rows, int64_t dst_rows, bool ignore, TfScratch* scratch,
                       gpu::EdgeCall* call) {
  call->src = src.data();
  call->dst = dst.data();
  call->index_type = sizeof(Index) == 2   ? gpu::IndexType::kInt16
                     : sizeof(Index) == 4 ? gpu::IndexType::kInt32
                                          : gpu::IndexType::kInt64;
  call->nedges = src.NumElements();
  call->src_rows = src_rows;
  call->dst_rows = dst_rows;
  call->ignore = ignore;
  call->scratch = scratch;
  return GpuStreamOf(c, &call->stream);
}

// The Status of a finished GPU edge call: its failure, or its first bad edge.
inline Status EdgeCallStatus(const TfScratch& scratch, const char* error,
                             const gpu::EdgeCall& call, const char* src_of,
                             const char* dst_of) {
  TF_RETURN_IF_ERROR(GpuCoreStatus(scratch, error));
  if (call.bad_edge < 0) return absl::OkStatus();
  return BadEdgeError(call.bad_edge, call.bad_src, call.bad_dst, call.src_rows, call.dst_rows,
                      src_of, dst_of);
}
#endif  // TFSO_WITH_CUDA

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
    OP_REQUIRES_OK(c, WithIndexType(c->input(1), [&](auto index) {
                     return Run<decltype(index)>(c);
                   }));
  }

 private:
  template <typename Index>
  Status Run(OpKernelContext* c) {
    const Tensor& params = c->input(0);
    const Tensor& src = c->input(1);
    const Tensor& dst = c->input(2);
    const Tensor& weights = c->input(4);
    int64_t num = 0;
    TF_RETURN_IF_ERROR(CheckGatherReduce(params.shape(), src.shape(), dst.shape(), c->input(3),
                                         weighted_ ? &weights.shape() : nullptr, &num));
    TensorShape shape;
    int64_t slice = 1;
    TF_RETURN_IF_ERROR(message_detail::RowElements(params.shape(), &slice));
    TF_RETURN_IF_ERROR(RowsOf(params.shape(), num, &shape, &slice));
    const bool arg = IsArgReduce(reduce_);
    Tensor* out = nullptr;
    Tensor* positions = nullptr;
    TF_RETURN_IF_ERROR(c->allocate_output(0, shape, &out));
    TF_RETURN_IF_ERROR(c->allocate_output(1, arg ? shape : TensorShape({0}), &positions));
    const int64_t nedges = src.NumElements(), rows = params.dim_size(0);
    // The weights' values per edge (heads), each scaling `width` elements.
    const int64_t heads = weighted_ && nedges > 0 ? weights.NumElements() / nedges : 1;
    const int64_t width = heads == 0 ? 0 : slice / heads;
    const T* w = weighted_ ? weights.flat<T>().data() : nullptr;
    const T* p = params.flat<T>().data();
    T* o = out->flat<T>().data();
    int64_t* pos = arg ? positions->flat<int64_t>().data() : nullptr;
    using R = EdgeReduce;
    // f(reduce, empty): the reduction as a constant, and what an empty
    // destination's max / min holds.
    const auto with_reduce = [&](auto f) {
      switch (reduce_) {
        case R::kSum: return f(std::integral_constant<R, R::kSum>(), T(0));
        case R::kMean: return f(std::integral_constant<R, R::kMean>(), T(0));
        case R::kMax:
          return f(std::integral_constant<R, R::kMax>(), UnsortedSegmentEmpty<SegmentMaxOp, T>());
        case R::kMin:
          break;
      }
      return f(std::integral_constant<R, R::kMin>(), UnsortedSegmentEmpty<SegmentMinOp, T>());
    };
#if TFSO_WITH_CUDA
    if constexpr (message_detail::kOnGpu<Backend>) {
      TfScratch scratch(c);
      gpu::EdgeCall call;
      TF_RETURN_IF_ERROR(message_detail::PrepareEdgeCall<Index>(c, src, dst, rows, num, ignore_,
                                                                &scratch, &call));
      using E = typename GpuElement<T>::type;
      const char* error = with_reduce([&](auto reduce, T empty) {
        return gpu::GatherReduce<E, decltype(reduce)::value>(
            call, As<E>(p), As<E>(w), heads, width, BitCast<E>(empty), As<E>(o), pos);
      });
      return message_detail::EdgeCallStatus(scratch, error, call, "the rows of params",
                                            "num_segments");
    }
#endif
    const Index* s = src.flat<Index>().data();
    const Index* d = dst.flat<Index>().data();
    if (!ignore_) {
      TF_RETURN_IF_ERROR(message_detail::CheckEdges(s, d, nedges, rows, num,
                                                    /*negative_dst_ok=*/true,
                                                    "the rows of params", "num_segments"));
    }
    if (out->NumElements() == 0) return absl::OkStatus();
    const std::shared_ptr<const EdgeGroups> held = Groups(src, dst, s, d, nedges, num, rows);
    const Parallel parallel = CpuParallel(c);
    TfScratch scratch(c);
    const bool done = with_reduce([&](auto reduce, T empty) {
      return GatherReduceCpu<decltype(reduce)::value>(*held, p, w, heads, width, empty, o, pos,
                                                      parallel, scratch);
    });
    return done ? absl::OkStatus() : scratch.status();
  }

  // The edges grouped by destination, with their sources: the last call's
  // groups where the edges are the same (src and dst, and under IGNORE,
  // which leaves out edges with a bad source, params' rows too).
  template <typename Index>
  std::shared_ptr<const EdgeGroups> Groups(const Tensor& src, const Tensor& dst, const Index* s,
                                           const Index* d, int64_t nedges, int64_t num,
                                           int64_t rows) {
    const absl::string_view dst_bytes = dst.tensor_data();
    const absl::string_view src_bytes = src.tensor_data();
    const int64_t cached_rows = ignore_ ? rows : -1;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (cached_ != nullptr && cached_num_ == num && cached_rows_ == cached_rows &&
          cached_dst_ == dst_bytes && cached_src_ == src_bytes) {
        return cached_;
      }
    }
    auto groups = std::make_shared<EdgeGroups>();
    GroupEdges(s, d, nedges, num,
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
    OP_REQUIRES_OK(c, WithIndexType(c->input(2), [&](auto index) {
                     return Run<decltype(index)>(c);
                   }));
  }

 private:
  template <typename Index>
  Status Run(OpKernelContext* c) {
    const Tensor& a = c->input(0);
    const Tensor& b = c->input(1);
    const Tensor& src = c->input(2);
    const Tensor& dst = c->input(3);
    const bool dot = op_ == EdgeOp::kDot;
    TF_RETURN_IF_ERROR(CheckEdgeCombine(a.shape(), b.shape(), src.shape(), dst.shape(), dot));
    const int64_t nedges = src.NumElements();
    TensorShape shape;
    TF_RETURN_IF_ERROR(shape.AddDimWithStatus(nedges));
    for (int k = 1; k < a.dims() - (dot ? 1 : 0); ++k) {
      TF_RETURN_IF_ERROR(shape.AddDimWithStatus(a.dim_size(k)));
    }
    Tensor* out = nullptr;
    TF_RETURN_IF_ERROR(c->allocate_output(0, shape, &out));
    const int64_t arows = a.dim_size(0), brows = b.dim_size(0);
    int64_t slice = 1;
    TF_RETURN_IF_ERROR(message_detail::RowElements(a.shape(), &slice));
    const int64_t width = dot ? a.dim_size(a.dims() - 1) : 1;
    // (out_slice is read only where out has elements: then nedges > 0)
    const int64_t out_slice = nedges == 0 ? 0 : out->NumElements() / nedges;
    const T* x = a.flat<T>().data();
    const T* y = b.flat<T>().data();
    T* o = out->flat<T>().data();
    // f(op): the op as a constant.
    const auto with_op = [&](auto f) {
      switch (op_) {
        case EdgeOp::kAdd: return f(std::integral_constant<EdgeOp, EdgeOp::kAdd>());
        case EdgeOp::kSub: return f(std::integral_constant<EdgeOp, EdgeOp::kSub>());
        case EdgeOp::kMul: return f(std::integral_constant<EdgeOp, EdgeOp::kMul>());
        case EdgeOp::kDot: break;
      }
      return f(std::integral_constant<EdgeOp, EdgeOp::kDot>());
    };
#if TFSO_WITH_CUDA
    if constexpr (message_detail::kOnGpu<Backend>) {
      TfScratch scratch(c);
      gpu::EdgeCall call;
      TF_RETURN_IF_ERROR(message_detail::PrepareEdgeCall<Index>(c, src, dst, arows, brows,
                                                                ignore_, &scratch, &call));
      using E = typename GpuElement<T>::type;
      const char* error = with_op([&](auto op) {
        return gpu::EdgeCombine<E, decltype(op)::value>(
            call, As<E>(x), As<E>(y), slice, width, out_slice, As<E>(o));
      });
      return message_detail::EdgeCallStatus(scratch, error, call, "the rows of a",
                                            "the rows of b");
    }
#endif
    const Index* s = src.flat<Index>().data();
    const Index* d = dst.flat<Index>().data();
    if (!ignore_) {
      TF_RETURN_IF_ERROR(message_detail::CheckEdges(s, d, nedges, arows, brows,
                                                    /*negative_dst_ok=*/false, "the rows of a",
                                                    "the rows of b"));
    }
    if (out->NumElements() == 0) return absl::OkStatus();
    const auto keep = [&](int64_t e) {
      return s[e] >= 0 && s[e] < arows && d[e] >= 0 && d[e] < brows;
    };
    const Parallel parallel = CpuParallel(c);
    with_op([&](auto op) {
      EdgeCombineCpu<decltype(op)::value, T, SegmentAccumulator<T>>(
          x, y, s, d, nedges, slice, width, out_slice, keep, o, parallel);
    });
    return absl::OkStatus();
  }

  EdgeOp op_ = EdgeOp::kAdd;
};

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_TF_MESSAGE_KERNELS_H_
