// Kernels on the host (tests/cc/host_cuda/README.md): what nvcc gives device
// code (the built-in index variables, atomics, clock64, the function space
// keywords) and ::tfso_host::Launch, which TFSO_LAUNCH (cc/kernels/cuda/
// launch.cuh) calls in the host build instead of `<<<...>>>`.
//
// A launch captures the kernel's arguments by value, as CUDA does, and queues
// the grid on its stream. The stream's thread then runs the grid's blocks in
// a shuffled order (seeded; the seed is printed at start-up) on several host
// threads at once, and each block's threads one after another, each with its
// own blockIdx / threadIdx. That is a legal schedule of a kernel that, like
// every kernel of the core, has no __syncthreads, shared memory or warp
// intrinsics (none of them is defined here, so such a kernel does not build).
// Each pointer argument must be null or point into memory from cudaMalloc:
// a host pointer handed to a kernel stops the program with a message.
#ifndef TF_SCATTER_OPS_TESTS_CC_HOST_CUDA_HOST_LAUNCH_H_
#define TF_SCATTER_OPS_TESTS_CC_HOST_CUDA_HOST_LAUNCH_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cuda_runtime_api.h"

#define __host__
#define __device__
#define __global__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)

// The built-in variables: per host thread, set for each simulated thread.
inline thread_local uint3 threadIdx{0, 0, 0};
inline thread_local uint3 blockIdx{0, 0, 0};
inline thread_local dim3 blockDim{1, 1, 1};
inline thread_local dim3 gridDim{1, 1, 1};

namespace tfso_host {

// Queues `work` on `stream` (0: the legacy default stream). Returns an error
// for a destroyed or unknown stream.
cudaError_t Enqueue(cudaStream_t stream, std::function<void()> work);

// Runs a grid of `grid` blocks of `block` threads, thread_body once per
// simulated thread with the built-in variables set. Called on a stream's
// thread, inside the work that Launch queues.
void RunGrid(dim3 grid, dim3 block, const std::function<void()>& thread_body);

// Whether [p, p + bytes) lies inside one live cudaMalloc allocation.
bool IsDeviceRange(const void* p, size_t bytes);

// Records a launch error as the runtime does (read by cudaGetLastError).
void SetLastError(cudaError_t error);

// Stops the program: a kernel or copy that a GPU would fault on.
[[noreturn]] void Fatal(const char* what, const char* detail);

// Nanoseconds on a steady clock (clock64(), at the 1 GHz clock rate that
// cudaDevAttrClockRate reports).
long long Nanoseconds();

template <typename Arg>
void CheckArgument(const Arg& arg, const char* kernel) {
  if constexpr (std::is_pointer<Arg>::value) {
    if (arg != nullptr && !IsDeviceRange(arg, 0)) {
      Fatal("a kernel argument is not device memory (a host pointer?), in", kernel);
    }
  }
}

template <typename... P>
class Launcher {
 public:
  using Kernel = void (*)(P...);
  Launcher(dim3 grid, dim3 block, cudaStream_t stream, Kernel kernel, const char* name)
      : grid_(grid), block_(block), stream_(stream), kernel_(kernel), name_(name) {}

  template <typename... A>
  void operator()(A&&... args) const {
    static_assert(sizeof...(A) == sizeof...(P), "wrong number of kernel arguments");
    // Converted to the parameter types and copied now, as a launch does.
    std::tuple<typename std::decay<P>::type...> values(std::forward<A>(args)...);
    const uint64_t blocks = uint64_t{grid_.x} * grid_.y * grid_.z;
    const uint64_t threads = uint64_t{block_.x} * block_.y * block_.z;
    if (blocks == 0 || grid_.x > 0x7fffffffu || grid_.y > 65535 || grid_.z > 65535 ||
        threads == 0 || threads > 1024 || block_.z > 64) {
      SetLastError(cudaErrorInvalidConfiguration);
      return;
    }
    const char* name = name_;
    std::apply([name](const auto&... v) { (CheckArgument(v, name), ...); }, values);
    const Kernel kernel = kernel_;
    const dim3 grid = grid_, block = block_;
    const cudaError_t e = Enqueue(stream_, [kernel, values, grid, block] {
      RunGrid(grid, block, [&] { std::apply(kernel, values); });
    });
    if (e != cudaSuccess) SetLastError(e);
  }

 private:
  dim3 grid_, block_;
  cudaStream_t stream_;
  Kernel kernel_;
  const char* name_;
};

template <typename... P>
Launcher<P...> Launch(dim3 grid, dim3 block, cudaStream_t stream, void (*kernel)(P...),
                      const char* name = "kernel") {
  return Launcher<P...>(grid, block, stream, kernel, name);
}

namespace detail {
template <typename W>
W AtomicMin(W* address, W value) {
  W old = __atomic_load_n(address, __ATOMIC_RELAXED);
  while (value < old &&
         !__atomic_compare_exchange_n(address, &old, value, true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
  }
  return old;
}
template <typename W>
W AtomicMax(W* address, W value) {
  W old = __atomic_load_n(address, __ATOMIC_RELAXED);
  while (old < value &&
         !__atomic_compare_exchange_n(address, &old, value, true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
  }
  return old;
}
template <typename F, typename B>
F AtomicAddFloat(F* address, F value) {  // through the bits, as a CAS loop
  static_assert(sizeof(F) == sizeof(B), "same width");
  B* word = reinterpret_cast<B*>(address);
  B old = __atomic_load_n(word, __ATOMIC_RELAXED);
  for (;;) {
    F f;
    __builtin_memcpy(&f, &old, sizeof(F));
    f += value;
    B next;
    __builtin_memcpy(&next, &f, sizeof(F));
    if (__atomic_compare_exchange_n(word, &old, next, true, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED)) {
      F r;
      __builtin_memcpy(&r, &old, sizeof(F));
      return r;
    }
  }
}
}  // namespace detail

}  // namespace tfso_host

// CUDA's atomics (relaxed, as on a GPU) on the widths it has them for. Each
// returns the old value.
#define TFSO_HOST_INTEGER_ATOMICS(W)                                                        \
  inline W atomicAdd(W* a, W v) { return __atomic_fetch_add(a, v, __ATOMIC_RELAXED); }      \
  inline W atomicSub(W* a, W v) { return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED); }      \
  inline W atomicAnd(W* a, W v) { return __atomic_fetch_and(a, v, __ATOMIC_RELAXED); }      \
  inline W atomicOr(W* a, W v) { return __atomic_fetch_or(a, v, __ATOMIC_RELAXED); }        \
  inline W atomicXor(W* a, W v) { return __atomic_fetch_xor(a, v, __ATOMIC_RELAXED); }      \
  inline W atomicExch(W* a, W v) { return __atomic_exchange_n(a, v, __ATOMIC_RELAXED); }    \
  inline W atomicMin(W* a, W v) { return ::tfso_host::detail::AtomicMin(a, v); }            \
  inline W atomicMax(W* a, W v) { return ::tfso_host::detail::AtomicMax(a, v); }            \
  inline W atomicCAS(W* a, W expected, W desired) {                                         \
    __atomic_compare_exchange_n(a, &expected, desired, false, __ATOMIC_RELAXED,             \
                                __ATOMIC_RELAXED);                                          \
    return expected;                                                                        \
  }
TFSO_HOST_INTEGER_ATOMICS(int)
TFSO_HOST_INTEGER_ATOMICS(unsigned int)
TFSO_HOST_INTEGER_ATOMICS(long long)
TFSO_HOST_INTEGER_ATOMICS(unsigned long long)
#undef TFSO_HOST_INTEGER_ATOMICS
inline float atomicAdd(float* a, float v) {
  return ::tfso_host::detail::AtomicAddFloat<float, unsigned int>(a, v);
}
inline double atomicAdd(double* a, double v) {
  return ::tfso_host::detail::AtomicAddFloat<double, unsigned long long>(a, v);
}

inline long long clock64() { return ::tfso_host::Nanoseconds(); }

#endif  // TF_SCATTER_OPS_TESTS_CC_HOST_CUDA_HOST_LAUNCH_H_
