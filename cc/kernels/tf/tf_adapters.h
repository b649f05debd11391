// What the cores need from TensorFlow, adapted once for every kernel of the
// family: the policy attr, index rows for the CPU core and the call of the
// CUDA core, the "first bad row" error, scratch from allocate_temp, and the
// intra-op thread pool as a Parallel. Compiled once (tf_adapters.cc), not
// per dtype.
#ifndef TF_SCATTER_OPS_CC_KERNELS_TF_TF_ADAPTERS_H_
#define TF_SCATTER_OPS_CC_KERNELS_TF_TF_ADAPTERS_H_

#include <cstdint>
#include <vector>

#include "common/scatter_form.h"
#include "common/scratch.h"
#include "cpu/cpu_call.h"
#include "cpu/parallel.h"
#include "ops/shape_checks.h"
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

// bad_indices_policy, one of ops/kernel_policies.h: *ignore for "IGNORE"
// (drop bad rows), not for "", "DEFAULT" and "ERROR" (raise); any other
// value is an InvalidArgumentError naming it and the policies.
Status ParseBadIndicesPolicy(OpKernelConstruction* c, bool* ignore);

// A call of the CPU core (cpu/cpu_call.h) for `indices` into `target`; holds
// the dims and strides its index rows point to (so it is neither copied nor
// moved).
struct CpuCallState {
  CpuCallState() = default;
  CpuCallState(const CpuCallState&) = delete;
  CpuCallState& operator=(const CpuCallState&) = delete;
  std::vector<int64_t> dims, strides;
  CpuCall call;
};
Status PrepareCpuCall(const Tensor& indices, const ScatterForm& f,
                      const TensorShape& target, CpuCallState* s);

// The error for bad row `row` of `indices` (first bad row of a call) into
// `target`: of a scatter, or of a gather (`gather`: TensorFlow names the row
// by its position in indices' outer dims, and an empty params has its own
// message).
Status BadRowError(const Tensor& indices, const ScatterForm& f, int64_t row,
                   const TensorShape& target, bool gather);

// The error for a false indices_are_sorted (with unique_indices: `strict`):
// `row`, the first row that breaks it, by its index values (`segment_ids`:
// an unsorted segment op's id, by its position).
Status FalseHintError(const Tensor& indices, const ScatterForm& f, int64_t row, bool strict,
                      bool segment_ids = false);

// Indices of a dtype the ops do not register (the op's type attr rules them
// out; this guards the dispatch on it).
Status IndexDtypeError(const Tensor& indices);

// Returns f(Index()) for the C++ type of the indices' dtype: the one
// dispatch on it for the CPU and GPU call setup, the bad-row message and the
// message-passing kernels.
template <typename F>
Status WithIndexType(const Tensor& indices, F&& f) {
  switch (indices.dtype()) {
    case ::tensorflow::DT_INT16: return f(int16_t());
    case ::tensorflow::DT_INT32: return f(int32_t());
    case ::tensorflow::DT_INT64: return f(int64_t());
    default: return IndexDtypeError(indices);
  }
}

// The same from the row's index values `coords`.
Status BadIndexError(const TensorShape& indices, int64_t row,
                     const std::vector<int64_t>& coords,
                     const TensorShape& target, bool gather);

// The position of element `flat` in the first `dims` dimensions of a tensor
// of `shape`, as TensorFlow's messages print it ("indices[0,1]").
std::vector<int64_t> PositionOf(const TensorShape& shape, int dims, int64_t flat);

// The op's intra-op thread pool.
Parallel CpuParallel(OpKernelContext* c);

// Scratch that keeps the Status of its failed allocation.
class StatusScratch : public Scratch {
 public:
  const Status& status() const { return status_; }  // of a failed Allocate

 protected:
  ~StatusScratch() = default;
  Status status_;
};

// Scratch for the cores from allocate_temp on the op's device, or, without
// an OpKernelContext (XLA custom calls), from TensorFlow's CPU allocator. The
// tensors are released when the backend call returns; on a GPU that is before
// its kernels have run, which is safe because TensorFlow's GPU allocator hands
// the memory out again only to work ordered after them on the same stream.
class TfScratch : public StatusScratch {
 public:
  explicit TfScratch(OpKernelContext* c = nullptr) : c_(c) {}
  void* Allocate(size_t bytes) override;
  OpKernelContext* context() const { return c_; }

 private:
  OpKernelContext* c_;
  std::vector<Tensor> held_;
};

// A tensor over memory it does not own (an XLA buffer), for the glue that
// takes tensors; valid while that memory is.
Tensor UnownedTensor(::tensorflow::DataType dtype, const TensorShape& shape,
                     const void* data);

// A process-wide thread pool, for callers without an OpKernelContext.
Parallel HostParallel();

#if TFSO_WITH_CUDA
struct GpuCallState {
  explicit GpuCallState(OpKernelContext* c) : scratch(c) {}
  TfScratch scratch;
  gpu::Call call;
  std::vector<int64_t> dims, bad_coords;
};

// The op's CUDA stream (a cudaStream_t).
Status GpuStreamOf(OpKernelContext* c, void** stream);

// Fills s->call for `indices` into `target`, on the op's stream.
Status PrepareGpuCall(const Tensor& indices, const ScatterForm& f,
                      const TensorShape& target, bool ignore,
                      GpuCallState* s);

// The Status of a core call's own failure: out of memory, or its error.
Status GpuCoreStatus(const StatusScratch& scratch, const char* error);

// The Status of a finished core call: its error, or the first bad row.
Status GpuCallStatus(const GpuCallState& s, const char* error,
                     const TensorShape& indices, const TensorShape& target,
                     bool gather);
#endif  // TFSO_WITH_CUDA

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_TF_TF_ADAPTERS_H_
