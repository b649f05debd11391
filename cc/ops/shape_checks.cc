#include "ops/shape_checks.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tf_scatter_ops {
namespace {

using ::absl::InvalidArgumentError;
using ::absl::StrCat;
using ::tensorflow::TensorShape;
using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

// A kernel's shape: everything known.
class KnownView {
 public:
  static constexpr bool kTraced = false;
  explicit KnownView(const TensorShape& s) : s_(s) {}
  int rank() const { return s_.dims(); }
  int64_t dim(int d) const { return s_.dim_size(d); }
  std::string text() const { return s_.DebugString(); }

 private:
  const TensorShape& s_;
};

// A shape function's input: rank and dims where known (InferenceContext
// gives -1 for an unknown dim).
class TraceView {
 public:
  static constexpr bool kTraced = true;
  TraceView(InferenceContext* c, ShapeHandle h) : c_(c), h_(h) {}
  int rank() const { return c_->RankKnown(h_) ? c_->Rank(h_) : -1; }
  int64_t dim(int d) const { return c_->Value(c_->Dim(h_, d)); }
  std::string text() const { return c_->DebugString(h_); }

 private:
  InferenceContext* c_;
  ShapeHandle h_;
};

Status ToStatus(const std::string& error) {
  return error.empty() ? absl::OkStatus() : InvalidArgumentError(error);
}

// Product of dims [begin, end) of a valid TensorShape (cannot overflow:
// TensorShape already bounds its element count).
int64_t DimProduct(const TensorShape& s, int begin, int end) {
  int64_t p = 1;
  for (int d = begin; d < end; ++d) p *= s.dim_size(d);
  return p;
}

void Fill(const TensorShape& target, const TensorShape& indices, ScatterForm* f) {
  f->depth = static_cast<int>(indices.dim_size(indices.dims() - 1));
  f->n = DimProduct(indices, 0, indices.dims() - 1);
  f->nslots = DimProduct(target, 0, f->depth);
  f->slice = DimProduct(target, f->depth, target.dims());
}

}  // namespace

Status ScatterFormOf(const TensorShape& output, const TensorShape& indices,
                     const TensorShape& updates, ScatterForm* f, rules::Wording wording) {
  TF_RETURN_IF_ERROR(ToStatus(rules::Scatter(KnownView(output), KnownView(indices),
                                             KnownView(updates), wording)));
  if (output.num_elements() == 0 && indices.num_elements() > 0) {
    return InvalidArgumentError(messages::EmptyOutput(
        output.DebugString(), indices.DebugString(), updates.DebugString()));
  }
  Fill(output, indices, f);
  return absl::OkStatus();
}

Status GatherFormOf(const TensorShape& params, const TensorShape& indices,
                    ScatterForm* f, TensorShape* output) {
  TF_RETURN_IF_ERROR(
      ToStatus(rules::Indices(KnownView(params), KnownView(indices), "params")));
  Fill(params, indices, f);
  *output = TensorShape();
  for (int d = 0; d < indices.dims() - 1; ++d) {
    TF_RETURN_IF_ERROR(output->AddDimWithStatus(indices.dim_size(d)));
  }
  for (int d = f->depth; d < params.dims(); ++d) {
    TF_RETURN_IF_ERROR(output->AddDimWithStatus(params.dim_size(d)));
  }
  return absl::OkStatus();
}

Status ShapeFromTensor(const ::tensorflow::Tensor& shape, TensorShape* output) {
  if (shape.dims() != 1) {
    return InvalidArgumentError(messages::ShapeNotVector(shape.shape().DebugString()));
  }
  std::vector<int64_t> dims(shape.NumElements());
  for (int64_t d = 0; d < shape.NumElements(); ++d) {
    switch (shape.dtype()) {
      case ::tensorflow::DT_INT16: dims[d] = shape.flat<int16_t>()(d); break;
      case ::tensorflow::DT_INT32: dims[d] = shape.flat<int32_t>()(d); break;
      case ::tensorflow::DT_INT64: dims[d] = shape.flat<int64_t>()(d); break;
      default:
        return InvalidArgumentError("shape must be int16, int32 or int64");
    }
  }
  const std::string text = StrCat("[", absl::StrJoin(dims, ", "), "]");
  int64_t elements = 1;
  for (int64_t v : dims) {
    if (v < 0) {
      return InvalidArgumentError(
          StrCat("shape ", text, " has a negative dimension ", v));
    }
    if (v != 0 && elements > INT64_MAX / v) {
      return InvalidArgumentError(StrCat(
          "shape ", text, " has too many elements (the product overflows int64)"));
    }
    elements *= v;
  }
  Status s = TensorShape::BuildTensorShape(dims, output);
  if (!s.ok()) {
    return InvalidArgumentError(StrCat("shape ", text, " is not a valid tensor shape: ", s.message()));
  }
  return absl::OkStatus();
}

Status UnsortedSegmentOutput(const ::tensorflow::Tensor& data, const ::tensorflow::Tensor& ids,
                             const ::tensorflow::Tensor& num_segments, TensorShape* shape,
                             int64_t* slice) {
  const int64_t num = num_segments.dims() == 0 ? ScalarInt64(num_segments) : 0;
  TF_RETURN_IF_ERROR(ToStatus(rules::UnsortedSegment(KnownView(data.shape()),
                                                     KnownView(ids.shape()),
                                                     KnownView(num_segments.shape()), &num)));
  *shape = TensorShape();
  TF_RETURN_IF_ERROR(shape->AddDimWithStatus(num));
  for (int d = ids.dims(); d < data.dims(); ++d) {
    TF_RETURN_IF_ERROR(shape->AddDimWithStatus(data.dim_size(d)));
  }
  *slice = DimProduct(data.shape(), ids.dims(), data.dims());  // a factor of data's elements
  return absl::OkStatus();
}

Status CheckSortedSegment(const TensorShape& data, const TensorShape& ids) {
  return ToStatus(rules::SortedSegment(KnownView(data), KnownView(ids)));
}

Status CheckSparseSegment(const TensorShape& data, const TensorShape& indices,
                          const TensorShape& ids, const ::tensorflow::Tensor& num_segments,
                          int64_t* num) {
  *num = num_segments.dims() == 0 ? ScalarInt64(num_segments) : -1;
  return ToStatus(rules::SparseSegment(KnownView(data), KnownView(indices), KnownView(ids),
                                       KnownView(num_segments.shape()), num));
}

Status CheckGatherReduce(const TensorShape& params, const TensorShape& src, const TensorShape& dst,
                         const ::tensorflow::Tensor& num_segments, const TensorShape* weights,
                         int64_t* num) {
  *num = num_segments.dims() == 0 ? ScalarInt64(num_segments) : 0;
  if (weights == nullptr) {
    return ToStatus(rules::GatherReduce<KnownView>(KnownView(params), KnownView(src),
                                                   KnownView(dst),
                                                   KnownView(num_segments.shape()), nullptr, num));
  }
  const KnownView w(*weights);
  return ToStatus(rules::GatherReduce(KnownView(params), KnownView(src), KnownView(dst),
                                      KnownView(num_segments.shape()), &w, num));
}

Status CheckEdgeCombine(const TensorShape& a, const TensorShape& b, const TensorShape& src,
                        const TensorShape& dst, bool dot) {
  return ToStatus(rules::EdgeCombine(KnownView(a), KnownView(b), KnownView(src), KnownView(dst),
                                     dot));
}

Status CheckIndices(InferenceContext* c, ShapeHandle target, ShapeHandle indices,
                    const char* what) {
  return ToStatus(rules::Indices(TraceView(c, target), TraceView(c, indices), what));
}

Status CheckScatter(InferenceContext* c, ShapeHandle output, ShapeHandle indices,
                    ShapeHandle updates, rules::Wording wording) {
  return ToStatus(rules::Scatter(TraceView(c, output), TraceView(c, indices),
                                 TraceView(c, updates), wording));
}

Status CheckUnsortedSegment(InferenceContext* c, ShapeHandle data, ShapeHandle ids,
                            ShapeHandle num_segments) {
  return ToStatus(rules::UnsortedSegment(TraceView(c, data), TraceView(c, ids),
                                         TraceView(c, num_segments), nullptr));
}

Status CheckSortedSegment(InferenceContext* c, ShapeHandle data, ShapeHandle ids) {
  return ToStatus(rules::SortedSegment(TraceView(c, data), TraceView(c, ids)));
}

Status CheckSparseSegment(InferenceContext* c, ShapeHandle data, ShapeHandle indices,
                          ShapeHandle ids, ShapeHandle num_segments) {
  return ToStatus(rules::SparseSegment(TraceView(c, data), TraceView(c, indices),
                                       TraceView(c, ids), TraceView(c, num_segments), nullptr));
}

Status CheckGatherReduce(InferenceContext* c, ShapeHandle params, ShapeHandle src,
                         ShapeHandle dst, ShapeHandle num_segments, const ShapeHandle* weights) {
  if (weights == nullptr) {
    return ToStatus(rules::GatherReduce<TraceView>(TraceView(c, params), TraceView(c, src),
                                                   TraceView(c, dst), TraceView(c, num_segments),
                                                   nullptr, nullptr));
  }
  const TraceView w(c, *weights);
  return ToStatus(rules::GatherReduce(TraceView(c, params), TraceView(c, src), TraceView(c, dst),
                                      TraceView(c, num_segments), &w, nullptr));
}

Status CheckEdgeCombine(InferenceContext* c, ShapeHandle a, ShapeHandle b, ShapeHandle src,
                        ShapeHandle dst, bool dot) {
  return ToStatus(rules::EdgeCombine(TraceView(c, a), TraceView(c, b), TraceView(c, src),
                                     TraceView(c, dst), dot));
}

}  // namespace tf_scatter_ops
