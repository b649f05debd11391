// The family's kernels for XLA on the CPU (tf.function(jit_compile=True)):
// each checks shapes as the OpKernel does and emits a custom call of our CPU
// core (xla_targets.h), so compiled code runs our kernels, policy and
// messages. Registered straight on XLA's CPU compilation device, which works
// whenever the library is loaded (XLA's own op registry takes no new ops once
// it has compiled something). Built when TFSO_XLA is set (tools/tf_flags.py).
#if TFSO_XLA

#include <string>
#include <vector>

#include "shape_checks.h"
#include "tensorflow/compiler/tf2xla/shape_util.h"
#include "tensorflow/compiler/tf2xla/xla_op_kernel.h"
#include "tensorflow/compiler/tf2xla/xla_op_registry.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tf_adapters.h"
#include "xla/hlo/builder/xla_builder.h"
#include "xla_call.h"

namespace tf_scatter_ops {
namespace {

using ::tensorflow::XlaOpKernelContext;

constexpr char kPrefix[] = "TfScatter>";

class XlaKernel : public ::tensorflow::XlaOpKernel {
 public:
  explicit XlaKernel(OpKernelConstruction* c)
      : XlaOpKernel(c), op_(c->def().op().substr(sizeof(kPrefix) - 1)) {
    OP_REQUIRES_OK(c, ParseBadIndicesPolicy(c, &ignore_));
  }

 protected:
  // Sets output 0 to a call of our target on `operands` (`indices` is the
  // indices'), of shape `shape` and the type of operand `typed`. The output
  // is a fresh buffer: the core fills it in one pass with the copy of a
  // tensor_scatter's input, where an output aliased to the input would have
  // XLA copy a live input first, more slowly.
  void EmitCall(XlaOpKernelContext* ctx, std::vector<int> operands, int typed,
                int indices, const XlaCall& call, const TensorShape& shape) {
    xla::Shape xla_shape;
    OP_REQUIRES_OK(ctx, ::tensorflow::TensorShapeToXLAShape(ctx->input_type(typed), shape,
                                                           &xla_shape));
    std::vector<xla::XlaOp> args;
    for (int i : operands) args.push_back(ctx->Input(i));
    XlaCall c = call;
    c.index_dtype = ctx->input_type(indices);
    c.indices = ctx->InputShape(indices);
    c.ignore = ignore_;
    ctx->SetOutput(0, xla::CustomCall(
                          ctx->builder(), XlaTargetName(op_.c_str(), ctx->input_type(typed)),
                          args, xla_shape, EncodeXlaCall(c), /*has_side_effect=*/false,
                          /*output_operand_aliasing=*/{},
                          /*literal=*/nullptr, xla::CustomCallSchedule::SCHEDULE_NONE,
                          xla::CustomCallApiVersion::API_VERSION_STATUS_RETURNING_UNIFIED));
  }

  const std::string op_;
  bool ignore_ = false;
};

// tensor_scatter_nd_*: tensor, indices, updates.
class XlaTensorScatter : public XlaKernel {
 public:
  using XlaKernel::XlaKernel;
  void Compile(XlaOpKernelContext* ctx) override {
    XlaCall call;
    call.target = ctx->InputShape(0);
    OP_REQUIRES_OK(ctx, ScatterFormOf(call.target, ctx->InputShape(1), ctx->InputShape(2),
                                      &call.form));
    EmitCall(ctx, {0, 1, 2}, 0, 1, call, call.target);
  }
};

// scatter_nd: indices, updates, shape (a compile-time constant).
class XlaScatterNd : public XlaKernel {
 public:
  using XlaKernel::XlaKernel;
  void Compile(XlaOpKernelContext* ctx) override {
    XlaCall call;
    auto shape = ctx->ConstantInputTensor(2);  // of any index dtype, int16 too
    OP_REQUIRES_OK(ctx, shape.status());
    OP_REQUIRES_OK(ctx, ShapeFromTensor(*shape, &call.target));
    OP_REQUIRES_OK(ctx, ScatterFormOf(call.target, ctx->InputShape(0), ctx->InputShape(1),
                                      &call.form));
    EmitCall(ctx, {0, 1}, 1, 0, call, call.target);
  }
};

// gather_nd: params, indices.
class XlaGatherNd : public XlaKernel {
 public:
  using XlaKernel::XlaKernel;
  void Compile(XlaOpKernelContext* ctx) override {
    XlaCall call;
    call.target = ctx->InputShape(0);
    TensorShape shape;
    OP_REQUIRES_OK(ctx, GatherFormOf(call.target, ctx->InputShape(1), &call.form, &shape));
    EmitCall(ctx, {0, 1}, 0, 1, call, shape);
  }
};

#define TFSO_REGISTER_XLA(OP_NAME, KERNEL)                                       \
  REGISTER_KERNEL_BUILDER(Name("TfScatter>" OP_NAME)                             \
                              .Device(::tensorflow::DEVICE_CPU_XLA_JIT),         \
                          KERNEL)
TFSO_REGISTER_XLA("TensorScatterUpdate", XlaTensorScatter);
TFSO_REGISTER_XLA("TensorScatterAdd", XlaTensorScatter);
TFSO_REGISTER_XLA("TensorScatterSub", XlaTensorScatter);
TFSO_REGISTER_XLA("TensorScatterMin", XlaTensorScatter);
TFSO_REGISTER_XLA("TensorScatterMax", XlaTensorScatter);
TFSO_REGISTER_XLA("ScatterNd", XlaScatterNd);
TFSO_REGISTER_XLA("GatherNd", XlaGatherNd);

}  // namespace
}  // namespace tf_scatter_ops

#endif  // TFSO_XLA
