// The family's XLA custom-call targets on the CPU: what a call compiled by
// xla_kernels.cc runs, the same CPU core and checks as the OpKernels, on
// XLA's buffers. register_kernels.h registers a target per row of the op
// table and value type next to its kernels, so the targets share the
// kernels' instantiations. Built when TFSO_XLA is set
// (tools/tf_flags.py).
#ifndef TF_SCATTER_OPS_CC_KERNELS_XLA_XLA_TARGETS_H_
#define TF_SCATTER_OPS_CC_KERNELS_XLA_XLA_TARGETS_H_

#if TFSO_XLA

#include <string>

#include "tf/scatter_kernels.h"
#include "tensorflow/core/framework/types.h"
#include "absl/strings/string_view.h"
#include "xla/service/custom_call_status.h"
#include "xla/xla_call.h"

namespace tf_scatter_ops {

// XLA's "status returning" custom-call signature: the output buffer, the
// operand buffers, the opaque string.
using XlaTarget = void (*)(void* out, const void** in, const char* opaque,
                           size_t size, XlaCustomCallStatus* status);

// Marks the call failed with `message` (xla_call.cc).
void SetXlaFailure(XlaCustomCallStatus* status, absl::string_view message);

// Registers `fn` as XlaTargetName(op, dtype) on XLA's CPU platform.
struct XlaTargetRegistrar {
  XlaTargetRegistrar(const char* op, ::tensorflow::DataType dtype, XlaTarget fn);
};

// Runs run(call, indices) for the decoded call and reports its Status; XLA
// raises a failure as an InternalError carrying the message.
template <typename Run>
void RunXlaTarget(const void* indices, const char* opaque, size_t size,
                  XlaCustomCallStatus* status, Run&& run) {
  XlaCall call;
  Status s = DecodeXlaCall(opaque, size, &call)
                 ? run(call, UnownedTensor(call.index_dtype, call.indices, indices))
                 : absl::InternalError("tf_scatter_ops: unreadable custom-call descriptor");
  if (!s.ok()) SetXlaFailure(status, s.message());
}

// tensor_scatter_nd_*: operands tensor, indices, updates. The output is the
// tensor's buffer, updated in place, or a buffer of its own that the core
// fills with the tensor's copy in the same pass (xla_kernels.cc decides).
template <typename T, typename Op>
void TensorScatterTarget(void* out, const void** in, const char* opaque, size_t size,
                         XlaCustomCallStatus* status) {
  RunXlaTarget(in[1], opaque, size, status, [&](const XlaCall& c, const Tensor& indices) {
    TfScratch scratch;
    return CpuScatter<T, Op>(indices, c.form, c.target, c.ignore,
                             static_cast<const T*>(in[2]), static_cast<const T*>(in[0]),
                             out == in[0] ? Init::kInPlace : Init::kCopy,
                             static_cast<T*>(out), HostParallel(), scratch);
  });
}

// scatter_nd: operands indices, updates.
template <typename T>
void ScatterNdTarget(void* out, const void** in, const char* opaque, size_t size,
                     XlaCustomCallStatus* status) {
  RunXlaTarget(in[0], opaque, size, status, [&](const XlaCall& c, const Tensor& indices) {
    TfScratch scratch;
    return CpuScatter<T, AddOp>(indices, c.form, c.target, c.ignore,
                                static_cast<const T*>(in[1]), nullptr, Init::kZero,
                                static_cast<T*>(out), HostParallel(), scratch);
  });
}

// gather_nd: operands params, indices.
template <typename T>
void GatherNdTarget(void* out, const void** in, const char* opaque, size_t size,
                    XlaCustomCallStatus* status) {
  RunXlaTarget(in[1], opaque, size, status, [&](const XlaCall& c, const Tensor& indices) {
    return CpuGather<T>(indices, c.form, c.target, c.ignore, static_cast<const T*>(in[0]),
                        static_cast<T*>(out), HostParallel());
  });
}

}  // namespace tf_scatter_ops

#endif  // TFSO_XLA

#endif  // TF_SCATTER_OPS_CC_KERNELS_XLA_XLA_TARGETS_H_
