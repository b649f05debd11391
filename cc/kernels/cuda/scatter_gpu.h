// The CUDA core of the family, as seen from the host: raw device pointers,
// sizes and a stream. Includes neither TensorFlow nor CUDA headers, so the
// TensorFlow glue (g++) and the standalone harness (nvcc) share it.
//
// Canonical form as on the CPU (common/scatter_form.h).
//
// Deterministic without float atomics: the rows are linearised and bounds
// checked in one pass, stably radix-sorted by destination, and one owner per
// (destination, column) applies that destination's updates in row order. So
// `update` picks the last row in index order (as on the CPU), min/max,
// update and integer results are bitwise equal to the CPU kernel, and float
// sums are the index-order sums. 4- and 8-byte integer add/sub/min/max use
// integer atomics instead (exact, so order does not matter).
#ifndef TF_SCATTER_OPS_CC_KERNELS_CUDA_SCATTER_GPU_H_
#define TF_SCATTER_OPS_CC_KERNELS_CUDA_SCATTER_GPU_H_

#include <cstddef>
#include <cstdint>

#include "common/dtypes.h"
#include "common/element_types.h"
#include "common/init_mode.h"
#include "common/reducers.h"
#include "common/scatter_form.h"
#include "common/scratch.h"

namespace tf_scatter_ops {
namespace gpu {

enum class IndexType { kInt16, kInt32, kInt64 };

// Device scratch (common/scratch.h): valid until the call's work on the stream has
// finished (TensorFlow: allocate_temp; the harness: cudaMalloc).
using ::tf_scatter_ops::Scratch;

struct Call {
  ScatterForm form;
  const void* indices = nullptr;  // device, [n, depth]
  IndexType index_type = IndexType::kInt32;
  const int64_t* dims = nullptr;  // host, the `depth` outer dims of the target
  bool ignore = false;      // IGNORE: drop bad rows; else report the first
  // Rows with a negative coordinate are dropped and never reported, whatever
  // `ignore` says (the unsorted segment reductions' negative ids).
  bool drop_negative = false;
  void* stream = nullptr;   // cudaStream_t
  Scratch* scratch = nullptr;
  // Out: with !ignore, the first bad row (or -1) and, in `bad_coords` (host,
  // `depth` entries), its index values. Reporting it waits for the stream.
  int64_t bad_row = -1;
  int64_t* bad_coords = nullptr;
};

// Every function returns nullptr on success, else a static error message.
// No kernel is launched for empty tensors.

// out[nslots, slice] = init (per mode), then the updates applied with Op.
template <typename T, typename Op>
const char* Scatter(Call& call, const T* updates, const T* init, Init mode,
                    T* out);

// out[n, slice] = params[slot of row, :]; zeros for bad rows with ignore.
template <typename T>
const char* Gather(Call& call, const T* params, T* out);

// What the core was built with (build_info.cu.cc): the CUDA runtime its calls
// reach (cudaRuntimeGetVersion, e.g. 13000: the static one linked in) and the architectures in its fatbin, SASS for
// each of `sass` and PTX for `ptx` (tools/cuda_archs.sh).
struct BuildInfo {
  int runtime;
  const int* sass;
  int num_sass;
  int ptx;
};
BuildInfo Built();

// The core's element type for each dtype name of common/dtypes.h.
using dtype_bfloat16 = BF16;
using dtype_half = F16;
using dtype_float = float;
using dtype_double = double;
using dtype_complex64 = Complex<float>;
using dtype_complex128 = Complex<double>;
using dtype_int8 = int8_t;
using dtype_int16 = int16_t;
using dtype_int32 = int32_t;
using dtype_int64 = int64_t;
using dtype_uint8 = uint8_t;
using dtype_uint16 = uint16_t;
using dtype_uint32 = uint32_t;
using dtype_uint64 = uint64_t;
using dtype_bool = bool;

}  // namespace gpu
}  // namespace tf_scatter_ops

// m(type) for a dtype name of common/dtypes.h (X of its lists).
#define TFSO_GPU_DTYPE(m, name) m(::tf_scatter_ops::gpu::dtype_##name)

// Update and gather move bits: one instantiation per element width.
#define TFSO_GPU_BITS_TYPES(m) \
  m(uint8_t) m(uint16_t) m(uint32_t) m(uint64_t) m(::tf_scatter_ops::Bits128)

#endif  // TF_SCATTER_OPS_CC_KERNELS_CUDA_SCATTER_GPU_H_
