// The CPU scatter core, in canonical form (cpu_call.h). TensorFlow-free.
//
// Every call returns the first bad row, or -1. A scatter in place
// (Init::kInPlace) with bad rows and !ignore returns before it writes
// anything, so a forwarded input or a variable is intact; so does one whose
// scratch cannot be allocated (it returns kNoScratch). Into a fresh output
// (kCopy, kZero) the serial strategy may have written some rows when it
// finds a bad one: the caller fails the op and the output is never seen.
//
// Deterministic by construction: every output element has exactly one owner
// (a thread working on a block of destinations, or on a range of columns)
// that applies that element's updates in row order. The result is therefore
// bitwise identical to a serial loop in index order, for any thread count.
//
// ScatterCpu picks one of three strategies:
//   serial      one pass in row order, for small work, one thread, or an
//               output that stays in cache with few updates;
//   by column   long slices (or one destination row): each thread owns a
//               range of columns of every row;
//   by block    otherwise: the rows are grouped by destination block with a
//               stable counting sort, and each block's owner applies its
//               updates while the block is in cache.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_SCATTER_CPU_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_SCATTER_CPU_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "common/init_mode.h"
#include "common/scratch.h"
#include "cpu/cpu_call.h"
#include "cpu/cpu_features.h"
#include "cpu/thresholds.h"
#include "cpu/index_linearize.h"
#include "cpu/parallel.h"

namespace tf_scatter_ops {
namespace internal {

inline int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
inline char* AlignUp(char* p, uintptr_t m) {
  return p + ((m - reinterpret_cast<uintptr_t>(p) % m) % m);
}

// What a block's owner reads for one update, written in row order by the
// grouping pass so that the owner streams through them sequentially.
// One-element slices carry the value itself; longer ones the row number.
// Slot is how the grouping passes store a row's slot between them.
template <typename T>
struct ValueEntry {
  using Slot = uint32_t;
  uint32_t local;  // slot offset inside the block
  T value;
  static ValueEntry Make(int64_t local, int64_t row, const T* updates, int64_t) {
    return ValueEntry{static_cast<uint32_t>(local), updates[row]};
  }
  template <typename Op>
  void Apply(T* block, const T*, int64_t) const { Op::Apply(block[local], value); }
  void Prefetch(const T*, int64_t) const {}
};

template <typename T, typename Offset>
struct RowEntry {
  using Slot = Offset;
  Offset local;
  Offset row;
  static RowEntry Make(int64_t local, int64_t row, const T*, int64_t) {
    return RowEntry{static_cast<Offset>(local), static_cast<Offset>(row)};
  }
  template <typename Op>
  void Apply(T* block, const T* updates, int64_t S) const {
    ApplyRow<T, Op>(block + int64_t(local) * S, updates + int64_t(row) * S, S);
  }
  // A block's rows lie far apart in the updates, where the hardware's
  // prefetcher cannot guess them: ask for the start of the row.
  void Prefetch(const T* updates, int64_t S) const {
    const char* p = reinterpret_cast<const char*>(updates + int64_t(row) * S);
    const int64_t bytes = std::min<int64_t>(S * int64_t(sizeof(T)), kApplyPrefetchBytes);
    for (int64_t at = 0; at < bytes; at += 64) __builtin_prefetch(p + at);
  }
};

// Stable counting sort of the update rows by destination block (chunks of
// rows counted and placed in parallel, blocks in row order), then one owner
// per block: it initialises its block (zero or copy, while it is in cache)
// and applies the block's updates in row order. The count pass linearises
// the rows once, finds the first bad row (with !ignore nothing is written
// after it) and keeps each row's slot, as narrow as the output allows, for
// the placing pass.
template <typename T, typename Op, typename Entry>
int64_t ScatterGrouped(const CpuCall& s, bool ignore, int shift,
                       const T* updates, const T* init, Init mode, T* out,
                       const Parallel& parallel, Scratch& scratch) {
  const int64_t n = s.form.n;
  const int64_t S = s.form.slice;
  const int64_t total = s.form.nslots * S;
  const int64_t nblocks = ((s.form.nslots - 1) >> shift) + 1;
  const int64_t chunk_rows = std::max<int64_t>(1 << 14, (n + 63) / 64);
  const int64_t nchunks = n == 0 ? 0 : (n - 1) / chunk_rows + 1;
  std::vector<int64_t> chunk_bad(nchunks, -1);
  using Slot = typename Entry::Slot;
  constexpr Slot kBad = static_cast<Slot>(-1);  // the caller keeps nslots below
  // One scratch allocation: the entries (at most n), room for the placing
  // pass's prefetches past the last one, the slots, and the per-chunk
  // offsets [chunk][block].
  const int64_t entry_bytes = RoundUp(n * int64_t(sizeof(Entry)) + kPrefetchAhead, 64);
  const int64_t slot_bytes = RoundUp(n * int64_t(sizeof(Slot)), 64);
  char* storage = static_cast<char*>(scratch.Allocate(
      entry_bytes + slot_bytes + nchunks * nblocks * int64_t(sizeof(int64_t)) + 64));
  if (storage == nullptr) return kNoScratch;
  char* base = AlignUp(storage, 64);
  Entry* entries = reinterpret_cast<Entry*>(base);
  Slot* slots = reinterpret_cast<Slot*>(base + entry_bytes);
  int64_t* offsets = reinterpret_cast<int64_t*>(base + entry_bytes + slot_bytes);
  std::fill(offsets, offsets + nchunks * nblocks, 0);
  parallel.For(nchunks, kGroupRowCycles * chunk_rows, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      int64_t* count = offsets + c * nblocks;
      const int64_t end = std::min(n, (c + 1) * chunk_rows);
      chunk_bad[c] = ForEachBatch(
          s.rows, c * chunk_rows, end,
          [&](int64_t b, int64_t e, const int64_t* batch) {
            for (int64_t i = b; i < e; ++i) {
              const int64_t slot = batch[i - b];
              if (slot >= 0) ++count[slot >> shift];
              slots[i] = slot >= 0 ? static_cast<Slot>(slot) : kBad;
            }
          });
    }
  });
  int64_t first_bad = -1;
  for (int64_t c = 0; c < nchunks && first_bad < 0; ++c) first_bad = chunk_bad[c];
  if (first_bad >= 0 && !ignore) return first_bad;
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
  const int64_t mask = (int64_t(1) << shift) - 1;
  parallel.For(nchunks, kGroupRowCycles * chunk_rows, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      int64_t* next = offsets + c * nblocks;
      const int64_t end = std::min(n, (c + 1) * chunk_rows);
      for (int64_t i = c * chunk_rows; i < end; ++i) {
        const Slot slot = slots[i];
        if (slot != kBad) {
          const int64_t at = next[slot >> shift]++;
          // Ask for the bucket's next line ahead of its store: the stores
          // scatter over nblocks streams and would otherwise wait for each
          // line in turn.
          __builtin_prefetch(reinterpret_cast<const char*>(entries + at) + kPrefetchAhead, 1);
          new (&entries[at]) Entry(Entry::Make(slot & mask, i, updates, S));
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
      const int64_t end = block_start[b + 1];
      for (int64_t k = block_start[b]; k < end; ++k) {
        if (k + kApplyAhead < end) entries[k + kApplyAhead].Prefetch(updates, S);
        entries[k].template Apply<Op>(block, updates, S);
      }
    }
  });
  return first_bad;
}

template <typename T, typename Op>
int64_t ScatterBlocks(const CpuCall& s, bool ignore, const T* updates,
                      const T* init, Init mode, T* out,
                      const Parallel& parallel, Scratch& scratch) {
  const int64_t row_bytes =
      std::max<int64_t>(1, s.form.slice * static_cast<int64_t>(sizeof(T)));
  int shift = 0;
  while ((int64_t(2) << shift) * row_bytes <= kBlockBytes) ++shift;
  while (((s.form.nslots - 1) >> shift) + 1 > kMaxBlocks) ++shift;
  const bool narrow = shift <= 32 && s.form.n <= int64_t(UINT32_MAX) &&
                      s.form.nslots < int64_t(UINT32_MAX);
  if (narrow && s.form.slice == 1 && std::is_trivially_copyable<T>::value) {
    return ScatterGrouped<T, Op, ValueEntry<T>>(
        s, ignore, shift, updates, init, mode, out, parallel, scratch);
  } else if (narrow) {
    return ScatterGrouped<T, Op, RowEntry<T, uint32_t>>(
        s, ignore, shift, updates, init, mode, out, parallel, scratch);
  }
  return ScatterGrouped<T, Op, RowEntry<T, int64_t>>(
      s, ignore, shift, updates, init, mode, out, parallel, scratch);
}


// The in-place serial and the by-column strategies work on every row's
// slot, linearised first (LinearizeAll) into `inline_slots` for a few rows
// (tiny ops do not allocate), else into scratch. Returns the first bad row,
// -1, or kNoScratch.
inline int64_t LinearizeAll(const CpuCall& s, int64_t* inline_slots,
                            const Parallel& parallel, Scratch& scratch,
                            int64_t** slots) {
  *slots = s.form.n <= kInlineSlots
               ? inline_slots
               : static_cast<int64_t*>(scratch.Allocate(s.form.n * sizeof(int64_t)));
  if (*slots == nullptr) return kNoScratch;
  return Linearize(s.rows, *slots, parallel);
}

// Rows [begin, end) applied in row order, slots[i - begin] being row i's
// slot (negative: bad, skipped).
template <typename T, typename Op>
void ApplyRows(const CpuCall& s, int64_t begin, int64_t end,
               const int64_t* slots, const T* updates, T* out) {
  const int64_t S = s.form.slice;
  if (S == 1) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t slot = slots[i - begin];
      if (slot >= 0) Op::Apply(out[slot], updates[i]);
    }
  } else {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t slot = slots[i - begin];
      if (slot >= 0) ApplyRow<T, Op>(out + slot * S, updates + i * S, S);
    }
  }
}

// Serial into a fresh output: each batch of rows is linearised into L1 and
// applied at once, with no pass of its own over the indices, no stored slots
// and no hand-off to the pool. Returns the first bad row, or -1.
template <typename T, typename Op>
int64_t ApplySerialFused(const CpuCall& s, const T* updates, const T* init,
                         Init mode, T* out) {
  InitElements(out, init, mode, 0, s.form.nslots * s.form.slice);
  return ForEachBatch(s.rows, 0, s.form.n,
                      [&](int64_t b, int64_t e, const int64_t* batch) {
                        ApplyRows<T, Op>(s, b, e, batch, updates, out);
                      });
}

// By column: each thread owns a range of columns of every row.
template <typename T, typename Op>
void ApplyByColumn(const CpuCall& s, const int64_t* slots, const T* updates,
                   const T* init, Init mode, T* out, const Parallel& parallel) {
  const int64_t S = s.form.slice;
  const int64_t n = s.form.n;
  parallel.For(s.form.nslots * S, 1, [&](int64_t b, int64_t e) {
    InitElements(out, init, mode, b, e);
  });
  parallel.For(S, std::max<int64_t>(n, 1), [&](int64_t c0, int64_t c1) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t slot = slots[i];
      if (slot >= 0)
        ApplyRow<T, Op>(out + slot * S + c0, updates + i * S + c0, c1 - c0);
    }
  });
}

}  // namespace internal

// Kept out of line: which operand of a commutative add the compiler puts
// first, and so whose payload a NaN + NaN keeps, depends on the code it is
// inlined into. Out of line, the row adds keep the output's NaN as
// TensorFlow's kernel does on the paths tests/test_fuzz.py compares bitwise
// (README: where NaN payloads can still differ).
template <typename T, typename Op>
__attribute__((noinline)) int64_t ScatterCpu(const CpuCall& s, bool ignore,
                                             const T* updates, const T* init,
                                             Init mode, T* out,
                                             const Parallel& parallel,
                                             Scratch& scratch) {
  using namespace internal;  // NOLINT: the strategies
  const int64_t S = s.form.slice;
  const int64_t total = s.form.nslots * S;
  const int64_t work = s.form.n * S;
  // Nothing to write (an empty output has no valid slot, or the slices are
  // empty), but bad rows are still bad.
  if (total == 0) return Linearize(s.rows, nullptr, parallel);
  const bool in_cache =
      total * static_cast<int64_t>(sizeof(T)) <= kCacheBytes && work <= kInCacheUpdates;
  const int64_t init_work = mode == Init::kInPlace ? 0 : total;
  const bool serial =
      parallel.threads <= 1 || work + init_work < kSerialBelowCycles || in_cache;
  const bool by_column = S >= kColumnSplitSlice || s.form.nslots == 1;
  if (!serial && !by_column) {
    return ScatterBlocks<T, Op>(s, ignore, updates, init, mode, out, parallel, scratch);
  }
  if (serial && mode != Init::kInPlace) {
    return ApplySerialFused<T, Op>(s, updates, init, mode, out);
  }
  // In place, every row is checked before anything is written.
  int64_t inline_slots[kInlineSlots];
  int64_t* slots;
  const int64_t first_bad = LinearizeAll(s, inline_slots, parallel, scratch, &slots);
  if (first_bad == kNoScratch || (first_bad >= 0 && !ignore)) return first_bad;
  if (serial) {
    ApplyRows<T, Op>(s, 0, s.form.n, slots, updates, out);
  } else {
    ApplyByColumn<T, Op>(s, slots, updates, init, mode, out, parallel);
  }
  return first_bad;
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_SCATTER_CPU_H_
