// The index side of every GPU call (scatter_gpu.cuh's MakePlan): linearise
// and bounds-check the rows, report the first bad row, stably radix-sort the
// rows by destination and find the runs. Element-type independent, so CUB is
// compiled once, here. CUB lives in a wrapped namespace (-DCUB_WRAPPED_NAMESPACE)
// so it cannot clash with the copy inside TensorFlow.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <climits>
#include <cstring>

#include "cuda/scatter_gpu.cuh"

namespace tf_scatter_ops {
namespace gpu {
namespace {

namespace cub = CUB_NS_QUALIFIER;  // ::tfso_cub::cub when wrapped

// Dims and strides of the first `depth` target dims, passed by value up to
// kInlineDepth; deeper indices read them from device memory.
constexpr int kInlineDepth = 12;
struct Dims {
  int64_t dim[kInlineDepth];
  int64_t stride[kInlineDepth];
};

template <typename Index, typename Key>
__global__ void LinearizeKernel(const Index* indices, int64_t n, int depth,
                                Dims inline_dims, const int64_t* deep_dims,
                                Key bad_key, bool drop_negative, Key* keys,
                                Key* rows, unsigned long long* first_bad) {
  const int64_t* dim = deep_dims ? deep_dims : inline_dims.dim;
  const int64_t* stride = deep_dims ? deep_dims + depth : inline_dims.stride;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const Index* row = indices + i * depth;
    uint64_t slot = 0;
    bool ok = true, negative = false;
    for (int d = 0; d < depth; ++d) {
      const int64_t v = static_cast<int64_t>(row[d]);
      ok &= static_cast<uint64_t>(v) < static_cast<uint64_t>(dim[d]);
      negative |= v < 0;
      slot += static_cast<uint64_t>(v) * static_cast<uint64_t>(stride[d]);
    }
    keys[i] = ok ? static_cast<Key>(slot) : bad_key;
    if (rows) rows[i] = static_cast<Key>(i);
    // Only the ERROR policy reads the first bad row: IGNORE (often used
    // with -1 padding) does not pay for atomics on one address.
    if (!ok && first_bad && !(drop_negative && negative)) {
      atomicMin(first_bad, static_cast<unsigned long long>(i));
    }
  }
}

// A run starts where the sorted key changes; bad rows (key nslots, sorted
// last) start none. The position after the last valid key ends the last run.
template <typename Key>
__global__ void RunHeadsKernel(const Key* sorted, int64_t n, Key bad_key,
                               uint8_t* heads, int64_t* valid_end) {
  for (int64_t p = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; p < n;
       p += int64_t{gridDim.x} * blockDim.x) {
    const Key k = sorted[p];
    heads[p] = k != bad_key && (p == 0 || sorted[p - 1] != k);
    if (k != bad_key && (p == n - 1 || sorted[p + 1] == bad_key)) *valid_end = p + 1;
  }
}

int BitWidth(uint64_t v) {
  int bits = 0;
  while (v) {
    ++bits;
    v >>= 1;
  }
  return std::max(bits, 1);
}

size_t Align(size_t bytes) { return (bytes + 255) & ~size_t{255}; }

const char* Error(cudaError_t e) {
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

template <typename Index>
const char* ReadBadRow(Call& call, const unsigned long long* first_bad) {
  cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
  unsigned long long bad = ULLONG_MAX;
  cudaError_t e = cudaMemcpyAsync(&bad, first_bad, sizeof(bad),
                                  cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess || bad == ULLONG_MAX) return Error(e);
  Index coords[kInlineDepth];
  Index* host = coords;
  Index* heap = nullptr;
  if (call.form.depth > kInlineDepth) host = heap = new Index[call.form.depth];
  e = cudaMemcpyAsync(host, static_cast<const Index*>(call.indices) + bad * call.form.depth,
                      sizeof(Index) * call.form.depth, cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e == cudaSuccess) {
    call.bad_row = static_cast<int64_t>(bad);
    for (int d = 0; d < call.form.depth; ++d) call.bad_coords[d] = host[d];
  }
  delete[] heap;
  return Error(e);
}

template <typename Index, typename Key>
const char* MakePlanTyped(Call& call, bool sort, Plan* plan) {
  cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
  const int64_t n = call.form.n;
  const Key bad_key = static_cast<Key>(call.form.nslots);
  const int end_bit = BitWidth(static_cast<uint64_t>(call.form.nslots));
#if CUB_VERSION < 200500
  if (n > INT_MAX) return "more than 2^31-1 index rows need CUB 2.5 or newer";
#endif

  // Sizes of CUB's temp storage (host-only queries).
  size_t sort_bytes = 0, select_bytes = 0;
  Key* null_key = nullptr;
  int64_t* null_count = nullptr;
  if (sort) {
    cudaError_t e = cub::DeviceRadixSort::SortPairs(
        nullptr, sort_bytes, null_key, null_key, null_key, null_key, n, 0,
        end_bit, stream);
    if (e == cudaSuccess) {
      e = cub::DeviceSelect::Flagged(nullptr, select_bytes, null_key,
                                     static_cast<uint8_t*>(nullptr), null_key,
                                     null_count, n, stream);
    }
    if (e != cudaSuccess) return Error(e);
  }

  // One scratch block, carved into 256-byte aligned pieces.
  const size_t key_bytes = Align(sizeof(Key) * n);
  const bool deep = call.form.depth > kInlineDepth;
  size_t total = key_bytes + Align(3 * sizeof(unsigned long long)) +
                 (deep ? Align(2 * sizeof(int64_t) * call.form.depth) : 0);
  if (sort) {
    total += 4 * key_bytes + Align(n) + Align(std::max(sort_bytes, select_bytes));
  }
  char* p = static_cast<char*>(call.scratch->Allocate(total));
  if (p == nullptr) return "out of GPU memory for the index plan";
  auto take = [&p](size_t bytes) {
    char* q = p;
    p += bytes;
    return q;
  };
  Key* keys = reinterpret_cast<Key*>(take(key_bytes));
  auto* first_bad = reinterpret_cast<unsigned long long*>(
      take(Align(3 * sizeof(unsigned long long))));
  int64_t* num_runs = reinterpret_cast<int64_t*>(first_bad + 1);
  int64_t* valid_end = reinterpret_cast<int64_t*>(first_bad + 2);

  Dims dims{};
  int64_t* deep_dims = nullptr;
  {
    int64_t stride = 1;
    int64_t* host = deep ? new int64_t[2 * call.form.depth] : nullptr;
    for (int d = call.form.depth - 1; d >= 0; --d) {
      (deep ? host[d] : dims.dim[d]) = call.dims[d];
      (deep ? host[call.form.depth + d] : dims.stride[d]) = stride;
      stride *= call.dims[d];
    }
    if (deep) {
      deep_dims = reinterpret_cast<int64_t*>(take(Align(2 * sizeof(int64_t) * call.form.depth)));
      // Pageable source: the copy is staged before this call returns.
      const cudaError_t e =
          cudaMemcpyAsync(deep_dims, host, 2 * sizeof(int64_t) * call.form.depth,
                          cudaMemcpyHostToDevice, stream);
      delete[] host;
      if (e != cudaSuccess) return Error(e);
    }
  }
  if (const cudaError_t e = cudaMemsetAsync(first_bad, 0xff, sizeof(*first_bad), stream)) {
    return Error(e);
  }
  if (const cudaError_t e = cudaMemsetAsync(valid_end, 0, sizeof(*valid_end), stream)) {
    return Error(e);
  }

  Key* rows = sort ? reinterpret_cast<Key*>(take(key_bytes)) : nullptr;
  TFSO_LAUNCH(GridFor(n), kThreads, stream, LinearizeKernel<Index, Key>)(
      static_cast<const Index*>(call.indices), n, call.form.depth, dims, deep_dims,
      bad_key, call.drop_negative, keys, rows, call.ignore ? nullptr : first_bad);
  if (const char* e = LastError()) return e;
  if (!call.ignore) {
    if (const char* e = ReadBadRow<Index>(call, first_bad)) return e;
    if (call.bad_row >= 0) return nullptr;
  }
  plan->wide = sizeof(Key) == 8;
  plan->keys = keys;
  if (!sort) return nullptr;

  Key* sorted_keys = reinterpret_cast<Key*>(take(key_bytes));
  Key* sorted_rows = reinterpret_cast<Key*>(take(key_bytes));
  Key* run_starts = reinterpret_cast<Key*>(take(key_bytes));
  uint8_t* heads = reinterpret_cast<uint8_t*>(take(Align(n)));
  void* temp = take(Align(std::max(sort_bytes, select_bytes)));
  // LSD radix sort is stable: equal destinations keep their row order.
  cudaError_t e = cub::DeviceRadixSort::SortPairs(
      temp, sort_bytes, keys, sorted_keys, rows, sorted_rows, n, 0, end_bit,
      stream);
  if (e != cudaSuccess) return Error(e);
  TFSO_LAUNCH(GridFor(n), kThreads, stream, RunHeadsKernel<Key>)(
      sorted_keys, n, bad_key, heads, valid_end);
  if (const char* err = LastError()) return err;
  // `rows` (the sort's input) still holds 0..n-1: select the head positions.
  e = cub::DeviceSelect::Flagged(temp, select_bytes, rows, heads, run_starts,
                                 num_runs, n, stream);
  if (e != cudaSuccess) return Error(e);
  plan->keys = sorted_keys;
  plan->rows = sorted_rows;
  plan->run_starts = run_starts;
  plan->num_runs = num_runs;
  plan->valid_end = valid_end;
  return nullptr;
}

template <typename Index>
const char* MakePlanForIndex(Call& call, bool sort, Plan* plan) {
  const bool wide = static_cast<uint64_t>(call.form.nslots) >= UINT32_MAX ||
                    static_cast<uint64_t>(call.form.n) >= UINT32_MAX;
  return wide ? MakePlanTyped<Index, uint64_t>(call, sort, plan)
              : MakePlanTyped<Index, uint32_t>(call, sort, plan);
}

}  // namespace

int GridFor(int64_t work) {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) !=
          cudaSuccess ||
      sms <= 0) {
    sms = 1;
  }
  const int64_t needed = (work + kThreads - 1) / kThreads;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(needed, int64_t{sms} * 32)));
}

const char* MakePlan(Call& call, bool sort, Plan* plan) {
  switch (call.index_type) {
    case IndexType::kInt16: return MakePlanForIndex<int16_t>(call, sort, plan);
    case IndexType::kInt32: return MakePlanForIndex<int32_t>(call, sort, plan);
    case IndexType::kInt64: return MakePlanForIndex<int64_t>(call, sort, plan);
  }
  return "unknown index type";
}

}  // namespace gpu
}  // namespace tf_scatter_ops
