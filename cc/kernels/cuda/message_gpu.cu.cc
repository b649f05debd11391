// Kernels and drivers of message passing on the GPU (message_gpu.h), for
// the float dtypes. CUDA-only, TensorFlow-free.
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "common/dtypes.h"
#include "common/message.h"
#include "cuda/message_gpu.h"
#include "cuda/scatter_gpu.cuh"
#include "cuda/segment_elements.h"
#include "cuda/segment_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {
namespace {

size_t Align(size_t bytes) { return (bytes + 255) & ~size_t{255}; }

const char* Error(cudaError_t e) { return e == cudaSuccess ? nullptr : cudaGetErrorString(e); }

// The edges' ids as int64, -1 where the edge is dropped (either id out of
// range, or a negative dst); the first bad edge (a dropped one, but for a
// negative dst where negative_dst_ok) into *first_bad unless it is null.
template <typename Index>
__global__ void EdgeIdsKernel(const Index* src, const Index* dst, int64_t n, int64_t src_rows,
                              int64_t dst_rows, bool negative_dst_ok, int64_t* s64, int64_t* d64,
                              unsigned long long* first_bad) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < n;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t s = static_cast<int64_t>(src[e]), d = static_cast<int64_t>(dst[e]);
    const bool bad = s < 0 || s >= src_rows || d >= dst_rows || (d < 0 && !negative_dst_ok);
    const bool keep = !bad && d >= 0;
    s64[e] = keep ? s : -1;
    d64[e] = keep ? d : -1;
    if (bad && first_bad != nullptr) atomicMin(first_bad, static_cast<unsigned long long>(e));
  }
}

template <typename Index>
const char* ReadBadEdge(EdgeCall& call, const unsigned long long* first_bad) {
  cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
  unsigned long long bad = ULLONG_MAX;
  cudaError_t e = cudaMemcpyAsync(&bad, first_bad, sizeof(bad), cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess || bad == ULLONG_MAX) return Error(e);
  Index ids[2];
  e = cudaMemcpyAsync(&ids[0], static_cast<const Index*>(call.src) + bad, sizeof(Index),
                      cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) {
    e = cudaMemcpyAsync(&ids[1], static_cast<const Index*>(call.dst) + bad, sizeof(Index),
                        cudaMemcpyDeviceToHost, stream);
  }
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e == cudaSuccess) {
    call.bad_edge = static_cast<int64_t>(bad);
    call.bad_src = static_cast<int64_t>(ids[0]);
    call.bad_dst = static_cast<int64_t>(ids[1]);
  }
  return Error(e);
}

// Checks the edges (the first bad one into call, unless call.ignore) and
// writes their int64 ids (-1: dropped) into scratch.
template <typename Index>
const char* EdgeIdsTyped(EdgeCall& call, bool negative_dst_ok, int64_t** s64, int64_t** d64) {
  cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
  const int64_t n = call.nedges;
  const size_t id_bytes = Align(sizeof(int64_t) * n);
  char* p = static_cast<char*>(call.scratch->Allocate(2 * id_bytes + Align(8)));
  if (p == nullptr) return "out of GPU memory for the edges";
  *s64 = reinterpret_cast<int64_t*>(p);
  *d64 = reinterpret_cast<int64_t*>(p + id_bytes);
  auto* first_bad = reinterpret_cast<unsigned long long*>(p + 2 * id_bytes);
  if (const cudaError_t e = cudaMemsetAsync(first_bad, 0xff, sizeof(*first_bad), stream)) {
    return Error(e);
  }
  TFSO_LAUNCH(GridFor(n), kThreads, stream, EdgeIdsKernel<Index>)(
      static_cast<const Index*>(call.src), static_cast<const Index*>(call.dst), n, call.src_rows,
      call.dst_rows, negative_dst_ok, *s64, *d64, call.ignore ? nullptr : first_bad);
  if (const char* e = LastError()) return e;
  return call.ignore ? nullptr : ReadBadEdge<Index>(call, first_bad);
}

const char* EdgeIds(EdgeCall& call, bool negative_dst_ok, int64_t** s64, int64_t** d64) {
  switch (call.index_type) {
    case IndexType::kInt16: return EdgeIdsTyped<int16_t>(call, negative_dst_ok, s64, d64);
    case IndexType::kInt32: return EdgeIdsTyped<int32_t>(call, negative_dst_ok, s64, d64);
    case IndexType::kInt64: return EdgeIdsTyped<int64_t>(call, negative_dst_ok, s64, d64);
  }
  return "unknown index type";
}

// One thread per (destination, column): the destination's edges (a run of
// the plan: edge order) offered to the element.
template <typename T, EdgeReduce kReduce, typename Key>
__global__ void GatherReduceKernel(const Key* keys, const Key* edges, const Key* run_starts,
                                   const int64_t* num_runs, const int64_t* valid_end,
                                   const int64_t* s64, const T* params, const T* weights,
                                   int64_t heads, int64_t width, T* out, int64_t* positions) {
  const int64_t slice = heads * width;
  const int64_t runs = *num_runs;
  const int64_t total = runs * slice;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < total;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = t / slice;
    const int64_t j = t - r * slice;
    const int64_t h = j / width;
    const int64_t first = run_starts[r];
    const int64_t end = r + 1 < runs ? static_cast<int64_t>(run_starts[r + 1]) : *valid_end;
    const int64_t at = static_cast<int64_t>(keys[first]) * slice + j;
    T value = out[at];
    int64_t position = -1;
    for (int64_t q = first; q < end; ++q) {
      const int64_t e = static_cast<int64_t>(edges[q]);
      const T x = params[s64[e] * slice + j];
      OfferEdge<kReduce>(value, position,
                         weights == nullptr ? x : ScaleByWeight(x, weights[e * heads + h]), e);
    }
    if constexpr (kReduce == EdgeReduce::kMean) FinalizeElement<MeanOp>(value, end - first, false);
    out[at] = value;
    if constexpr (kArgReduce<kReduce>) positions[at] = position;
  }
}

template <typename T, EdgeReduce kReduce>
const char* GatherReduceOnStream(EdgeCall& call, const T* params, const T* weights,
                                 int64_t heads, int64_t width, T empty, T* out,
                                 int64_t* positions) {
  call.bad_edge = -1;
  cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
  const int64_t slice = heads * width;
  const int64_t size = call.dst_rows * slice;
  // An empty output still has its edges checked under ERROR, as on the CPU.
  if (call.nedges == 0 && size == 0) return nullptr;
  int64_t* s64 = nullptr;
  int64_t* d64 = nullptr;
  if (call.nedges > 0 && (size > 0 || !call.ignore)) {
    if (const char* e = EdgeIds(call, /*negative_dst_ok=*/true, &s64, &d64)) return e;
    if (call.bad_edge >= 0) return nullptr;
  }
  if (size == 0) return nullptr;
  if (kArgReduce<kReduce>) {
    TFSO_LAUNCH(GridFor(size), kThreads, stream, FillKernel<T>)(out, size, empty);
    TFSO_LAUNCH(GridFor(size), kThreads, stream, FillKernel<int64_t>)(positions, size,
                                                                      int64_t{-1});
  } else {
    if (const cudaError_t e = cudaMemsetAsync(out, 0, sizeof(T) * size, stream)) return Error(e);
  }
  if (const char* e = LastError()) return e;
  if (call.nedges == 0) return nullptr;
  // The kept edges sorted by destination (dropped ones: id -1, sorted out).
  Call rows;
  rows.form = {call.nedges, 1, call.dst_rows, slice};
  rows.indices = d64;
  rows.index_type = IndexType::kInt64;
  rows.dims = &call.dst_rows;
  rows.ignore = true;
  rows.drop_negative = true;
  rows.stream = call.stream;
  rows.scratch = call.scratch;
  Plan plan;
  if (const char* e = MakePlan(rows, /*sort=*/true, &plan)) return e;
  const int64_t threads = call.nedges * slice;  // at least runs * slice
  const auto launch = [&](auto key) -> const char* {
    using Key = decltype(key);
    TFSO_LAUNCH(GridFor(threads), kThreads, stream, GatherReduceKernel<T, kReduce, Key>)(
        static_cast<const Key*>(plan.keys), static_cast<const Key*>(plan.rows),
        static_cast<const Key*>(plan.run_starts), plan.num_runs, plan.valid_end, s64, params,
        weights, heads, width, out, positions);
    return LastError();
  };
  return plan.wide ? launch(uint64_t{}) : launch(uint32_t{});
}

template <typename T, EdgeOp kOp, typename A>
__global__ void EdgeCombineKernel(const int64_t* s64, const int64_t* d64, int64_t nedges,
                                  int64_t slice, int64_t width, int64_t out_slice, const T* a,
                                  const T* b, T* out) {
  const int64_t total = nedges * out_slice;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < total;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t e = t / out_slice;
    const int64_t j = t - e * out_slice;
    const int64_t s = s64[e], d = d64[e];
    if (s < 0) {
      out[t] = T{};
      continue;
    }
    if constexpr (kOp == EdgeOp::kDot) {
      const T* x = a + s * slice + j * width;
      const T* y = b + d * slice + j * width;
      A acc = A(0);
      for (int64_t k = 0; k < width; ++k) acc = DotStep(acc, Widen<A>(x[k]), Widen<A>(y[k]));
      out[t] = Narrow<T>(acc);
    } else {
      out[t] = CombineElements<kOp>(a[s * slice + j], b[d * slice + j]);
    }
  }
}

template <typename T, EdgeOp kOp, typename A>
const char* EdgeCombineOnStream(EdgeCall& call, const T* a, const T* b, int64_t slice,
                                int64_t width, int64_t out_slice, T* out) {
  call.bad_edge = -1;
  if (call.nedges == 0) return nullptr;
  const int64_t size = call.nedges * out_slice;
  if (size == 0 && call.ignore) return nullptr;
  int64_t* s64 = nullptr;
  int64_t* d64 = nullptr;
  if (const char* e = EdgeIds(call, /*negative_dst_ok=*/false, &s64, &d64)) return e;
  if (call.bad_edge >= 0 || size == 0) return nullptr;
  cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
  TFSO_LAUNCH(GridFor(size), kThreads, stream, EdgeCombineKernel<T, kOp, A>)(
      s64, d64, call.nedges, slice, width, out_slice, a, b, out);
  return LastError();
}

}  // namespace

template <typename T, EdgeReduce kReduce>
const char* GatherReduce(EdgeCall& call, const T* params, const T* weights, int64_t heads,
                         int64_t width, T empty, T* out, int64_t* positions) {
  ClearError();
  return Cleared(GatherReduceOnStream<T, kReduce>(call, params, weights, heads, width, empty,
                                                  out, positions));
}

template <typename T, EdgeOp kOp>
const char* EdgeCombine(EdgeCall& call, const T* a, const T* b, int64_t slice, int64_t width,
                        int64_t out_slice, T* out) {
  ClearError();
  return Cleared(EdgeCombineOnStream<T, kOp, Groups8Accumulator<T>>(call, a, b, slice, width,
                                                                   out_slice, out));
}

#define MESSAGE(T)                                                                           \
  template const char* GatherReduce<T, EdgeReduce::kSum>(EdgeCall&, const T*, const T*,      \
                                                         int64_t, int64_t, T, T*, int64_t*); \
  template const char* GatherReduce<T, EdgeReduce::kMean>(EdgeCall&, const T*, const T*,     \
                                                          int64_t, int64_t, T, T*, int64_t*); \
  template const char* GatherReduce<T, EdgeReduce::kMax>(EdgeCall&, const T*, const T*,      \
                                                         int64_t, int64_t, T, T*, int64_t*); \
  template const char* GatherReduce<T, EdgeReduce::kMin>(EdgeCall&, const T*, const T*,      \
                                                         int64_t, int64_t, T, T*, int64_t*); \
  template const char* EdgeCombine<T, EdgeOp::kAdd>(              \
      EdgeCall&, const T*, const T*, int64_t, int64_t, int64_t, T*);                         \
  template const char* EdgeCombine<T, EdgeOp::kSub>(                  \
      EdgeCall&, const T*, const T*, int64_t, int64_t, int64_t, T*);                         \
  template const char* EdgeCombine<T, EdgeOp::kMul>(                  \
      EdgeCall&, const T*, const T*, int64_t, int64_t, int64_t, T*);                         \
  template const char* EdgeCombine<T, EdgeOp::kDot>(                  \
      EdgeCall&, const T*, const T*, int64_t, int64_t, int64_t, T*);
TFSO_FLOAT_DTYPES(TFSO_GPU_DTYPE, MESSAGE)
#undef MESSAGE

}  // namespace gpu
}  // namespace tf_scatter_ops
