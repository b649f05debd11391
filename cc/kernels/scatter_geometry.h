// TensorFlow glue shared by every kernel of the family: the policy attr,
// shape validation into canonical form, index rows for the CPU core and the
// "first bad row" error, and the intra-op thread pool as a Parallel.
// Compiled once (scatter_geometry.cc), not per dtype.
#ifndef TF_SCATTER_OPS_CC_KERNELS_SCATTER_GEOMETRY_H_
#define TF_SCATTER_OPS_CC_KERNELS_SCATTER_GEOMETRY_H_

#include <cstdint>
#include <vector>

#include "cpu/index_linearize.h"
#include "cpu/parallel.h"
#include "common/scratch.h"
#if TFSO_WITH_CUDA
#include "cuda/scatter_gpu.h"
#endif
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/framework/tensor_shape.h"

namespace tf_scatter_ops {

using ::tensorflow::OpKernelConstruction;
using ::tensorflow::OpKernelContext;
using ::tensorflow::Tensor;
using ::tensorflow::TensorShape;
using Status = ::absl::Status;

// The canonical form of one call: indices [n, depth] into the first `depth`
// dims of a target [nslots, slice].
struct Geometry {
  int64_t n = 0;
  int depth = 0;
  int64_t slice = 1;
  int64_t nslots = 1;
};

// bad_indices_policy: "", "DEFAULT", "ERROR" raise; "IGNORE" drops rows.
Status ParseBadIndicesPolicy(OpKernelConstruction* c, bool* ignore);

// Checks indices/updates against the output shape of a scatter.
Status ScatterGeometry(const TensorShape& output, const TensorShape& indices,
                       const TensorShape& updates, Geometry* g);

// Checks indices against params of a gather; sets the output shape.
Status GatherGeometry(const TensorShape& params, const TensorShape& indices,
                      Geometry* g, TensorShape* output);

// scatter_nd's `shape` input -> an output shape (vector, non-negative, fits).
Status ShapeFromTensor(const Tensor& shape, TensorShape* output);

// The index rows of `indices` into `target`, in the CPU core's form; holds
// the dims and strides the rows point to (so it is neither copied nor moved).
struct CpuRows {
  CpuRows() = default;
  CpuRows(const CpuRows&) = delete;
  CpuRows& operator=(const CpuRows&) = delete;
  std::vector<int64_t> dims, strides;
  IndexRows rows;
};
Status MakeCpuRows(const Tensor& indices, const Geometry& g,
                   const TensorShape& target, CpuRows* r);

// The error for bad row `row` of `indices` (first bad row of a call) into
// `target`: of a scatter, or of a gather (`gather`: TensorFlow names the row
// by its position in indices' outer dims, and an empty params has its own
// message).
Status BadRowError(const Tensor& indices, const Geometry& g, int64_t row,
                   const TensorShape& target, bool gather);

// The op's intra-op thread pool.
Parallel CpuParallel(OpKernelContext* c);

// The same from the row's index values `coords`.
Status BadIndexError(const TensorShape& indices, int64_t row,
                     const std::vector<int64_t>& coords,
                     const TensorShape& target, bool gather);

// Scratch for the cores from allocate_temp on the op's device. The tensors
// are released when the backend call returns; on a GPU that is before its
// kernels have run, which is safe because TensorFlow's GPU allocator hands the
// memory out again only to work ordered after them on the same stream.
class TfScratch : public Scratch {
 public:
  explicit TfScratch(OpKernelContext* c) : c_(c) {}
  void* Allocate(size_t bytes) override;
  OpKernelContext* context() const { return c_; }
  const Status& status() const { return status_; }  // of a failed Allocate

 private:
  OpKernelContext* c_;
  std::vector<Tensor> held_;
  Status status_;
};

#if TFSO_WITH_CUDA
struct GpuCallState {
  explicit GpuCallState(OpKernelContext* c) : scratch(c) {}
  TfScratch scratch;
  gpu::Call call;
  std::vector<int64_t> dims, bad_coords;
};

// Fills s->call for `indices` into `target`, on the op's stream.
Status PrepareGpuCall(const Tensor& indices, const Geometry& g,
                      const TensorShape& target, bool ignore,
                      GpuCallState* s);

// The Status of a finished core call: its error, or the first bad row.
Status GpuCallStatus(const GpuCallState& s, const char* error,
                     const TensorShape& indices, const TensorShape& target,
                     bool gather);
#endif  // TFSO_WITH_CUDA

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_SCATTER_GEOMETRY_H_
