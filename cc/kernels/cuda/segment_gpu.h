// The sorted segment reductions (segment_*, sparse_segment_*) on the GPU, as
// seen from the host: no CUDA or TensorFlow header (shared by the glue and
// the harness).
//
// The glue validates the ids on the host (the kernels take them in host
// memory, as TensorFlow's sorted GPU kernels read the last id back anyway)
// with the CPU kernels' own code and messages, and hands the core the
// segments in CSR form. One thread per (segment, column) reduces that
// segment's rows in the order of common/segment_order.h, so the result is
// the CPU core's, bit for bit.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CUDA_SEGMENT_GPU_H_
#define TF_SCATTER_OPS_CC_KERNELS_CUDA_SEGMENT_GPU_H_

#include <cstdint>

#include "common/reducers.h"
#include "common/scratch.h"
#include "common/segment_order.h"

namespace tf_scatter_ops {
namespace gpu {

struct SegmentCall {
  int64_t nsegments = 0;
  int64_t slice = 0;
  // Host, [nsegments + 1]: segment s reduces positions [offsets[s],
  // offsets[s + 1]); an empty range is a gap.
  const int64_t* offsets = nullptr;
  // Host, [offsets[nsegments]]: the data row at each position
  // (sparse_segment_*: the gather fused in), or null: the position is the row.
  const int64_t* rows = nullptr;
  void* stream = nullptr;  // cudaStream_t
  Scratch* scratch = nullptr;
};

// out[nsegments, slice] = each segment's reduction with Op in kOrder
// (accumulating in A), then Finalize<Op>; gaps `gap`. Returns nullptr on
// success, else a static error message. The host arrays may be freed when it
// returns.
template <typename T, typename Op, Order kOrder, typename A>
const char* SortedSegment(const SegmentCall& call, const T* data, T gap, T* out);

// out[0, n) = value (an empty unsorted segment's value: UnsortedSegmentEmpty).
template <typename T>
const char* Fill(void* stream, T* out, int64_t n, T value);

}  // namespace gpu
}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CUDA_SEGMENT_GPU_H_
