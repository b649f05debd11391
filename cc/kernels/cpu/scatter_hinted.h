// The scatter core when the caller promises its index rows are sorted by
// destination (indices_are_sorted) or hit each destination once
// (unique_indices): no grouping pass, the rows are applied straight from
// their slots. TensorFlow-free.
//
// The promise is checked before anything is written, in one parallel pass
// over the rows' slots (sorted: every row's slot >= the previous kept row's;
// unique: a bitmap of the slots, or, with both, strictly increasing slots).
// A false promise returns kFalseHint with the first row that breaks it in
// hints->false_at, the output untouched; the caller reports it or, under
// IGNORE, runs the core without the hints.
//
// Deterministic by construction, as the grouped core: with unique slots no
// two rows share an element; with sorted slots each slot's rows are a run,
// owned by the thread whose range of rows holds the run's first row, which
// applies them in row order. Bitwise the serial loop in index order.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_SCATTER_HINTED_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_SCATTER_HINTED_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/init_mode.h"
#include "common/scratch.h"
#include "cpu/cpu_call.h"
#include "cpu/index_linearize.h"
#include "cpu/parallel.h"
#include "cpu/scatter_cpu.h"

namespace tf_scatter_ops {

struct ScatterHints {
  bool sorted = false;   // indices_are_sorted
  bool unique = false;   // unique_indices
  int64_t false_at = -1;  // set by the core: the first row that breaks a hint
  bool any() const { return sorted || unique; }
};

// What the core returns for a false hint.
constexpr int64_t kFalseHint = -3;

namespace internal {

// The first kept row (slot >= 0) of [begin, end) whose slot is below (with
// `strict`: not above) the previous kept row's; -1 if none. `before` is the
// last kept slot before `begin` (-1: none).
inline int64_t FirstUnsorted(const int64_t* slots, int64_t begin, int64_t end,
                             int64_t before, bool strict) {
  for (int64_t i = begin; i < end; ++i) {
    const int64_t s = slots[i];
    if (s < 0) continue;
    if (before >= 0 && (s < before || (strict && s == before))) return i;
    before = s;
  }
  return -1;
}

// The last kept slot of rows [0, end), or -1.
inline int64_t LastKept(const int64_t* slots, int64_t end) {
  for (int64_t i = end - 1; i >= 0; --i) {
    if (slots[i] >= 0) return slots[i];
  }
  return -1;
}

// The first row whose slot an earlier row has (serial: the error path).
inline int64_t FirstRepeated(const int64_t* slots, int64_t n, int64_t nslots) {
  std::vector<bool> seen(nslots);
  for (int64_t i = 0; i < n; ++i) {
    if (slots[i] < 0) continue;
    if (seen[slots[i]]) return i;
    seen[slots[i]] = true;
  }
  return -1;
}

// Whether the hints hold for slots[0, n); else the first row that breaks one.
inline int64_t CheckHints(const int64_t* slots, int64_t n, int64_t nslots,
                          const ScatterHints& hints, const Parallel& parallel,
                          Scratch& scratch, bool* no_scratch) {
  if (hints.sorted) {
    std::atomic<int64_t> first{INT64_MAX};
    parallel.For(n, 2, [&](int64_t b, int64_t e) {
      KeepFirstBad(&first, FirstUnsorted(slots, b, e, LastKept(slots, b), hints.unique));
    });
    const int64_t at = first.load();
    return at == INT64_MAX ? -1 : at;
  }
  // unique alone: a bitmap of the slots, set atomically
  const int64_t words = (nslots + 63) / 64;
  auto* bits = static_cast<std::atomic<uint64_t>*>(
      scratch.Allocate(words * sizeof(std::atomic<uint64_t>)));
  if (bits == nullptr) {
    *no_scratch = true;
    return -1;
  }
  parallel.For(words, 1, [&](int64_t b, int64_t e) {
    for (int64_t w = b; w < e; ++w) new (&bits[w]) std::atomic<uint64_t>(0);
  });
  std::atomic<bool> repeated{false};
  parallel.For(n, 4, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t s = slots[i];
      if (s < 0) continue;
      const uint64_t bit = uint64_t(1) << (s & 63);
      if (bits[s >> 6].fetch_or(bit, std::memory_order_relaxed) & bit) {
        repeated.store(true, std::memory_order_relaxed);
        return;
      }
    }
  });
  return repeated.load() ? FirstRepeated(slots, n, nslots) : -1;
}

}  // namespace internal

// The hinted core: the first bad row, -1, kNoScratch or kFalseHint (see
// above); kInPlace outputs are untouched unless every check passed.
template <typename T, typename Op>
int64_t ScatterHinted(const CpuCall& s, bool ignore, ScatterHints* hints,
                      const T* updates, const T* init, Init mode, T* out,
                      const Parallel& parallel, Scratch& scratch) {
  using namespace internal;  // NOLINT
  const int64_t n = s.form.n;
  const int64_t S = s.form.slice;
  if (s.form.nslots * S == 0) return Linearize(s.rows, nullptr, parallel);  // nothing to write
  int64_t inline_slots[kInlineSlots];
  int64_t* slots;
  const int64_t first_bad = LinearizeAll(s, inline_slots, parallel, scratch, &slots);
  if (first_bad == kNoScratch || (first_bad >= 0 && !ignore)) return first_bad;
  bool no_scratch = false;
  const int64_t broken =
      CheckHints(slots, n, s.form.nslots, *hints, parallel, scratch, &no_scratch);
  if (no_scratch) return kNoScratch;
  if (broken >= 0) {
    hints->false_at = broken;
    return kFalseHint;
  }
  const int64_t total = s.form.nslots * S;
  if (hints->unique) {
    parallel.For(total, 1, [&](int64_t b, int64_t e) { InitElements(out, init, mode, b, e); });
    // Distinct destinations in any order: rows in any split, each row's
    // destination asked for ahead (the rows land far apart in the output).
    parallel.For(n, 2 + S, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if (i + kApplyAhead < e && slots[i + kApplyAhead] >= 0) {
          __builtin_prefetch(out + slots[i + kApplyAhead] * S, 1);
        }
        if (slots[i] >= 0) ApplyRow<T, Op>(out + slots[i] * S, updates + i * S, S);
      }
    });
    return first_bad;
  }
  // Sorted: a thread applies the runs that start in its range of rows, to
  // their ends, and owns the output from its first run's slot to the next
  // owner's (from slot 0 for the first range): it initialises each piece of
  // it just before it applies there, while the piece is in cache, in one
  // pass over its part of the output.
  parallel.For(n, 2 + S, [&](int64_t b, int64_t e) {
    const int64_t inherited = b == 0 ? -1 : LastKept(slots, b);  // a run that started before b
    int64_t i = b;
    while (i < e && (slots[i] < 0 || slots[i] == inherited)) ++i;
    // output rows [0, ready) of ours are initialised; ours start at our
    // first run's slot (slot 0 for the first range)
    int64_t ready = -1, last = -1;
    if (b == 0) ready = 0;
    for (; i < n; ++i) {
      const int64_t slot = slots[i];
      if (slot < 0) continue;
      if (slot != last) {
        if (i >= e) break;  // the next owner's run
        if (ready < 0) ready = slot;
        InitElements(out, init, mode, ready * S, (slot + 1) * S);
        ready = slot + 1;
        last = slot;
      }
      ApplyRow<T, Op>(out + slot * S, updates + i * S, S);
    }
    // up to the next owner's first slot (the slot we stopped at), or the end
    const int64_t end = i < n ? slots[i] : s.form.nslots;
    if (ready < 0) ready = end;  // no run of ours: nothing of the output either
    InitElements(out, init, mode, ready * S, end * S);
  });
  return first_bad;
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_SCATTER_HINTED_H_
