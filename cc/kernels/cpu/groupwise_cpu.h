// The element-wise passes of the group-wise functions over unsorted segment
// ids on the CPU (common/groupwise.h). TensorFlow-free.
//
// A function is a few streaming passes over the data's rows in index order,
// between segment reductions into a [nsegments, slice] table that stays in
// cache (the scatter core's, cpu/scatter_cpu.h, called by the glue: its
// sums in index order, the same for any thread count). A pass reads each
// row once, in order, looks up its segment's statistics and writes the row's
// result: no random access to the data, no intermediate but one row-shaped
// buffer, and the exponentials vectorised across the row (groupwise::Exp).
//
// GroupwiseForwardCpu and GroupwiseBackwardCpu sequence those passes for
// each function; the caller's passes object P gives the reductions, the
// element-wise passes and scratch (tf/groupwise_kernels.h: SegmentPasses, on
// TensorFlow's allocator and threads; the CUDA core's harness has its own).
// The CUDA core (cuda/groupwise_gpu.cuh) computes the same steps, in the
// same order, per segment.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_GROUPWISE_CPU_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_GROUPWISE_CPU_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "common/groupwise.h"
#include "common/init_mode.h"
#include "common/reducers.h"
#include "cpu/parallel.h"

namespace tf_scatter_ops {

// body(i, s, j0, j1) for each row i of `n` and its segment s (-1 for a
// dropped row: id < 0 or >= nsegments), over the row's elements [j0, j1) of
// `slice`, in parallel chunks of rows.
template <typename Index, typename Body>
void ForSegmentRows(const Index* ids, int64_t n, int64_t nsegments, int64_t slice,
                    const Parallel& parallel, const Body& body) {
  parallel.For(n, 4 * std::max<int64_t>(slice, 1), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t id = static_cast<int64_t>(ids[i]);
      body(i, id >= 0 && id < nsegments ? id : -1);
    }
  });
}

// out[i] = f(x[i], stat[s]) over a row's slice (0 for a dropped row): the
// element-wise step of every function, its statistics a segment's row of
// [nsegments, slice] tables.
template <typename Index, typename Out, typename F>
void RowsFromSegments(const Index* ids, int64_t n, int64_t nsegments, int64_t slice,
                      Out* out, const Parallel& parallel, const F& f) {
  ForSegmentRows(ids, n, nsegments, slice, parallel, [&](int64_t i, int64_t s) {
    Out* o = out + i * slice;
    if (s < 0) {
      std::fill_n(o, slice, Out(0));
      return;
    }
    for (int64_t j = 0; j < slice; ++j) o[j] = f(i * slice + j, s * slice + j);
  });
}

// What GroupwiseForwardCpu / GroupwiseBackwardCpu need of P:
//   P::Status, P::IsOk(status), P::Ok();  P::Holder (what keeps a Temp alive)
//   n, nsegments, slice, ignore, size() (= nsegments * slice)
//   Temp(count, Holder*, C**)             uninitialised scratch of count C
//   Reduce<Op>(const C* x, Init, C* out)  [nsegments, slice] reduction of the
//                                         rows in index order (the scatter
//                                         core: AddOp from kZero, MaxOp onto
//                                         out's -inf with kInPlace); the ids'
//                                         error unless ignore
//   Rows(Out* out, f)                     RowsFromSegments over the ids
//   Counts()                              rows per segment (std::vector)
//   CheckIds()                            the first id >= nsegments' error,
//                                         unless ignore
#define TFSO_GROUPWISE_RETURN_IF_BAD(expr) \
  do {                                     \
    auto status_ = (expr);                 \
    if (!P::IsOk(status_)) return status_; \
  } while (0)

// The segments' means of x (NaN for an empty segment) and row counts.
template <typename C, typename P>
typename P::Status GroupwiseMeans(const P& p, const C* x, std::vector<C>* mean,
                                  std::vector<int64_t>* counts) {
  mean->resize(p.size());
  TFSO_GROUPWISE_RETURN_IF_BAD(p.template Reduce<AddOp>(x, Init::kZero, mean->data()));
  *counts = p.Counts();
  for (int64_t s = 0; s < p.nsegments; ++s) {
    for (int64_t j = 0; j < p.slice; ++j) {
      C& m = (*mean)[s * p.slice + j];
      m = groupwise::Mean(m, (*counts)[s]);
    }
  }
  return P::Ok();
}

// The forward of Fn into y ([n, slice] or, per segment, [nsegments, slice]),
// from x in the compute type C.
template <typename Fn, typename T, typename C, typename P>
typename P::Status GroupwiseForwardCpu(const P& p, const C* x, int64_t ddof, T* y) {
  constexpr Groupwise kF = Fn::kFunction;
  const int64_t size = p.size();
  if constexpr (Fn::kMoments) {
    std::vector<C> mean, total(size);
    std::vector<int64_t> counts;
    TFSO_GROUPWISE_RETURN_IF_BAD(GroupwiseMeans(p, x, &mean, &counts));
    typename P::Holder scratch;
    C* squares = nullptr;
    TFSO_GROUPWISE_RETURN_IF_BAD(p.Temp(p.n * p.slice, &scratch, &squares));
    p.Rows(squares, [&](int64_t r, int64_t s) { return groupwise::Square(x[r], mean[s]); });
    TFSO_GROUPWISE_RETURN_IF_BAD(p.template Reduce<AddOp>(squares, Init::kZero, total.data()));
    for (int64_t s = 0; s < p.nsegments; ++s) {
      const C divisor = groupwise::VarDivisor<C>(counts[s], ddof);
      for (int64_t j = 0; j < p.slice; ++j) {
        y[s * p.slice + j] = static_cast<T>(groupwise::Moment<kF>(total[s * p.slice + j], divisor));
      }
    }
  } else {
    std::vector<C> shift(size, Identity<MaxOp, C>()), total(size);
    TFSO_GROUPWISE_RETURN_IF_BAD(p.template Reduce<MaxOp>(x, Init::kInPlace, shift.data()));
    for (C& m : shift) m = groupwise::Shift(m);
    // The exponentials: in y itself for a softmax that holds them exactly.
    constexpr bool kInY = kF == Groupwise::kSoftmax && std::is_same<T, C>::value;
    typename P::Holder scratch;
    C* e = reinterpret_cast<C*>(y);
    if (!kInY) TFSO_GROUPWISE_RETURN_IF_BAD(p.Temp(p.n * p.slice, &scratch, &e));
    p.Rows(e, [&](int64_t r, int64_t s) { return groupwise::ExpCentered(x[r], shift[s]); });
    TFSO_GROUPWISE_RETURN_IF_BAD(p.template Reduce<AddOp>(e, Init::kZero, total.data()));
    if constexpr (kF == Groupwise::kLogSumExp) {
      for (int64_t k = 0; k < size; ++k) {
        y[k] = static_cast<T>(groupwise::LogSumExp(shift[k], total[k]));
      }
    } else if constexpr (kF == Groupwise::kLogSoftmax) {
      for (C& t : total) t = groupwise::Log(t);
      p.Rows(y, [&](int64_t r, int64_t s) {
        return static_cast<T>(groupwise::LogSoftmax(x[r], shift[s], total[s]));
      });
    } else {
      for (C& t : total) t = groupwise::Reciprocal(t);
      p.Rows(y, [&](int64_t r, int64_t s) {
        return static_cast<T>(groupwise::Softmax(e[r], total[s]));
      });
    }
  }
  return P::Ok();
}

// The gradient of Fn: dx [n, slice] from x, the output y and its gradient g
// (each [n, slice] or, per segment, [nsegments, slice]) in C.
template <typename Fn, typename T, typename C, typename P>
typename P::Status GroupwiseBackwardCpu(const P& p, const C* x, const C* y, const C* g,
                                        int64_t ddof, T* dx) {
  constexpr Groupwise kF = Fn::kFunction;
  if constexpr (kF == Groupwise::kSoftmax || kF == Groupwise::kLogSoftmax) {
    std::vector<C> total(p.size());
    if constexpr (kF == Groupwise::kSoftmax) {
      typename P::Holder scratch;
      C* gy = nullptr;
      TFSO_GROUPWISE_RETURN_IF_BAD(p.Temp(p.n * p.slice, &scratch, &gy));
      p.Rows(gy, [&](int64_t r, int64_t) { return groupwise::SoftmaxGradTerm(g[r], y[r]); });
      TFSO_GROUPWISE_RETURN_IF_BAD(p.template Reduce<AddOp>(gy, Init::kZero, total.data()));
      p.Rows(dx, [&](int64_t r, int64_t s) {
        return static_cast<T>(groupwise::SoftmaxGrad(g[r], y[r], total[s]));
      });
    } else {
      TFSO_GROUPWISE_RETURN_IF_BAD(p.template Reduce<AddOp>(g, Init::kZero, total.data()));
      p.Rows(dx, [&](int64_t r, int64_t s) {
        return static_cast<T>(groupwise::LogSoftmaxGrad(g[r], y[r], total[s]));
      });
    }
  } else if constexpr (kF == Groupwise::kLogSumExp) {
    TFSO_GROUPWISE_RETURN_IF_BAD(p.CheckIds());
    p.Rows(dx, [&](int64_t r, int64_t s) {
      return static_cast<T>(groupwise::LogSumExpGrad(x[r], y[s], g[s]));
    });
  } else {
    std::vector<C> mean, scale(p.size());
    std::vector<int64_t> counts;
    TFSO_GROUPWISE_RETURN_IF_BAD(GroupwiseMeans(p, x, &mean, &counts));
    for (int64_t s = 0; s < p.nsegments; ++s) {
      const C divisor = groupwise::VarDivisor<C>(counts[s], ddof);
      for (int64_t j = 0; j < p.slice; ++j) {
        const int64_t k = s * p.slice + j;
        scale[k] = groupwise::MomentGradScale<kF>(g[k], divisor, y[k]);
      }
    }
    p.Rows(dx, [&](int64_t r, int64_t s) {
      return static_cast<T>(groupwise::MomentGrad(scale[s], x[r], mean[s]));
    });
  }
  return P::Ok();
}

#undef TFSO_GROUPWISE_RETURN_IF_BAD

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_GROUPWISE_CPU_H_
