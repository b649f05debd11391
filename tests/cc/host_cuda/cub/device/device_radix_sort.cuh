// Host stand-in for cub::DeviceRadixSort (tests/cc/host_cuda/README.md):
// SortPairs with CUB's interface and documented behaviour, written for this
// project: a stable LSD radix sort of unsigned keys on bits [begin_bit,
// end_bit) only (the other bits are not looked at), 8 bits a pass, the
// values moved with their keys, the inputs left unchanged. A call with null
// temp storage only sizes it (no stream work); otherwise the sort is queued
// on the stream and uses the temp storage it asked for (two alternate
// buffers), so a caller that gives less, or host pointers, is stopped.
#ifndef TF_SCATTER_OPS_TESTS_CC_HOST_CUDA_CUB_DEVICE_DEVICE_RADIX_SORT_CUH_
#define TF_SCATTER_OPS_TESTS_CC_HOST_CUDA_CUB_DEVICE_DEVICE_RADIX_SORT_CUH_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../../cuda_runtime.h"
#include "../version.cuh"

namespace tfso_host {
namespace cub_detail {

inline size_t Align256(size_t bytes) { return (bytes + 255) & ~size_t{255}; }

template <typename K, typename V>
size_t SortTempBytes(int64_t n) {
  return Align256(sizeof(K) * n) + Align256(sizeof(V) * n) + 256;
}

template <typename K, typename V>
void RadixSortPairs(const K* keys_in, K* keys_out, const V* values_in, V* values_out,
                    int64_t n, int begin_bit, int end_bit, char* temp) {
  K* keys_alt = reinterpret_cast<K*>(temp);
  V* values_alt = reinterpret_cast<V*>(temp + Align256(sizeof(K) * n));
  const int passes = (end_bit - begin_bit + 7) / 8;
  if (passes == 0) {
    std::memmove(keys_out, keys_in, sizeof(K) * n);
    std::memmove(values_out, values_in, sizeof(V) * n);
    return;
  }
  const K* keys = keys_in;
  const V* values = values_in;
  for (int p = 0; p < passes; ++p) {
    // The passes alternate between the temp buffers and the output so that
    // the last one writes the output.
    const bool to_out = (passes - 1 - p) % 2 == 0;
    K* k_dst = to_out ? keys_out : keys_alt;
    V* v_dst = to_out ? values_out : values_alt;
    const int shift = begin_bit + 8 * p;
    const int bits = end_bit - shift < 8 ? end_bit - shift : 8;
    const K mask = static_cast<K>((K{1} << bits) - 1);
    int64_t start[257] = {0};
    for (int64_t i = 0; i < n; ++i) ++start[((keys[i] >> shift) & mask) + 1];
    for (int d = 0; d < 256; ++d) start[d + 1] += start[d];
    for (int64_t i = 0; i < n; ++i) {  // in input order: stable
      const int64_t at = start[(keys[i] >> shift) & mask]++;
      k_dst[at] = keys[i];
      v_dst[at] = values[i];
    }
    keys = k_dst;
    values = v_dst;
  }
}

}  // namespace cub_detail
}  // namespace tfso_host

CUB_NAMESPACE_BEGIN

struct DeviceRadixSort {
  template <typename KeyT, typename ValueT, typename NumItemsT>
  static cudaError_t SortPairs(void* d_temp_storage, size_t& temp_storage_bytes,
                               const KeyT* d_keys_in, KeyT* d_keys_out,
                               const ValueT* d_values_in, ValueT* d_values_out,
                               NumItemsT num_items, int begin_bit = 0,
                               int end_bit = sizeof(KeyT) * 8, cudaStream_t stream = 0) {
    static_assert(std::is_integral<KeyT>::value && std::is_unsigned<KeyT>::value,
                  "the host stand-in sorts unsigned integer keys");
    namespace d = ::tfso_host::cub_detail;
    const int64_t n = static_cast<int64_t>(num_items);
    if (n < 0 || begin_bit < 0 || end_bit < begin_bit ||
        end_bit > static_cast<int>(sizeof(KeyT) * 8)) {
      return cudaErrorInvalidValue;
    }
    const size_t need = d::SortTempBytes<KeyT, ValueT>(n);
    if (d_temp_storage == nullptr) {
      temp_storage_bytes = need;
      return cudaSuccess;
    }
    if (temp_storage_bytes < need) {
      ::tfso_host::Fatal("DeviceRadixSort::SortPairs", "given less temp storage than it asked for");
    }
    if (n == 0) return cudaSuccess;
    if (!::tfso_host::IsDeviceRange(d_temp_storage, need) ||
        !::tfso_host::IsDeviceRange(d_keys_in, sizeof(KeyT) * n) ||
        !::tfso_host::IsDeviceRange(d_keys_out, sizeof(KeyT) * n) ||
        !::tfso_host::IsDeviceRange(d_values_in, sizeof(ValueT) * n) ||
        !::tfso_host::IsDeviceRange(d_values_out, sizeof(ValueT) * n)) {
      ::tfso_host::Fatal("DeviceRadixSort::SortPairs", "an array is not (all) device memory");
    }
    char* temp = static_cast<char*>(d_temp_storage);
    return ::tfso_host::Enqueue(stream, [=] {
      d::RadixSortPairs(d_keys_in, d_keys_out, d_values_in, d_values_out, n, begin_bit,
                        end_bit, temp);
    });
  }
};

CUB_NAMESPACE_END

#endif  // TF_SCATTER_OPS_TESTS_CC_HOST_CUDA_CUB_DEVICE_DEVICE_RADIX_SORT_CUH_
