// The arg reductions' kernels (common/arg_reducers.h; the CPU core
// cpu/arg_scatter_cpu.h): two outputs, the maximum (minimum) and the
// position of the update row that holds it, int64, -1 where none does.
//
//   tensor_scatter_nd_{max_with_argmax,min_with_argmin}: tensor_scatter_nd_*'s
//     inputs and rules (bad rows an error naming the first, unless IGNORE);
//     positions count the update rows (indices' outer dims, row-major);
//   unsorted_segment_{...}: unsorted_segment_*'s (negative ids dropped, an id
//     >= num_segments TensorFlow's error unless IGNORE); positions count the
//     data rows (segment_ids' elements, row-major); an empty segment holds
//     unsorted_segment_max's (min's) value (UnsortedSegmentEmpty,
//     common/reducers.h: lowest() for max, highest() for min).
//
// On a GPU the CUDA core (cuda/arg_gpu.h: the same rule, each element's
// updates in row order, so the CPU's bits), with the ids and indices on the
// device and num_segments in host memory.
#ifndef TF_SCATTER_OPS_CC_KERNELS_TF_ARG_KERNELS_H_
#define TF_SCATTER_OPS_CC_KERNELS_TF_ARG_KERNELS_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "common/arg_reducers.h"
#include "cpu/arg_scatter_cpu.h"
#include "tf/segment_kernels.h"
#if TFSO_WITH_CUDA
#include "cuda/arg_gpu.h"
#endif

namespace tf_scatter_ops {

// The arg core on tensors: out and arg initialised, then the pass. The
// first bad row is an error unless `ignore`; a segment's (`segment`) bad
// rows are dropped, and the error is for the first id >= num_segments.
template <typename T, typename Op>
Status CpuArgScatter(OpKernelContext* c, const Tensor& indices, const ScatterForm& f,
                     const TensorShape& target, bool ignore, bool segment,
                     const Tensor& updates, Tensor* out, Tensor* arg) {
  CpuCallState s;
  TF_RETURN_IF_ERROR(PrepareCpuCall(indices, f, target, &s));
  int64_t* positions = arg->flat<int64_t>().data();
  const Parallel parallel = CpuParallel(c);
  parallel.For(arg->NumElements(), 1, [&](int64_t b, int64_t e) {
    std::fill(positions + b, positions + e, int64_t(-1));
  });
  TfScratch scratch(c);
  const int64_t bad = ArgScatterCpu<T, Op>(s.call, ignore || segment, /*seeded=*/!segment,
                                           updates.flat<T>().data(), out->flat<T>().data(),
                                           positions, parallel, scratch);
  if (bad == kNoScratch) return scratch.status();
  if (bad < 0 || ignore) return absl::OkStatus();
  if (segment) return FirstSegmentIdOutOfRange(indices, bad, f.nslots);
  return BadRowError(indices, f, bad, target, false);
}

// The segment reduction whose empty segment an arg reduction's empty segment
// holds (UnsortedSegmentEmpty).
template <typename Op>
using ArgSegmentOf =
    std::conditional_t<std::is_same<Op, ArgMaxOp>::value, SegmentMaxOp, SegmentMinOp>;

// The arg cores per backend: Scatter (out holds the tensor: in place, or
// copied from `tensor` here) and Segment (out and arg fresh).
struct CpuArgs {
  template <typename T, typename Op>
  static Status Scatter(OpKernelContext* c, const Tensor& tensor, const Tensor& indices,
                        const ScatterForm& f, bool ignore, const Tensor& updates, Tensor* out,
                        Tensor* arg) {
    // The core checks every row before it writes: a forwarded input is
    // intact on error.
    if (out->flat<T>().data() != tensor.flat<T>().data()) {
      const T* from = tensor.flat<T>().data();
      T* to = out->flat<T>().data();
      CpuParallel(c).For(tensor.NumElements(), 1, [&](int64_t b, int64_t e) {
        std::copy(from + b, from + e, to + b);
      });
    }
    return CpuArgScatter<T, Op>(c, indices, f, tensor.shape(), ignore, /*segment=*/false,
                                updates, out, arg);
  }

  template <typename T, typename Op>
  static Status Segment(OpKernelContext* c, const Tensor& ids, const ScatterForm& f,
                        const TensorShape& shape, bool ignore, const Tensor& data, Tensor* out,
                        Tensor* arg) {
    const T empty = UnsortedSegmentEmpty<ArgSegmentOf<Op>, T>();
    T* values = out->flat<T>().data();
    CpuParallel(c).For(out->NumElements(), 1, [&](int64_t b, int64_t e) {
      std::fill(values + b, values + e, empty);
    });
    return CpuArgScatter<T, Op>(c, ids, f, shape, ignore, /*segment=*/true, data, out, arg);
  }
};

#if TFSO_WITH_CUDA
struct GpuArgs {
  template <typename T, typename Op>
  static Status Scatter(OpKernelContext* c, const Tensor& tensor, const Tensor& indices,
                        const ScatterForm& f, bool ignore, const Tensor& updates, Tensor* out,
                        Tensor* arg) {
    using E = typename GpuElement<T>::type;
    GpuCallState s(c);
    TF_RETURN_IF_ERROR(PrepareGpuCall(indices, f, tensor.shape(), ignore, &s));
    const T* in = tensor.flat<T>().data();
    const Init mode = in == out->flat<T>().data() ? Init::kInPlace : Init::kCopy;
    const char* error = gpu::ArgScatter<E, Op>(s.call, /*seeded=*/true,
                                               As<E>(updates.flat<T>().data()), As<E>(in), mode,
                                               As<E>(out->flat<T>().data()),
                                               arg->flat<int64_t>().data());
    return GpuCallStatus(s, error, indices.shape(), tensor.shape(), false);
  }

  template <typename T, typename Op>
  static Status Segment(OpKernelContext* c, const Tensor& ids, const ScatterForm& f,
                        const TensorShape& shape, bool ignore, const Tensor& data, Tensor* out,
                        Tensor* arg) {
    using E = typename GpuElement<T>::type;
    GpuCallState s(c);
    TF_RETURN_IF_ERROR(PrepareGpuCall(ids, f, shape, ignore, &s));
    s.call.drop_negative = true;
    E* values = As<E>(out->flat<T>().data());
    const T empty = UnsortedSegmentEmpty<ArgSegmentOf<Op>, T>();
    const char* error = gpu::Fill<E>(s.call.stream, values, out->NumElements(),
                                     BitCast<E>(empty));
    if (error == nullptr) {
      error = gpu::ArgScatter<E, Op>(s.call, /*seeded=*/false, As<E>(data.flat<T>().data()),
                                     nullptr, Init::kInPlace, values,
                                     arg->flat<int64_t>().data());
    }
    return GpuSegmentStatus(s, error, ids.shape());
  }
};
#endif  // TFSO_WITH_CUDA

template <typename Backend>
struct ArgCore {
  using type = CpuArgs;
};
#if TFSO_WITH_CUDA
template <>
struct ArgCore<GpuBackend> {
  using type = GpuArgs;
};
#endif

// tensor_scatter_nd_*_with_arg*: inputs tensor, indices, updates.
template <typename Backend, typename T, typename Op>
class ArgScatterOp : public PolicyKernel {
 public:
  using PolicyKernel::PolicyKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& tensor = c->input(0);
    const Tensor& indices = c->input(1);
    const Tensor& updates = c->input(2);
    ScatterForm f;
    OP_REQUIRES_OK(c, ScatterFormOf(tensor.shape(), indices.shape(), updates.shape(), &f,
                                    rules::Wording::kTensorScatter));
    Tensor* out = nullptr;
    Tensor* arg = nullptr;
    OP_REQUIRES_OK(c, c->forward_input_or_allocate_output({0}, 0, tensor.shape(), &out));
    OP_REQUIRES_OK(c, c->allocate_output(1, tensor.shape(), &arg));
    OP_REQUIRES_OK(c, (ArgCore<Backend>::type::template Scatter<T, Op>(
                          c, tensor, indices, f, ignore_, updates, out, arg)));
  }
};

// unsorted_segment_*_with_arg*: inputs data, segment_ids, num_segments (on a
// GPU in host memory).
template <typename Backend, typename T, typename Op>
class ArgSegmentOp : public PolicyKernel {
 public:
  using PolicyKernel::PolicyKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& data = c->input(0);
    const Tensor& ids = c->input(1);
    TensorShape shape;
    int64_t slice = 1;
    OP_REQUIRES_OK(c, UnsortedSegmentOutput(data, ids, c->input(2), &shape, &slice));
    Tensor* out = nullptr;
    Tensor* arg = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    OP_REQUIRES_OK(c, c->allocate_output(1, shape, &arg));
    const ScatterForm f{ids.NumElements(), 1, shape.dim_size(0), slice};
    OP_REQUIRES_OK(c, (ArgCore<Backend>::type::template Segment<T, Op>(c, ids, f, shape,
                                                                        ignore_, data, out,
                                                                        arg)));
  }
};

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_TF_ARG_KERNELS_H_
