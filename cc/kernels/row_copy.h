// Copying gathered rows into an output that will not stay in cache.
// TensorFlow-free.
//
// A gather reads rows at random and writes its output once, in order. With
// ordinary stores every output line is first read (for ownership), and the
// random row loads wait on memory. Where the CPU has AVX-512, rows whose size
// is a multiple of 64 bytes go out with 64-byte non-temporal stores, which
// skip that read, and the row kRowPrefetch ahead is prefetched. Measured on
// the 2-core development VM (W7 of the benchmark, back to back): 16.1-16.3
// -> 12.5 ms at full size, 0.79-0.89 -> 0.55-0.67 ms at 1/16. It takes both
// halves: 16-byte non-temporal stores with the prefetch gained nothing, 64-byte
// ones without it were slower (16 -> 22 ms), and the prefetch alone gained
// nothing.
#ifndef TF_SCATTER_OPS_CC_KERNELS_ROW_COPY_H_
#define TF_SCATTER_OPS_CC_KERNELS_ROW_COPY_H_

#include <cstdint>

#include "cpu_features.h"

#if defined(TF_SCATTER_OPS_AVX512)
#include <immintrin.h>
#endif

namespace tf_scatter_ops {

// Outputs smaller than this keep ordinary stores, so that the op that reads
// them next finds them in cache.
constexpr int64_t kStreamOutputBytes = int64_t(8) << 20;
// Rows prefetched ahead of the one being copied, and how much of each.
constexpr int64_t kRowPrefetch = 16;
constexpr int64_t kRowPrefetchBytes = 256;

#if defined(TF_SCATTER_OPS_AVX512)

// Whether StreamRow may copy rows of `row_bytes` into `out` (total_bytes).
inline bool CanStreamRows(const void* out, int64_t row_bytes, int64_t total_bytes) {
  return HasAvx512() && total_bytes >= kStreamOutputBytes && row_bytes % 64 == 0 &&
         reinterpret_cast<uintptr_t>(out) % 64 == 0;
}

inline void PrefetchRow(const void* row, int64_t bytes) {
  const char* p = static_cast<const char*>(row);
  const int64_t n = bytes < kRowPrefetchBytes ? bytes : kRowPrefetchBytes;
  for (int64_t k = 0; k < n; k += 64) __builtin_prefetch(p + k, 0, 3);
}

// dst 64-byte aligned, bytes a multiple of 64 (CanStreamRows said so). The
// stores are weakly ordered: call StreamFence before another thread reads.
__attribute__((target(TF_SCATTER_OPS_AVX512))) inline void StreamRow(
    void* dst, const void* src, int64_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  for (int64_t k = 0; k < bytes; k += 64) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + k), _mm512_loadu_si512(s + k));
  }
}

inline void StreamFence() { _mm_sfence(); }

#else  // no streaming: CanStreamRows is false and the rest is never called

inline bool CanStreamRows(const void*, int64_t, int64_t) { return false; }
inline void PrefetchRow(const void*, int64_t) {}
inline void StreamRow(void*, const void*, int64_t) {}
inline void StreamFence() {}

#endif

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_ROW_COPY_H_
