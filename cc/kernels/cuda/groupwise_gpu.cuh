// Kernels and drivers of the group-wise functions on the GPU
// (groupwise_gpu.h). CUDA-only, TensorFlow-free; the groupwise_gpu_*.cu.cc
// files instantiate them.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CUDA_GROUPWISE_GPU_CUH_
#define TF_SCATTER_OPS_CC_KERNELS_CUDA_GROUPWISE_GPU_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "common/groupwise.h"
#include "cuda/groupwise_gpu.h"
#include "cuda/scatter_gpu.cuh"
#include "cuda/segment_elements.h"
#include "cuda/segment_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {

// The compute type: float for the 16-bit floats (as the CPU's), else T.
template <typename T>
using GroupwiseC = Groups8Accumulator<T>;

// A run of the plan (one segment's rows, sorted stably: index order) seen by
// the thread of one of its columns.
template <typename T, typename Key>
struct RunColumn {
  const Key* rows;
  int64_t first, end, slice, j;
  int64_t segment;
  // The element of column j of the run's q-th row, and where its output goes.
  __device__ __forceinline__ int64_t At(int64_t q) const {
    return static_cast<int64_t>(rows[q]) * slice + j;
  }
  __device__ __forceinline__ int64_t Count() const { return end - first; }
  __device__ __forceinline__ int64_t SegmentAt() const { return segment * slice + j; }
};

template <typename T, typename Key>
__device__ __forceinline__ RunColumn<T, Key> RunOf(const Key* keys, const Key* rows,
                                                  const Key* run_starts, int64_t runs,
                                                  const int64_t* valid_end, int64_t slice,
                                                  int64_t t) {
  RunColumn<T, Key> c;
  const int64_t r = t / slice;
  c.rows = rows;
  c.slice = slice;
  c.j = t - r * slice;
  c.first = static_cast<int64_t>(run_starts[r]);
  c.end = r + 1 < runs ? static_cast<int64_t>(run_starts[r + 1]) : *valid_end;
  c.segment = static_cast<int64_t>(keys[c.first]);
  return c;
}

// The segment's sum of column j, from +0 in index order (the CPU's AddOp
// reduction into zeros), and its mean.
template <typename T, typename C, typename Key, typename F>
__device__ __forceinline__ C SumOf(const RunColumn<T, Key>& run, const F& term) {
  C sum = C(0);
  for (int64_t q = run.first; q < run.end; ++q) sum = fp::Add(sum, term(q));
  return sum;
}

template <typename T, typename C, Groupwise kF, typename Key>
__global__ void GroupwiseForwardKernel(const Key* keys, const Key* rows, const Key* run_starts,
                                       const int64_t* num_runs, const int64_t* valid_end,
                                       int64_t slice, int64_t ddof, const T* x, T* y) {
  const int64_t runs = *num_runs;
  const int64_t total = runs * slice;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < total;
       t += int64_t{gridDim.x} * blockDim.x) {
    const RunColumn<T, Key> run = RunOf<T>(keys, rows, run_starts, runs, valid_end, slice, t);
    const auto X = [&](int64_t q) { return Widen<C>(x[run.At(q)]); };
    if constexpr (kF == Groupwise::kVar || kF == Groupwise::kStd) {
      const C mean = groupwise::Mean(SumOf<T, C>(run, X), run.Count());
      const C squares =
          SumOf<T, C>(run, [&](int64_t q) { return groupwise::Square(X(q), mean); });
      y[run.SegmentAt()] = Narrow<T>(groupwise::Moment<kF>(
          squares, groupwise::VarDivisor<C>(run.Count(), ddof)));
    } else {
      C m = Identity<MaxOp, C>();
      for (int64_t q = run.first; q < run.end; ++q) MaxOp::Apply(m, X(q));
      const C shift = groupwise::Shift(m);
      const C sum =
          SumOf<T, C>(run, [&](int64_t q) { return groupwise::ExpCentered(X(q), shift); });
      if constexpr (kF == Groupwise::kLogSumExp) {
        y[run.SegmentAt()] = Narrow<T>(groupwise::LogSumExp(shift, sum));
      } else if constexpr (kF == Groupwise::kLogSoftmax) {
        const C log_sum = groupwise::Log(sum);
        for (int64_t q = run.first; q < run.end; ++q) {
          y[run.At(q)] = Narrow<T>(groupwise::LogSoftmax(X(q), shift, log_sum));
        }
      } else {
        const C reciprocal = groupwise::Reciprocal(sum);
        for (int64_t q = run.first; q < run.end; ++q) {
          y[run.At(q)] =
              Narrow<T>(groupwise::Softmax(groupwise::ExpCentered(X(q), shift), reciprocal));
        }
      }
    }
  }
}

template <typename T, typename C, Groupwise kF, typename Key>
__global__ void GroupwiseBackwardKernel(const Key* keys, const Key* rows, const Key* run_starts,
                                        const int64_t* num_runs, const int64_t* valid_end,
                                        int64_t slice, int64_t ddof, const T* x, const T* y,
                                        const T* g, T* dx) {
  const int64_t runs = *num_runs;
  const int64_t total = runs * slice;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < total;
       t += int64_t{gridDim.x} * blockDim.x) {
    const RunColumn<T, Key> run = RunOf<T>(keys, rows, run_starts, runs, valid_end, slice, t);
    const auto X = [&](int64_t q) { return Widen<C>(x[run.At(q)]); };
    if constexpr (kF == Groupwise::kSoftmax || kF == Groupwise::kLogSoftmax) {
      const auto Y = [&](int64_t q) { return Widen<C>(y[run.At(q)]); };
      const auto G = [&](int64_t q) { return Widen<C>(g[run.At(q)]); };
      if constexpr (kF == Groupwise::kSoftmax) {
        const C sum =
            SumOf<T, C>(run, [&](int64_t q) { return groupwise::SoftmaxGradTerm(G(q), Y(q)); });
        for (int64_t q = run.first; q < run.end; ++q) {
          dx[run.At(q)] = Narrow<T>(groupwise::SoftmaxGrad(G(q), Y(q), sum));
        }
      } else {
        const C sum = SumOf<T, C>(run, G);
        for (int64_t q = run.first; q < run.end; ++q) {
          dx[run.At(q)] = Narrow<T>(groupwise::LogSoftmaxGrad(G(q), Y(q), sum));
        }
      }
    } else if constexpr (kF == Groupwise::kLogSumExp) {
      const C z = Widen<C>(y[run.SegmentAt()]);
      const C g_segment = Widen<C>(g[run.SegmentAt()]);
      for (int64_t q = run.first; q < run.end; ++q) {
        dx[run.At(q)] = Narrow<T>(groupwise::LogSumExpGrad(X(q), z, g_segment));
      }
    } else {
      const C mean = groupwise::Mean(SumOf<T, C>(run, X), run.Count());
      const C scale = groupwise::MomentGradScale<kF>(
          Widen<C>(g[run.SegmentAt()]), groupwise::VarDivisor<C>(run.Count(), ddof),
          Widen<C>(y[run.SegmentAt()]));
      for (int64_t q = run.first; q < run.end; ++q) {
        dx[run.At(q)] = Narrow<T>(groupwise::MomentGrad(scale, X(q), mean));
      }
    }
  }
}

// An empty segment's output (the function of no rows, as the CPU computes
// it: the maximum -inf, the sums 0).
template <typename T, typename C, Groupwise kF>
T EmptySegmentValue(int64_t ddof) {
  if constexpr (kF == Groupwise::kLogSumExp) {
    return Narrow<T>(groupwise::LogSumExp(groupwise::Shift(Identity<MaxOp, C>()), C(0)));
  } else {
    return Narrow<T>(groupwise::Moment<kF>(C(0), groupwise::VarDivisor<C>(0, ddof)));
  }
}

// Both directions: `backward` reads y and g and writes dx into `out`.
template <typename T, Groupwise kF, bool kBackward>
const char* GroupwiseOnStream(Call& call, int64_t ddof, const T* x, const T* y, const T* g,
                              T* out) {
  using C = GroupwiseC<T>;
  constexpr bool kPerSegmentOut = !kBackward && GroupwiseFn<kF>::kPerSegment;
  call.bad_row = -1;
  cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
  const int64_t n = call.form.n, slice = call.form.slice, nsegments = call.form.nslots;
  const bool work = nsegments * slice > 0;  // any segment element to compute
  Plan plan;
  // The ids are checked even when nothing is computed, as on the CPU; nothing
  // is written when one is bad.
  if (n > 0 && (work || !call.ignore)) {
    if (const char* e = MakePlan(call, /*sort=*/work, &plan)) return e;
    if (call.bad_row >= 0) return nullptr;
  }
  // What no run writes: dropped rows (0) or empty segments.
  const int64_t out_size = (kPerSegmentOut ? nsegments : n) * slice;
  if (out_size > 0) {
    if constexpr (kPerSegmentOut) {
      TFSO_LAUNCH(GridFor(out_size), kThreads, stream, FillKernel<T>)(
          out, out_size, EmptySegmentValue<T, C, kF>(ddof));
    } else if (const cudaError_t e = cudaMemsetAsync(out, 0, sizeof(T) * out_size, stream)) {
      return cudaGetErrorString(e);  // zero bits: +0
    }
    if (const char* e = LastError()) return e;
  }
  if (n == 0 || !work) return nullptr;
  // One thread per (run, column); at most n runs.
  const int64_t threads = n * slice;
  const auto launch = [&](auto key) -> const char* {
    using Key = decltype(key);
    const Key* keys = static_cast<const Key*>(plan.keys);
    const Key* rows = static_cast<const Key*>(plan.rows);
    const Key* starts = static_cast<const Key*>(plan.run_starts);
    if constexpr (kBackward) {
      TFSO_LAUNCH(GridFor(threads), kThreads, stream, GroupwiseBackwardKernel<T, C, kF, Key>)(
          keys, rows, starts, plan.num_runs, plan.valid_end, slice, ddof, x, y, g, out);
    } else {
      TFSO_LAUNCH(GridFor(threads), kThreads, stream, GroupwiseForwardKernel<T, C, kF, Key>)(
          keys, rows, starts, plan.num_runs, plan.valid_end, slice, ddof, x, out);
    }
    return LastError();
  };
  return plan.wide ? launch(uint64_t{}) : launch(uint32_t{});
}

template <typename T, Groupwise kF>
const char* GroupwiseForward(Call& call, int64_t ddof, const T* x, T* y) {
  ClearError();
  return Cleared(GroupwiseOnStream<T, kF, false>(call, ddof, x, nullptr, nullptr, y));
}

template <typename T, Groupwise kF>
const char* GroupwiseBackward(Call& call, int64_t ddof, const T* x, const T* y, const T* g,
                              T* dx) {
  ClearError();
  return Cleared(GroupwiseOnStream<T, kF, true>(call, ddof, x, y, g, dx));
}

#define TFSO_INSTANTIATE_GROUPWISE(T, F)                                                  \
  template const char* GroupwiseForward<T, F>(Call&, int64_t, const T*, T*);               \
  template const char* GroupwiseBackward<T, F>(Call&, int64_t, const T*, const T*, const T*, \
                                               T*);

}  // namespace gpu
}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CUDA_GROUPWISE_GPU_CUH_
