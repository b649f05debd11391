// The scatter core when the caller promises its index rows are sorted by
// destination (indices_are_sorted; with unique_indices too: strictly
// increasing). TensorFlow-free.
//
// Sorted rows are already grouped by destination, so the grouping passes of
// the unhinted core (a stored slot per row, a counting sort into buckets)
// have nothing to do: two passes over the index rows, neither of which
// stores anything per row.
//   check   linearises the rows a batch at a time into L1 and checks the
//           bounds and the promise, in fixed chunks of rows in parallel;
//           before anything is written, so a bad row under the default
//           policy or a false promise leaves the output untouched;
//   apply   each chunk owns the runs of equal destinations that start in
//           it (to their ends, past the chunk if need be) and the output
//           from its first run's slot to the next owner's; it linearises
//           its rows again a batch at a time, initialises its output
//           kSortedInitBytes at a time just ahead of the rows (zero or copy,
//           so the piece is in cache when they land), and applies each row
//           in order. One pass over indices, updates and output.
// A false promise returns kFalseHint with the first row that breaks it in
// hints->false_at, the output untouched; the caller reports it or, under
// IGNORE, runs the unhinted core. Bad rows never break the promise (they
// are skipped, or reported first).
//
// Deterministic by construction, as the grouped core: each destination's
// rows are one run, applied in row order by its one owner. Bitwise the
// serial loop in index order, for any thread count.
//
// unique_indices alone (rows in any order) asks nothing of this core: the
// unhinted core groups the rows anyway, and applying distinct rows straight
// in row order measured slower than grouping them (the grouped owner
// initialises and updates each block while it is in cache).
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_SCATTER_HINTED_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_SCATTER_HINTED_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/init_mode.h"
#include "cpu/cpu_call.h"
#include "cpu/index_linearize.h"
#include "cpu/parallel.h"
#include "cpu/scatter_cpu.h"
#include "cpu/thresholds.h"

namespace tf_scatter_ops {

struct ScatterHints {
  bool sorted = false;    // indices_are_sorted
  bool unique = false;    // unique_indices: with sorted, strictly increasing
  int64_t false_at = -1;  // set by the core: the first row that breaks a hint
  // Whether the hinted core applies (unique alone does not change the work).
  bool used() const { return sorted; }
};

// What the core returns for a false hint, and for a true one where the
// unhinted core splits the work better (long slices, or one destination:
// by columns); nothing is written then either.
constexpr int64_t kFalseHint = -3;
constexpr int64_t kUnhinted = -4;

namespace internal {

// What the check pass finds in one chunk of rows; slots are -1 for none.
struct SortedChunk {
  int64_t first_row = -1, first_slot = -1;    // the first kept row
  int64_t second_row = -1, second_slot = -1;  // the first kept row with another slot
  int64_t last_slot = -1;                     // the last kept row's
  int64_t broken = -1;  // the first kept row below (strict: not above) the one before it
  int64_t bad = -1;     // the first bad row
  // Filled in by the combining step: the rows [own_row, own_end_row) whose
  // runs this chunk applies (own_row -1: none), and the output slots
  // [own_begin, own_end) it initialises.
  int64_t own_row = -1, own_end_row = 0, own_begin = 0, own_end = 0;
};

inline bool Breaks(int64_t slot, int64_t before, bool strict) {
  return before >= 0 && (slot < before || (strict && slot == before));
}

// The first row of batch[0, e - b) that breaks the promise after `before`.
inline int64_t FirstBreak(const int64_t* batch, int64_t b, int64_t e, int64_t before,
                          bool strict) {
  for (int64_t i = b; i < e; ++i) {
    const int64_t slot = batch[i - b];
    if (slot < 0) continue;
    if (Breaks(slot, before, strict)) return i;
    before = slot;
  }
  return -1;
}

inline void CheckSortedChunk(const IndexRows& rows, int64_t begin, int64_t end, bool strict,
                             SortedChunk* c) {
  int64_t previous = -1;  // the last kept slot so far
  c->bad = ForEachBatch(rows, begin, end, [&](int64_t b, int64_t e, const int64_t* batch) {
    if (c->broken >= 0) return;
    // No branch per row: a kept slot below (strict: not above) the kept
    // slot before it; bad rows (slot -1) leave that as it was.
    int64_t last = previous;
    bool broken = false;
    for (int64_t i = b; i < e; ++i) {
      const int64_t slot = batch[i - b];
      broken |= slot >= 0 && (strict ? slot <= last : slot < last);
      last = slot >= 0 ? slot : last;
    }
    if (broken) c->broken = FirstBreak(batch, b, e, previous, strict);
    previous = last;
  });
  c->last_slot = previous;
  // The first kept row and the first with another slot, usually in the
  // first batch.
  ForEachBatch(rows, begin, end, [&](int64_t b, int64_t e, const int64_t* batch) {
    for (int64_t i = b; i < e && c->second_row < 0; ++i) {
      const int64_t slot = batch[i - b];
      if (slot < 0) continue;
      if (c->first_row < 0) {
        c->first_row = i;
        c->first_slot = slot;
      } else if (slot != c->first_slot) {
        c->second_row = i;
        c->second_slot = slot;
      }
    }
  }, [&] { return c->second_row >= 0; });
}

// Serially, in chunk order: the first row that breaks the promise (-1: none)
// and, if none, each chunk's own rows and output.
inline int64_t CombineSortedChunks(std::vector<SortedChunk>& chunks, int64_t n, int64_t nslots,
                                   bool strict) {
  int64_t before = -1;  // the last kept slot of the chunks so far
  SortedChunk* owner = nullptr;  // the last chunk that owns a run
  for (SortedChunk& c : chunks) {
    if (c.first_row < 0) continue;
    if (Breaks(c.first_slot, before, strict)) return c.first_row;
    if (c.broken >= 0) return c.broken;
    if (c.first_slot != before) {
      c.own_row = c.first_row;
      c.own_begin = c.first_slot;
    } else if (c.second_row >= 0) {  // the first run continues the one before
      c.own_row = c.second_row;
      c.own_begin = c.second_slot;
    }
    if (c.own_row >= 0) {
      if (owner == nullptr) {
        c.own_begin = 0;  // the first owner initialises the output from slot 0
      } else {
        owner->own_end = c.own_begin;
        owner->own_end_row = c.own_row;
      }
      owner = &c;
    }
    before = c.last_slot;
  }
  if (owner != nullptr) {
    owner->own_end = nslots;
    owner->own_end_row = n;
  }
  return -1;
}

// One chunk's share of the apply pass (see the top of the file): rows
// [own_row, own_end_row), initialising the output a piece at a time ahead
// of the rows (no branch per row that the predictor misses).
template <typename T, typename Op>
void ApplySortedChunk(const IndexRows& rows, const SortedChunk& c, int64_t S, const T* updates,
                      const T* init, Init mode, T* out) {
  const int64_t piece = std::max<int64_t>(1, kSortedInitBytes / (S * int64_t(sizeof(T))));
  // output slots [own_begin, ready) are initialised
  int64_t ready = mode == Init::kInPlace ? c.own_end : c.own_begin;
  ForEachBatch(rows, c.own_row, c.own_end_row, [&](int64_t b, int64_t e, const int64_t* batch) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t slot = batch[i - b];
      if (slot < 0) continue;
      if (slot >= ready) {
        const int64_t to = std::min(c.own_end, std::max(slot + 1, ready + piece));
        InitElements(out, init, mode, ready * S, to * S);
        ready = to;
      }
      if (S == 1) {
        Op::Apply(out[slot], updates[i]);
      } else {
        ApplyRow<T, Op>(out + slot * S, updates + i * S, S);
      }
    }
  });
  InitElements(out, init, mode, ready * S, c.own_end * S);
}

}  // namespace internal

// The hinted core for sorted rows: the first bad row, -1, kFalseHint or
// kUnhinted (see above). Nothing is written when it returns a bad row under
// !ignore, kFalseHint or kUnhinted.
// Out of line for the reason ScatterCpu is (which NaN a NaN + NaN keeps).
template <typename T, typename Op>
__attribute__((noinline)) int64_t ScatterSorted(const CpuCall& s, bool ignore,
                                                ScatterHints* hints, const T* updates,
                                                const T* init, Init mode, T* out,
                                                const Parallel& parallel) {
  using namespace internal;  // NOLINT
  const int64_t n = s.form.n;
  const int64_t S = s.form.slice;
  const int64_t total = s.form.nslots * S;
  const bool strict = hints->unique;
  // Fixed chunks, so that the first row that breaks the promise and the
  // owners do not depend on the thread count.
  const int64_t chunk_rows = std::max<int64_t>(kRowBatch, (n + 63) / 64);
  const int64_t nchunks = n == 0 ? 0 : (n - 1) / chunk_rows + 1;
  std::vector<SortedChunk> chunks(nchunks);
  parallel.For(nchunks, (2 + 2 * s.rows.depth) * chunk_rows, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      CheckSortedChunk(s.rows, c * chunk_rows, std::min(n, (c + 1) * chunk_rows), strict,
                       &chunks[c]);
    }
  });
  int64_t first_bad = -1;
  for (int64_t c = 0; c < nchunks && first_bad < 0; ++c) first_bad = chunks[c].bad;
  if (first_bad >= 0 && !ignore) return first_bad;
  const int64_t broken = CombineSortedChunks(chunks, n, s.form.nslots, strict);
  if (broken >= 0) {
    hints->false_at = broken;
    return kFalseHint;
  }
  if (total == 0) return first_bad;  // nothing to write (empty output or slices)
  if (parallel.threads > 1 && (S >= kColumnSplitSlice || s.form.nslots == 1)) return kUnhinted;
  bool any_owner = false;
  for (const SortedChunk& c : chunks) any_owner |= c.own_row >= 0;
  if (!any_owner) {  // every row bad (IGNORE) or none: the output as initialised
    parallel.For(total, 1, [&](int64_t b, int64_t e) { InitElements(out, init, mode, b, e); });
    return first_bad;
  }
  parallel.For(nchunks, (2 + S) * chunk_rows + total / nchunks, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      if (chunks[c].own_row < 0) continue;
      ApplySortedChunk<T, Op>(s.rows, chunks[c], S, updates, init, mode, out);
    }
  });
  return first_bad;
}

// The sorted core where the hints allow it, else (or after a false hint) the
// unhinted one: the first bad row, -1 or kNoScratch; kFalseHint (false_at
// set, nothing written) when `report_false`.
template <typename T, typename Op>
int64_t ScatterHintedCpu(const CpuCall& s, bool ignore, bool report_false, ScatterHints* hints,
                         const T* updates, const T* init, Init mode, T* out,
                         const Parallel& parallel, Scratch& scratch) {
  if (hints->used()) {
    const int64_t bad = ScatterSorted<T, Op>(s, ignore, hints, updates, init, mode, out, parallel);
    if (bad != kFalseHint && bad != kUnhinted) return bad;
    if (bad == kFalseHint && report_false) return bad;
  }
  return ScatterCpu<T, Op>(s, ignore, updates, init, mode, out, parallel, scratch);
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_SCATTER_HINTED_H_
