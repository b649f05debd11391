// The group-wise segment functions (segment_softmax, _log_softmax,
// _logsumexp, _var, _std) and their fused gradients on the CPU, with
// unsorted_segment_*'s inputs and rules: segment ids of any shape that is a
// prefix of data's, num_segments a scalar, negative ids dropped, an id >=
// num_segments TensorFlow's error naming the first one unless IGNORE (then
// dropped). A dropped row's output (softmax, log_softmax) and gradient are 0.
//
// Each is the formula of common/groupwise.h as segment reductions on the
// scatter core (CpuSegment: the max, the sums in index order) between
// streaming element-wise passes (cpu/groupwise_cpu.h), in the compute type
// C (float for 16-bit floats).
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

// What every group-wise kernel computes with: the ids, the output's shape,
// the segment reductions on the scatter core.
template <typename C>
struct SegmentPasses {
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

  // The segments' means of x (NaN for an empty segment) and row counts.
  Status Means(const C* x, std::vector<C>* mean, std::vector<int64_t>* counts) const {
    mean->resize(size());
    TF_RETURN_IF_ERROR(Reduce<AddOp>(x, Init::kZero, mean->data()));
    *counts = SegmentRowCounts(ids, nsegments);
    for (int64_t s = 0; s < nsegments; ++s) {
      for (int64_t j = 0; j < slice; ++j) (*mean)[s * slice + j] /= static_cast<C>((*counts)[s]);
    }
    return absl::OkStatus();
  }
};

// The forward of Fn into y ([n, slice] or, per segment, [nsegments, slice]).
template <typename Fn, typename T, typename C>
Status GroupwiseForward(const SegmentPasses<C>& p, const C* x, int64_t ddof, T* y) {
  constexpr Groupwise kF = Fn::kFunction;
  const int64_t size = p.size();
  if constexpr (Fn::kMoments) {
    std::vector<C> mean, total(size);
    std::vector<int64_t> counts;
    TF_RETURN_IF_ERROR(p.Means(x, &mean, &counts));
    Tensor scratch;
    C* squares = nullptr;
    TF_RETURN_IF_ERROR(p.Temp(p.n * p.slice, &scratch, &squares));
    p.Rows(squares, [&](int64_t r, int64_t s) {
      const C d = x[r] - mean[s];
      return d * d;
    });
    TF_RETURN_IF_ERROR(p.template Reduce<AddOp>(squares, Init::kZero, total.data()));
    for (int64_t s = 0; s < p.nsegments; ++s) {
      const C divisor = groupwise::VarDivisor<C>(counts[s], ddof);
      for (int64_t j = 0; j < p.slice; ++j) {
        C v = total[s * p.slice + j] / divisor;
        if constexpr (kF == Groupwise::kStd) v = std::sqrt(v);
        y[s * p.slice + j] = static_cast<T>(v);
      }
    }
  } else {
    std::vector<C> shift(size, -std::numeric_limits<C>::infinity()), total(size);
    TF_RETURN_IF_ERROR(p.template Reduce<MaxOp>(x, Init::kInPlace, shift.data()));
    for (C& m : shift) m = groupwise::Shift(m);
    // The exponentials: in y itself for a softmax that holds them exactly.
    constexpr bool kInY = kF == Groupwise::kSoftmax && std::is_same<T, C>::value;
    Tensor scratch;
    C* e = reinterpret_cast<C*>(y);
    if (!kInY) TF_RETURN_IF_ERROR(p.Temp(p.n * p.slice, &scratch, &e));
    p.Rows(e, [&](int64_t r, int64_t s) { return groupwise::Exp(x[r] - shift[s]); });
    TF_RETURN_IF_ERROR(p.template Reduce<AddOp>(e, Init::kZero, total.data()));
    if constexpr (kF == Groupwise::kLogSumExp) {
      for (int64_t k = 0; k < size; ++k) y[k] = static_cast<T>(shift[k] + std::log(total[k]));
    } else if constexpr (kF == Groupwise::kLogSoftmax) {
      for (C& t : total) t = std::log(t);
      p.Rows(y, [&](int64_t r, int64_t s) {
        return static_cast<T>((x[r] - shift[s]) - total[s]);
      });
    } else {
      for (C& t : total) t = C(1) / t;
      p.Rows(y, [&](int64_t r, int64_t s) { return static_cast<T>(e[r] * total[s]); });
    }
  }
  return absl::OkStatus();
}

// The gradient of Fn: dx [n, slice] from x, the output y and its gradient g
// (each [n, slice] or, per segment, [nsegments, slice]).
template <typename Fn, typename T, typename C>
Status GroupwiseBackward(const SegmentPasses<C>& p, const C* x, const C* y, const C* g,
                         int64_t ddof, T* dx) {
  constexpr Groupwise kF = Fn::kFunction;
  if constexpr (kF == Groupwise::kSoftmax || kF == Groupwise::kLogSoftmax) {
    std::vector<C> total(p.size());
    if constexpr (kF == Groupwise::kSoftmax) {
      Tensor scratch;
      C* gy = nullptr;
      TF_RETURN_IF_ERROR(p.Temp(p.n * p.slice, &scratch, &gy));
      p.Rows(gy, [&](int64_t r, int64_t) { return g[r] * y[r]; });
      TF_RETURN_IF_ERROR(p.template Reduce<AddOp>(gy, Init::kZero, total.data()));
      p.Rows(dx, [&](int64_t r, int64_t s) { return static_cast<T>(y[r] * (g[r] - total[s])); });
    } else {
      TF_RETURN_IF_ERROR(p.template Reduce<AddOp>(g, Init::kZero, total.data()));
      p.Rows(dx, [&](int64_t r, int64_t s) {
        return static_cast<T>(g[r] - groupwise::Exp(y[r]) * total[s]);
      });
    }
  } else if constexpr (kF == Groupwise::kLogSumExp) {
    if (!p.ignore) TF_RETURN_IF_ERROR(FirstSegmentIdOutOfRange(p.ids, 0, p.nsegments));
    p.Rows(dx, [&](int64_t r, int64_t s) {
      return static_cast<T>(g[s] * groupwise::Exp(x[r] - y[s]));
    });
  } else {
    std::vector<C> mean, scale(p.size());
    std::vector<int64_t> counts;
    TF_RETURN_IF_ERROR(p.Means(x, &mean, &counts));
    for (int64_t s = 0; s < p.nsegments; ++s) {
      const C divisor = groupwise::VarDivisor<C>(counts[s], ddof);
      for (int64_t j = 0; j < p.slice; ++j) {
        const int64_t k = s * p.slice + j;
        scale[k] = kF == Groupwise::kVar ? C(2) * g[k] / divisor : g[k] / (divisor * y[k]);
      }
    }
    p.Rows(dx, [&](int64_t r, int64_t s) { return static_cast<T>(scale[s] * (x[r] - mean[s])); });
  }
  return absl::OkStatus();
}

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

template <typename F>
Status WithoutAbortOnBadAlloc(int64_t nsegments, int64_t slice, const F& f) {
  // (16 bytes: the widest element of the vectors, a double or an int64 count)
  constexpr int64_t kMaxElements = std::numeric_limits<std::ptrdiff_t>::max() / 16;
  if (nsegments > kMaxElements || (nsegments > 0 && slice > kMaxElements / nsegments)) {
    return PerSegmentScratchError(nsegments, slice);
  }
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

// segment_<function>(data, segment_ids, num_segments; ddof).
template <typename T, typename Fn>
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
    const AsCompute<T, C> x(data);
    OP_REQUIRES_OK(c, WithoutAbortOnBadAlloc(p.nsegments, p.slice, [&] {
                     return GroupwiseForward<Fn, T, C>(p, x.data(), ddof_, out->flat<T>().data());
                   }));
  }
};

// Its gradient: inputs data, output, the output's gradient, segment_ids,
// num_segments; the data's gradient.
template <typename T, typename Fn>
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
    const AsCompute<T, C> x(data), y(output), g(grad);
    OP_REQUIRES_OK(c, WithoutAbortOnBadAlloc(p.nsegments, p.slice, [&] {
                     return GroupwiseBackward<Fn, T, C>(p, x.data(), y.data(), g.data(), ddof_,
                                                        out->flat<T>().data());
                   }));
  }
};

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_TF_GROUPWISE_KERNELS_H_
