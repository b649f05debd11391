// Message passing on the CPU: gather_reduce (each destination's edges'
// source rows, scaled by the edges' weights and reduced, without an
// [edges, features] intermediate) and edge_combine (per-edge a[src] op
// b[dst]). TensorFlow-free.
//
// gather_reduce groups the edges by destination (a stable counting sort:
// each group's edges stay in edge order) and each output row is reduced by
// one thread from its group alone, in edge order, from the reduction's
// start (0 for sums, nothing for max / min): the order of unsorted_segment_*
// of the gathered rows, so the result is theirs bit for bit, for any thread
// count. What an edge contributes (a weighted element rounded before it is
// added; max and min with the arg reductions' rule and the edge that holds
// each element) is common/message.h's, shared with the CUDA core.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_MESSAGE_CPU_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_MESSAGE_CPU_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "common/message.h"
#include "common/reducers.h"
#include "common/scratch.h"
#include "cpu/parallel.h"
#include "cpu/row_copy.h"

namespace tf_scatter_ops {

// Edges grouped by destination: group v holds edges[offsets[v],
// offsets[v + 1]) in edge order, and sources[k] is the source row of
// edges[k] (read in group order: a random read of src per edge would cost
// as much as the row it names). Edges that `keep` refuses are in no group.
struct EdgeGroups {
  std::vector<int64_t> offsets;
  std::vector<int64_t> edges;
  std::vector<int64_t> sources;
};

template <typename Index, typename Keep>
void GroupEdges(const Index* src, const Index* dst, int64_t nedges, int64_t ngroups,
                const Keep& keep, EdgeGroups* g) {
  g->offsets.assign(ngroups + 1, 0);
  for (int64_t e = 0; e < nedges; ++e) {
    if (keep(e)) ++g->offsets[static_cast<int64_t>(dst[e]) + 1];
  }
  for (int64_t v = 0; v < ngroups; ++v) g->offsets[v + 1] += g->offsets[v];
  g->edges.resize(g->offsets[ngroups]);
  g->sources.resize(g->offsets[ngroups]);
  std::vector<int64_t> next(g->offsets.begin(), g->offsets.end() - 1);
  for (int64_t e = 0; e < nedges; ++e) {
    if (!keep(e)) continue;
    const int64_t k = next[static_cast<int64_t>(dst[e])]++;
    g->edges[k] = e;
    g->sources[k] = static_cast<int64_t>(src[e]);
  }
}

// How far ahead an edge's source row is prefetched, in group order across
// the groups (a group holds about edges / nodes edges: a prefetch that
// stopped at its group's end would leave most rows unprefetched).
constexpr int64_t kMessagePrefetchEdges = 8;

// A sum's inner loops for float and double: o[j] + r[j] (* w), each product
// rounded before it is added (ScaleByWeight, AddOp's sum), written without
// the generic loop's aliasing so that the compiler vectorizes them.
template <typename T>
inline void AddRowTo(T* __restrict o, const T* __restrict r, int64_t n) {
  for (int64_t j = 0; j < n; ++j) o[j] = o[j] + r[j];
}
template <typename T>
inline void AddScaledRowTo(T* __restrict o, const T* __restrict r, T w, int64_t n) {
  for (int64_t j = 0; j < n; ++j) o[j] = o[j] + ScaleByWeight(r[j], w);
}

// out[v] (and positions[v] for max / min: the edge that holds each element,
// -1 for none) = the reduction of params[src[e]] * weights[e] over group v.
// A row has `heads` parts of `width` elements; weights (null: none) has one
// value per edge and head, put in group order first (in scratch: false when
// it has none, and then nothing is written). `empty` is what an empty
// group's max / min holds.
template <EdgeReduce kReduce, typename T>
bool GatherReduceCpu(const EdgeGroups& g, const T* params, const T* weights, int64_t heads,
                     int64_t width, T empty, T* out, int64_t* positions,
                     const Parallel& parallel, Scratch& scratch) {
  const int64_t ngroups = static_cast<int64_t>(g.offsets.size()) - 1;
  const int64_t slice = heads * width;
  if (ngroups <= 0 || slice == 0) return true;
  const int64_t nedges = g.offsets.back();
  // weights[k * heads + h]: the weight of the k-th grouped edge.
  T* grouped = nullptr;
  if (weights != nullptr && nedges > 0) {
    grouped = static_cast<T*>(scratch.Allocate(sizeof(T) * nedges * heads));
    if (grouped == nullptr) return false;
    parallel.For(nedges, 4 * heads, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {  // (a loop: a copy call per edge costs more)
        const T* from = weights + g.edges[k] * heads;
        for (int64_t h = 0; h < heads; ++h) grouped[k * heads + h] = from[h];
      }
    });
  }
  // Parts of about equal edges, cut at group boundaries.
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(ngroups, 4 * parallel.threads));
  const auto group_at = [&](int64_t p) -> int64_t {
    if (p <= 0) return 0;
    if (p >= parts) return ngroups;
    return std::lower_bound(g.offsets.begin(), g.offsets.end() - 1, p * nedges / parts) -
           g.offsets.begin();
  };
  const int64_t cost = std::max<int64_t>(1, (nedges + ngroups) / parts) * slice;
  constexpr bool kArg = kArgReduce<kReduce>;
  constexpr bool kPlainSum = !kArg && std::is_floating_point<T>::value;
  parallel.For(parts, cost, [&](int64_t begin, int64_t end) {
    const int64_t stop = group_at(end);
    for (int64_t v = group_at(begin); v < stop; ++v) {
      T* o = out + v * slice;
      int64_t* pos = positions == nullptr ? nullptr : positions + v * slice;
      int64_t unused = 0;
      if constexpr (kArg) {
        std::fill_n(o, slice, empty);
        std::fill_n(pos, slice, int64_t{-1});
      } else {
        std::fill_n(o, slice, T(0));
      }
      const int64_t first = g.offsets[v], last = g.offsets[v + 1];
      for (int64_t k = first; k < last; ++k) {
        if (k + kMessagePrefetchEdges < nedges) {  // (into the next groups too)
          PrefetchRow(params + g.sources[k + kMessagePrefetchEdges] * slice,
                      slice * static_cast<int64_t>(sizeof(T)));
        }
        const int64_t e = g.edges[k];
        const T* r = params + g.sources[k] * slice;
        if constexpr (kPlainSum) {
          if (grouped == nullptr) {
            AddRowTo(o, r, slice);
          } else {
            for (int64_t h = 0; h < heads; ++h) {
              AddScaledRowTo(o + h * width, r + h * width, grouped[k * heads + h], width);
            }
          }
          continue;
        }
        for (int64_t h = 0; h < heads; ++h) {
          const T w = grouped == nullptr ? T(1) : grouped[k * heads + h];
          T* oh = o + h * width;
          const T* rh = r + h * width;
          int64_t* ph = kArg ? pos + h * width : nullptr;
          for (int64_t j = 0; j < width; ++j) {
            const T x = grouped == nullptr ? rh[j] : ScaleByWeight(rh[j], w);
            OfferEdge<kReduce>(oh[j], kArg ? ph[j] : unused, x, e);
          }
        }
      }
      if constexpr (kReduce == EdgeReduce::kMean) {
        if (last > first) {
          for (int64_t j = 0; j < slice; ++j) Finalize<MeanOp>(o[j], last - first);
        }
      }
    }
  });
  return true;
}

// out[e] = a[src[e]] op b[dst[e]] for the edges that `keep` takes (others:
// 0). Rows have `slice` elements, output rows `out_slice` (kDot: the parts
// of `width` elements, each summed in order, in A, into one value; 0 for
// parts of no elements; else `slice`).
template <EdgeOp kOp, typename T, typename A, typename Index, typename Keep>
void EdgeCombineCpu(const T* a, const T* b, const Index* src, const Index* dst, int64_t nedges,
                    int64_t slice, int64_t width, int64_t out_slice, const Keep& keep, T* out,
                    const Parallel& parallel) {
  if (out_slice == 0) return;
  parallel.For(nedges, 2 * slice + 1, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      T* o = out + e * out_slice;
      if (!keep(e)) {
        std::fill_n(o, out_slice, T(0));
        continue;
      }
      const T* x = a + static_cast<int64_t>(src[e]) * slice;
      const T* y = b + static_cast<int64_t>(dst[e]) * slice;
      if constexpr (kOp == EdgeOp::kDot) {
        for (int64_t h = 0; h < out_slice; ++h) {
          A acc = A(0);
          for (int64_t j = h * width; j < (h + 1) * width; ++j) {
            acc = DotStep(acc, static_cast<A>(x[j]), static_cast<A>(y[j]));
          }
          o[h] = static_cast<T>(acc);
        }
      } else {
        for (int64_t j = 0; j < slice; ++j) o[j] = CombineElements<kOp>(x[j], y[j]);
      }
    }
  });
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_MESSAGE_CPU_H_
