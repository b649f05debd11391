// The group-wise segment functions (segment_softmax, _log_softmax,
// _logsumexp, _var, _std) and their fused gradients on the CPU, with
// unsorted_segment_*'s inputs and rules: segment ids of any shape that is a
// prefix of data's, num_segments a scalar, negative ids dropped, an id >=
// num_segments TensorFlow's error naming the first one unless IGNORE (then
// dropped). A dropped row's output (softmax, log_softmax) and gradient are 0.
//
// On the CPU each is the formula of common/groupwise.h as segment
// reductions on the scatter core (CpuSegment: the max, the sums in index
// order) between streaming element-wise passes (cpu/groupwise_cpu.h), in the
// compute type C (float for 16-bit floats). On a GPU the CUDA core
// (cuda/groupwise_gpu.h) computes the same steps in the same order, so both
// give the same bits; the ids stay on the device (their first id out of
// range found there), num_segments is read on the host.
#ifndef TF_SCATTER_OPS_CC_KERNELS_TF_GROUPWISE_KERNELS_H_
#define TF_SCATTER_OPS_CC_KERNELS_TF_GROUPWISE_KERNELS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <cstddef>
#include <new>
#include <stdexcept>
#include <vector>

#include "common/groupwise.h"
#include "cpu/groupwise_cpu.h"
#include "tf/segment_kernels.h"
#if TFSO_WITH_CUDA
#include "cuda/groupwise_gpu.h"
#endif

namespace tf_scatter_ops {

// f(ids as const Index*) for the ids' dtype.
template <typename F>
auto WithIds(const Tensor& ids, const F& f) {
  switch (ids.dtype()) {
    case ::tensorflow::DT_INT16: return f(ids.flat<int16_t>().data());
    case ::tensorflow::DT_INT32: return f(ids.flat<int32_t>().data());
    default: return f(ids.flat<int64_t>().data());
  }
}

// The rows each segment keeps (ids in [0, nsegments)).
std::vector<int64_t> SegmentRowCounts(const Tensor& ids, int64_t nsegments);

// A tensor's values in the compute type C: the tensor's own buffer, or a
// converted copy (16-bit floats).
template <typename T, typename C>
class AsCompute {
 public:
  explicit AsCompute(const Tensor& t) {
    const T* p = t.flat<T>().data();
    if constexpr (std::is_same<T, C>::value) {
      data_ = p;
    } else {
      copy_.assign(p, p + t.NumElements());  // element-wise static_cast
      data_ = copy_.data();
    }
  }
  const C* data() const { return data_; }

 private:
  const C* data_ = nullptr;
  std::vector<C> copy_;
};

// What the CPU's group-wise functions (cpu/groupwise_cpu.h) compute with on
// TensorFlow's tensors: the ids, the output's shape, the segment reductions
// on the scatter core, scratch from TensorFlow's allocator, its threads.
template <typename C>
struct SegmentPasses {
  using Status = ::tensorflow::Status;
  using Holder = Tensor;  // what holds a Temp

  OpKernelContext* c;
  const Tensor& ids;
  TensorShape shape;  // [nsegments] + slice dims
  int64_t n = 0, nsegments = 0, slice = 1;
  bool ignore = false;

  int64_t size() const { return nsegments * slice; }

  // Scratch of `count` C from TensorFlow's allocator (its pooled memory: a
  // fresh std::vector of a row-shaped size costs page faults on every call),
  // uninitialised; *t holds it.
  Status Temp(int64_t count, Tensor* t, C** data) const {
    TF_RETURN_IF_ERROR(c->allocate_temp(::tensorflow::DataTypeToEnum<C>::v(),
                                        TensorShape({count}), t));
    *data = t->flat<C>().data();
    return absl::OkStatus();
  }

  // out[nsegments, slice] = the reduction Op of rows x[n, slice] (out holds
  // Op's identity when `mode` is kInPlace); the ids' error if any.
  template <typename Op>
  Status Reduce(const C* x, Init mode, C* out) const {
    TfScratch scratch(c);
    const ScatterForm f{n, 1, nsegments, slice};
    return CpuSegment<C, Op>(ids, f, shape, ignore, x, mode, out, CpuParallel(c), scratch);
  }

  // out[i] = f(row element, segment element) for every row (0 if dropped).
  template <typename Out, typename F>
  void Rows(Out* out, const F& f) const {
    WithIds(ids, [&](const auto* v) {
      RowsFromSegments(v, n, nsegments, slice, out, CpuParallel(c), f);
      return 0;
    });
  }

  // The rows each segment keeps.
  std::vector<int64_t> Counts() const { return SegmentRowCounts(ids, nsegments); }

  // TensorFlow's error for the first id >= nsegments, unless IGNORE.
  Status CheckIds() const {
    return ignore ? absl::OkStatus() : FirstSegmentIdOutOfRange(ids, 0, nsegments);
  }

  static bool IsOk(const Status& s) { return s.ok(); }
  static Status Ok() { return absl::OkStatus(); }
};

// The passes' per-segment vectors are sized by num_segments, a user's value
// that the output does not bound (softmax's output is data's shape): memory
// they cannot have is a ResourceExhaustedError, never an abort. Sizes past
// what a vector may hold are refused before it is made; an allocation that
// fails is caught.
inline Status PerSegmentScratchError(int64_t nsegments, int64_t slice) {
  return absl::ResourceExhaustedError(absl::StrCat("OOM when allocating the per-segment scratch of ",
                                                   nsegments, " segments of ", slice,
                                                   " elements"));
}

// Sizes past what a vector may hold (16 bytes an element: the widest of the
// vectors, a double or an int64 count). The GPU kernels keep nothing per
// segment but refuse the same sizes, with the same error.
inline Status PerSegmentScratchFits(int64_t nsegments, int64_t slice) {
  constexpr int64_t kMaxElements = std::numeric_limits<std::ptrdiff_t>::max() / 16;
  if (nsegments > kMaxElements || (nsegments > 0 && slice > kMaxElements / nsegments)) {
    return PerSegmentScratchError(nsegments, slice);
  }
  return absl::OkStatus();
}

template <typename F>
Status WithoutAbortOnBadAlloc(int64_t nsegments, int64_t slice, const F& f) {
  TF_RETURN_IF_ERROR(PerSegmentScratchFits(nsegments, slice));
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return PerSegmentScratchError(nsegments, slice);
  } catch (const std::length_error&) {
    return PerSegmentScratchError(nsegments, slice);
  }
}

// 16-bit floats compute in float.
template <typename T>
using GroupwiseCompute = SegmentAccumulator<T>;

// The CPU's passes on tensors (the data, its output and the output's
// gradient in the compute type C).
struct CpuGroupwise {
  template <typename Fn, typename T, typename C>
  static Status Forward(const SegmentPasses<C>& p, const Tensor& data, int64_t ddof,
                        Tensor* out) {
    const AsCompute<T, C> x(data);
    return WithoutAbortOnBadAlloc(p.nsegments, p.slice, [&] {
      return GroupwiseForwardCpu<Fn, T, C>(p, x.data(), ddof, out->flat<T>().data());
    });
  }

  template <typename Fn, typename T, typename C>
  static Status Backward(const SegmentPasses<C>& p, const Tensor& data, const Tensor& output,
                         const Tensor& grad, int64_t ddof, Tensor* out) {
    const AsCompute<T, C> x(data), y(output), g(grad);
    return WithoutAbortOnBadAlloc(p.nsegments, p.slice, [&] {
      return GroupwiseBackwardCpu<Fn, T, C>(p, x.data(), y.data(), g.data(), ddof,
                                            out->flat<T>().data());
    });
  }
};

#if TFSO_WITH_CUDA
// The CUDA core (cuda/groupwise_gpu.h) on the op's stream: the ids a depth-1
// scatter call into [nsegments, slice], negative ids dropped, the first id
// >= nsegments TensorFlow's error unless IGNORE (as GpuSegments::Unsorted).
struct GpuGroupwise {
  template <typename C>
  static Status Call(const SegmentPasses<C>& p, GpuCallState* s) {
    TF_RETURN_IF_ERROR(PerSegmentScratchFits(p.nsegments, p.slice));
    const ScatterForm f{p.n, 1, p.nsegments, p.slice};
    TF_RETURN_IF_ERROR(PrepareGpuCall(p.ids, f, p.shape, p.ignore, s));
    s->call.drop_negative = true;
    return absl::OkStatus();
  }

  template <typename Fn, typename T, typename C>
  static Status Forward(const SegmentPasses<C>& p, const Tensor& data, int64_t ddof,
                        Tensor* out) {
    using E = typename GpuElement<T>::type;
    GpuCallState s(p.c);
    TF_RETURN_IF_ERROR(Call(p, &s));
    const char* error = gpu::GroupwiseForward<E, Fn::kFunction>(
        s.call, ddof, As<E>(data.flat<T>().data()), As<E>(out->flat<T>().data()));
    return GpuSegmentStatus(s, error, p.ids.shape());
  }

  template <typename Fn, typename T, typename C>
  static Status Backward(const SegmentPasses<C>& p, const Tensor& data, const Tensor& output,
                         const Tensor& grad, int64_t ddof, Tensor* out) {
    using E = typename GpuElement<T>::type;
    GpuCallState s(p.c);
    TF_RETURN_IF_ERROR(Call(p, &s));
    const char* error = gpu::GroupwiseBackward<E, Fn::kFunction>(
        s.call, ddof, As<E>(data.flat<T>().data()), As<E>(output.flat<T>().data()),
        As<E>(grad.flat<T>().data()), As<E>(out->flat<T>().data()));
    return GpuSegmentStatus(s, error, p.ids.shape());
  }
};
#endif  // TFSO_WITH_CUDA

// The group-wise core of a backend (scatter_kernels.h: CpuBackend, GpuBackend).
template <typename Backend>
struct GroupwiseCore {
  using type = CpuGroupwise;
};
#if TFSO_WITH_CUDA
template <>
struct GroupwiseCore<GpuBackend> {
  using type = GpuGroupwise;
};
#endif

// What the group-wise kernels share: the ddof attr, and the passes' shape,
// sizes and policy from data, its ids and num_segments (checked as
// unsorted_segment_*'s).
class GroupwiseKernel : public PolicyKernel {
 public:
  explicit GroupwiseKernel(OpKernelConstruction* c) : PolicyKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("ddof", &ddof_));
  }

 protected:
  template <typename C>
  Status Prepare(const Tensor& data, const Tensor& num_segments, SegmentPasses<C>* p) const {
    TF_RETURN_IF_ERROR(UnsortedSegmentOutput(data, p->ids, num_segments, &p->shape, &p->slice));
    p->n = p->ids.NumElements();
    p->nsegments = p->shape.dim_size(0);
    p->ignore = ignore_;
    return absl::OkStatus();
  }

  int64_t ddof_ = 0;
};

// segment_<function>(data, segment_ids, num_segments; ddof) on a backend
// (on a GPU num_segments in host memory).
template <typename Backend, typename T, typename Fn>
class GroupwiseOp : public GroupwiseKernel {
 public:
  using GroupwiseKernel::GroupwiseKernel;

  void Compute(OpKernelContext* c) override {
    using C = GroupwiseCompute<T>;
    const Tensor& data = c->input(0);
    SegmentPasses<C> p{c, c->input(1)};
    OP_REQUIRES_OK(c, Prepare(data, c->input(2), &p));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, Fn::kPerSegment ? p.shape : data.shape(), &out));
    OP_REQUIRES_OK(c, (GroupwiseCore<Backend>::type::template Forward<Fn, T, C>(p, data, ddof_,
                                                                                 out)));
  }
};

// Its gradient: inputs data, output, the output's gradient, segment_ids,
// num_segments; the data's gradient.
template <typename Backend, typename T, typename Fn>
class GroupwiseGradOp : public GroupwiseKernel {
 public:
  using GroupwiseKernel::GroupwiseKernel;

  void Compute(OpKernelContext* c) override {
    using C = GroupwiseCompute<T>;
    const Tensor& data = c->input(0);
    const Tensor& output = c->input(1);
    const Tensor& grad = c->input(2);
    SegmentPasses<C> p{c, c->input(3)};
    OP_REQUIRES_OK(c, Prepare(data, c->input(4), &p));
    const TensorShape& expected = Fn::kPerSegment ? p.shape : data.shape();
    OP_REQUIRES(c, output.shape() == expected && grad.shape() == expected,
                absl::InvalidArgumentError(absl::StrCat(
                    "the output and its gradient must have shape ", expected.DebugString(),
                    ", got ", output.shape().DebugString(), " and ",
                    grad.shape().DebugString())));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, data.shape(), &out));
    OP_REQUIRES_OK(c, (GroupwiseCore<Backend>::type::template Backward<Fn, T, C>(
                          p, data, output, grad, ddof_, out)));
  }
};

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_TF_GROUPWISE_KERNELS_H_
