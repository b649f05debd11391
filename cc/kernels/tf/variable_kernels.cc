// The parts of the variable kernels compiled once, not per dtype.
#include "tf/variable_kernels.h"

#include "absl/strings/str_cat.h"
#if TFSO_WITH_CUDA
#include "absl/synchronization/notification.h"
#include "tensorflow/core/framework/device.h"
#endif

namespace tf_scatter_ops {

Status CheckVariable(const Tensor& var, ::tensorflow::DataType dtype) {
  if (!var.IsInitialized()) {
    return absl::FailedPreconditionError(
        "the variable is not initialized (assign it a value first)");
  }
  if (var.dtype() != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the variable has dtype ", ::tensorflow::DataTypeString(var.dtype()),
        " but the op's dtype is ", ::tensorflow::DataTypeString(dtype)));
  }
  return absl::OkStatus();
}

#if TFSO_WITH_CUDA
// The steps of TensorFlow's EnsureSparseVariableAccess, with the copy made
// by the op's device context on its stream.
Status GpuEnsureSparseAccess(OpKernelContext* c, Var* var) {
  if (var->copy_on_read_mode.load()) return absl::OkStatus();
  ::tensorflow::mutex_lock lock(*var->mu());
  if (var->copy_on_read_mode.load()) return absl::OkStatus();
  if (var->tensor()->RefCountIsOne()) {
    var->copy_on_read_mode.store(true);
    return absl::OkStatus();
  }
  Tensor copy;
  ::tensorflow::AllocatorAttributes attr;
  attr.set_gpu_compatible(true);
  attr.set_nic_compatible(true);
  TF_RETURN_IF_ERROR(c->allocate_temp(var->tensor()->dtype(),
                                      var->tensor()->shape(), &copy, attr));
  if (var->tensor()->NumElements() > 0) {
    Status copied;
    absl::Notification done;
    c->op_device_context()->CopyTensorInSameDevice(
        var->tensor(), static_cast<::tensorflow::Device*>(c->device()), &copy,
        [&copied, &done](const Status& s) {
          copied = s;
          done.Notify();
        });
    done.WaitForNotification();
    TF_RETURN_IF_ERROR(copied);
  }
  *var->tensor() = copy;
  var->copy_on_read_mode.store(true);
  return absl::OkStatus();
}
#endif  // TFSO_WITH_CUDA

}  // namespace tf_scatter_ops
