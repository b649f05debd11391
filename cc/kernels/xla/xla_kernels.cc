// The family's kernels for XLA on the CPU (tf.function(jit_compile=True)).
// Each checks shapes as the OpKernel does, then picks, per call site, what
// XLA runs there:
//
//   * XLA's own scatter or gather (xla_hlo.h), with our policy around it:
//     XLA fuses it with its neighbours, updates a loop-carried buffer in
//     place and takes operands with bounded dynamic dimensions;
//   * a custom call of our CPU core (xla_targets.h), which is faster for
//     large scatters into a fresh output with few updates per output row,
//     whose operands have static shapes (thresholds.h says where).
//
// Gathers run XLA's where a consumer could fuse them (our call cannot be
// fused); a large row gather that nothing fuses (the wrappers mark it, see
// tf_scatter_ops/_dispatch/xla_sites.py) runs ours, which is faster than XLA's gather
// on its own. TF_SCATTER_OPS_XLA=ours or =xla forces one of them where it
// applies (for comparisons); unset or "auto" chooses as above.
//
// Registered straight on XLA's CPU compilation device, which works whenever
// the library is loaded (XLA's own op registry takes no new ops once it has
// compiled something). Built when TFSO_XLA is set (tools/tf_flags.py).
#if TFSO_XLA

#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "common/arg_reducers.h"
#include "common/groupwise.h"
#include "common/reducers.h"
#include "cpu/thresholds.h"
#include "ops/op_table.h"
#include "ops/shape_checks.h"
#include "tensorflow/compiler/tf2xla/shape_util.h"
#include "tensorflow/compiler/tf2xla/xla_op_kernel.h"
#include "tensorflow/compiler/tf2xla/xla_op_registry.h"
#include "tensorflow/core/framework/node_def_util.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tf/tf_adapters.h"
#include "xla/hlo/builder/xla_builder.h"
#include "xla/xla_call.h"
#include "xla/xla_hlo.h"

namespace tf_scatter_ops {
namespace {

using ::tensorflow::XlaOpKernelContext;

constexpr char kPrefix[] = "TfScatter>";

// When our kernel runs instead of XLA's instruction: kXlaOurs* in
// cpu/thresholds.h, with the measurements that set them.

// The attrs the Python wrappers set (tf_scatter_ops/_dispatch/xla_sites.py): on a
// tensor_scatter whose input is an argument of the compiled function outside
// any loop (XLA would copy it before an in-place call; our core copies it
// faster, in the same pass as the updates, into an output of its own), and
// on a gather that no consumer can fuse.
constexpr char kFreshOutputAttr[] = "_tfso_fresh_output";
constexpr char kLoneGatherAttr[] = "_tfso_lone_gather";

enum class Path { kAuto, kOurs, kXla };

Status ForcedPath(Path* path) {
  const char* v = std::getenv("TF_SCATTER_OPS_XLA");
  if (v == nullptr || !*v || !std::strcmp(v, "auto")) {
    *path = Path::kAuto;
  } else if (!std::strcmp(v, "ours")) {
    *path = Path::kOurs;
  } else if (!std::strcmp(v, "xla")) {
    *path = Path::kXla;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "TF_SCATTER_OPS_XLA=", v, ": expected auto, ours or xla"));
  }
  return absl::OkStatus();
}

// XLA's combiner for each reducer of common/reducers.h.
template <typename Op>
constexpr Combine CombineFor() {
  if (std::is_same<Op, AssignOp>::value) return Combine::kUpdate;
  if (std::is_same<Op, SubOp>::value) return Combine::kSub;
  if (std::is_same<Op, MinOp>::value) return Combine::kMin;
  if (std::is_same<Op, MaxOp>::value) return Combine::kMax;
  if (std::is_same<Op, MulOp>::value) return Combine::kMul;
  if (std::is_same<Op, DivOp>::value) return Combine::kDiv;
  return Combine::kAdd;
}

// The combiner of a scatter, by its row of the op table.
Combine CombineOf(const std::string& op) {
#define TFSO_COMBINE_OF(OP, PY, KIND, REDUCER, ...) \
  if (op == #OP) return CombineFor<REDUCER>();
  TFSO_OPS(TFSO_COMBINE_OF)
#undef TFSO_COMBINE_OF
  return Combine::kAdd;
}

class XlaKernel : public ::tensorflow::XlaOpKernel {
 public:
  explicit XlaKernel(OpKernelConstruction* c)
      : XlaOpKernel(c), op_(c->def().op().substr(sizeof(kPrefix) - 1)) {
    OP_REQUIRES_OK(c, ParseBadIndicesPolicy(c, &ignore_));
    if (!::tensorflow::TryGetNodeAttr(c->def(), kFreshOutputAttr, &fresh_output_)) {
      fresh_output_ = false;
    }
    if (!::tensorflow::TryGetNodeAttr(c->def(), kLoneGatherAttr, &lone_gather_)) {
      lone_gather_ = false;
    }
  }

 protected:
  // Whether our kernel runs this call site (only operands of static shape
  // can be passed to a custom call).
  // `fresh`: a scatter's output cannot be its input's buffer (scatter_nd, or
  // a tensor_scatter of an argument).
  absl::StatusOr<bool> Ours(XlaOpKernelContext* ctx, const std::vector<int>& operands,
                            const XlaCall& call, bool gather, bool fresh = false) {
    Path path = Path::kAuto;  // set by ForcedPath unless it fails
    TF_RETURN_IF_ERROR(ForcedPath(&path));
    if (path == Path::kXla) return false;
    for (int i : operands) {
      TF_ASSIGN_OR_RETURN(const xla::Shape s, ctx->InputXlaShape(i));
      if (s.is_dynamic()) return false;
    }
    if (path == Path::kOurs) return true;
    const int64_t elements = call.form.n * call.form.slice;
    if (gather) {
      return lone_gather_ && call.form.slice >= kXlaOursFromSlice &&
             elements >= kXlaOursGatherFromElements;
    }
    const int64_t n = call.form.n, nslots = call.form.nslots;
    return fresh && elements >= kXlaOursFromElements && n <= nslots &&
           (call.form.slice >= kXlaOursScatterFromSlice ||
            n <= nslots / kXlaOursNarrowSlotsPerRow);
  }

  // Sets output 0 to a call of our target on `operands` (`indices` is the
  // indices'), of shape `shape` and the type of operand `typed`; with
  // `in_place`, the output is operand 0's buffer (XLA copies it first only
  // where it is still needed, and a loop-carried buffer is updated in place).
  void EmitCall(XlaOpKernelContext* ctx, std::vector<int> operands, int typed,
                int indices, const XlaCall& call, const TensorShape& shape,
                bool in_place) {
    xla::Shape xla_shape;
    OP_REQUIRES_OK(ctx, ::tensorflow::TensorShapeToXLAShape(ctx->input_type(typed), shape,
                                                           &xla_shape));
    std::vector<xla::XlaOp> args;
    for (int i : operands) args.push_back(ctx->Input(i));
    XlaCall c = call;
    c.index_dtype = ctx->input_type(indices);
    c.indices = ctx->InputShape(indices);
    c.ignore = ignore_;
    // In place: the output (shape index {}) aliases operand 0 at {}. Made by
    // value-initialising the entry: building it from braces moves empty
    // ShapeIndex temporaries, which g++ -O3 misreports as uninitialised.
    std::vector<std::pair<xla::ShapeIndex, std::pair<int64_t, xla::ShapeIndex>>> alias(
        in_place ? 1 : 0);
    ctx->SetOutput(0, xla::CustomCall(
                          ctx->builder(), XlaTargetName(op_.c_str(), ctx->input_type(typed)),
                          args, xla_shape, EncodeXlaCall(c), /*has_side_effect=*/false, alias,
                          /*literal=*/nullptr, xla::CustomCallSchedule::SCHEDULE_NONE,
                          xla::CustomCallApiVersion::API_VERSION_STATUS_RETURNING_UNIFIED));
  }

  // XLA's scatter of updates into target (operands as XlaOps), checked first
  // with the default policy.
  void EmitScatter(XlaOpKernelContext* ctx, xla::XlaOp target, xla::XlaOp indices,
                   xla::XlaOp updates) {
    if (!ignore_) OP_REQUIRES_OK(ctx, HloCheckIndices(indices, target, /*gather=*/false));
    auto out = HloScatter(CombineOf(op_), target, indices, updates);
    OP_REQUIRES_OK(ctx, out.status());
    ctx->SetOutput(0, *out);
  }

  const std::string op_;
  bool ignore_ = false;
  bool fresh_output_ = false;
  bool lone_gather_ = false;
};

// tensor_scatter_nd_*: tensor, indices, updates.
class XlaTensorScatter : public XlaKernel {
 public:
  using XlaKernel::XlaKernel;
  void Compile(XlaOpKernelContext* ctx) override {
    XlaCall call;
    call.target = ctx->InputShape(0);
    OP_REQUIRES_OK(ctx, ScatterFormOf(call.target, ctx->InputShape(1), ctx->InputShape(2),
                                      &call.form, rules::Wording::kTensorScatter));
    auto ours = Ours(ctx, {0, 1, 2}, call, /*gather=*/false, /*fresh=*/fresh_output_);
    OP_REQUIRES_OK(ctx, ours.status());
    if (*ours) {
      EmitCall(ctx, {0, 1, 2}, 0, 1, call, call.target, /*in_place=*/!fresh_output_);
    } else {
      EmitScatter(ctx, ctx->Input(0), ctx->Input(1), ctx->Input(2));
    }
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
    auto ours = Ours(ctx, {0, 1}, call, /*gather=*/false, /*fresh=*/true);
    OP_REQUIRES_OK(ctx, ours.status());
    if (*ours) {
      EmitCall(ctx, {0, 1}, 1, 0, call, call.target, /*in_place=*/false);
      return;
    }
    xla::Shape target;
    OP_REQUIRES_OK(ctx, ::tensorflow::TensorShapeToXLAShape(ctx->input_type(1), call.target,
                                                           &target));
    EmitScatter(ctx, HloZeros(ctx->builder(), target), ctx->Input(0), ctx->Input(1));
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
    auto ours = Ours(ctx, {0, 1}, call, /*gather=*/true);
    OP_REQUIRES_OK(ctx, ours.status());
    if (*ours) {
      EmitCall(ctx, {0, 1}, 0, 1, call, shape, /*in_place=*/false);
      return;
    }
    if (!ignore_) {
      OP_REQUIRES_OK(ctx, HloCheckIndices(ctx->Input(1), ctx->Input(0), /*gather=*/true));
    }
    auto out = HloGather(ctx->Input(0), ctx->Input(1), ignore_);
    OP_REQUIRES_OK(ctx, out.status());
    ctx->SetOutput(0, *out);
  }
};

// One XLA kernel per row of the op table, by its kind. The segment, group-wise,
// arg and message-passing ops have none: under XLA their Python functions
// build TensorFlow's ops.
#define TFSO_XLA_KERNEL(OP, KERNEL)                                                         \
  REGISTER_KERNEL_BUILDER(Name("TfScatter>" #OP).Device(::tensorflow::DEVICE_CPU_XLA_JIT), \
                          KERNEL);
#define TFSO_XLA_ScatterNd(OP) TFSO_XLA_KERNEL(OP, XlaScatterNd)
#define TFSO_XLA_TensorScatter(OP) TFSO_XLA_KERNEL(OP, XlaTensorScatter)
#define TFSO_XLA_GatherNd(OP) TFSO_XLA_KERNEL(OP, XlaGatherNd)
#define TFSO_XLA_UnsortedSegment(OP)
#define TFSO_XLA_SortedSegment(OP)
#define TFSO_XLA_SparseSegment(OP)
#define TFSO_XLA_Groupwise(OP)
#define TFSO_XLA_ArgScatter(OP)
#define TFSO_XLA_ArgSegment(OP)
#define TFSO_XLA_GatherReduce(OP)
#define TFSO_XLA_EdgeCombine(OP)
#define TFSO_REGISTER_XLA(OP, PY, KIND, ...) TFSO_XLA_##KIND(OP)
TFSO_OPS(TFSO_REGISTER_XLA)
#undef TFSO_REGISTER_XLA

}  // namespace
}  // namespace tf_scatter_ops

#endif  // TFSO_XLA
