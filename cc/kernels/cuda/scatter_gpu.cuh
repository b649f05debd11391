// Kernels and host drivers of the CUDA core (scatter_gpu.h). CUDA-only,
// TensorFlow-free; included by the scatter_gpu_*.cu.cc files, which
// instantiate the drivers per op so that nvcc compiles them in parallel.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CUDA_SCATTER_GPU_CUH_
#define TF_SCATTER_OPS_CC_KERNELS_CUDA_SCATTER_GPU_CUH_

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cuda/launch.cuh"
#include "cuda/scatter_gpu.h"

namespace tf_scatter_ops {
namespace gpu {

constexpr int kThreads = 256;

// Blocks for `work` items with grid-stride loops: enough to fill the device
// (from its SM count), never more than the work needs.
int GridFor(int64_t work);

inline const char* LastError() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

// The runtime keeps the last error of each host thread until it is read, and
// CUB's launch checks and our early returns only peek at it: an error left by
// a failed call (ours, or anyone's on this thread) would be reported by the
// next good one. Every host API call therefore starts by reading it off, and
// a call that fails reads it off before returning.
inline void ClearError() { (void)cudaGetLastError(); }
inline const char* Cleared(const char* error) {
  if (error != nullptr) ClearError();
  return error;
}

// The index side of a call, shared by every element type (scatter_gpu_plan.cu.cc).
// Keys and rows are uint32 unless the slots or rows need 64 bits (`wide`).
// A bad row's key is `nslots`, one past the last slot, so it sorts last.
struct Plan {
  bool wide = false;
  const void* keys = nullptr;        // [n] destination slot per row
  const void* rows = nullptr;        // sorted plans: [n] row of each key
  const void* run_starts = nullptr;  // sorted plans: first position per run
  const int64_t* num_runs = nullptr;   // sorted plans: device count of runs
  const int64_t* valid_end = nullptr;  // sorted plans: end of the last run
};

// Linearises and bounds-checks the indices (reporting the first bad row
// unless call.ignore) and, with `sort`, stably sorts rows by destination and
// finds the runs of equal destinations (bad rows excluded).
const char* MakePlan(Call& call, bool sort, Plan* plan);

template <typename T>
const char* InitOutput(const Call& call, const T* init, Init mode, T* out) {
  cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
  const size_t bytes = sizeof(T) * call.form.nslots * call.form.slice;
  cudaError_t e = cudaSuccess;
  if (mode == Init::kZero) {
    e = cudaMemsetAsync(out, 0, bytes, stream);  // zero bits = 0 / false
  } else if (mode == Init::kCopy) {
    e = cudaMemcpyAsync(out, init, bytes, cudaMemcpyDeviceToDevice, stream);
  }
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

// 4- and 8-byte integer add/sub/min/max (the segment min/max are the same
// on integers): exact, so integer atomics give the serial result whatever
// the order, without sorting. (Products have no atomic: sorted.)
template <typename Op>
constexpr bool kIsMin = std::is_same<Op, MinOp>::value || std::is_same<Op, SegmentMinOp>::value;
template <typename Op>
constexpr bool kIsMax = std::is_same<Op, MaxOp>::value || std::is_same<Op, SegmentMaxOp>::value;
template <typename T, typename Op>
struct UsesAtomics {
  static constexpr bool value =
      std::is_integral<T>::value && !std::is_same<T, bool>::value &&
      (sizeof(T) == 4 || sizeof(T) == 8) &&
      (std::is_same<Op, AddOp>::value || std::is_same<Op, SubOp>::value || kIsMin<Op> ||
       kIsMax<Op>);
};

template <typename T>
struct AtomicWord {  // the type CUDA's atomics take for T
  using type = typename std::conditional<
      sizeof(T) == 4,
      typename std::conditional<std::is_signed<T>::value, int, unsigned>::type,
      typename std::conditional<std::is_signed<T>::value, long long,
                                unsigned long long>::type>::type;
};

template <typename Op, typename T>
__device__ __forceinline__ void AtomicApply(T* dst, T v) {
  using W = typename AtomicWord<T>::type;
  using U = typename std::conditional<sizeof(T) == 4, unsigned,
                                      unsigned long long>::type;
  if constexpr (std::is_same<Op, AddOp>::value) {
    atomicAdd(reinterpret_cast<U*>(dst), static_cast<U>(v));  // wraps
  } else if constexpr (std::is_same<Op, SubOp>::value) {
    atomicAdd(reinterpret_cast<U*>(dst), U(0) - static_cast<U>(v));
  } else if constexpr (kIsMin<Op>) {
    atomicMin(reinterpret_cast<W*>(dst), static_cast<W>(v));
  } else {
    static_assert(kIsMax<Op>, "unknown reduction");
    atomicMax(reinterpret_cast<W*>(dst), static_cast<W>(v));
  }
}

template <typename T, typename Op, typename Key>
__global__ void ScatterAtomicKernel(const Key* keys, int64_t n, int64_t slice,
                                    uint64_t nslots, const T* updates, T* out) {
  const int64_t total = n * slice;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < total;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = t / slice;
    const uint64_t key = keys[i];
    if (key < nslots) {
      AtomicApply<Op>(out + key * slice + (t - i * slice), updates[t]);
    }
  }
}

// One thread per (run, column): applies the run's updates to that output
// element in row order (a run is one destination; rows are sorted stably).
// Serial per destination is what makes float sums reproducible; a very hot
// destination is therefore one long thread (update only reads the last row).
template <typename T, typename Op, typename Key>
__global__ void ScatterRunsKernel(const Key* keys, const Key* rows,
                                  const Key* run_starts,
                                  const int64_t* num_runs,
                                  const int64_t* valid_end, int64_t slice,
                                  const T* updates, T* out) {
  const int64_t runs = *num_runs;
  const int64_t total = runs * slice;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < total;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = t / slice;
    const int64_t j = t - r * slice;
    const int64_t first = run_starts[r];
    const int64_t end = r + 1 < runs ? static_cast<int64_t>(run_starts[r + 1]) : *valid_end;
    T* dst = out + static_cast<int64_t>(keys[first]) * slice + j;
    if constexpr (std::is_same<Op, AssignOp>::value) {
      *dst = updates[static_cast<int64_t>(rows[end - 1]) * slice + j];  // last wins
    } else {
      T acc = *dst;
      for (int64_t q = first; q < end; ++q) {
        Op::Apply(acc, updates[static_cast<int64_t>(rows[q]) * slice + j]);
      }
      *dst = acc;
    }
  }
}

template <typename T, typename Key>
__global__ void GatherKernel(const Key* keys, int64_t n, int64_t slice,
                             uint64_t nslots, const T* params, T* out) {
  const int64_t total = n * slice;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < total;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = t / slice;
    const uint64_t key = keys[i];
    out[t] = key < nslots ? params[key * slice + (t - i * slice)] : T{};
  }
}

template <typename T, typename Op, typename Key>
void LaunchScatter(const Call& call, const Plan& plan, const T* updates,
                   T* out) {
  cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
  const int64_t work = call.form.n * call.form.slice;
  const Key* keys = static_cast<const Key*>(plan.keys);
  if constexpr (UsesAtomics<T, Op>::value) {
    TFSO_LAUNCH(GridFor(work), kThreads, stream, ScatterAtomicKernel<T, Op, Key>)(
        keys, call.form.n, call.form.slice, call.form.nslots, updates, out);
  } else {
    TFSO_LAUNCH(GridFor(work), kThreads, stream, ScatterRunsKernel<T, Op, Key>)(
        keys, static_cast<const Key*>(plan.rows),
        static_cast<const Key*>(plan.run_starts), plan.num_runs,
        plan.valid_end, call.form.slice, updates, out);
  }
}

template <typename T, typename Op>
const char* ScatterOnStream(Call& call, const T* updates, const T* init, Init mode,
                            T* out) {
  call.bad_row = -1;
  // An empty output still has its rows checked under ERROR, as on the CPU
  // (an id past num_segments into [3, 0] is an error there too); nothing is
  // sorted or written.
  const bool empty = call.form.nslots * call.form.slice == 0;
  if (empty && (call.ignore || call.form.n == 0)) return nullptr;
  Plan plan;
  if (call.form.n > 0) {
    // Checked before the output is touched: a forwarded input stays intact.
    if (const char* e = MakePlan(call, !empty && !UsesAtomics<T, Op>::value, &plan)) return e;
    if (call.bad_row >= 0 || empty) return nullptr;
  }
  if (const char* e = InitOutput(call, init, mode, out)) return e;
  if (call.form.n == 0) return nullptr;
  if (plan.wide) {
    LaunchScatter<T, Op, uint64_t>(call, plan, updates, out);
  } else {
    LaunchScatter<T, Op, uint32_t>(call, plan, updates, out);
  }
  return LastError();
}

template <typename T>
const char* GatherOnStream(Call& call, const T* params, T* out) {
  call.bad_row = -1;
  if (call.form.n == 0) return nullptr;
  Plan plan;  // checked even when the slices are empty, as on the CPU
  if (const char* e = MakePlan(call, /*sort=*/false, &plan)) return e;
  if (call.bad_row >= 0 || call.form.slice == 0) return nullptr;
  cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
  const int64_t work = call.form.n * call.form.slice;
  if (plan.wide) {
    TFSO_LAUNCH(GridFor(work), kThreads, stream, GatherKernel<T, uint64_t>)(
        static_cast<const uint64_t*>(plan.keys), call.form.n, call.form.slice,
        call.form.nslots, params, out);
  } else {
    TFSO_LAUNCH(GridFor(work), kThreads, stream, GatherKernel<T, uint32_t>)(
        static_cast<const uint32_t*>(plan.keys), call.form.n, call.form.slice,
        call.form.nslots, params, out);
  }
  return LastError();
}

template <typename T, typename Op>
const char* Scatter(Call& call, const T* updates, const T* init, Init mode,
                    T* out) {
  ClearError();
  return Cleared(ScatterOnStream<T, Op>(call, updates, init, mode, out));
}

template <typename T>
const char* Gather(Call& call, const T* params, T* out) {
  ClearError();
  return Cleared(GatherOnStream<T>(call, params, out));
}

#define TFSO_INSTANTIATE_SCATTER(T, OP) \
  template const char* Scatter<T, OP>(Call&, const T*, const T*, Init, T*);
#define TFSO_INSTANTIATE_GATHER(T) \
  template const char* Gather<T>(Call&, const T*, T*);

}  // namespace gpu
}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CUDA_SCATTER_GPU_CUH_
