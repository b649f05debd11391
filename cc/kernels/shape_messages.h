// The family's error messages, written once: the kernels (scatter_geometry.cc)
// and the shape functions (cc/ops/scatter_ops.cc) both build them here, from
// shapes already printed ("[2,1]", "[?,3]"), so they cannot drift apart.
// Where TensorFlow's message is informative it is TensorFlow's, word for word;
// where it is wrong or misleading (README, "where we differ") it is ours.
#ifndef TF_SCATTER_OPS_CC_KERNELS_SHAPE_MESSAGES_H_
#define TF_SCATTER_OPS_CC_KERNELS_SHAPE_MESSAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tf_scatter_ops {
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

// TensorFlow's, for a gather of rows from params with no elements.
inline std::string EmptyParams(const std::string& params) {
  return absl::StrCat(
      "Requested more than 0 entries, but params is empty.  Params shape: ",
      params);
}

}  // namespace messages
}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_SHAPE_MESSAGES_H_
