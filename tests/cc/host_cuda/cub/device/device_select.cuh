// Host stand-in for cub::DeviceSelect (tests/cc/host_cuda/README.md):
// Flagged with CUB's interface and documented behaviour, written for this
// project: the items whose flag is non-zero, in input order, and their count
// written to *d_num_selected_out, queued on the stream. A call with null temp
// storage only sizes it.
#ifndef TF_SCATTER_OPS_TESTS_CC_HOST_CUDA_CUB_DEVICE_DEVICE_SELECT_CUH_
#define TF_SCATTER_OPS_TESTS_CC_HOST_CUDA_CUB_DEVICE_DEVICE_SELECT_CUH_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../../cuda_runtime.h"
#include "../version.cuh"

namespace tfso_host {
namespace cub_detail {

constexpr size_t kSelectTempBytes = 256;

template <typename P>
bool DeviceArray(const P& p, int64_t n) {
  if constexpr (std::is_pointer<P>::value) {
    return ::tfso_host::IsDeviceRange(p, sizeof(*p) * n);
  } else {
    return true;  // an iterator: not checked
  }
}

}  // namespace cub_detail
}  // namespace tfso_host

CUB_NAMESPACE_BEGIN

struct DeviceSelect {
  template <typename InputIteratorT, typename FlagIterator, typename OutputIteratorT,
            typename NumSelectedIteratorT, typename NumItemsT>
  static cudaError_t Flagged(void* d_temp_storage, size_t& temp_storage_bytes,
                             InputIteratorT d_in, FlagIterator d_flags, OutputIteratorT d_out,
                             NumSelectedIteratorT d_num_selected_out, NumItemsT num_items,
                             cudaStream_t stream = 0) {
    namespace d = ::tfso_host::cub_detail;
    const int64_t n = static_cast<int64_t>(num_items);
    if (n < 0) return cudaErrorInvalidValue;
    if (d_temp_storage == nullptr) {
      temp_storage_bytes = d::kSelectTempBytes;
      return cudaSuccess;
    }
    if (temp_storage_bytes < d::kSelectTempBytes) {
      ::tfso_host::Fatal("DeviceSelect::Flagged", "given less temp storage than it asked for");
    }
    if (!::tfso_host::IsDeviceRange(d_temp_storage, d::kSelectTempBytes) ||
        !d::DeviceArray(d_in, n) || !d::DeviceArray(d_flags, n) || !d::DeviceArray(d_out, n) ||
        !d::DeviceArray(d_num_selected_out, 1)) {
      ::tfso_host::Fatal("DeviceSelect::Flagged", "an array is not (all) device memory");
    }
    char* temp = static_cast<char*>(d_temp_storage);
    return ::tfso_host::Enqueue(stream, [=] {
      std::memset(temp, 0x5a, d::kSelectTempBytes);  // it is scratch: use it
      int64_t count = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (d_flags[i]) d_out[count++] = d_in[i];
      }
      *d_num_selected_out = count;
    });
  }
};

CUB_NAMESPACE_END

#endif  // TF_SCATTER_OPS_TESTS_CC_HOST_CUDA_CUB_DEVICE_DEVICE_SELECT_CUH_
