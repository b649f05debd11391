// Kernels and driver of the sorted segment core (segment_gpu.h). CUDA-only,
// TensorFlow-free; the segment_gpu_*.cu.cc files instantiate it per order.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CUDA_SEGMENT_GPU_CUH_
#define TF_SCATTER_OPS_CC_KERNELS_CUDA_SEGMENT_GPU_CUH_

#include <cuda_runtime.h>

#include "cuda/scatter_gpu.cuh"
#include "cuda/segment_elements.h"
#include "cuda/segment_gpu.h"

namespace tf_scatter_ops {
namespace gpu {

// One thread per (segment, column), the segment's rows in kOrder. Adjacent
// threads read adjacent columns of the same row.
template <typename T, typename Op, Order kOrder, typename A>
__global__ void SegmentCsrKernel(const int64_t* offsets, const int64_t* rows,
                                 int64_t nsegments, int64_t slice, const T* data,
                                 T gap, T* out) {
  const int64_t total = nsegments * slice;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < total;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t s = t / slice;
    const int64_t j = t - s * slice;
    const int64_t begin = offsets[s], end = offsets[s + 1];
    if (begin == end) {
      out[t] = gap;
      continue;
    }
    const auto at = [&](int64_t i) -> const T& {
      return data[(rows == nullptr ? i : rows[i]) * slice + j];
    };
    const int64_t n = end - begin;
    if constexpr (kOrder == Order::kIndex) {
      T acc = at(begin);
      for (int64_t i = begin + 1; i < end; ++i) Op::Apply(acc, at(i));
      FinalizeElement<Op>(acc, n, false);
      out[t] = acc;
    } else {
      const int64_t head = begin + Groups8Head(n);
      A acc = Widen<A>(at(begin));
      for (int64_t i = begin + 1; i < head; ++i) AddOp::Apply(acc, Widen<A>(at(i)));
      for (int64_t g = head; g < end; g += 8) {
        A group = Widen<A>(at(g));
        for (int64_t i = g + 1; i < g + 8; ++i) AddOp::Apply(group, Widen<A>(at(i)));
        AddOp::Apply(acc, group);
      }
      FinalizeElement<Op>(acc, n, n <= kGroups8ReciprocalRows);
      out[t] = Narrow<T>(acc);
    }
  }
}

template <typename T>
__global__ void FillKernel(T* out, int64_t n, T value) {
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < n;
       t += int64_t{gridDim.x} * blockDim.x) {
    out[t] = value;
  }
}

template <typename T>
const char* Fill(void* stream, T* out, int64_t n, T value) {
  ClearError();
  if (n == 0) return nullptr;
  TFSO_LAUNCH(GridFor(n), kThreads, static_cast<cudaStream_t>(stream), FillKernel<T>)(out, n, value);
  return Cleared(LastError());
}

template <typename T, typename Op, Order kOrder, typename A>
const char* SortedSegmentOnStream(const SegmentCall& call, const T* data, T gap, T* out) {
  const int64_t work = call.nsegments * call.slice;
  if (work == 0) return nullptr;
  cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
  const int64_t positions = call.offsets[call.nsegments];
  const size_t offset_bytes = sizeof(int64_t) * (call.nsegments + 1);
  const size_t row_bytes = call.rows == nullptr ? 0 : sizeof(int64_t) * positions;
  char* p = static_cast<char*>(call.scratch->Allocate(((offset_bytes + 255) & ~size_t{255}) +
                                                      row_bytes));
  if (p == nullptr) return "out of GPU memory for the segments";
  int64_t* offsets = reinterpret_cast<int64_t*>(p);
  int64_t* rows = call.rows == nullptr
                      ? nullptr
                      : reinterpret_cast<int64_t*>(p + ((offset_bytes + 255) & ~size_t{255}));
  // Pageable sources: each copy is staged before cudaMemcpyAsync returns.
  cudaError_t e = cudaMemcpyAsync(offsets, call.offsets, offset_bytes, cudaMemcpyHostToDevice,
                                  stream);
  if (e == cudaSuccess && row_bytes > 0) {
    e = cudaMemcpyAsync(rows, call.rows, row_bytes, cudaMemcpyHostToDevice, stream);
  }
  if (e != cudaSuccess) return cudaGetErrorString(e);
  TFSO_LAUNCH(GridFor(work), kThreads, stream, SegmentCsrKernel<T, Op, kOrder, A>)(
      offsets, rows, call.nsegments, call.slice, data, gap, out);
  return LastError();
}

template <typename T, typename Op, Order kOrder, typename A>
const char* SortedSegment(const SegmentCall& call, const T* data, T gap, T* out) {
  ClearError();
  return Cleared(SortedSegmentOnStream<T, Op, kOrder, A>(call, data, gap, out));
}

#define TFSO_INSTANTIATE_SORTED_SEGMENT(T, OP, ORDER, A)                            \
  template const char* SortedSegment<T, OP, ORDER, A>(const SegmentCall&, const T*, T, \
                                                      T*);
#define TFSO_INSTANTIATE_FILL(T) template const char* Fill<T>(void*, T*, int64_t, T);

}  // namespace gpu
}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CUDA_SEGMENT_GPU_CUH_
