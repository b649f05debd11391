#include "tf/groupwise_kernels.h"

namespace tf_scatter_ops {

std::vector<int64_t> SegmentRowCounts(const Tensor& ids, int64_t nsegments) {
  std::vector<int64_t> counts(nsegments, 0);
  WithIds(ids, [&](const auto* v) {
    for (int64_t i = 0; i < ids.NumElements(); ++i) {
      const int64_t id = static_cast<int64_t>(v[i]);
      if (id >= 0 && id < nsegments) ++counts[id];
    }
    return 0;
  });
  return counts;
}

}  // namespace tf_scatter_ops
