// The sorted segment reductions on the CPU (segment_* and sparse_segment_*):
// the ids are sorted, so each segment's rows are one contiguous run and each
// output row is reduced by one thread, from its run alone, in one pass with
// no sort and no scratch the size of the output. TensorFlow-free.
//
// The glue validates the ids and hands the core the runs (Runs: the first
// row of each run and its output row). A run's rows are data's rows
// [first, next first) for segment_*, or data's rows at rows[first, next first)
// for sparse_segment_* (the gather fused into the reduction: no gathered
// copy). Output rows that no run names (gaps) hold `gap`.
//
// The order of each reduction is fixed (common/segment_order.h, shared with
// the CUDA core), so the result is the same for any split and thread count;
// the glue picks kGroups8's accumulator type A. Then Finalize<Op>
// (common/reducers.h): the mean's and sqrt_n's division by the run's row
// count.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_SEGMENT_CPU_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_SEGMENT_CPU_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "common/reducers.h"
#include "common/segment_order.h"
#include "cpu/parallel.h"
#include "cpu/row_copy.h"
#include "cpu/thresholds.h"

namespace tf_scatter_ops {

// The runs of sorted segment ids: run k covers rows [first[k], first[k+1])
// and reduces into output row segment[k] (increasing). first has one entry
// more than segment; rows before first[0] are not reduced (dropped ids).
struct Runs {
  std::vector<int64_t> first{0};
  std::vector<int64_t> segment;
  int64_t count() const { return static_cast<int64_t>(segment.size()); }
};

namespace segment_detail {

template <typename T, typename Index>
inline const T* RowOf(const T* data, const Index* rows, int64_t i, int64_t slice) {
  return data + (rows == nullptr ? i : static_cast<int64_t>(rows[i])) * slice;
}

// Gathered rows are random reads: row i asks for row i + kSegmentPrefetchRows
// (below `limit`, the part's last row) to be on its way.
template <typename T, typename Index>
inline void PrefetchAhead(const T* data, const Index* rows, int64_t i, int64_t limit,
                          int64_t slice, int64_t col, int64_t width) {
  if (rows != nullptr && i + kSegmentPrefetchRows < limit) {
    PrefetchRow(RowOf(data, rows, i + kSegmentPrefetchRows, slice) + col,
                width * static_cast<int64_t>(sizeof(T)));
  }
}

// ReduceIndexOrder for a width known when compiling (kWidth columns): the
// accumulators stay in registers and the column loop unrolls, which is what
// short runs of narrow rows (a few elements, a few rows each) cost.
template <int kWidth, typename T, typename Op, typename Index>
void ReduceIndexOrderFixed(const T* data, const Index* rows, int64_t begin, int64_t end,
                           int64_t limit, int64_t slice, int64_t col, T* out) {
  T acc[kWidth];
  PrefetchAhead(data, rows, begin, limit, slice, col, kWidth);
  const T* r0 = RowOf(data, rows, begin, slice) + col;
  for (int j = 0; j < kWidth; ++j) acc[j] = r0[j];
  for (int64_t i = begin + 1; i < end; ++i) {
    PrefetchAhead(data, rows, i, limit, slice, col, kWidth);
    const T* r = RowOf(data, rows, i, slice) + col;
    for (int j = 0; j < kWidth; ++j) Op::Apply(acc[j], r[j]);
  }
  for (int j = 0; j < kWidth; ++j) out[j] = acc[j];
}

// One run in index order: out[0, width) = the reduction of the run's rows'
// columns [col, col + width).
template <typename T, typename Op, typename Index>
void ReduceIndexOrder(const T* data, const Index* rows, int64_t begin, int64_t end,
                      int64_t limit, int64_t slice, int64_t col, int64_t width, T* out) {
  if (width == 1 && rows == nullptr) {  // one column of contiguous rows: a scalar chain
    const T* p = data + begin * slice + col;
    T acc = p[0];
    for (int64_t i = 1; i < end - begin; ++i) Op::Apply(acc, p[i * slice]);
    out[0] = acc;
    return;
  }
  if constexpr (std::is_arithmetic<T>::value) {  // registers hold numbers only
    // Columns in tiles of 32, then 16, 8, 4, 2, 1, each tile a pass over the
    // run's rows with its accumulators in registers, while the run's tiles
    // stay in L1 between passes. (Accumulating in `out` instead waits on a
    // store and a load of each row's sums before the next row's add: two to
    // three times slower on narrow rows.)
    if ((end - begin) * width * static_cast<int64_t>(sizeof(T)) <= kSegmentTileRunBytes) {
      const auto tiles = [&](auto tile, int64_t& c) {
        constexpr int kWidth = decltype(tile)::value;
        for (; c + kWidth <= width; c += kWidth) {
          ReduceIndexOrderFixed<kWidth, T, Op>(data, rows, begin, end, limit, slice, col + c,
                                               out + c);
        }
      };
      int64_t c = 0;
      tiles(std::integral_constant<int, 32>(), c);
      tiles(std::integral_constant<int, 16>(), c);
      tiles(std::integral_constant<int, 8>(), c);
      tiles(std::integral_constant<int, 4>(), c);
      tiles(std::integral_constant<int, 2>(), c);
      tiles(std::integral_constant<int, 1>(), c);
      return;
    }
  }
  // A long run of wide rows: one pass, every column of a row at once (its
  // adds do not wait on each other).
  PrefetchAhead(data, rows, begin, limit, slice, col, width);
  const T* r0 = RowOf(data, rows, begin, slice) + col;
  std::copy(r0, r0 + width, out);
  for (int64_t i = begin + 1; i < end; ++i) {
    PrefetchAhead(data, rows, i, limit, slice, col, width);
    const T* r = RowOf(data, rows, i, slice) + col;
    for (int64_t j = 0; j < width; ++j) Op::Apply(out[j], r[j]);
  }
}

// One run as sparse_segment_* sums it (Order::kGroups8), into acc.
template <typename T, typename Index, typename A>
void ReduceGroups8(const T* data, const Index* rows, int64_t begin, int64_t end, int64_t limit,
                   int64_t slice, int64_t col, int64_t width, A* acc, A* group) {
  const int64_t head = Groups8Head(end - begin);
  PrefetchAhead(data, rows, begin, limit, slice, col, width);
  const T* r0 = RowOf(data, rows, begin, slice) + col;
  for (int64_t j = 0; j < width; ++j) acc[j] = static_cast<A>(r0[j]);
  for (int64_t i = begin + 1; i < begin + head; ++i) {
    PrefetchAhead(data, rows, i, limit, slice, col, width);
    const T* r = RowOf(data, rows, i, slice) + col;
    for (int64_t j = 0; j < width; ++j) AddOp::Apply(acc[j], static_cast<A>(r[j]));
  }
  for (int64_t g = begin + head; g < end; g += 8) {
    PrefetchAhead(data, rows, g, limit, slice, col, width);
    const T* g0 = RowOf(data, rows, g, slice) + col;
    for (int64_t j = 0; j < width; ++j) group[j] = static_cast<A>(g0[j]);
    for (int64_t i = g + 1; i < g + 8; ++i) {
      PrefetchAhead(data, rows, i, limit, slice, col, width);
      const T* r = RowOf(data, rows, i, slice) + col;
      for (int64_t j = 0; j < width; ++j) AddOp::Apply(group[j], static_cast<A>(r[j]));
    }
    for (int64_t j = 0; j < width; ++j) AddOp::Apply(acc[j], group[j]);
  }
}

// Runs [r0, r1) and the gaps they own, columns [col, col + width).
template <typename T, typename Op, Order kOrder, typename A, typename Index>
void ReduceRuns(const Runs& runs, int64_t r0, int64_t r1, int64_t gap_begin, int64_t gap_end,
                const T* data, const Index* rows, int64_t slice, int64_t col, int64_t width,
                T gap, T* out) {
  std::vector<A> acc, group;
  if constexpr (kOrder == Order::kGroups8) {
    group.resize(width);
    if constexpr (!std::is_same<A, T>::value) acc.resize(width);
  }
  const auto fill = [&](int64_t from, int64_t to) {
    for (int64_t s = from; s < to; ++s) std::fill_n(out + s * slice + col, width, gap);
  };
  int64_t next = gap_begin;
  const int64_t limit = runs.first[r1];
  for (int64_t k = r0; k < r1; ++k) {
    const int64_t seg = runs.segment[k];
    fill(next, seg);
    next = seg + 1;
    const int64_t begin = runs.first[k], end = runs.first[k + 1];
    T* o = out + seg * slice + col;
    if constexpr (kOrder == Order::kIndex) {
      ReduceIndexOrder<T, Op>(data, rows, begin, end, limit, slice, col, width, o);
      for (int64_t j = 0; j < width; ++j) Finalize<Op>(o[j], end - begin);
    } else {
      A* a = std::is_same<A, T>::value ? reinterpret_cast<A*>(o) : acc.data();
      ReduceGroups8<T>(data, rows, begin, end, limit, slice, col, width, a, group.data());
      const bool reciprocal = end - begin <= kGroups8ReciprocalRows;
      for (int64_t j = 0; j < width; ++j) {
        Finalize<Op>(a[j], end - begin, reciprocal);
        o[j] = static_cast<T>(a[j]);
      }
    }
  }
  fill(next, gap_end);
}

}  // namespace segment_detail

// out[nsegments, slice] = the runs' reductions, gaps `gap`. `rows` is null
// for segment_* (run rows are data's rows), else the gathered rows' indices
// (sparse_segment_*, all in range). A is kGroups8's accumulator (the glue
// passes float for 16-bit floats, else T).
template <typename T, typename Op, Order kOrder, typename A, typename Index>
void SortedSegmentCpu(const Runs& runs, const T* data, const Index* rows, int64_t slice,
                      int64_t nsegments, T gap, T* out, const Parallel& parallel) {
  if (nsegments == 0 || slice == 0) return;
  const int64_t nruns = runs.count();
  const int64_t row0 = runs.first.front(), nrows = runs.first.back() - row0;
  // Column blocks when there are fewer runs than threads (one long segment):
  // each block is still reduced in the same order.
  const int64_t blocks =
      nruns >= parallel.threads ? 1 : std::min<int64_t>(parallel.threads, (slice + 15) / 16);
  const int64_t block_width = (slice + blocks - 1) / blocks;
  // Parts of about equal rows, cut at run boundaries: part p holds the runs
  // from the first that starts at or after p * nrows / parts, and the gap
  // rows up to the next part's first output row.
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(nruns, 4 * parallel.threads));
  const auto run_at = [&](int64_t p) -> int64_t {
    if (p <= 0) return 0;
    if (p >= parts) return nruns;
    const int64_t row = row0 + p * nrows / parts;
    return std::lower_bound(runs.first.begin(), runs.first.end() - 1, row) - runs.first.begin();
  };
  const auto segment_at = [&](int64_t p, int64_t run) -> int64_t {
    if (p <= 0) return 0;
    return run >= nruns ? nsegments : runs.segment[run];
  };
  const int64_t cost = std::max<int64_t>(1, (nrows + nsegments) / parts) * block_width;
  parallel.For(parts * blocks, cost, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t p = u / blocks, b = u % blocks;
      const int64_t col = b * block_width;
      const int64_t width = std::min(block_width, slice - col);
      if (width <= 0) continue;
      const int64_t r0 = run_at(p), r1 = run_at(p + 1);
      const int64_t g0 = segment_at(p, r0);
      const int64_t g1 = p + 1 >= parts ? nsegments : segment_at(p + 1, r1);
      segment_detail::ReduceRuns<T, Op, kOrder, A>(runs, r0, r1, g0, g1, data, rows, slice, col,
                                                width, gap, out);
    }
  });
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_SEGMENT_CPU_H_
