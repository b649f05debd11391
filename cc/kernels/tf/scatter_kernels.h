// The OpKernels of the family: thin glue from TensorFlow tensors to the
// canonical cores, through a backend per device (CPU: cpu/scatter_cpu.h and
// gather_cpu.h; GPU: cuda/scatter_gpu.h). register_kernels.h registers them
// per row of the op table.
#ifndef TF_SCATTER_OPS_CC_KERNELS_TF_SCATTER_KERNELS_H_
#define TF_SCATTER_OPS_CC_KERNELS_TF_SCATTER_KERNELS_H_

#include <cstdint>
#include <type_traits>

#include "common/dtypes.h"
#include "common/element_types.h"
#include "common/reducers.h"
#include "cpu/gather_cpu.h"
#include "cpu/scatter_cpu.h"
#include "cpu/scatter_hinted.h"
#include "ops/shape_checks.h"
#include "tf/tf_adapters.h"
#if TFSO_WITH_CUDA
#include "cuda/scatter_gpu.h"
#endif
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/register_types.h"

namespace tf_scatter_ops {

// Assign and gather run on Bits<sizeof(T)> (element_types.h).
template <typename T, bool kMovesBits,
          bool kPod = std::is_trivially_copyable<T>::value>
struct Stored {
  using type = T;
};
template <typename T>
struct Stored<T, true, true> {
  using type = typename Bits<sizeof(T)>::type;
};
template <typename T, typename Op>
using StoredT = typename Stored<T, std::is_same<Op, AssignOp>::value>::type;

template <typename E, typename T>
E* As(T* p) { return reinterpret_cast<E*>(p); }
template <typename E, typename T>
const E* As(const T* p) { return reinterpret_cast<const E*>(p); }

// The CPU core on TensorFlow tensors, with the thread pool and scratch of
// the caller: an OpKernel's (CpuBackend) or an XLA custom call's
// (xla_targets.h). The first bad row is an error unless `ignore`; so is a
// false hint (under IGNORE the rows are then applied without the hints).
template <typename T, typename Op>
Status CpuScatter(const Tensor& indices, const ScatterForm& f,
                  const TensorShape& target, bool ignore, const T* updates,
                  const T* init, Init mode, T* out, const Parallel& parallel,
                  StatusScratch& scratch, ScatterHints hints = {}) {
  CpuCallState s;
  TF_RETURN_IF_ERROR(PrepareCpuCall(indices, f, target, &s));
  using E = StoredT<T, Op>;
  const int64_t bad =
      ScatterHintedCpu<E, Op>(s.call, ignore, /*report_false=*/!ignore, &hints, As<E>(updates),
                              As<E>(init), mode, As<E>(out), parallel, scratch);
  if (bad == kFalseHint) return FalseHintError(indices, f, hints.false_at, hints.unique);
  if (bad == kNoScratch) return scratch.status();
  if (bad >= 0 && !ignore) return BadRowError(indices, f, bad, target, false);
  return absl::OkStatus();
}

template <typename T>
Status CpuGather(const Tensor& indices, const ScatterForm& f,
                 const TensorShape& params_shape, bool ignore, const T* params,
                 T* out, const Parallel& parallel) {
  CpuCallState s;
  TF_RETURN_IF_ERROR(PrepareCpuCall(indices, f, params_shape, &s));
  using E = StoredT<T, AssignOp>;
  const int64_t bad = GatherCpu<E>(s.call, As<E>(params), As<E>(out), parallel);
  if (bad >= 0 && !ignore) return BadRowError(indices, f, bad, params_shape, true);
  return absl::OkStatus();
}

// Where a kernel runs. The first bad row is an error unless `ignore`; each
// backend finds it before it writes to an `out` that is updated in place, so
// a forwarded input is left intact on error (a fresh `out` is dropped with
// the failed op).
struct CpuBackend {
  template <typename T, typename Op>
  static Status Scatter(OpKernelContext* c, const Tensor& indices,
                        const ScatterForm& f, const TensorShape& target,
                        bool ignore, const Tensor& updates, const T* init,
                        Init mode, Tensor* out, const ScatterHints& hints = {}) {
    TfScratch scratch(c);
    return CpuScatter<T, Op>(indices, f, target, ignore, updates.flat<T>().data(), init,
                             mode, out->flat<T>().data(), CpuParallel(c), scratch, hints);
  }

  template <typename T>
  static Status Gather(OpKernelContext* c, const Tensor& indices,
                       const ScatterForm& f, bool ignore, const Tensor& params,
                       Tensor* out) {
    return CpuGather<T>(indices, f, params.shape(), ignore, params.flat<T>().data(),
                        out->flat<T>().data(), CpuParallel(c));
  }
};

#if TFSO_WITH_CUDA
// The CUDA core's stand-ins for Eigen's half/bfloat16 and std::complex.
template <typename T> struct GpuElement { using type = T; };
template <> struct GpuElement<Eigen::half> { using type = F16; };
template <> struct GpuElement<::tensorflow::bfloat16> { using type = BF16; };
template <> struct GpuElement<::tensorflow::complex64> { using type = Complex<float>; };
template <> struct GpuElement<::tensorflow::complex128> { using type = Complex<double>; };
template <typename T, typename Op>
using GpuT = typename std::conditional<std::is_same<Op, AssignOp>::value,
                                       typename Bits<sizeof(T)>::type,
                                       typename GpuElement<T>::type>::type;

struct GpuBackend {
  // The hints are not used (nor checked) by the GPU core, which sorts anyway.
  template <typename T, typename Op>
  static Status Scatter(OpKernelContext* c, const Tensor& indices,
                        const ScatterForm& f, const TensorShape& target,
                        bool ignore, const Tensor& updates, const T* init,
                        Init mode, Tensor* out, const ScatterHints& = {}) {
    GpuCallState s(c);
    TF_RETURN_IF_ERROR(PrepareGpuCall(indices, f, target, ignore, &s));
    using E = GpuT<T, Op>;
    const char* error = gpu::Scatter<E, Op>(
        s.call, As<E>(updates.flat<T>().data()), As<E>(init), mode,
        As<E>(out->flat<T>().data()));
    return GpuCallStatus(s, error, indices.shape(), target, false);
  }

  template <typename T>
  static Status Gather(OpKernelContext* c, const Tensor& indices,
                       const ScatterForm& f, bool ignore, const Tensor& params,
                       Tensor* out) {
    GpuCallState s(c);
    TF_RETURN_IF_ERROR(PrepareGpuCall(indices, f, params.shape(), ignore, &s));
    using E = GpuT<T, AssignOp>;
    const char* error = gpu::Gather<E>(s.call, As<E>(params.flat<T>().data()),
                                       As<E>(out->flat<T>().data()));
    return GpuCallStatus(s, error, indices.shape(), params.shape(), true);
  }
};
#endif  // TFSO_WITH_CUDA

// What every kernel of the family does at construction: read the policy.
class PolicyKernel : public ::tensorflow::OpKernel {
 public:
  explicit PolicyKernel(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ParseBadIndicesPolicy(c, &ignore_));
  }

 protected:
  bool ignore_ = false;  // "IGNORE": drop bad rows instead of failing
};

// ... and the hints of the tensor ops (indices_are_sorted, unique_indices).
class HintedKernel : public PolicyKernel {
 public:
  explicit HintedKernel(OpKernelConstruction* c) : PolicyKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("indices_are_sorted", &hints_.sorted));
    OP_REQUIRES_OK(c, c->GetAttr("unique_indices", &hints_.unique));
  }

 protected:
  ScatterHints hints_;
};

// tensor_scatter_nd_{update,add,sub,min,max,mul,div}: inputs tensor, indices,
// updates.
template <typename Backend, typename T, typename Op>
class TensorScatterOp : public HintedKernel {
 public:
  using HintedKernel::HintedKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& tensor = c->input(0);
    const Tensor& indices = c->input(1);
    const Tensor& updates = c->input(2);
    ScatterForm f;
    OP_REQUIRES_OK(c, ScatterFormOf(tensor.shape(), indices.shape(), updates.shape(), &f,
                                    rules::Wording::kTensorScatter));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->forward_input_or_allocate_output({0}, 0,
                                                          tensor.shape(), &out));
    const T* in = tensor.flat<T>().data();
    const Init mode =
        in == out->flat<T>().data() ? Init::kInPlace : Init::kCopy;
    OP_REQUIRES_OK(c, Backend::template Scatter<T, Op>(
                          c, indices, f, tensor.shape(), ignore_, updates, in,
                          mode, out, hints_));
  }
};

// scatter_nd: inputs indices, updates, shape; duplicates accumulate.
template <typename Backend, typename T>
class ScatterNdOp : public HintedKernel {
 public:
  using HintedKernel::HintedKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& indices = c->input(0);
    const Tensor& updates = c->input(1);
    TensorShape shape;
    OP_REQUIRES_OK(c, ShapeFromTensor(c->input(2), &shape));
    ScatterForm f;
    OP_REQUIRES_OK(c, ScatterFormOf(shape, indices.shape(), updates.shape(), &f));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    OP_REQUIRES_OK(c, Backend::template Scatter<T, AddOp>(
                          c, indices, f, shape, ignore_, updates, nullptr,
                          Init::kZero, out, hints_));
  }
};

// Output 0 = the rows of `params` at `indices`; IGNORE gives zeros for bad
// rows.
template <typename Backend, typename T>
Status GatherNd(OpKernelContext* c, const Tensor& params, const Tensor& indices,
                bool ignore) {
  ScatterForm f;
  TensorShape shape;
  TF_RETURN_IF_ERROR(GatherFormOf(params.shape(), indices.shape(), &f, &shape));
  Tensor* out = nullptr;
  TF_RETURN_IF_ERROR(c->allocate_output(0, shape, &out));
  return Backend::template Gather<T>(c, indices, f, ignore, params, out);
}

// gather_nd: inputs params, indices.
template <typename Backend, typename T>
class GatherNdOp : public PolicyKernel {
 public:
  using PolicyKernel::PolicyKernel;

  void Compute(OpKernelContext* c) override {
    OP_REQUIRES_OK(c, GatherNd<Backend, T>(c, c->input(0), c->input(1), ignore_));
  }
};

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_TF_SCATTER_KERNELS_H_
