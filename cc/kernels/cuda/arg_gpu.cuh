// Kernel and driver of the arg reductions on the GPU (arg_gpu.h).
// CUDA-only, TensorFlow-free; arg_gpu.cu.cc instantiates them.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CUDA_ARG_GPU_CUH_
#define TF_SCATTER_OPS_CC_KERNELS_CUDA_ARG_GPU_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "common/arg_reducers.h"
#include "cuda/arg_gpu.h"
#include "cuda/scatter_gpu.cuh"
#include "cuda/segment_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {

// One thread per (run, column): the run's rows (one destination, index
// order) offered to the element as cpu/arg_scatter_cpu.h's OfferRow does.
template <typename T, typename Op, typename Key>
__global__ void ArgRunsKernel(const Key* keys, const Key* rows, const Key* run_starts,
                              const int64_t* num_runs, const int64_t* valid_end, int64_t slice,
                              bool seeded, const T* updates, T* out, int64_t* arg) {
  const int64_t runs = *num_runs;
  const int64_t total = runs * slice;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < total;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = t / slice;
    const int64_t j = t - r * slice;
    const int64_t first = run_starts[r];
    const int64_t end = r + 1 < runs ? static_cast<int64_t>(run_starts[r + 1]) : *valid_end;
    const int64_t dst = static_cast<int64_t>(keys[first]) * slice + j;
    T value = out[dst];
    int64_t position = -1;
    for (int64_t q = first; q < end; ++q) {
      const int64_t row = static_cast<int64_t>(rows[q]);
      const T upd = updates[row * slice + j];
      if ((!seeded && position < 0) || Op::Takes(upd, value)) {
        value = upd;
        position = row;
      }
    }
    out[dst] = value;
    arg[dst] = position;
  }
}

template <typename T, typename Op>
const char* ArgScatterOnStream(Call& call, bool seeded, const T* updates, const T* init,
                               Init mode, T* out, int64_t* arg) {
  call.bad_row = -1;
  cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
  const int64_t size = call.form.nslots * call.form.slice;
  // An empty output still has its rows checked under ERROR, as on the CPU.
  if (size == 0 && (call.ignore || call.form.n == 0)) return nullptr;
  Plan plan;
  if (call.form.n > 0) {
    // Checked before the output is touched: a forwarded input stays intact.
    if (const char* e = MakePlan(call, /*sort=*/size > 0, &plan)) return e;
    if (call.bad_row >= 0 || size == 0) return nullptr;
  }
  if (const char* e = InitOutput(call, init, mode, out)) return e;
  TFSO_LAUNCH(GridFor(size), kThreads, stream, FillKernel<int64_t>)(arg, size, int64_t{-1});
  if (const char* e = LastError()) return e;
  if (call.form.n == 0) return nullptr;
  const int64_t threads = call.form.n * call.form.slice;  // at least runs * slice
  const auto launch = [&](auto key) -> const char* {
    using Key = decltype(key);
    TFSO_LAUNCH(GridFor(threads), kThreads, stream, ArgRunsKernel<T, Op, Key>)(
        static_cast<const Key*>(plan.keys), static_cast<const Key*>(plan.rows),
        static_cast<const Key*>(plan.run_starts), plan.num_runs, plan.valid_end,
        call.form.slice, seeded, updates, out, arg);
    return LastError();
  };
  return plan.wide ? launch(uint64_t{}) : launch(uint32_t{});
}

template <typename T, typename Op>
const char* ArgScatter(Call& call, bool seeded, const T* updates, const T* init, Init mode,
                       T* out, int64_t* arg) {
  ClearError();
  return Cleared(ArgScatterOnStream<T, Op>(call, seeded, updates, init, mode, out, arg));
}

#define TFSO_INSTANTIATE_ARG_SCATTER(T, OP) \
  template const char* ArgScatter<T, OP>(Call&, bool, const T*, const T*, Init, T*, int64_t*);

}  // namespace gpu
}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CUDA_ARG_GPU_CUH_
