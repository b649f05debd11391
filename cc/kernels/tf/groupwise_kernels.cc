#include "tf/groupwise_kernels.h"

namespace tf_scatter_ops {

namespace {
template <typename Index>
Status Group(const Tensor& ids, int64_t nsegments, bool ignore, Groups* groups) {
  const Index* v = ids.flat<Index>().data();
  const int64_t bad = GroupRows(v, ids.NumElements(), nsegments, ignore, groups);
  if (bad < 0) return absl::OkStatus();
  return absl::InvalidArgumentError(messages::SegmentIdOutOfRange(
      PositionOf(ids.shape(), ids.dims(), bad), static_cast<int64_t>(v[bad]), nsegments));
}
}  // namespace

Status GroupSegmentRows(const Tensor& ids, int64_t nsegments, bool ignore, Groups* groups) {
  switch (ids.dtype()) {
    case ::tensorflow::DT_INT16: return Group<int16_t>(ids, nsegments, ignore, groups);
    case ::tensorflow::DT_INT32: return Group<int32_t>(ids, nsegments, ignore, groups);
    default: return Group<int64_t>(ids, nsegments, ignore, groups);
  }
}

}  // namespace tf_scatter_ops
