// The group-wise functions over unsorted segment ids on the CPU
// (common/groupwise.h: segment_softmax, _log_softmax, _logsumexp, _var,
// _std, and their gradients). TensorFlow-free.
//
// The rows are grouped by segment once (a stable counting sort of the row
// numbers: Groups), then each segment is done by one thread from its rows
// alone, all passes of the function over the same few rows while they are
// in cache: no intermediate the size of the data, and every sum in index
// order, so the result is the same for any thread count. Columns are done
// in tiles of up to kGroupwiseTile, each tile's statistics in registers.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_GROUPWISE_CPU_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_GROUPWISE_CPU_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/groupwise.h"
#include "cpu/parallel.h"

namespace tf_scatter_ops {

constexpr int64_t kGroupwiseTile = 32;

// The rows of each segment in index order: segment s's rows are
// rows[offsets[s], offsets[s + 1]). Rows whose id is dropped (negative, or
// >= nsegments under IGNORE) are in no segment.
struct Groups {
  std::vector<int64_t> offsets;
  std::vector<int64_t> rows;
  int64_t size(int64_t s) const { return offsets[s + 1] - offsets[s]; }
};

// Groups `n` rows by their ids. Returns the first row whose id is >=
// nsegments (unless `ignore`, which drops it), else -1.
template <typename Index>
int64_t GroupRows(const Index* ids, int64_t n, int64_t nsegments, bool ignore, Groups* g) {
  g->offsets.assign(nsegments + 2, 0);
  int64_t* count = g->offsets.data() + 1;  // count[s] then, shifted, the segment's end
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = static_cast<int64_t>(ids[i]);
    if (id >= nsegments && !ignore) return i;
    if (id >= 0 && id < nsegments) ++count[id];
  }
  for (int64_t s = 0; s < nsegments; ++s) g->offsets[s + 1] += g->offsets[s];
  g->offsets.pop_back();
  g->rows.resize(g->offsets[nsegments]);
  std::vector<int64_t> next(g->offsets.begin(), g->offsets.end() - 1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = static_cast<int64_t>(ids[i]);
    if (id >= 0 && id < nsegments) g->rows[next[id]++] = i;
  }
  return -1;
}

namespace groupwise_detail {

// The segments [s0, s1) with columns [col, col + width), width <=
// kGroupwiseTile. Forward: x the data, y the output. Backward: x the data,
// y the forward's output, g its gradient, dx the result.
template <typename Fn, typename T, typename C>
void Forward(const Groups& gr, int64_t s0, int64_t s1, const T* x, int64_t slice, int64_t col,
             int64_t width, int64_t ddof, T* y) {
  using groupwise::Max;
  using groupwise::Shift;
  constexpr Groupwise kF = Fn::kFunction;
  C a[kGroupwiseTile], b[kGroupwiseTile];
  for (int64_t s = s0; s < s1; ++s) {
    const int64_t* rows = gr.rows.data() + gr.offsets[s];
    const int64_t n = gr.size(s);
    T* z = y + s * slice + col;  // a per-segment output
    const auto row = [&](int64_t k) { return x + rows[k] * slice + col; };
    if constexpr (Fn::kMoments) {
      std::fill_n(a, width, C(0));
      for (int64_t k = 0; k < n; ++k) {
        const T* r = row(k);
        for (int64_t j = 0; j < width; ++j) a[j] += static_cast<C>(r[j]);
      }
      const C count = static_cast<C>(n);
      for (int64_t j = 0; j < width; ++j) a[j] /= count;  // the mean
      std::fill_n(b, width, C(0));
      for (int64_t k = 0; k < n; ++k) {
        const T* r = row(k);
        for (int64_t j = 0; j < width; ++j) {
          const C d = static_cast<C>(r[j]) - a[j];
          b[j] += d * d;
        }
      }
      const C divisor = groupwise::VarDivisor<C>(n, ddof);
      for (int64_t j = 0; j < width; ++j) {
        C v = b[j] / divisor;
        if constexpr (kF == Groupwise::kStd) v = std::sqrt(v);
        z[j] = static_cast<T>(v);
      }
    } else {
      std::fill_n(a, width, -std::numeric_limits<C>::infinity());
      for (int64_t k = 0; k < n; ++k) {
        const T* r = row(k);
        for (int64_t j = 0; j < width; ++j) Max(a[j], static_cast<C>(r[j]));
      }
      for (int64_t j = 0; j < width; ++j) a[j] = Shift(a[j]);
      std::fill_n(b, width, C(0));
      for (int64_t k = 0; k < n; ++k) {
        const T* r = row(k);
        for (int64_t j = 0; j < width; ++j) b[j] += std::exp(static_cast<C>(r[j]) - a[j]);
      }
      if constexpr (kF == Groupwise::kLogSumExp) {
        for (int64_t j = 0; j < width; ++j) z[j] = static_cast<T>(a[j] + std::log(b[j]));
      } else if constexpr (kF == Groupwise::kLogSoftmax) {
        for (int64_t j = 0; j < width; ++j) b[j] = std::log(b[j]);
        for (int64_t k = 0; k < n; ++k) {
          const T* r = row(k);
          T* o = y + rows[k] * slice + col;
          for (int64_t j = 0; j < width; ++j) {
            o[j] = static_cast<T>((static_cast<C>(r[j]) - a[j]) - b[j]);
          }
        }
      } else {
        for (int64_t k = 0; k < n; ++k) {
          const T* r = row(k);
          T* o = y + rows[k] * slice + col;
          for (int64_t j = 0; j < width; ++j) {
            o[j] = static_cast<T>(std::exp(static_cast<C>(r[j]) - a[j]) / b[j]);
          }
        }
      }
    }
  }
}

template <typename Fn, typename T, typename C>
void Backward(const Groups& gr, int64_t s0, int64_t s1, const T* x, const T* y, const T* g,
              int64_t slice, int64_t col, int64_t width, int64_t ddof, T* dx) {
  constexpr Groupwise kF = Fn::kFunction;
  C a[kGroupwiseTile];
  for (int64_t s = s0; s < s1; ++s) {
    const int64_t* rows = gr.rows.data() + gr.offsets[s];
    const int64_t n = gr.size(s);
    const auto at = [&](const T* p, int64_t k) { return p + rows[k] * slice + col; };
    const T* zs = y + s * slice + col;  // a per-segment output and its gradient
    const T* gs = g + s * slice + col;
    if constexpr (kF == Groupwise::kSoftmax || kF == Groupwise::kLogSoftmax) {
      std::fill_n(a, width, C(0));
      for (int64_t k = 0; k < n; ++k) {
        const T *yr = at(y, k), *gr_ = at(g, k);
        for (int64_t j = 0; j < width; ++j) {
          if constexpr (kF == Groupwise::kSoftmax) {
            a[j] += static_cast<C>(gr_[j]) * static_cast<C>(yr[j]);
          } else {
            a[j] += static_cast<C>(gr_[j]);
          }
        }
      }
      for (int64_t k = 0; k < n; ++k) {
        const T *yr = at(y, k), *gr_ = at(g, k);
        T* d = dx + rows[k] * slice + col;
        for (int64_t j = 0; j < width; ++j) {
          const C yv = static_cast<C>(yr[j]), gv = static_cast<C>(gr_[j]);
          if constexpr (kF == Groupwise::kSoftmax) {
            d[j] = static_cast<T>(yv * (gv - a[j]));
          } else {
            d[j] = static_cast<T>(gv - std::exp(yv) * a[j]);
          }
        }
      }
    } else if constexpr (kF == Groupwise::kLogSumExp) {
      for (int64_t k = 0; k < n; ++k) {
        const T* xr = at(x, k);
        T* d = dx + rows[k] * slice + col;
        for (int64_t j = 0; j < width; ++j) {
          d[j] = static_cast<T>(static_cast<C>(gs[j]) *
                                std::exp(static_cast<C>(xr[j]) - static_cast<C>(zs[j])));
        }
      }
    } else {
      std::fill_n(a, width, C(0));
      for (int64_t k = 0; k < n; ++k) {
        const T* xr = at(x, k);
        for (int64_t j = 0; j < width; ++j) a[j] += static_cast<C>(xr[j]);
      }
      const C count = static_cast<C>(n);
      const C divisor = groupwise::VarDivisor<C>(n, ddof);
      C scale[kGroupwiseTile];
      for (int64_t j = 0; j < width; ++j) {
        a[j] /= count;
        scale[j] = kF == Groupwise::kVar
                       ? C(2) * static_cast<C>(gs[j]) / divisor
                       : static_cast<C>(gs[j]) / (divisor * static_cast<C>(zs[j]));
      }
      for (int64_t k = 0; k < n; ++k) {
        const T* xr = at(x, k);
        T* d = dx + rows[k] * slice + col;
        for (int64_t j = 0; j < width; ++j) {
          d[j] = static_cast<T>(scale[j] * (static_cast<C>(xr[j]) - a[j]));
        }
      }
    }
  }
}

// Calls body(s0, s1, col, width) over the segments and column tiles, split
// among threads in parts of about equal rows (cut at segment boundaries).
template <typename Body>
void ForSegmentTiles(const Groups& gr, int64_t nsegments, int64_t slice,
                     const Parallel& parallel, const Body& body) {
  if (nsegments == 0 || slice == 0) return;
  const int64_t tiles = (slice + kGroupwiseTile - 1) / kGroupwiseTile;
  const int64_t nrows = gr.offsets[nsegments];
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(nsegments, 4 * parallel.threads));
  const auto segment_at = [&](int64_t p) -> int64_t {
    if (p <= 0) return 0;
    if (p >= parts) return nsegments;
    return std::lower_bound(gr.offsets.begin(), gr.offsets.begin() + nsegments,
                            p * nrows / parts) - gr.offsets.begin();
  };
  const int64_t cost = 40 * std::max<int64_t>(1, (nrows + nsegments) / parts) * kGroupwiseTile;
  parallel.For(parts * tiles, cost, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t p = u / tiles, col = (u % tiles) * kGroupwiseTile;
      const int64_t s0 = segment_at(p), s1 = segment_at(p + 1);
      if (s0 < s1) body(s0, s1, col, std::min(kGroupwiseTile, slice - col));
    }
  });
}

}  // namespace groupwise_detail

// The function Fn of each segment of `gr`: y is [n, slice] (rows in no
// segment untouched: the caller zeroes them) or, for a per-segment
// function, [nsegments, slice].
template <typename Fn, typename T, typename C>
void GroupwiseCpu(const Groups& gr, int64_t nsegments, const T* x, int64_t slice, int64_t ddof,
                  T* y, const Parallel& parallel) {
  groupwise_detail::ForSegmentTiles(gr, nsegments, slice, parallel,
                                    [&](int64_t s0, int64_t s1, int64_t col, int64_t width) {
    groupwise_detail::Forward<Fn, T, C>(gr, s0, s1, x, slice, col, width, ddof, y);
  });
}

// Its gradient dx [n, slice] from the data x, the output y and its gradient g.
template <typename Fn, typename T, typename C>
void GroupwiseGradCpu(const Groups& gr, int64_t nsegments, const T* x, const T* y, const T* g,
                      int64_t slice, int64_t ddof, T* dx, const Parallel& parallel) {
  groupwise_detail::ForSegmentTiles(gr, nsegments, slice, parallel,
                                    [&](int64_t s0, int64_t s1, int64_t col, int64_t width) {
    groupwise_detail::Backward<Fn, T, C>(gr, s0, s1, x, y, g, slice, col, width, ddof, dx);
  });
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_GROUPWISE_CPU_H_
