// The element-wise passes of the group-wise functions over unsorted segment
// ids on the CPU (common/groupwise.h). TensorFlow-free.
//
// A function is a few streaming passes over the data's rows in index order,
// between segment reductions into a [nsegments, slice] table that stays in
// cache (the scatter core's, cpu/scatter_cpu.h, called by the glue: its
// sums in index order, the same for any thread count). A pass reads each
// row once, in order, looks up its segment's statistics and writes the row's
// result: no random access to the data, no intermediate but one row-shaped
// buffer, and the exponentials vectorised across the row (groupwise::Exp).
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_GROUPWISE_CPU_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_GROUPWISE_CPU_H_

#include <algorithm>
#include <cstdint>

#include "common/groupwise.h"
#include "cpu/parallel.h"

namespace tf_scatter_ops {

// body(i, s, j0, j1) for each row i of `n` and its segment s (-1 for a
// dropped row: id < 0 or >= nsegments), over the row's elements [j0, j1) of
// `slice`, in parallel chunks of rows.
template <typename Index, typename Body>
void ForSegmentRows(const Index* ids, int64_t n, int64_t nsegments, int64_t slice,
                    const Parallel& parallel, const Body& body) {
  parallel.For(n, 4 * std::max<int64_t>(slice, 1), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t id = static_cast<int64_t>(ids[i]);
      body(i, id >= 0 && id < nsegments ? id : -1);
    }
  });
}

// out[i] = f(x[i], stat[s]) over a row's slice (0 for a dropped row): the
// element-wise step of every function, its statistics a segment's row of
// [nsegments, slice] tables.
template <typename Index, typename Out, typename F>
void RowsFromSegments(const Index* ids, int64_t n, int64_t nsegments, int64_t slice,
                      Out* out, const Parallel& parallel, const F& f) {
  ForSegmentRows(ids, n, nsegments, slice, parallel, [&](int64_t i, int64_t s) {
    Out* o = out + i * slice;
    if (s < 0) {
      std::fill_n(o, slice, Out(0));
      return;
    }
    for (int64_t j = 0; j < slice; ++j) o[j] = f(i * slice + j, s * slice + j);
  });
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_GROUPWISE_CPU_H_
