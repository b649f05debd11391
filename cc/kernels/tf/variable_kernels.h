// The stateful half of the family: in-place scatters into variables and row
// reads straight from a variable's buffer. The same cores and backends as the
// tensor ops (scatter_kernels.h); register_kernels.h registers them next to
// the tensor op of the same row of the op table.
//
// Resource variables follow TensorFlow's sparse variable ops: the handle is
// looked up, the buffer is made private first (copy-on-write: a tensor read
// from the variable earlier keeps its values, and the variable switches to
// copy-on-read), then the update runs under the variable's lock, exclusive
// with use_locking (and always for strings), shared otherwise. Unlike
// TensorFlow's kernels, a call with a bad row writes nothing: the cores check
// every row before their first write.
#ifndef TF_SCATTER_OPS_CC_KERNELS_TF_VARIABLE_KERNELS_H_
#define TF_SCATTER_OPS_CC_KERNELS_TF_VARIABLE_KERNELS_H_

// TensorFlow's copy-on-write helper copies with an Eigen CPU device.
#ifndef EIGEN_USE_THREADS
#define EIGEN_USE_THREADS
#endif

#include <type_traits>

#include "tf/scatter_kernels.h"
#include "tensorflow/core/framework/resource_mgr.h"
#include "tensorflow/core/framework/resource_var.h"
#include "tensorflow/core/framework/types.h"
#include "tensorflow/core/kernels/training_op_helpers.h"

namespace tf_scatter_ops {

using ::tensorflow::Var;

// Copy-on-write before a sparse in-place write, per backend: TensorFlow's
// own helper on the CPU; on a GPU the same steps (variable_kernels.cc), as
// TensorFlow's GPU copy functor is not reachable from a plugin.
template <typename T>
Status EnsureSparseAccess(const CpuBackend*, OpKernelContext* c, Var* v) {
  return ::tensorflow::EnsureSparseVariableAccess<Eigen::ThreadPoolDevice, T>(c, v);
}
#if TFSO_WITH_CUDA
Status GpuEnsureSparseAccess(OpKernelContext* c, Var* v);
template <typename T>
Status EnsureSparseAccess(const GpuBackend*, OpKernelContext* c, Var* v) {
  return GpuEnsureSparseAccess(c, v);
}
#endif

// The variable's tensor, checked: initialised and of the op's dtype.
Status CheckVariable(const Tensor& var, ::tensorflow::DataType dtype);

// Applies the op's indices (input 1) and updates (input 2) to `target` in
// place.
template <typename Backend, typename T, typename Op>
Status ScatterInPlace(OpKernelContext* c, bool ignore, Tensor* target) {
  const Tensor& indices = c->input(1);
  const Tensor& updates = c->input(2);
  ScatterForm f;
  TF_RETURN_IF_ERROR(
      ScatterFormOf(target->shape(), indices.shape(), updates.shape(), &f));
  const T* data = target->flat<T>().data();
  return Backend::template Scatter<T, Op>(c, indices, f, target->shape(),
                                          ignore, updates, data,
                                          Init::kInPlace, target);
}

// A kernel with the variable ops' attrs: the policy and use_locking.
class VariableKernel : public PolicyKernel {
 public:
  explicit VariableKernel(OpKernelConstruction* c) : PolicyKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("use_locking", &exclusive_));
  }

 protected:
  bool exclusive_ = true;
};

// TfScatter>ResourceScatterNd{Update,Add,Sub,Min,Max}: ref (a resource
// handle), indices, updates; no outputs.
template <typename Backend, typename T, typename Op>
class ResourceScatterOp : public VariableKernel {
 public:
  explicit ResourceScatterOp(OpKernelConstruction* c) : VariableKernel(c) {
    // Elements that are not plain bytes (strings) never share the lock.
    exclusive_ = exclusive_ || !std::is_trivially_copyable<T>::value;
  }

  void Compute(OpKernelContext* c) override {
    ::tensorflow::core::RefCountPtr<Var> v;
    OP_REQUIRES_OK(c, ::tensorflow::LookupResource(
                          c, ::tensorflow::HandleFromInput(c, 0), &v));
    OP_REQUIRES_OK(c, EnsureSparseAccess<T>(static_cast<const Backend*>(nullptr),
                                            c, v.get()));
    if (exclusive_) {
      ::tensorflow::mutex_lock lock(*v->mu());
      OP_REQUIRES_OK(c, Apply(c, v->tensor()));
    } else {
      ::tensorflow::tf_shared_lock lock(*v->mu());
      OP_REQUIRES_OK(c, Apply(c, v->tensor()));
    }
  }

 private:
  Status Apply(OpKernelContext* c, Tensor* var) {
    TF_RETURN_IF_ERROR(CheckVariable(*var, ::tensorflow::DataTypeToEnum<T>::v()));
    return ScatterInPlace<Backend, T, Op>(c, ignore_, var);
  }
};

// TfScatter>ScatterNd{Update,Add,Sub,Min,Max}: the same on a TensorFlow 1.x
// ref variable (no copy-on-write there, as in TensorFlow); forwards the ref.
template <typename Backend, typename T, typename Op>
class RefScatterOp : public VariableKernel {
 public:
  using VariableKernel::VariableKernel;

  void Compute(OpKernelContext* c) override {
    if (exclusive_) {
      ::tensorflow::mutex_lock lock(*c->input_ref_mutex(0));
      OP_REQUIRES_OK(c, Apply(c));
    } else {
      OP_REQUIRES_OK(c, Apply(c));
    }
    c->forward_ref_input_to_ref_output(0, 0);
  }

 private:
  Status Apply(OpKernelContext* c) {
    Tensor var = c->mutable_input(0, exclusive_);
    if (!var.IsInitialized()) {
      return absl::FailedPreconditionError(
          "the variable is not initialized (run its initializer first)");
    }
    return ScatterInPlace<Backend, T, Op>(c, ignore_, &var);
  }
};

// TfScatter>ResourceGatherNd: resource, indices -> rows read straight from
// the variable's buffer under a shared lock (no copy of the variable).
template <typename Backend, typename T>
class ResourceGatherNdOp : public PolicyKernel {
 public:
  using PolicyKernel::PolicyKernel;

  void Compute(OpKernelContext* c) override {
    ::tensorflow::core::RefCountPtr<Var> v;
    OP_REQUIRES_OK(c, ::tensorflow::LookupResource(
                          c, ::tensorflow::HandleFromInput(c, 0), &v));
    ::tensorflow::tf_shared_lock lock(*v->mu());
    const Tensor& params = *v->tensor();
    OP_REQUIRES_OK(c, CheckVariable(params, ::tensorflow::DataTypeToEnum<T>::v()));
    OP_REQUIRES_OK(c, GatherNd<Backend, T>(c, params, c->input(1), ignore_));
  }
};

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_TF_VARIABLE_KERNELS_H_
