// What an XLA custom call of the family is told when it is compiled
// (xla_kernels.cc) and reads when it runs (xla_targets.h): the canonical form,
// the shapes its error messages name, the indices' dtype and the policy,
// carried in the call's opaque string. Names the target of each op and dtype.
#ifndef TF_SCATTER_OPS_CC_KERNELS_XLA_XLA_CALL_H_
#define TF_SCATTER_OPS_CC_KERNELS_XLA_XLA_CALL_H_

#include <string>

#include "common/scatter_form.h"
#include "tensorflow/core/framework/tensor_shape.h"
#include "tensorflow/core/framework/types.pb.h"

namespace tf_scatter_ops {

struct XlaCall {
  ScatterForm form;
  ::tensorflow::TensorShape indices;
  ::tensorflow::TensorShape target;  // a scatter's output, a gather's params
  ::tensorflow::DataType index_dtype = ::tensorflow::DT_INT32;
  bool ignore = false;
  bool gather = false;  // a gather's call (its bad-row message)
};

std::string EncodeXlaCall(const XlaCall& call);
// False for a string EncodeXlaCall did not make.
bool DecodeXlaCall(const char* opaque, size_t size, XlaCall* call);

// The custom-call target of TfScatter>`op` on values of `dtype`, on the CPU.
std::string XlaTargetName(const char* op, ::tensorflow::DataType dtype);

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_XLA_XLA_CALL_H_
