// The CPU scatter and gather cores, in canonical form. TensorFlow-free.
//
//   slots   [n]            flat destination of each update row (-1: dropped)
//   updates [n, slice]
//   output  [nslots, slice]
//
// Deterministic by construction: every output element has exactly one owner
// (a thread working on a block of destinations, or on a range of columns)
// that applies that element's updates in row order. The result is therefore
// bitwise identical to a serial loop in index order, for any thread count.
#ifndef TF_SCATTER_OPS_CC_KERNELS_SCATTER_CPU_H_
#define TF_SCATTER_OPS_CC_KERNELS_SCATTER_CPU_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "init_mode.h"
#include "parallel.h"

namespace tf_scatter_ops {

struct ScatterShape {
  const int64_t* slots;
  int64_t n;       // update rows
  int64_t slice;   // elements per row
  int64_t nslots;  // destination rows in the output
};

namespace internal {

template <typename T>
void InitElements(T* out, const T* init, Init mode, int64_t begin,
                  int64_t end) {
  if (mode == Init::kInPlace || begin >= end) return;
  if constexpr (std::is_trivially_copyable<T>::value) {
    // All-zero bits are zero for every numeric type we register.
    if (mode == Init::kZero) {
      std::memset(static_cast<void*>(out + begin), 0, (end - begin) * sizeof(T));
    } else {
      std::memcpy(static_cast<void*>(out + begin), init + begin,
                  (end - begin) * sizeof(T));
    }
  } else {
    for (int64_t k = begin; k < end; ++k) out[k] = mode == Init::kZero ? T() : init[k];
  }
}

template <typename T, typename Op>
inline void ApplyRow(T* dst, const T* src, int64_t len) {
  for (int64_t k = 0; k < len; ++k) Op::Apply(dst[k], src[k]);
}

// Rows whose work is below this are done serially, without any scratch.
constexpr int64_t kSmallWork = 1 << 15;
// ... and so are up to kInCacheUpdates update elements into an output of at
// most kCacheBytes.
constexpr int64_t kCacheBytes = 8 << 20;
constexpr int64_t kInCacheUpdates = 1 << 17;
// Destination blocks are about this many bytes, so a block's output stays in
// cache while its updates are applied (and its copy/zero-fill is fused).
constexpr int64_t kBlockBytes = 256 << 10;
constexpr int64_t kMaxBlocks = 1 << 14;
// Slices at least this long are split by columns instead of by destination.
constexpr int64_t kColumnSplitSlice = 4096;

// What a block's owner reads for one update, written in row order by the
// grouping pass so that the owner streams through them sequentially.
// One-element slices carry the value itself; longer ones the row number.
template <typename T>
struct ValueEntry {
  uint32_t local;  // slot offset inside the block
  T value;
  static ValueEntry Make(int64_t local, int64_t row, const T* updates, int64_t) {
    return ValueEntry{static_cast<uint32_t>(local), updates[row]};
  }
  template <typename Op>
  void Apply(T* block, const T*, int64_t) const { Op::Apply(block[local], value); }
};

template <typename T, typename Offset>
struct RowEntry {
  Offset local;
  Offset row;
  static RowEntry Make(int64_t local, int64_t row, const T*, int64_t) {
    return RowEntry{static_cast<Offset>(local), static_cast<Offset>(row)};
  }
  template <typename Op>
  void Apply(T* block, const T* updates, int64_t S) const {
    ApplyRow<T, Op>(block + int64_t(local) * S, updates + int64_t(row) * S, S);
  }
};

// Stable counting sort of the update rows by destination block (chunks of
// rows counted and placed in parallel, blocks in row order), then one owner
// per block: it initialises its block (zero or copy, while it is in cache)
// and applies the block's updates in row order.
template <typename T, typename Op, typename Entry>
void ScatterGrouped(const ScatterShape& s, int64_t n, int shift,
                    const T* updates, const T* init, Init mode, T* out,
                    const Parallel& parallel) {
  const int64_t S = s.slice;
  const int64_t total = s.nslots * S;
  const int64_t nblocks = ((s.nslots - 1) >> shift) + 1;
  const int64_t chunk_rows = std::max<int64_t>(1 << 14, (n + 63) / 64);
  const int64_t nchunks = n == 0 ? 0 : (n - 1) / chunk_rows + 1;
  std::vector<int64_t> offsets(nchunks * nblocks, 0);  // [chunk][block]
  parallel.For(nchunks, chunk_rows, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      int64_t* count = offsets.data() + c * nblocks;
      const int64_t end = std::min(n, (c + 1) * chunk_rows);
      for (int64_t i = c * chunk_rows; i < end; ++i) {
        const int64_t slot = s.slots[i];
        if (slot >= 0) ++count[slot >> shift];
      }
    }
  });
  std::vector<int64_t> block_start(nblocks + 1, 0);
  int64_t pos = 0;
  for (int64_t b = 0; b < nblocks; ++b) {
    block_start[b] = pos;
    for (int64_t c = 0; c < nchunks; ++c) {
      const int64_t count = offsets[c * nblocks + b];
      offsets[c * nblocks + b] = pos;
      pos += count;
    }
  }
  block_start[nblocks] = pos;
  std::unique_ptr<char[]> storage(new char[std::max<int64_t>(pos, 1) * sizeof(Entry)]);
  Entry* entries = reinterpret_cast<Entry*>(storage.get());
  const int64_t mask = (int64_t(1) << shift) - 1;
  parallel.For(nchunks, 2 * chunk_rows, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      int64_t* next = offsets.data() + c * nblocks;
      const int64_t end = std::min(n, (c + 1) * chunk_rows);
      for (int64_t i = c * chunk_rows; i < end; ++i) {
        const int64_t slot = s.slots[i];
        if (slot >= 0) {
          new (&entries[next[slot >> shift]++])
              Entry(Entry::Make(slot & mask, i, updates, S));
        }
      }
    }
  });

  const int64_t block_elems = (int64_t(1) << shift) * S;
  const int64_t cost = block_elems + (pos * S) / nblocks + 1;
  parallel.For(nblocks, cost, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      T* block = out + b * block_elems;
      InitElements(out, init, mode, b * block_elems,
                   std::min(total, (b + 1) * block_elems));
      for (int64_t k = block_start[b]; k < block_start[b + 1]; ++k) {
        entries[k].template Apply<Op>(block, updates, S);
      }
    }
  });
}

template <typename T, typename Op>
void ScatterBlocks(const ScatterShape& s, int64_t n, const T* updates,
                   const T* init, Init mode, T* out, const Parallel& parallel) {
  const int64_t row_bytes =
      std::max<int64_t>(1, s.slice * static_cast<int64_t>(sizeof(T)));
  int shift = 0;
  while ((int64_t(2) << shift) * row_bytes <= kBlockBytes) ++shift;
  while (((s.nslots - 1) >> shift) + 1 > kMaxBlocks) ++shift;
  const bool narrow = shift <= 32 && n <= int64_t(UINT32_MAX);
  if (narrow && s.slice == 1 && std::is_trivially_copyable<T>::value) {
    ScatterGrouped<T, Op, ValueEntry<T>>(s, n, shift, updates, init, mode, out,
                                         parallel);
  } else if (narrow) {
    ScatterGrouped<T, Op, RowEntry<T, uint32_t>>(s, n, shift, updates, init,
                                                 mode, out, parallel);
  } else {
    ScatterGrouped<T, Op, RowEntry<T, int64_t>>(s, n, shift, updates, init,
                                                mode, out, parallel);
  }
}

}  // namespace internal

template <typename T, typename Op>
void ScatterCpu(const ScatterShape& s, const T* updates, const T* init,
                Init mode, T* out, const Parallel& parallel) {
  using internal::ApplyRow;
  using internal::InitElements;
  const int64_t S = s.slice;
  const int64_t total = s.nslots * S;
  // An empty output has no valid slot (every row is dropped); the block path
  // below would divide by its zero block count.
  if (total == 0) return;
  const int64_t init_work = mode == Init::kInPlace ? 0 : total;
  const int64_t n = S == 0 ? 0 : s.n;  // empty slices: nothing to apply

  // Small: one serial pass in row order. Also when the output stays in cache
  // and the updates are few: then the hand-offs of the grouping passes cost
  // more than they save.
  const bool in_cache = total * static_cast<int64_t>(sizeof(T)) <= internal::kCacheBytes &&
                        n * S <= internal::kInCacheUpdates;
  if (parallel.threads <= 1 || n * S + init_work < internal::kSmallWork || in_cache) {
    InitElements(out, init, mode, 0, total);
    if (S == 1) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t slot = s.slots[i];
        if (slot >= 0) Op::Apply(out[slot], updates[i]);
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t slot = s.slots[i];
        if (slot >= 0) ApplyRow<T, Op>(out + slot * S, updates + i * S, S);
      }
    }
    return;
  }

  // Long slices: each thread owns a range of columns of every row.
  if (S >= internal::kColumnSplitSlice || s.nslots == 1) {
    parallel.For(total, 1, [&](int64_t b, int64_t e) {
      InitElements(out, init, mode, b, e);
    });
    parallel.For(S, std::max<int64_t>(n, 1), [&](int64_t c0, int64_t c1) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t slot = s.slots[i];
        if (slot >= 0)
          ApplyRow<T, Op>(out + slot * S + c0, updates + i * S + c0, c1 - c0);
      }
    });
    return;
  }

  // Otherwise: owners are blocks of destination rows.
  internal::ScatterBlocks<T, Op>(s, n, updates, init, mode, out, parallel);
}

// gather: output row i = params row slots[i], or zeros where slots[i] < 0.
template <typename T>
void GatherCpu(const ScatterShape& s, const T* params, T* out,
               const Parallel& parallel) {
  const int64_t S = s.slice;
  if (S == 0) return;
  parallel.For(s.n, S + 2, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t slot = s.slots[i];
      T* dst = out + i * S;
      if (slot < 0) {
        internal::InitElements<T>(dst, nullptr, Init::kZero, 0, S);
      } else if constexpr (std::is_trivially_copyable<T>::value) {
        std::memcpy(static_cast<void*>(dst), params + slot * S, S * sizeof(T));
      } else {
        std::copy(params + slot * S, params + (slot + 1) * S, dst);
      }
    }
  });
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_SCATTER_CPU_H_
