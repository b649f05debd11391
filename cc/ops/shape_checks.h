// The family's shape rules and their messages, written once for the kernels
// (every shape known) and the ops' shape functions (what is known at trace
// time): each rule is a template over a view of a shape whose rank or dims
// may be unknown, so the two cannot drift apart.
//
// Where TensorFlow's message is informative it is TensorFlow's, word for
// word; where it is wrong or misleading (README, "Where it differs from
// TensorFlow, and why") it is ours.
#ifndef TF_SCATTER_OPS_CC_OPS_SHAPE_CHECKS_H_
#define TF_SCATTER_OPS_CC_OPS_SHAPE_CHECKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/scatter_form.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/framework/tensor_shape.h"

namespace tf_scatter_ops {

using Status = ::absl::Status;

namespace messages {

// TensorFlow's: "Dimensions [0,1) of indices[shape=[2,1]] must match
// dimensions [0,1) of updates[shape=[3]]" (and "of input[shape=...]").
inline std::string DimensionsMismatch(const char* a, const std::string& a_shape,
                                      int64_t a_begin, int64_t a_end,
                                      const char* b, const std::string& b_shape,
                                      int64_t b_begin, int64_t b_end) {
  return absl::StrCat("Dimensions [", a_begin, ",", a_end, ") of ", a,
                      "[shape=", a_shape, "] must match dimensions [", b_begin,
                      ",", b_end, ") of ", b, "[shape=", b_shape, "]");
}

// The outer dimensions of indices (all but the last) against updates'.
inline std::string OuterMismatch(const std::string& indices, int64_t outer,
                                 const std::string& updates) {
  return DimensionsMismatch("indices", indices, 0, outer, "updates", updates, 0,
                            outer);
}

// The dimensions of the output after the index depth against updates' after
// its outer dimensions.
inline std::string InnerMismatch(const std::string& output, int64_t depth,
                                 int64_t output_rank, const std::string& updates,
                                 int64_t outer, int64_t updates_rank) {
  return DimensionsMismatch("input", output, depth, output_rank, "updates",
                            updates, outer, updates_rank);
}

// TensorFlow's TensorScatter* kernels word the same rules differently from
// its ScatterNd: the outer dimensions, the number of inner ones, their sizes.
inline std::string TensorOuterMismatch(const std::string& indices,
                                       const std::string& updates) {
  return absl::StrCat("Outer dimensions of indices and update must match. Indices shape: ",
                      indices, ", updates shape:", updates);
}

inline std::string TensorInnerRank(const std::string& output, const std::string& updates) {
  return absl::StrCat(
      "Inner dimensions of output shape must match inner dimensions of updates shape. Output: ",
      output, " updates: ", updates);
}

inline std::string TensorInnerMismatch(const std::string& output, int64_t output_inner,
                                       const std::string& updates, int64_t updates_inner) {
  return absl::StrCat("The inner ", output_inner, " dimensions of output.shape=", output,
                      " must match the inner ", updates_inner,
                      " dimensions of updates.shape=", updates);
}

// Ours: TensorFlow says "Dimensions [3,2) of input..." or "Inner dimensions of
// output shape must match" for an index depth above the rank.
inline std::string DepthExceedsRank(int64_t depth, int64_t rank,
                                    const char* what, const std::string& target,
                                    const std::string& indices) {
  return absl::StrCat("index depth indices.shape[-1] = ", depth,
                      " exceeds the rank ", rank, " of the ", what, " shape ",
                      target, "; indices shape: ", indices);
}

inline std::string IndicesRank(const std::string& indices) {
  return absl::StrCat(
      "indices must have rank at least 1 (its last dimension is the index "
      "depth), got indices shape ",
      indices);
}

inline std::string UpdatesRank(const std::string& updates,
                               const std::string& indices) {
  return absl::StrCat("updates must have rank at least 1, got updates shape ",
                      updates, "; indices shape: ", indices);
}

inline std::string EmptyOutput(const std::string& output,
                               const std::string& indices,
                               const std::string& updates) {
  return absl::StrCat("Indices and updates specified for empty output shape ",
                      output, "; indices shape: ", indices,
                      ", updates shape: ", updates);
}

inline std::string ShapeNotVector(const std::string& shape) {
  return absl::StrCat("shape must be a vector (1-D), got a tensor of shape ",
                      shape);
}

// TensorFlow's, for a row whose index is out of bounds. Scatters name the
// row by its flat number ("indices[3]"), gathers by its position in
// indices' outer dimensions ("indices[0,1]") and say "param shape".
inline std::string BadIndex(const std::vector<int64_t>& position,
                            const std::vector<int64_t>& coords,
                            const std::string& target, bool gather) {
  return absl::StrCat("indices[", absl::StrJoin(position, ","), "] = [",
                      absl::StrJoin(coords, ", "), "] does not index into ",
                      gather ? "param shape " : "shape ", target);
}

// For a false indices_are_sorted (with unique_indices: `strict`): the first
// row that breaks the promise, `index` naming it ("indices[3] = [1]",
// "segment_ids[0,3] = 1").
inline std::string FalseHint(const std::string& index, bool strict) {
  if (strict) {
    return absl::StrCat("indices_are_sorted=True and unique_indices=True, but ", index,
                        " is not after the previous row's index");
  }
  return absl::StrCat("indices_are_sorted=True, but ", index,
                      " comes before the previous row's index");
}

// TensorFlow's, for a gather of rows from params with no elements.
inline std::string EmptyParams(const std::string& params) {
  return absl::StrCat(
      "Requested more than 0 entries, but params is empty.  Params shape: ",
      params);
}

// TensorFlow's, for the segment ops' shapes: its kernels' words (NotVector:
// "segment_ids should be a vector."), and its shape functions' for a rank
// (InferenceContext::WithRank, WithRankAtLeast), which the graph's builder
// follows with the node and its input shapes.
inline std::string SegmentIdsNotPrefix(const std::string& data, const std::string& ids) {
  return absl::StrCat("data.shape = ", data, " does not start with segment_ids.shape = ", ids);
}

inline std::string NumSegmentsNotScalar(const std::string& num_segments) {
  return absl::StrCat("num_segments should be a scalar, not shape ", num_segments);
}

inline std::string NotVector(const char* input) {
  return absl::StrCat(input, " should be a vector.");
}

inline std::string SegmentIdsLength() {
  return "segment_ids should be the same size as dimension 0 of input.";
}

inline std::string SparseSegmentLengths() {
  return "segment_ids and indices should have same size.";
}

inline std::string ShapeRank(int64_t rank, int64_t got) {
  return absl::StrCat("Shape must be rank ", rank, " but is rank ", got);
}

inline std::string ShapeRankAtLeast(int64_t rank, int64_t got) {
  return absl::StrCat("Shape must be at least rank ", rank, " but is rank ", got);
}

// (a scalar segment_ids is named without a position, as TensorFlow names it)
inline std::string SegmentIdOutOfRange(const std::vector<int64_t>& position, int64_t id,
                                       int64_t num_segments) {
  const std::string where =
      position.empty() ? "" : absl::StrCat("[", absl::StrJoin(position, ","), "]");
  return absl::StrCat("segment_ids", where, " = ", id, " is out of range [0, ", num_segments,
                      ")");
}

// segment_*'s data of rank 0 (sparse_segment_* says "Shape must be ...").
inline std::string SegmentDataRank(bool sparse) {
  return sparse ? "Shape must be at least rank 1" : "input must be at least rank 1";
}

// TensorFlow's text, then where: the first id below the one before it.
inline std::string SegmentIdsNotIncreasing(int64_t i, int64_t id, int64_t previous) {
  return absl::StrCat("segment ids are not increasing: segment_ids[", i, "] = ", id,
                      " follows segment_ids[", i - 1, "] = ", previous);
}

// A run of sorted ids whose id is outside [0, rows): TensorFlow names the
// first such run (after checking it is below the next run's id).
inline std::string SortedSegmentIdOutOfRange(int64_t id, int64_t rows) {
  return absl::StrCat("Segment id ", id, " out of range [0, ", rows,
                      "), possibly because 'segment_ids' input is not sorted.");
}

// TensorFlow's, for sorted ids whose last id is negative (no output rows),
// and for a negative num_segments of sparse_segment_*.
inline std::string NegativeSegmentIds() { return "segment ids must be >= 0"; }

inline std::string SparseSegmentIdTooLarge(int64_t i, int64_t id, int64_t num_segments) {
  return absl::StrCat("segment ids must be < num_segments: segment_ids[", i, "] = ", id,
                      " is out of range [0, ", num_segments, ")");
}

// TensorFlow's, for a last sorted id whose + 1 does not fit the id's type.
inline std::string LastSegmentIdTooLarge(int64_t id) {
  return absl::StrCat("Last segment id must be < kintmax, got ", id, " limit ", id);
}

inline std::string SparseIndexOutOfRange(int64_t i, int64_t index, int64_t rows) {
  return absl::StrCat("Bad: indices[", i, "] == ", index, " out of range [0, ", rows, ")");
}

// Ours: segment_mean on integers divides by the row count in the data's
// dtype, as TensorFlow's; where that count is 0 TensorFlow's kernel crashes.
inline std::string SegmentCountWraps(int64_t segment, int64_t rows, const std::string& dtype) {
  return absl::StrCat("segment_mean: segment ", segment, " has ", rows, " rows, which is 0 as ",
                      dtype, " (the mean divides by the row count in the data's dtype, as "
                      "TensorFlow's); cast the data to a wider dtype");
}

inline std::string NegativeNumSegments(int64_t num_segments) {
  return absl::StrCat("Input num_segments == ", num_segments, " must not be negative.");
}


// Ours, for the message-passing ops (gather_reduce, edge_combine).
inline std::string EdgeLengths(const std::string& src, const std::string& dst) {
  return absl::StrCat("src and dst must be vectors of one length (one id per edge), got src shape ",
                      src, " and dst shape ", dst);
}

inline std::string EdgeWeights(const std::string& weights, const std::string& params) {
  return absl::StrCat("weights.shape = ", weights,
                      " must be [edges] followed by params.shape's dimensions after the first ",
                      "(all, some or none of them); params.shape = ", params);
}

inline std::string EdgeRows(const std::string& a, const std::string& b) {
  return absl::StrCat("a and b must have rows of one shape (a.shape[1:] == b.shape[1:]), got a shape ",
                      a, " and b shape ", b);
}

inline std::string DotRank(const std::string& a) {
  return absl::StrCat("op='dot' needs a and b of rank >= 2 (the product is over the last axis), ",
                      "got a shape ", a);
}

// An edge whose id is out of range: which id, and what it indexes.
inline std::string EdgeIdOutOfRange(const char* name, int64_t edge, int64_t id, int64_t rows,
                                    const char* of) {
  return absl::StrCat(name, "[", edge, "] = ", id, " is out of range [0, ", rows, ") (", of, ")");
}

}  // namespace messages

// The rules, on views with rank() (-1: unknown), dim(d) (-1: unknown),
// text() (the shape as messages print it, "[2,1]" or "[?,3]") and kTraced
// (true: a shape function's view, false: a kernel's). Each returns the
// message of the first rule broken, or "" if none is (as far as known).
namespace rules {

inline bool Conflict(int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; }

// indices has rank >= 1 and an index depth no deeper than the target's rank.
template <typename View>
std::string Indices(const View& target, const View& indices, const char* what) {
  if (indices.rank() < 0) return "";
  if (indices.rank() < 1) return messages::IndicesRank(indices.text());
  const int64_t depth = indices.dim(indices.rank() - 1);
  if (depth >= 0 && target.rank() >= 0 && depth > target.rank()) {
    return messages::DepthExceedsRank(depth, target.rank(), what, target.text(),
                                      indices.text());
  }
  return "";
}

// Which of TensorFlow's wordings a scatter's shape messages take: its
// ScatterNd's (also its variable scatters'), or its TensorScatter* ops'.
enum class Wording { kScatterNd, kTensorScatter };

// updates = indices.shape[:-1] + output.shape[depth:].
template <typename View>
std::string Scatter(const View& output, const View& indices, const View& updates,
                    Wording wording) {
  const bool tensor = wording == Wording::kTensorScatter;
  std::string error = Indices(output, indices, "output");
  if (!error.empty()) return error;
  if (updates.rank() >= 0 && updates.rank() < 1) {
    return messages::UpdatesRank(updates.text(), indices.text());
  }
  if (indices.rank() < 0 || updates.rank() < 0) return "";
  const int outer = indices.rank() - 1;
  bool outer_ok = updates.rank() >= outer;
  for (int d = 0; outer_ok && d < outer; ++d) {
    outer_ok = !Conflict(indices.dim(d), updates.dim(d));
  }
  if (!outer_ok) {
    return tensor ? messages::TensorOuterMismatch(indices.text(), updates.text())
                  : messages::OuterMismatch(indices.text(), outer, updates.text());
  }
  const int64_t depth = indices.dim(outer);
  if (depth < 0 || output.rank() < 0) return "";
  const int inner = output.rank() - static_cast<int>(depth);
  bool inner_ok = updates.rank() - outer == inner;
  if (!inner_ok && tensor) return messages::TensorInnerRank(output.text(), updates.text());
  for (int d = 0; inner_ok && d < inner; ++d) {
    inner_ok = !Conflict(updates.dim(outer + d), output.dim(depth + d));
  }
  if (!inner_ok && tensor) {
    return messages::TensorInnerMismatch(output.text(), inner, updates.text(),
                                         updates.rank() - outer);
  }
  if (!inner_ok) {
    return messages::InnerMismatch(output.text(), depth, output.rank(),
                                   updates.text(), outer, updates.rank());
  }
  return "";
}

// The segment ops. Where TensorFlow words a rank rule one way in its shape
// functions ("Shape must be rank 1 but is rank 2") and another in its kernels
// ("segment_ids should be a vector."), ours say what TensorFlow's say on the
// same side (View::kTraced). `num` is num_segments' value where the caller
// checks it (a kernel), else null.

// unsorted_segment_* (and the group-wise and arg segment ops, and the
// group-wise gradients): a scalar num_segments (in TensorFlow's kernels' words
// on both sides: its shape function says only "Shape must be rank 0"), data's
// shape starting with segment_ids', num_segments >= 0. (A shape function
// leaves a known negative num_segments to MakeDimForScalarInput.)
template <typename View>
std::string UnsortedSegment(const View& data, const View& ids, const View& num_segments,
                            const int64_t* num) {
  if (num_segments.rank() > 0) return messages::NumSegmentsNotScalar(num_segments.text());
  if (data.rank() >= 0 && ids.rank() >= 0) {
    bool prefix = ids.rank() <= data.rank();
    for (int d = 0; prefix && d < ids.rank(); ++d) prefix = !Conflict(data.dim(d), ids.dim(d));
    if (!prefix) return messages::SegmentIdsNotPrefix(data.text(), ids.text());
  }
  if (num != nullptr && *num < 0) return messages::NegativeNumSegments(*num);
  return "";
}

// A 1-D input `name`.
template <typename View>
std::string Vector(const View& v, const char* name) {
  if (v.rank() < 0 || v.rank() == 1) return "";
  return View::kTraced ? messages::ShapeRank(1, v.rank()) : messages::NotVector(name);
}

// data of rank >= 1 (`sparse`: in sparse_segment_*'s kernel's words).
template <typename View>
std::string SegmentData(const View& data, bool sparse) {
  if (data.rank() != 0) return "";
  return View::kTraced ? messages::ShapeRankAtLeast(1, 0) : messages::SegmentDataRank(sparse);
}

// segment_*: data of rank >= 1, 1-D segment_ids, as long as data's dim 0
// (that one, as TensorFlow's, only when the graph runs: a kernel's rule).
template <typename View>
std::string SortedSegment(const View& data, const View& ids) {
  std::string error = SegmentData(data, /*sparse=*/false);
  if (error.empty()) error = Vector(ids, "segment_ids");
  if (error.empty() && !View::kTraced && ids.dim(0) != data.dim(0)) {
    error = messages::SegmentIdsLength();
  }
  return error;
}

// sparse_segment_*, in the order of TensorFlow's kernel: a scalar
// num_segments of at least -1 (the wrappers' "not given"; below it,
// TensorFlow's error for a negative num_segments), 1-D indices and
// segment_ids of one length, data of rank >= 1.
template <typename View>
std::string SparseSegment(const View& data, const View& indices, const View& ids,
                          const View& num_segments, const int64_t* num) {
  if (num_segments.rank() > 0) {
    return View::kTraced ? messages::ShapeRank(0, num_segments.rank())
                         : messages::NumSegmentsNotScalar(num_segments.text());
  }
  if (num != nullptr && *num < -1) return messages::NegativeSegmentIds();
  std::string error = Vector(indices, "indices");
  if (error.empty()) error = Vector(ids, "segment_ids");
  if (error.empty() && indices.rank() == 1 && ids.rank() == 1 &&
      Conflict(indices.dim(0), ids.dim(0))) {
    error = messages::SparseSegmentLengths();
  }
  if (error.empty()) error = SegmentData(data, /*sparse=*/true);
  return error;
}


// The message-passing ops: 1-D src and dst of one length; gather_reduce's
// params of rank >= 1, a scalar num_segments >= 0 and (`weighted`) weights
// of shape [edges] + params.shape[1:1 + k]; edge_combine's a and b with rows
// of one shape (`dot`: rank >= 2).
template <typename View>
std::string Edges(const View& src, const View& dst) {
  std::string error = Vector(src, "src");
  if (error.empty()) error = Vector(dst, "dst");
  if (error.empty() && src.rank() == 1 && dst.rank() == 1 && Conflict(src.dim(0), dst.dim(0))) {
    error = messages::EdgeLengths(src.text(), dst.text());
  }
  return error;
}

template <typename View>
std::string GatherReduce(const View& params, const View& src, const View& dst,
                         const View& num_segments, const View* weights, const int64_t* num) {
  if (num_segments.rank() > 0) return messages::NumSegmentsNotScalar(num_segments.text());
  if (num != nullptr && *num < 0) return messages::NegativeNumSegments(*num);
  std::string error = Edges(src, dst);
  if (error.empty()) error = SegmentData(params, /*sparse=*/true);
  if (!error.empty() || weights == nullptr || weights->rank() < 0) return error;
  const View& w = *weights;
  bool ok = w.rank() >= 1 && (params.rank() < 0 || w.rank() <= params.rank()) &&
            !(src.rank() == 1 && Conflict(w.dim(0), src.dim(0)));
  for (int d = 1; ok && params.rank() >= 0 && d < w.rank(); ++d) {
    ok = !Conflict(w.dim(d), params.dim(d));
  }
  return ok ? "" : messages::EdgeWeights(w.text(), params.text());
}

template <typename View>
std::string EdgeCombine(const View& a, const View& b, const View& src, const View& dst,
                        bool dot) {
  std::string error = Edges(src, dst);
  if (!error.empty()) return error;
  for (const View* v : {&a, &b}) {
    if (v->rank() >= 0 && v->rank() < (dot ? 2 : 1)) {
      return dot ? messages::DotRank(v->text()) : messages::ShapeRankAtLeast(1, v->rank());
    }
  }
  if (a.rank() >= 0 && b.rank() >= 0) {
    bool same = a.rank() == b.rank();
    for (int d = 1; same && d < a.rank(); ++d) same = !Conflict(a.dim(d), b.dim(d));
    if (!same) return messages::EdgeRows(a.text(), b.text());
  }
  return "";
}

}  // namespace rules

// Kernels: the checks on a call's shapes, and its canonical form.
Status ScatterFormOf(const ::tensorflow::TensorShape& output,
                     const ::tensorflow::TensorShape& indices,
                     const ::tensorflow::TensorShape& updates, ScatterForm* f,
                     rules::Wording wording = rules::Wording::kScatterNd);
// A gather's form and output shape.
Status GatherFormOf(const ::tensorflow::TensorShape& params,
                    const ::tensorflow::TensorShape& indices, ScatterForm* f,
                    ::tensorflow::TensorShape* output);
// scatter_nd's `shape` input -> an output shape (vector, non-negative, fits).
Status ShapeFromTensor(const ::tensorflow::Tensor& shape,
                       ::tensorflow::TensorShape* output);

// num_segments' value (an int32 or int64 scalar: the op's attr allows no
// other dtype).
inline int64_t ScalarInt64(const ::tensorflow::Tensor& t) {
  return t.dtype() == ::tensorflow::DT_INT32 ? t.scalar<int32_t>()() : t.scalar<int64_t>()();
}
// unsorted_segment_*'s checks (rules::UnsortedSegment) and its output:
// [num_segments] + data.shape[ids.rank:], `slice` elements a row (a shape
// whose element count overflows is TensorFlow's error, never a CHECK).
Status UnsortedSegmentOutput(const ::tensorflow::Tensor& data, const ::tensorflow::Tensor& ids,
                             const ::tensorflow::Tensor& num_segments,
                             ::tensorflow::TensorShape* shape, int64_t* slice);
// segment_*'s checks (rules::SortedSegment).
Status CheckSortedSegment(const ::tensorflow::TensorShape& data,
                          const ::tensorflow::TensorShape& ids);
// sparse_segment_*'s checks (rules::SparseSegment), and num_segments' value
// (-1: not given).
Status CheckSparseSegment(const ::tensorflow::TensorShape& data,
                          const ::tensorflow::TensorShape& indices,
                          const ::tensorflow::TensorShape& ids,
                          const ::tensorflow::Tensor& num_segments, int64_t* num);

// gather_reduce's and edge_combine's checks (rules::GatherReduce,
// rules::EdgeCombine); weights null when the op is not weighted.
Status CheckGatherReduce(const ::tensorflow::TensorShape& params,
                         const ::tensorflow::TensorShape& src,
                         const ::tensorflow::TensorShape& dst,
                         const ::tensorflow::Tensor& num_segments,
                         const ::tensorflow::TensorShape* weights, int64_t* num);
Status CheckEdgeCombine(const ::tensorflow::TensorShape& a, const ::tensorflow::TensorShape& b,
                        const ::tensorflow::TensorShape& src,
                        const ::tensorflow::TensorShape& dst, bool dot);

// Shape functions: the same rules on what is known at trace time.
Status CheckIndices(::tensorflow::shape_inference::InferenceContext* c,
                    ::tensorflow::shape_inference::ShapeHandle target,
                    ::tensorflow::shape_inference::ShapeHandle indices,
                    const char* what);
Status CheckScatter(::tensorflow::shape_inference::InferenceContext* c,
                    ::tensorflow::shape_inference::ShapeHandle output,
                    ::tensorflow::shape_inference::ShapeHandle indices,
                    ::tensorflow::shape_inference::ShapeHandle updates,
                    rules::Wording wording = rules::Wording::kScatterNd);
Status CheckUnsortedSegment(::tensorflow::shape_inference::InferenceContext* c,
                            ::tensorflow::shape_inference::ShapeHandle data,
                            ::tensorflow::shape_inference::ShapeHandle ids,
                            ::tensorflow::shape_inference::ShapeHandle num_segments);
Status CheckSortedSegment(::tensorflow::shape_inference::InferenceContext* c,
                          ::tensorflow::shape_inference::ShapeHandle data,
                          ::tensorflow::shape_inference::ShapeHandle ids);
Status CheckSparseSegment(::tensorflow::shape_inference::InferenceContext* c,
                          ::tensorflow::shape_inference::ShapeHandle data,
                          ::tensorflow::shape_inference::ShapeHandle indices,
                          ::tensorflow::shape_inference::ShapeHandle ids,
                          ::tensorflow::shape_inference::ShapeHandle num_segments);

Status CheckGatherReduce(::tensorflow::shape_inference::InferenceContext* c,
                         ::tensorflow::shape_inference::ShapeHandle params,
                         ::tensorflow::shape_inference::ShapeHandle src,
                         ::tensorflow::shape_inference::ShapeHandle dst,
                         ::tensorflow::shape_inference::ShapeHandle num_segments,
                         const ::tensorflow::shape_inference::ShapeHandle* weights);
Status CheckEdgeCombine(::tensorflow::shape_inference::InferenceContext* c,
                        ::tensorflow::shape_inference::ShapeHandle a,
                        ::tensorflow::shape_inference::ShapeHandle b,
                        ::tensorflow::shape_inference::ShapeHandle src,
                        ::tensorflow::shape_inference::ShapeHandle dst, bool dot);

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_OPS_SHAPE_CHECKS_H_
