// The CPU OpKernels of the family: thin glue from TensorFlow tensors to the
// canonical cores in scatter_cpu.h. Included by one .cc per op (or op pair),
// which registers the dtypes, so the instantiations compile in parallel.
#ifndef TF_SCATTER_OPS_CC_KERNELS_SCATTER_KERNELS_H_
#define TF_SCATTER_OPS_CC_KERNELS_SCATTER_KERNELS_H_

#include <cstdint>
#include <type_traits>

#include "reducers.h"
#include "scatter_cpu.h"
#include "scatter_geometry.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/register_types.h"

namespace tf_scatter_ops {

// Assign and gather only move bits: run them on an unsigned type of the same
// size, so one instantiation serves every dtype of that width.
template <int kBytes> struct Bits;
template <> struct Bits<1> { using type = uint8_t; };
template <> struct Bits<2> { using type = uint16_t; };
template <> struct Bits<4> { using type = uint32_t; };
template <> struct Bits<8> { using type = uint64_t; };
template <> struct Bits<16> { struct type { uint64_t lo, hi; }; };

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

template <typename T, typename Op>
void RunScatter(OpKernelContext* c, const Geometry& g, const Slots& slots,
                const Tensor& updates, const T* init, Init mode, Tensor* out) {
  using E = StoredT<T, Op>;
  const ScatterShape shape{slots.data, g.n, g.slice, g.nslots};
  ScatterCpu<E, Op>(shape, As<E>(updates.flat<T>().data()), As<E>(init), mode,
                    As<E>(out->flat<T>().data()), CpuParallel(c));
}

// What every kernel of the family does at construction: read the policy.
class PolicyKernel : public ::tensorflow::OpKernel {
 public:
  explicit PolicyKernel(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ParseBadIndicesPolicy(c, &ignore_));
  }

 protected:
  bool ignore_ = false;  // "IGNORE": drop bad rows instead of failing
};

// tensor_scatter_nd_{update,add,sub,min,max}: inputs tensor, indices, updates.
template <typename T, typename Op>
class TensorScatterOp : public PolicyKernel {
 public:
  using PolicyKernel::PolicyKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& tensor = c->input(0);
    const Tensor& indices = c->input(1);
    const Tensor& updates = c->input(2);
    Geometry g;
    OP_REQUIRES_OK(c, ScatterGeometry(tensor.shape(), indices.shape(),
                                      updates.shape(), &g));
    Slots slots;
    OP_REQUIRES_OK(
        c, LinearizeIndices(c, indices, g, tensor.shape(), ignore_, &slots));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->forward_input_or_allocate_output({0}, 0,
                                                          tensor.shape(), &out));
    if (tensor.NumElements() == 0) return;
    const T* in = tensor.flat<T>().data();
    const Init mode =
        in == out->flat<T>().data() ? Init::kInPlace : Init::kCopy;
    RunScatter<T, Op>(c, g, slots, updates, in, mode, out);
  }
};

// scatter_nd: inputs indices, updates, shape; duplicates accumulate.
template <typename T>
class ScatterNdOp : public PolicyKernel {
 public:
  using PolicyKernel::PolicyKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& indices = c->input(0);
    const Tensor& updates = c->input(1);
    TensorShape shape;
    OP_REQUIRES_OK(c, ShapeFromTensor(c->input(2), &shape));
    Geometry g;
    OP_REQUIRES_OK(c,
                   ScatterGeometry(shape, indices.shape(), updates.shape(), &g));
    Slots slots;
    OP_REQUIRES_OK(c, LinearizeIndices(c, indices, g, shape, ignore_, &slots));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    if (shape.num_elements() == 0) return;
    RunScatter<T, AddOp>(c, g, slots, updates, nullptr, Init::kZero, out);
  }
};

// gather_nd: inputs params, indices; IGNORE gives zeros for bad rows.
template <typename T>
class GatherNdOp : public PolicyKernel {
 public:
  using PolicyKernel::PolicyKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& params = c->input(0);
    const Tensor& indices = c->input(1);
    Geometry g;
    TensorShape shape;
    OP_REQUIRES_OK(c, GatherGeometry(params.shape(), indices.shape(), &g, &shape));
    Slots slots;
    OP_REQUIRES_OK(
        c, LinearizeIndices(c, indices, g, params.shape(), ignore_, &slots));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    if (shape.num_elements() == 0) return;
    using E = StoredT<T, AssignOp>;
    const ScatterShape s{slots.data, g.n, g.slice, g.nslots};
    GatherCpu<E>(s, As<E>(params.flat<T>().data()),
                 As<E>(out->flat<T>().data()), CpuParallel(c));
  }
};

}  // namespace tf_scatter_ops

// The dtype lists of the family (register_types.h): value types for
// scatter_nd / update / gather_nd, for add / sub, and for min / max.
#define TFSO_CALL_ALL_TYPES(m) \
  TF_CALL_NUMBER_TYPES(m) TF_CALL_bool(m) TF_CALL_tstring(m)
#define TFSO_CALL_ADD_TYPES(m) TF_CALL_NUMBER_TYPES(m)
#define TFSO_CALL_MINMAX_TYPES(m) TF_CALL_REAL_NUMBER_TYPES(m)

// One CPU kernel per value type; the index type is dispatched at run time.
#define TFSO_REGISTER_CPU(OP_NAME, TYPE_ATTR, T, ...)              \
  REGISTER_KERNEL_BUILDER(Name("TfScatter>" OP_NAME)               \
                              .Device(::tensorflow::DEVICE_CPU)    \
                              .TypeConstraint<T>(TYPE_ATTR),       \
                          __VA_ARGS__)

#endif  // TF_SCATTER_OPS_CC_KERNELS_SCATTER_KERNELS_H_
