// Op registrations of the family, one per row of the op table (op_table.h)
// and its variable ops, with TensorFlow's input and attr names and a
// TfScatter> prefix, and their shape functions (the kernels' shape rules,
// shape_checks.h, on what is known at trace time).
#include <initializer_list>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/dtypes.h"
#include "common/groupwise.h"
#include "ops/op_table.h"
#include "ops/shape_checks.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"

namespace tf_scatter_ops {
namespace {

using ::absl::InvalidArgumentError;
using ::absl::StrCat;
using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;
using Status = ::absl::Status;

// "NAME: {dtype, ...}" for a list of common/dtypes.h.
#define TFSO_DTYPE_NAME(m, name) #name,
std::string TypeAttr(const char* name, std::initializer_list<const char*> dtypes) {
  return StrCat(name, ": {", absl::StrJoin(dtypes, ", "), "}");
}
#define TFSO_TYPES(NAME, LIST) TypeAttr(NAME, {LIST(TFSO_DTYPE_NAME, )})

// Every op's bad_indices_policy: a plain string, which the kernels' parser
// (tf/tf_adapters.cc) checks against ops/kernel_policies.h. TensorFlow takes
// an attr of allowed values, '' included ("{'', 'DEFAULT', 'ERROR',
// 'IGNORE'}"), but then a bad value fails as a ValueError while a graph is
// built ("Attr 'bad_indices_policy' of 'TfScatter>GatherNd' Op passed string
// 'nope' not in: ...") and eagerly in TensorFlow's words ("Value for attr
// 'bad_indices_policy' of \"nope\" is not in the list of allowed values:
// ..."), where the parser's InvalidArgumentError, in both, names the value and
// the policies and says "(upper case)".
constexpr char kPolicyAttr[] = "bad_indices_policy: string = ''";

Status TensorScatterShape(InferenceContext* c) {
  TF_RETURN_IF_ERROR(CheckScatter(c, c->input(0), c->input(1), c->input(2),
                                  rules::Wording::kTensorScatter));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

Status ScatterNdShape(InferenceContext* c) {
  ShapeHandle shape_vec = c->input(2);
  if (c->RankKnown(shape_vec) && c->Rank(shape_vec) != 1) {
    return InvalidArgumentError(messages::ShapeNotVector(c->DebugString(shape_vec)));
  }
  ShapeHandle output;
  ::tensorflow::DataType dtype;
  TF_RETURN_IF_ERROR(c->GetAttr("Tindices", &dtype));
  if (dtype == ::tensorflow::DT_INT16) {
    // TensorFlow's shape-tensor helpers read int32 and int64 only.
    const ::tensorflow::Tensor* known = c->input_tensor(2);
    if (known == nullptr) {
      const bool rank = c->RankKnown(shape_vec) && c->ValueKnown(c->Dim(shape_vec, 0));
      output = rank ? c->UnknownShapeOfRank(c->Value(c->Dim(shape_vec, 0))) : c->UnknownShape();
    } else {
      ::tensorflow::Tensor wide(::tensorflow::DT_INT64, known->shape());
      auto from = known->flat<int16_t>();
      auto to = wide.flat<int64_t>();
      for (int64_t k = 0; k < from.size(); ++k) to(k) = from(k);
      TF_RETURN_IF_ERROR(c->MakeShapeFromTensor(&wide, shape_vec, &output));
    }
  } else {
    TF_RETURN_IF_ERROR(c->MakeShapeFromShapeTensor(2, &output));
  }
  TF_RETURN_IF_ERROR(CheckScatter(c, output, c->input(0), c->input(1)));
  c->set_output(0, output);
  return absl::OkStatus();
}

// The output shape of a gather from `params` at `indices`.
Status GatherNdOutput(InferenceContext* c, ShapeHandle params,
                      ShapeHandle indices) {
  TF_RETURN_IF_ERROR(CheckIndices(c, params, indices, "params"));
  if (!c->RankKnown(indices) || !c->ValueKnown(c->Dim(indices, -1)) ||
      !c->RankKnown(params)) {
    c->set_output(0, c->UnknownShape());
    return absl::OkStatus();
  }
  ShapeHandle outer, inner, output;
  TF_RETURN_IF_ERROR(c->Subshape(indices, 0, -1, &outer));
  TF_RETURN_IF_ERROR(c->Subshape(params, c->Value(c->Dim(indices, -1)), &inner));
  TF_RETURN_IF_ERROR(c->Concatenate(outer, inner, &output));
  c->set_output(0, output);
  return absl::OkStatus();
}

Status GatherNdShape(InferenceContext* c) {
  return GatherNdOutput(c, c->input(0), c->input(1));
}

// The variable's shape and dtype, when the resource handle carries them.
const ::tensorflow::shape_inference::ShapeAndType* HandleData(
    InferenceContext* c, int input) {
  const auto* data = c->input_handle_shapes_and_types(input);
  return data == nullptr || data->empty() ? nullptr : &(*data)[0];
}

Status CheckVariableDtype(InferenceContext* c,
                          const ::tensorflow::shape_inference::ShapeAndType& h,
                          const char* attr) {
  ::tensorflow::DataType dtype;
  TF_RETURN_IF_ERROR(c->GetAttr(attr, &dtype));
  if (h.dtype != ::tensorflow::DT_INVALID && h.dtype != dtype) {
    return InvalidArgumentError(StrCat(
        "the variable's dtype ", ::tensorflow::DataTypeString(h.dtype),
        " does not match the op's ", attr, " = ",
        ::tensorflow::DataTypeString(dtype)));
  }
  return absl::OkStatus();
}

// In-place scatter into a resource variable: no outputs; the checks of the
// tensor ops against the variable's shape, when the handle carries it.
Status ResourceScatterShape(InferenceContext* c) {
  const auto* h = HandleData(c, 0);
  if (h == nullptr) return absl::OkStatus();
  TF_RETURN_IF_ERROR(CheckVariableDtype(c, *h, "T"));
  return CheckScatter(c, h->shape, c->input(1), c->input(2));
}

// In-place scatter into a ref variable: forwards the ref.
Status RefScatterShape(InferenceContext* c) {
  TF_RETURN_IF_ERROR(CheckScatter(c, c->input(0), c->input(1), c->input(2)));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

Status ResourceGatherNdShape(InferenceContext* c) {
  const auto* h = HandleData(c, 0);
  if (h != nullptr) TF_RETURN_IF_ERROR(CheckVariableDtype(c, *h, "dtype"));
  return GatherNdOutput(c, h != nullptr ? h->shape : c->UnknownShape(),
                        c->input(1));
}

// unsorted_segment_*: data [ids.shape + slice], segment_ids, num_segments a
// scalar (rules::UnsortedSegment); output [num_segments] +
// data.shape[ids.rank:] (TensorFlow's).
Status UnsortedSegmentShape(InferenceContext* c) {
  ShapeHandle data = c->input(0), ids = c->input(1);
  TF_RETURN_IF_ERROR(CheckUnsortedSegment(c, data, ids, c->input(2)));
  if (!c->RankKnown(data) || !c->RankKnown(ids)) {
    c->set_output(0, c->UnknownShape());
    return absl::OkStatus();
  }
  ::tensorflow::shape_inference::DimensionHandle segments;
  TF_RETURN_IF_ERROR(c->MakeDimForScalarInput(2, &segments));
  ShapeHandle inner, output;
  TF_RETURN_IF_ERROR(c->Subshape(data, c->Rank(ids), &inner));
  TF_RETURN_IF_ERROR(c->Concatenate(c->Vector(segments), inner, &output));
  c->set_output(0, output);
  return absl::OkStatus();
}

// segment_*: data of rank >= 1, sorted 1-D ids (rules::SortedSegment);
// output [?] + data.shape[1:] (its length is the last id + 1).
Status SortedSegmentShape(InferenceContext* c) {
  ShapeHandle data = c->input(0), inner, output;
  TF_RETURN_IF_ERROR(CheckSortedSegment(c, data, c->input(1)));
  TF_RETURN_IF_ERROR(c->Subshape(data, 1, &inner));
  TF_RETURN_IF_ERROR(c->Concatenate(c->Vector(c->UnknownDim()), inner, &output));
  c->set_output(0, output);
  return absl::OkStatus();
}

// sparse_segment_*: data of rank >= 1, 1-D indices and segment_ids of one
// length, num_segments a scalar (rules::SparseSegment; < 0: the last id + 1,
// unknown here); output [num_segments] + data.shape[1:].
Status SparseSegmentShape(InferenceContext* c) {
  ShapeHandle data = c->input(0), inner, output;
  TF_RETURN_IF_ERROR(CheckSparseSegment(c, data, c->input(1), c->input(2), c->input(3)));
  ::tensorflow::shape_inference::DimensionHandle segments = c->UnknownDim();
  const ::tensorflow::Tensor* known = c->input_tensor(3);
  if (known != nullptr && known->dims() == 0 && ScalarInt64(*known) >= 0) {
    segments = c->MakeDim(ScalarInt64(*known));
  }
  TF_RETURN_IF_ERROR(c->Subshape(data, 1, &inner));
  TF_RETURN_IF_ERROR(c->Concatenate(c->Vector(segments), inner, &output));
  c->set_output(0, output);
  return absl::OkStatus();
}

// segment_<function>: unsorted_segment_*'s inputs; the output is data's shape
// (softmax, log_softmax) or unsorted_segment_*'s (a value per segment).
template <bool kPerSegment>
Status GroupwiseShape(InferenceContext* c) {
  TF_RETURN_IF_ERROR(UnsortedSegmentShape(c));
  if (!kPerSegment) c->set_output(0, c->input(0));
  return absl::OkStatus();
}

// Its gradient (inputs data, the op's output y, y's gradient, segment_ids,
// num_segments): data, its ids and num_segments as the op's; the data's shape
// (y's and its gradient's are checked by the kernel).
Status GroupwiseGradShape(InferenceContext* c) {
  ShapeHandle data = c->input(0);
  TF_RETURN_IF_ERROR(CheckUnsortedSegment(c, data, c->input(3), c->input(4)));
  ShapeHandle unused;
  TF_RETURN_IF_ERROR(c->Merge(c->input(1), c->input(2), &unused));
  c->set_output(0, data);
  return absl::OkStatus();
}

// The arg reductions: the value (tensor_scatter_nd_*'s or
// unsorted_segment_*'s shape) and the positions, shaped alike.
template <Status (*kValueShape)(InferenceContext*)>
Status WithPositionsShape(InferenceContext* c) {
  TF_RETURN_IF_ERROR(kValueShape(c));
  c->set_output(1, c->output(0));
  return absl::OkStatus();
}

}  // namespace

// gather_reduce: output [num_segments] + params.shape[1:]; positions the
// same for max and min (the edge that holds each element), else [0].
Status GatherReduceShape(InferenceContext* c) {
  bool weighted = false;
  std::string reduce;
  TF_RETURN_IF_ERROR(c->GetAttr("weighted", &weighted));
  TF_RETURN_IF_ERROR(c->GetAttr("reduce", &reduce));
  ShapeHandle params = c->input(0), weights = c->input(4);
  TF_RETURN_IF_ERROR(CheckGatherReduce(c, params, c->input(1), c->input(2), c->input(3),
                                       weighted ? &weights : nullptr));
  ShapeHandle output = c->UnknownShape();
  if (c->RankKnown(params)) {
    ::tensorflow::shape_inference::DimensionHandle segments;
    TF_RETURN_IF_ERROR(c->MakeDimForScalarInput(3, &segments));
    ShapeHandle inner;
    TF_RETURN_IF_ERROR(c->Subshape(params, 1, &inner));
    TF_RETURN_IF_ERROR(c->Concatenate(c->Vector(segments), inner, &output));
  }
  c->set_output(0, output);
  c->set_output(1, reduce == "max" || reduce == "min" ? output : c->Vector(0));
  return absl::OkStatus();
}

// edge_combine: [edges] + a.shape[1:] (op='dot': without the last axis).
Status EdgeCombineShape(InferenceContext* c) {
  std::string op;
  TF_RETURN_IF_ERROR(c->GetAttr("op", &op));
  ShapeHandle a = c->input(0), b = c->input(1), src = c->input(2), dst = c->input(3);
  TF_RETURN_IF_ERROR(CheckEdgeCombine(c, a, b, src, dst, op == "dot"));
  ShapeHandle rows = c->RankKnown(a) ? a : b;
  if (!c->RankKnown(rows)) {
    c->set_output(0, c->UnknownShape());
    return absl::OkStatus();
  }
  ::tensorflow::shape_inference::DimensionHandle edges = c->UnknownDim();
  if (c->RankKnown(src)) TF_RETURN_IF_ERROR(c->Merge(edges, c->Dim(src, 0), &edges));
  if (c->RankKnown(dst)) TF_RETURN_IF_ERROR(c->Merge(edges, c->Dim(dst, 0), &edges));
  ShapeHandle inner, output;
  TF_RETURN_IF_ERROR(c->Subshape(rows, 1, op == "dot" ? c->Rank(rows) - 1 : c->Rank(rows),
                                 &inner));
  TF_RETURN_IF_ERROR(c->Concatenate(c->Vector(edges), inner, &output));
  c->set_output(0, output);
  return absl::OkStatus();
}

// The op definitions of each kind of row of the op table (op_table.h):
// TensorFlow's inputs, outputs and attrs, our value dtypes, and the policy; the
// scatters also take the promises indices_are_sorted and unique_indices
// (cpu/scatter_hinted.h: sorted rows are checked and skip the grouping passes).
#define TFSO_OP_DEF_ScatterNd(OP, DTYPES, REDUCER)          \
  REGISTER_OP("TfScatter>" #OP)                             \
      .Input("indices: Tindices")                           \
      .Input("updates: T")                                  \
      .Input("shape: Tindices")                             \
      .Output("output: T")                                  \
      .Attr(TFSO_TYPES("T", TFSO_##DTYPES##_DTYPES))         \
      .Attr(TFSO_TYPES("Tindices", TFSO_INDEX_DTYPES))       \
      .Attr(kPolicyAttr)                                    \
      .Attr("indices_are_sorted: bool = false")             \
      .Attr("unique_indices: bool = false")                 \
      .SetShapeFn(ScatterNdShape);

#define TFSO_OP_DEF_TensorScatter(OP, DTYPES, REDUCER)      \
  REGISTER_OP("TfScatter>" #OP)                             \
      .Input("tensor: T")                                   \
      .Input("indices: Tindices")                           \
      .Input("updates: T")                                  \
      .Output("output: T")                                  \
      .Attr(TFSO_TYPES("T", TFSO_##DTYPES##_DTYPES))         \
      .Attr(TFSO_TYPES("Tindices", TFSO_INDEX_DTYPES))       \
      .Attr(kPolicyAttr)                                    \
      .Attr("indices_are_sorted: bool = false")             \
      .Attr("unique_indices: bool = false")                 \
      .SetShapeFn(TensorScatterShape);

#define TFSO_OP_DEF_GatherNd(OP, DTYPES, REDUCER)           \
  REGISTER_OP("TfScatter>" #OP)                             \
      .Input("params: Tparams")                             \
      .Input("indices: Tindices")                           \
      .Output("output: Tparams")                            \
      .Attr(TFSO_TYPES("Tparams", TFSO_##DTYPES##_DTYPES))   \
      .Attr(TFSO_TYPES("Tindices", TFSO_INDEX_DTYPES))       \
      .Attr(kPolicyAttr)                                    \
      .SetShapeFn(GatherNdShape);

#define TFSO_OP_DEF_UnsortedSegment(OP, DTYPES, REDUCER)    \
  REGISTER_OP("TfScatter>" #OP)                             \
      .Input("data: T")                                     \
      .Input("segment_ids: Tindices")                       \
      .Input("num_segments: Tnumsegments")                  \
      .Output("output: T")                                  \
      .Attr(TFSO_TYPES("T", TFSO_##DTYPES##_DTYPES))         \
      .Attr(TFSO_TYPES("Tindices", TFSO_INDEX_DTYPES))       \
      .Attr("Tnumsegments: {int32, int64} = DT_INT32")      \
      .Attr(kPolicyAttr)                                    \
      .Attr("indices_are_sorted: bool = false")             \
      .Attr("unique_indices: bool = false")                 \
      .SetShapeFn(UnsortedSegmentShape);

#define TFSO_OP_DEF_SortedSegment(OP, DTYPES, REDUCER)      \
  REGISTER_OP("TfScatter>" #OP)                             \
      .Input("data: T")                                     \
      .Input("segment_ids: Tindices")                       \
      .Output("output: T")                                  \
      .Attr(TFSO_TYPES("T", TFSO_##DTYPES##_DTYPES))         \
      .Attr(TFSO_TYPES("Tindices", TFSO_INDEX_DTYPES))       \
      .Attr(kPolicyAttr)                                    \
      .SetShapeFn(SortedSegmentShape);

// sparse_gradient: the gradient is an IndexedSlices (tf.sparse.segment_*'s
// argument; the kernel does not read it).
#define TFSO_OP_DEF_SparseSegment(OP, DTYPES, REDUCER)      \
  REGISTER_OP("TfScatter>" #OP)                             \
      .Input("data: T")                                     \
      .Input("indices: Tidx")                               \
      .Input("segment_ids: Tsegmentids")                    \
      .Input("num_segments: Tnumsegments")                  \
      .Output("output: T")                                  \
      .Attr(TFSO_TYPES("T", TFSO_##DTYPES##_DTYPES))         \
      .Attr(TFSO_TYPES("Tidx", TFSO_INDEX_DTYPES))           \
      .Attr(TFSO_TYPES("Tsegmentids", TFSO_INDEX_DTYPES))    \
      .Attr("Tnumsegments: {int32, int64} = DT_INT32")      \
      .Attr("sparse_gradient: bool = false")                \
      .Attr(kPolicyAttr)                                    \
      .SetShapeFn(SparseSegmentShape);

// Groupwise: the function's op, and its fused gradient <OP>Grad.
#define TFSO_OP_DEF_Groupwise(OP, DTYPES, REDUCER)          \
  REGISTER_OP("TfScatter>" #OP)                             \
      .Input("data: T")                                     \
      .Input("segment_ids: Tindices")                       \
      .Input("num_segments: Tnumsegments")                  \
      .Output("output: T")                                  \
      .Attr(TFSO_TYPES("T", TFSO_##DTYPES##_DTYPES))         \
      .Attr(TFSO_TYPES("Tindices", TFSO_INDEX_DTYPES))       \
      .Attr("Tnumsegments: {int32, int64} = DT_INT32")      \
      .Attr("ddof: int = 0")                                \
      .Attr(kPolicyAttr)                                    \
      .SetShapeFn(GroupwiseShape<REDUCER::kPerSegment>);    \
  REGISTER_OP("TfScatter>" #OP "Grad")                      \
      .Input("data: T")                                     \
      .Input("y: T")                                        \
      .Input("grad: T")                                     \
      .Input("segment_ids: Tindices")                       \
      .Input("num_segments: Tnumsegments")                  \
      .Output("output: T")                                  \
      .Attr(TFSO_TYPES("T", TFSO_##DTYPES##_DTYPES))         \
      .Attr(TFSO_TYPES("Tindices", TFSO_INDEX_DTYPES))       \
      .Attr("Tnumsegments: {int32, int64} = DT_INT32")      \
      .Attr("ddof: int = 0")                                \
      .Attr(kPolicyAttr)                                    \
      .SetShapeFn(GroupwiseGradShape);

// ArgScatter, ArgSegment: a tensor scatter's or unsorted segment op's inputs;
// the value and the positions of the updates that hold it (int64, -1: none).
#define TFSO_OP_DEF_ArgScatter(OP, DTYPES, REDUCER)         \
  REGISTER_OP("TfScatter>" #OP)                             \
      .Input("tensor: T")                                   \
      .Input("indices: Tindices")                           \
      .Input("updates: T")                                  \
      .Output("output: T")                                  \
      .Output("positions: int64")                           \
      .Attr(TFSO_TYPES("T", TFSO_##DTYPES##_DTYPES))         \
      .Attr(TFSO_TYPES("Tindices", TFSO_INDEX_DTYPES))       \
      .Attr(kPolicyAttr)                                    \
      .SetShapeFn(WithPositionsShape<TensorScatterShape>);

#define TFSO_OP_DEF_ArgSegment(OP, DTYPES, REDUCER)         \
  REGISTER_OP("TfScatter>" #OP)                             \
      .Input("data: T")                                     \
      .Input("segment_ids: Tindices")                       \
      .Input("num_segments: Tnumsegments")                  \
      .Output("output: T")                                  \
      .Output("positions: int64")                           \
      .Attr(TFSO_TYPES("T", TFSO_##DTYPES##_DTYPES))         \
      .Attr(TFSO_TYPES("Tindices", TFSO_INDEX_DTYPES))       \
      .Attr("Tnumsegments: {int32, int64} = DT_INT32")      \
      .Attr(kPolicyAttr)                                    \
      .SetShapeFn(WithPositionsShape<UnsortedSegmentShape>);

// The message-passing ops: GatherReduce (`weighted`: weights is read, else
// it is ignored; positions for max and min) and EdgeCombine.
#define TFSO_OP_DEF_GatherReduce(OP, DTYPES, REDUCER)       \
  REGISTER_OP("TfScatter>" #OP)                             \
      .Input("params: T")                                   \
      .Input("src: Tindices")                               \
      .Input("dst: Tindices")                               \
      .Input("num_segments: Tnumsegments")                  \
      .Input("weights: T")                                  \
      .Output("output: T")                                  \
      .Output("positions: int64")                           \
      .Attr(TFSO_TYPES("T", TFSO_##DTYPES##_DTYPES))         \
      .Attr(TFSO_TYPES("Tindices", TFSO_INDEX_DTYPES))       \
      .Attr("Tnumsegments: {int32, int64} = DT_INT32")      \
      .Attr("reduce: {'sum', 'mean', 'max', 'min'} = 'sum'") \
      .Attr("weighted: bool = false")                       \
      .Attr(kPolicyAttr)                                    \
      .SetShapeFn(GatherReduceShape);

#define TFSO_OP_DEF_EdgeCombine(OP, DTYPES, REDUCER)        \
  REGISTER_OP("TfScatter>" #OP)                             \
      .Input("a: T")                                        \
      .Input("b: T")                                        \
      .Input("src: Tindices")                               \
      .Input("dst: Tindices")                               \
      .Output("output: T")                                  \
      .Attr(TFSO_TYPES("T", TFSO_##DTYPES##_DTYPES))         \
      .Attr(TFSO_TYPES("Tindices", TFSO_INDEX_DTYPES))       \
      .Attr("op: {'add', 'sub', 'mul', 'dot'} = 'add'")     \
      .Attr(kPolicyAttr)                                    \
      .SetShapeFn(EdgeCombineShape);

// The stateful half: in-place updates of variables (resource handles, and
// TensorFlow 1.x ref variables), and row reads straight from a variable.
#define TFSO_VARIABLE_DEF_ScatterNd(VARIABLE, DTYPES)

// A tensor scatter's variable ops, unless its VARIABLE is `none`.
#define TFSO_PROBE_none ~, 1
#define TFSO_SECOND(a, b, ...) b
#define TFSO_IS_NONE_(...) TFSO_SECOND(__VA_ARGS__, 0, )
#define TFSO_IS_NONE(x) TFSO_IS_NONE_(TFSO_PROBE_##x)
#define TFSO_CAT_(a, b) a##b
#define TFSO_CAT(a, b) TFSO_CAT_(a, b)
#define TFSO_VARIABLE_DEF_TensorScatter(VARIABLE, DTYPES) \
  TFSO_CAT(TFSO_SCATTER_VARIABLE_DEF_, TFSO_IS_NONE(VARIABLE))(VARIABLE, DTYPES)
#define TFSO_SCATTER_VARIABLE_DEF_1(VARIABLE, DTYPES)
#define TFSO_SCATTER_VARIABLE_DEF_0(VARIABLE, DTYPES)       \
  REGISTER_OP("TfScatter>Resource" #VARIABLE)               \
      .Input("ref: resource")                               \
      .Input("indices: Tindices")                           \
      .Input("updates: T")                                  \
      .Attr(TFSO_TYPES("T", TFSO_##DTYPES##_DTYPES))         \
      .Attr(TFSO_TYPES("Tindices", TFSO_INDEX_DTYPES))       \
      .Attr("use_locking: bool = true")                     \
      .Attr(kPolicyAttr)                                    \
      .SetShapeFn(ResourceScatterShape);                    \
  REGISTER_OP("TfScatter>" #VARIABLE)                       \
      .Input("ref: Ref(T)")                                 \
      .Input("indices: Tindices")                           \
      .Input("updates: T")                                  \
      .Output("output_ref: Ref(T)")                         \
      .Attr(TFSO_TYPES("T", TFSO_##DTYPES##_DTYPES))         \
      .Attr(TFSO_TYPES("Tindices", TFSO_INDEX_DTYPES))       \
      .Attr("use_locking: bool = true")                     \
      .Attr(kPolicyAttr)                                    \
      .SetShapeFn(RefScatterShape);

#define TFSO_VARIABLE_DEF_UnsortedSegment(VARIABLE, DTYPES)
#define TFSO_VARIABLE_DEF_SortedSegment(VARIABLE, DTYPES)
#define TFSO_VARIABLE_DEF_SparseSegment(VARIABLE, DTYPES)
#define TFSO_VARIABLE_DEF_Groupwise(VARIABLE, DTYPES)
#define TFSO_VARIABLE_DEF_ArgScatter(VARIABLE, DTYPES)
#define TFSO_VARIABLE_DEF_ArgSegment(VARIABLE, DTYPES)
#define TFSO_VARIABLE_DEF_GatherReduce(VARIABLE, DTYPES)
#define TFSO_VARIABLE_DEF_EdgeCombine(VARIABLE, DTYPES)

#define TFSO_VARIABLE_DEF_GatherNd(VARIABLE, DTYPES)        \
  REGISTER_OP("TfScatter>" #VARIABLE)                       \
      .Input("resource: resource")                          \
      .Input("indices: Tindices")                           \
      .Output("output: dtype")                              \
      .Attr(TFSO_TYPES("dtype", TFSO_##DTYPES##_DTYPES))     \
      .Attr(TFSO_TYPES("Tindices", TFSO_INDEX_DTYPES))       \
      .Attr(kPolicyAttr)                                    \
      .SetShapeFn(ResourceGatherNdShape);

#define TFSO_OP_DEFS(OP, PY, KIND, REDUCER, DTYPES, VARIABLE, GRADIENT, TF, ALIAS) \
  TFSO_OP_DEF_##KIND(OP, DTYPES, REDUCER) TFSO_VARIABLE_DEF_##KIND(VARIABLE, DTYPES)
TFSO_OPS(TFSO_OP_DEFS)

}  // namespace tf_scatter_ops
