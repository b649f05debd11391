// Built when TFSO_XLA is set (tools/tf_flags.py), as its users are.
#if TFSO_XLA
#include "xla/xla_hlo.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tensorflow/core/framework/tensor_shape.h"
#include "tf/tf_adapters.h"
#include "xla/xla_call.h"
#include "xla/xla_targets.h"
#include "xla/hlo/builder/lib/arithmetic.h"
#include "xla/hlo/builder/lib/constants.h"
#include "xla/service/custom_call_status_internal.h"
#include "xla/service/custom_call_target_registry.h"
#include "xla/shape_util.h"

namespace tf_scatter_ops {
namespace {

using xla::XlaOp;

constexpr char kCheckTarget[] = "tf_scatter_ops.CheckIndices";
constexpr char kReportTarget[] = "tf_scatter_ops.ReportBadRow";
// The first word of the report's opaque string: its layout's version.
constexpr int64_t kReportLayout = 0x7f5c0101;
constexpr int64_t kNoBadRow = std::numeric_limits<int64_t>::max();

std::vector<int64_t> Iota(int64_t begin, int64_t end) {
  std::vector<int64_t> v;
  for (int64_t d = begin; d < end; ++d) v.push_back(d);
  return v;
}

// Dimension d of x at run time (its bound's actual size), as an s64 scalar.
XlaOp Size(XlaOp x, int d) {
  return xla::ConvertElementType(xla::GetDimensionSize(x, d), xla::S64);
}

// The first `n` dimensions of x at run time, as s64 [n].
XlaOp Sizes(XlaOp x, int n) {
  xla::XlaBuilder* b = x.builder();
  if (n == 0) return xla::ConstantR1<int64_t>(b, {});
  std::vector<XlaOp> v;
  for (int d = 0; d < n; ++d) v.push_back(xla::Reshape(Size(x, d), {1}));
  return xla::ConcatInDim(b, v, 0);
}

// `op`, built from static shapes, with the dynamic dimensions of `like`
// (dimension map[d] of `op` is dimension d of `like`).
XlaOp LikeDynamic(XlaOp op, XlaOp like, const xla::Shape& like_shape,
                  const std::vector<int64_t>& map) {
  for (int d = 0; d < like_shape.dimensions_size(); ++d) {
    if (like_shape.is_dynamic_dimension(d)) {
      op = xla::SetDimensionSize(op, xla::GetDimensionSize(like, d), map[d]);
    }
  }
  return op;
}

// A tensor of `value`s with the dimensions of `like`, dynamic ones included.
XlaOp FilledLike(XlaOp value, XlaOp like, const xla::Shape& like_shape) {
  const auto dims = like_shape.dimensions();
  const XlaOp filled = xla::Broadcast(value, std::vector<int64_t>(dims.begin(), dims.end()));
  return LikeDynamic(filled, like, like_shape, Iota(0, like_shape.dimensions_size()));
}

// Indices of a type that XLA's scatter and gather take on every backend.
XlaOp WideIndices(XlaOp indices, const xla::Shape& s) {
  return s.element_type() == xla::S16 ? xla::ConvertElementType(indices, xla::S32) : indices;
}

// pred [outer...]: whether each row of `indices` [outer..., depth] indexes
// into the first `depth` dimensions of `target` (at their run-time sizes).
XlaOp RowsInBounds(XlaOp indices, const xla::Shape& is, XlaOp target, int depth) {
  xla::XlaBuilder* b = indices.builder();
  const int64_t last = is.dimensions_size() - 1;
  const XlaOp idx = xla::ConvertElementType(indices, xla::S64);
  const XlaOp in = xla::And(xla::Ge(idx, xla::ConstantR0<int64_t>(b, 0)),
                            xla::Lt(idx, Sizes(target, depth), {last}));
  return xla::Reduce(in, xla::ConstantR0<bool>(b, true),
                     xla::CreateScalarAndComputation(xla::PRED, b), {last});
}

// The check of indices whose only dynamic dimension, if any, is the first:
// operands the indices (at their bound, the rows XLA holds at the front of
// the buffer) and the run-time sizes of the indices' and the target's
// dimensions (s64); the rows are read once by the CPU core's parallel bounds
// check. The opaque string is the call (xla_call.h) at the bounds.
void CheckIndicesTarget(void* out, const void** in, const char* opaque, size_t size,
                        XlaCustomCallStatus* status) {
  *static_cast<int32_t*>(out) = 0;
  RunXlaTarget(in[0], opaque, size, status, [&](const XlaCall& c, const Tensor&) {
    const auto* sizes = static_cast<const int64_t*>(in[1]);
    TensorShape indices_shape, target;
    TF_RETURN_IF_ERROR(TensorShape::BuildTensorShape(
        {sizes, static_cast<size_t>(c.indices.dims())}, &indices_shape));
    TF_RETURN_IF_ERROR(TensorShape::BuildTensorShape(
        {sizes + c.indices.dims(), static_cast<size_t>(c.target.dims())}, &target));
    const Tensor indices = UnownedTensor(c.index_dtype, indices_shape, in[0]);
    ScatterForm form;
    TensorShape unused;
    TF_RETURN_IF_ERROR(GatherFormOf(target, indices_shape, &form, &unused));
    CpuCallState s;
    TF_RETURN_IF_ERROR(PrepareCpuCall(indices, form, target, &s));
    const int64_t bad = Linearize(s.call.rows, nullptr, HostParallel());
    return bad < 0 ? absl::OkStatus() : BadRowError(indices, form, bad, target, c.gather);
  });
}

// The report for indices with a dynamic dimension after the first, whose rows
// are not in one block of the buffer, and whose first bad row fused
// instructions found: operands that row (kNoBadRow if none), its coordinates
// (s64 [depth]) and the run-time sizes of the indices' and the target's
// dimensions; the opaque string holds the ranks and whether it is a
// gather's.
void ReportBadRowTarget(void* out, const void** in, const char* opaque, size_t size,
                        XlaCustomCallStatus* status) {
  *static_cast<int32_t*>(out) = 0;
  int64_t w[5];
  if (size != sizeof(w) || (std::memcpy(w, opaque, size), w[0] != kReportLayout)) {
    status->message = "tf_scatter_ops: unreadable index-check descriptor";
    return;
  }
  const int64_t first = *static_cast<const int64_t*>(in[0]);
  if (first == kNoBadRow) return;
  const bool gather = w[1] != 0;
  const int64_t indices_rank = w[2], target_rank = w[3], depth = w[4];
  const auto* coords = static_cast<const int64_t*>(in[1]);
  const auto* sizes = static_cast<const int64_t*>(in[2]);
  TensorShape indices, target;
  Status s = TensorShape::BuildTensorShape({sizes, static_cast<size_t>(indices_rank)}, &indices);
  if (s.ok()) {
    s = TensorShape::BuildTensorShape(
        {sizes + indices_rank, static_cast<size_t>(target_rank)}, &target);
  }
  if (s.ok()) {
    s = BadIndexError(indices, first, std::vector<int64_t>(coords, coords + depth), target,
                      gather);
  }
  // TensorFlow's libraries do not export XlaCustomCallStatusSetFailure; the
  // status is the struct its header defines, failed when it has a message.
  status->message = std::string(s.message());
}

const bool kChecksRegistered = [] {
  xla::CustomCallTargetRegistry::Global()->Register(
      kCheckTarget, reinterpret_cast<void*>(&CheckIndicesTarget), "Host");
  xla::CustomCallTargetRegistry::Global()->Register(
      kReportTarget, reinterpret_cast<void*>(&ReportBadRowTarget), "Host");
  return true;
}();

TensorShape ShapeOf(const xla::Shape& s) {
  TensorShape t;
  for (int64_t d : s.dimensions()) t.AddDim(d);
  return t;
}

// A side-effecting call that returns nothing XLA needs (it is kept all the
// same); its failure fails the computation.
void EmitCheck(xla::XlaBuilder* b, const char* target, absl::Span<const XlaOp> operands,
               const std::string& opaque) {
  xla::CustomCall(b, target, operands, xla::ShapeUtil::MakeShape(xla::S32, {}), opaque,
                  /*has_side_effect=*/true, /*output_operand_aliasing=*/{},
                  /*literal=*/nullptr, xla::CustomCallSchedule::SCHEDULE_NONE,
                  xla::CustomCallApiVersion::API_VERSION_STATUS_RETURNING_UNIFIED);
}

}  // namespace

absl::StatusOr<XlaOp> HloScatter(Combine combine, XlaOp target, XlaOp indices,
                                 XlaOp updates) {
  xla::XlaBuilder* b = target.builder();
  TF_ASSIGN_OR_RETURN(const xla::Shape ts, b->GetShape(target));
  TF_ASSIGN_OR_RETURN(const xla::Shape is, b->GetShape(indices));
  const int64_t last = is.dimensions_size() - 1;
  const int64_t depth = is.dimensions(last);
  if (depth == 0 && ts.is_static()) {
    // XLA's scatter mishandles rows of depth 0 (whole-tensor slices): a
    // rank-0 target fails its verifier, a target of one element keeps only
    // the last row. The same scatter as rows [0] into [1] + the target's shape:
    std::vector<int64_t> dims(ts.dimensions().begin(), ts.dimensions().end());
    std::vector<int64_t> one = dims;
    one.insert(one.begin(), 1);
    xla::PaddingConfig pad;  // the indices [outer..., 0] -> [outer..., 1] of 0
    for (int64_t d = 0; d <= last; ++d) {
      auto* p = pad.add_dimensions();
      p->set_edge_padding_low(0);
      p->set_edge_padding_high(d == last ? 1 : 0);
      p->set_interior_padding(0);
    }
    const XlaOp zeros = xla::Pad(indices, xla::Zero(b, is.element_type()), pad);
    TF_ASSIGN_OR_RETURN(const XlaOp out,
                        HloScatter(combine, xla::Reshape(target, one), zeros, updates));
    return xla::Reshape(out, dims);
  }
  xla::ScatterDimensionNumbers dn;
  for (int64_t d : Iota(last, last + ts.dimensions_size() - depth)) dn.add_update_window_dims(d);
  for (int64_t d : Iota(0, depth)) {
    dn.add_inserted_window_dims(d);
    dn.add_scatter_dims_to_operand_dims(d);
  }
  dn.set_index_vector_dim(last);

  const xla::PrimitiveType type = ts.element_type();
  auto sub = b->CreateSubBuilder("combine");
  const XlaOp x = xla::Parameter(sub.get(), 0, xla::ShapeUtil::MakeShape(type, {}), "x");
  const XlaOp y = xla::Parameter(sub.get(), 1, xla::ShapeUtil::MakeShape(type, {}), "y");
  XlaOp root = y;
  switch (combine) {
    case Combine::kUpdate: break;
    case Combine::kAdd: root = type == xla::PRED ? xla::Or(x, y) : xla::Add(x, y); break;
    case Combine::kSub: root = xla::Sub(x, y); break;
    case Combine::kMin: root = xla::Min(x, y); break;
    case Combine::kMax: root = xla::Max(x, y); break;
    case Combine::kMul: root = xla::Mul(x, y); break;
    case Combine::kDiv: root = xla::Div(x, y); break;
  }
  TF_ASSIGN_OR_RETURN(const xla::XlaComputation computation, sub->Build(root));
  return xla::Scatter(target, WideIndices(indices, is), updates, computation, dn);
}

XlaOp HloZeros(xla::XlaBuilder* b, const xla::Shape& shape) {
  const auto dims = shape.dimensions();
  return xla::Broadcast(xla::Zero(b, shape.element_type()),
                        std::vector<int64_t>(dims.begin(), dims.end()));
}

absl::StatusOr<XlaOp> HloGather(XlaOp params, XlaOp indices, bool ignore) {
  xla::XlaBuilder* b = params.builder();
  TF_ASSIGN_OR_RETURN(const xla::Shape ps, b->GetShape(params));
  TF_ASSIGN_OR_RETURN(const xla::Shape is, b->GetShape(indices));
  const int64_t last = is.dimensions_size() - 1;
  const int64_t depth = is.dimensions(last);
  const int64_t rank = ps.dimensions_size();
  const XlaOp zero = xla::Zero(b, ps.element_type());

  bool empty = false;  // no slot to gather from: every row is bad
  for (int64_t d = 0; d < depth; ++d) empty |= ps.dimensions(d) == 0;
  if (empty) {
    std::vector<int64_t> dims(is.dimensions().begin(), is.dimensions().end() - 1);
    for (int64_t d = depth; d < rank; ++d) dims.push_back(ps.dimensions(d));
    XlaOp out = xla::Broadcast(zero, dims);
    // (the indices' last dimension, the depth, is static and not mapped)
    out = LikeDynamic(out, indices, is, Iota(0, is.dimensions_size()));
    for (int64_t d = depth; d < rank; ++d) {
      if (ps.is_dynamic_dimension(d)) {
        out = xla::SetDimensionSize(out, xla::GetDimensionSize(params, d), last + d - depth);
      }
    }
    return out;
  }

  xla::GatherDimensionNumbers dn;
  for (int64_t d : Iota(last, last + rank - depth)) dn.add_offset_dims(d);
  for (int64_t d : Iota(0, depth)) {
    dn.add_collapsed_slice_dims(d);
    dn.add_start_index_map(d);
  }
  dn.set_index_vector_dim(last);
  std::vector<int64_t> slice(depth, 1);
  for (int64_t d = depth; d < rank; ++d) slice.push_back(ps.dimensions(d));
  XlaOp out = xla::Gather(params, WideIndices(indices, is), dn, slice);
  if (!ignore || depth == 0) return out;

  // XLA clamps bad rows; "IGNORE" gives zeros for them.
  TF_ASSIGN_OR_RETURN(const xla::Shape os, b->GetShape(out));
  const auto out_dims = os.dimensions();
  XlaOp keep = xla::BroadcastInDim(RowsInBounds(indices, is, params, depth),
                                   std::vector<int64_t>(out_dims.begin(), out_dims.end()),
                                   Iota(0, last));
  keep = LikeDynamic(keep, out, os, Iota(0, os.dimensions_size()));
  return xla::Select(keep, out, FilledLike(zero, out, os));
}

absl::Status HloCheckIndices(XlaOp indices, XlaOp target, bool gather) {
  xla::XlaBuilder* b = indices.builder();
  TF_ASSIGN_OR_RETURN(const xla::Shape is, b->GetShape(indices));
  TF_ASSIGN_OR_RETURN(const xla::Shape ts, b->GetShape(target));
  const int64_t last = is.dimensions_size() - 1;  // rows: the dims before it
  const int64_t depth = is.dimensions(last);
  if (depth == 0) return absl::OkStatus();
  for (int64_t d = 0; d < last; ++d) {
    if (is.dimensions(d) == 0) return absl::OkStatus();
  }

  bool inner_dynamic = false;
  for (int64_t d = 1; d <= last; ++d) inner_dynamic |= is.is_dynamic_dimension(d);
  if (!inner_dynamic) {
    XlaCall call;
    call.indices = ShapeOf(is);
    call.target = ShapeOf(ts);
    call.gather = gather;
    call.index_dtype = is.element_type() == xla::S16   ? ::tensorflow::DT_INT16
                       : is.element_type() == xla::S32 ? ::tensorflow::DT_INT32
                                                       : ::tensorflow::DT_INT64;
    const XlaOp rows = is.is_dynamic_dimension(0) ? xla::RemoveDynamicDimension(indices, 0)
                                                  : indices;
    const XlaOp sizes = xla::ConcatInDim(
        b, {Sizes(indices, last + 1), Sizes(target, ts.dimensions_size())}, 0);
    EmitCheck(b, kCheckTarget, {rows, sizes}, EncodeXlaCall(call));
    return b->first_error();
  }

  // Each row's number in row-major order of the run-time outer sizes; bad
  // rows keep theirs, good ones kNoBadRow; the least is the first bad row.
  const XlaOp in_bounds = RowsInBounds(indices, is, target, static_cast<int>(depth));
  std::vector<XlaOp> stride(last);
  XlaOp s = xla::ConstantR0<int64_t>(b, 1);
  for (int64_t d = last - 1; d >= 0; --d) {
    stride[d] = s;
    s = xla::Mul(s, Size(indices, d));
  }
  TF_ASSIGN_OR_RETURN(const xla::Shape rs, b->GetShape(in_bounds));
  const std::vector<int64_t> outer(is.dimensions().begin(), is.dimensions().end() - 1);
  const xla::Shape row_numbers = xla::ShapeUtil::MakeShape(xla::S64, outer);
  XlaOp number = xla::Broadcast(xla::ConstantR0<int64_t>(b, 0), outer);
  for (int64_t d = 0; d < last; ++d) {
    number = xla::Add(number, xla::Mul(xla::Iota(b, row_numbers, d), stride[d]));
  }
  number = LikeDynamic(number, in_bounds, rs, Iota(0, last));
  const XlaOp none = xla::ConstantR0<int64_t>(b, kNoBadRow);
  XlaOp first = xla::Select(in_bounds, FilledLike(none, in_bounds, rs), number);
  if (last > 0) {
    first = xla::Reduce(first, none, xla::CreateScalarMinComputation(xla::S64, b),
                        Iota(0, last));
  }

  // The bad row's coordinates (row 0's when there is none).
  const XlaOp at = xla::Select(xla::Eq(first, none), xla::ConstantR0<int64_t>(b, 0), first);
  std::vector<XlaOp> starts;
  for (int64_t d = 0; d < last; ++d) {
    starts.push_back(xla::Rem(xla::Div(at, stride[d]), Size(indices, d)));
  }
  starts.push_back(xla::ConstantR0<int64_t>(b, 0));
  std::vector<int64_t> one_row(last, 1);
  one_row.push_back(depth);
  const XlaOp coords = xla::Reshape(
      xla::ConvertElementType(xla::DynamicSlice(indices, starts, one_row), xla::S64), {depth});

  const int64_t target_rank = ts.dimensions_size();
  const XlaOp sizes = xla::ConcatInDim(
      b, {Sizes(indices, last + 1), Sizes(target, static_cast<int>(target_rank))}, 0);
  const int64_t w[5] = {kReportLayout, gather, last + 1, target_rank, depth};
  EmitCheck(b, kReportTarget, {first, coords, sizes},
            std::string(reinterpret_cast<const char*>(w), sizeof(w)));
  return b->first_error();
}

}  // namespace tf_scatter_ops
#endif  // TFSO_XLA
