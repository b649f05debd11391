#include "tf/segment_kernels.h"

namespace tf_scatter_ops {

namespace {
template <typename Index>
Status FirstOutOfRange(const Tensor& ids, int64_t from, int64_t num_segments) {
  const Index* v = ids.flat<Index>().data();
  for (int64_t i = from; i < ids.NumElements(); ++i) {
    const int64_t id = static_cast<int64_t>(v[i]);
    if (id >= num_segments) {
      return absl::InvalidArgumentError(
          messages::SegmentIdOutOfRange(PositionOf(ids.shape(), ids.dims(), i), id, num_segments));
    }
  }
  return absl::OkStatus();
}
}  // namespace

Status FirstSegmentIdOutOfRange(const Tensor& ids, int64_t from, int64_t num_segments) {
  switch (ids.dtype()) {
    case ::tensorflow::DT_INT16: return FirstOutOfRange<int16_t>(ids, from, num_segments);
    case ::tensorflow::DT_INT32: return FirstOutOfRange<int32_t>(ids, from, num_segments);
    default: return FirstOutOfRange<int64_t>(ids, from, num_segments);
  }
}

}  // namespace tf_scatter_ops
