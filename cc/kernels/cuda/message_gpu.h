// Message passing on the GPU (gather_reduce, edge_combine), as seen from the
// host: raw device pointers, sizes and a stream; no CUDA or TensorFlow
// header (shared by the glue and the harness).
//
// The CPU core's definitions (cpu/message_cpu.h, common/message.h) and
// order, so the CPU's bits:
//
// - the edges' ids are checked in one pass (the first bad edge, unless
//   `ignore`; a negative dst is dropped, not reported, where
//   negative_dst_ok);
// - gather_reduce: the kept edges stably radix-sorted by destination (the
//   scatter core's plan, scatter_gpu.h), then one thread per (destination,
//   column) reduces that destination's edges in edge order, reading params'
//   rows through src: no [edges, features] tensor;
// - edge_combine: one thread per output element (`dot`: per edge and part,
//   the part's products summed in order).
//
// No grouping is kept between calls (the CPU kernel keeps its last one):
// the sort is a small part of a call here.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CUDA_MESSAGE_GPU_H_
#define TF_SCATTER_OPS_CC_KERNELS_CUDA_MESSAGE_GPU_H_

#include <cstdint>

#include "common/message.h"
#include "cuda/scatter_gpu.h"

namespace tf_scatter_ops {
namespace gpu {

struct EdgeCall {
  const void* src = nullptr;  // device, [nedges]
  const void* dst = nullptr;  // device, [nedges]
  IndexType index_type = IndexType::kInt32;
  int64_t nedges = 0;
  int64_t src_rows = 0;  // src indexes [0, src_rows)
  int64_t dst_rows = 0;  // dst indexes [0, dst_rows)
  bool ignore = false;   // IGNORE: drop bad edges; else report the first
  void* stream = nullptr;  // cudaStream_t
  Scratch* scratch = nullptr;
  // Out: with !ignore, the first bad edge (or -1) and its ids. Reporting it
  // waits for the stream; nothing is written then.
  int64_t bad_edge = -1;
  int64_t bad_src = 0, bad_dst = 0;
};

// out[dst_rows, heads * width] (and positions, for max and min: the edge
// that holds each element, -1 for none) = the reduction of params[src[e]] *
// weights[e] (weights: null, or [nedges, heads]) over each destination's
// edges; an empty destination holds `empty` (max, min) or 0. Negative dst
// are dropped. Returns nullptr or a static error message.
template <typename T, EdgeReduce kReduce>
const char* GatherReduce(EdgeCall& call, const T* params, const T* weights, int64_t heads,
                         int64_t width, T empty, T* out, int64_t* positions);

// out[nedges, out_slice] = a[src[e]] op b[dst[e]] on rows of `slice`
// elements (kDot: the parts of `width` elements each summed in order, in
// float for the 16-bit floats, one value per part; out_slice parts); a
// dropped edge's row is 0.
template <typename T, EdgeOp kOp>
const char* EdgeCombine(EdgeCall& call, const T* a, const T* b, int64_t slice, int64_t width,
                        int64_t out_slice, T* out);

}  // namespace gpu
}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CUDA_MESSAGE_GPU_H_
