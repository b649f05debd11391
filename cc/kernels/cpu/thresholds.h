// Every tuning threshold of the CPU kernels and of the XLA glue's choice
// between XLA's instructions and our CPU core, in one place, each with what
// set it. TensorFlow-free (the CPU core's rules): the C++ drivers and
// benchmarks/cpu_scaling.cc run with the values production uses. The
// measurements are in docs/performance.md and came from 2-core VMs (Intel
// with AVX-512, AMD with and without it); `make bench`, `make linearize-bench`
// and `make cpu-scaling` measure them again on another CPU.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_THRESHOLDS_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_THRESHOLDS_H_

#include <cstdint>

namespace tf_scatter_ops {

// --- cache ---------------------------------------------------------------

// Outputs up to this many bytes are taken to stay in cache, between the
// passes of a call and for the op that reads them next (about a few cores'
// share of a last-level cache). Above it, scatters group their updates by
// destination block and gathers stream their rows out with non-temporal
// stores. Not swept on its own: the value is a design estimate.
constexpr int64_t kCacheBytes = int64_t(8) << 20;

// --- the parallel-for (chunked_loop.h, parallel.h) ------------------------

// Below this many cycles of work a loop runs on the calling thread: a
// hand-off to the pool costs more than it saves (on a VM, waking an idle
// thread can cost more than a 1 MiB loop).
constexpr int64_t kSerialBelowCycles = 1 << 15;
// One thread (the caller, or a helper) for each this many cycles of work
// (Eigen's ParallelFor has a like threshold); chunks of at least
// kMinChunkCycles, at most kChunksPerThread a thread, so that a thread that
// wakes late finds less to do instead of holding the loop up
// (`make cpu-scaling` times W1/W3/W5/W7 at 1-16 threads with these).
constexpr int64_t kCyclesPerThread = 100000;
constexpr int64_t kMinChunkCycles = 1 << 14;
constexpr int64_t kChunksPerThread = 4;

// --- index linearisation (index_linearize.h) ----------------------------

// Index rows are linearised this many at a time into a stack buffer that
// stays in L1 (4 KiB of int64 slots).
constexpr int64_t kRowBatch = 512;

// --- scatters (scatter_cpu.h) --------------------------------------------

// Serial below kSerialBelowCycles of work; so are up to this many update
// elements into an output that stays in cache (kCacheBytes): the hand-offs
// of the grouping passes would cost more than they save, and when the pool's
// threads are slow to wake, the caller runs those passes alone at about
// twice the cost of the serial one (measured on the 2-core VMs).
constexpr int64_t kInCacheUpdates = 1 << 17;
// Destination blocks are about this many bytes, so a block's output stays in
// L2 while its updates are applied (and its copy or zero-fill is fused);
// at most kMaxBlocks of them, which bounds the count pass's table.
constexpr int64_t kBlockBytes = 256 << 10;
constexpr int64_t kMaxBlocks = 1 << 14;
// Slices at least this many elements long are split by columns instead of
// by destination. No sweep of its own recorded.
constexpr int64_t kColumnSplitSlice = 4096;
// How far ahead of a bucket's store the placing pass prefetches, in bytes
// (64-256 all sped that pass up alike; none was clearly best).
constexpr int64_t kPrefetchAhead = 128;
// A block's owner asks for the update row this many entries ahead, its first
// kApplyPrefetchBytes (8 and 16 entries ahead gained alike, 4 less).
constexpr int64_t kApplyAhead = 8;
constexpr int64_t kApplyPrefetchBytes = 256;
// About what the count or the placing pass costs a row, in cycles: the
// parallel loops weigh it against a hand-off to the pool.
constexpr int64_t kGroupRowCycles = 8;
// Sorted rows (indices_are_sorted, scatter_hinted.h) initialise a fresh
// output this many bytes at a time ahead of the rows being applied, so the
// piece is in cache when they land (not swept: a design estimate; one
// piece per run of rows cost 2x on scalar rows).
constexpr int64_t kSortedInitBytes = 16 << 10;
// Up to this many rows' slots are linearised into a buffer on the stack,
// so tiny ops do not allocate (not a speed trade-off).
constexpr int64_t kInlineSlots = 32;

// --- gathers (row_copy.h) ------------------------------------------------

// Rows prefetched ahead of the one being copied by the streaming copy, and
// how many bytes of each. No sweep of its own recorded.
constexpr int64_t kRowPrefetch = 16;
constexpr int64_t kRowPrefetchBytes = 256;

// --- under XLA (xla/xla_kernels.cc) --------------------------------------

// Our kernel runs a scatter into a fresh output (scatter_nd, or a
// tensor_scatter whose input is an argument of the compiled function, which
// both must copy) with at least this many update elements and at most one
// update row per output row on average, of rows of at least
// kXlaOursScatterFromSlice elements or, narrower, at most one update row per
// kXlaOursNarrowSlotsPerRow output rows; XLA's instruction runs every other
// scatter. Swept with both
// forced (tensor_scatter_nd_add / _max into an argument and into an
// intermediate, scatter_nd; 2^14 to 2^20 rows of 1, 16 and 64 elements,
// 1/16 to 16 update rows per output row; 2-core AMD EPYC with AVX-512):
// into an argument, ours took 1.0-1.7x less time at up to one row per slot
// for rows of 16 and 64, and 0.8-1.4x for single elements at up to one row
// per 4 slots (0.6-0.75x at one per slot); from 4 rows per slot XLA's serial loop, whose output stays in
// cache, was up to 3x faster (1M rows of 16 into 65536 slots: 10.6 ms
// against 6.8). Into an intermediate or a loop variable, which both update
// in place, XLA's was faster or equal at nearly every point (0.35-1.0x), and
// it fuses. (Benchmark rows W1, 16M <- 1M single elements into an argument,
// and W5, scatter_nd of 2M elements into 16M, measured 1.7x and 1.9x faster
// with ours on a 2-core Intel Xeon with AVX-512.)
constexpr int64_t kXlaOursFromElements = int64_t{1} << 16;
constexpr int64_t kXlaOursScatterFromSlice = 16;
constexpr int64_t kXlaOursNarrowSlotsPerRow = 4;
// ... and a gather with at least this many elements in rows of at least
// kXlaOursFromSlice, when nothing fuses it: XLA's gather of such rows on its
// own was 1.3-3.5x slower than ours from 2^21 elements (262144 x 64: 17.8 ms
// against 4.4 ms); element gathers were 2x faster with XLA's at every size.
constexpr int64_t kXlaOursGatherFromElements = int64_t{1} << 20;
constexpr int64_t kXlaOursFromSlice = 32;

// --- segments (segment_cpu.h; the ids' runs: tf/segment_kernels.cc) -------

// sparse_segment_*: how many gathered rows ahead of the one being reduced
// to prefetch. Not swept; 8 is one bag of 8 ids (benchmark row S5: 37.7 ms
// without prefetching on the 2-core Xeon; with it, docs/performance.md).
constexpr int64_t kSegmentPrefetchRows = 8;

// segment_*: a run's columns are reduced in tiles of up to 32 with the
// accumulators in registers, a pass over the run's rows each, when the run
// has at most this many bytes (it stays in L1 between passes). Not swept:
// the size of an L1 data cache; 200k x 32 float rows in 20k runs
// (benchmark row S6, 2-core AMD EPYC, one thread): 2.5x faster in cache,
// 1.3x at 1 MiB outputs than accumulating in the output row.
constexpr int64_t kSegmentTileRunBytes = 32 << 10;

// segment_*: the ids are cut into runs in chunks of at least this many ids
// in parallel (one chunk below it). Not swept: a chunk is a few
// microseconds of work, well above the cost of handing it to a thread.
constexpr int64_t kSortedRunsChunkRows = 16384;

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_THRESHOLDS_H_
