// Copying gathered rows into an output that will not stay in cache.
// TensorFlow-free.
//
// A gather reads rows at random and writes its output once, in order. With
// ordinary stores every output line is first read (for ownership), and the
// random row loads wait on memory. Where the active ISA allows
// (cpu_features.h), rows go out with non-temporal stores, which skip that
// read, while the row kRowPrefetch ahead is prefetched: 64-byte stores with
// AVX-512 for rows of a multiple of 64 bytes, 32-byte stores with AVX2 for
// rows of a multiple of 32. Both halves are needed: non-temporal stores
// without the prefetch are slower than plain copies, and the prefetch alone
// gains nothing.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_ROW_COPY_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_ROW_COPY_H_

#include <cstdint>

#include "cpu/cpu_features.h"
#include "cpu/thresholds.h"

#if defined(TF_SCATTER_OPS_AVX2)
#include <immintrin.h>
#endif

namespace tf_scatter_ops {

// Copies `bytes` from src to dst with non-temporal stores; the stores are
// weakly ordered: call StreamFence before another thread reads.
using StreamRowFn = void (*)(void* dst, const void* src, int64_t bytes);

inline void PrefetchRow(const void* row, int64_t bytes) {
  const char* p = static_cast<const char*>(row);
  const int64_t n = bytes < kRowPrefetchBytes ? bytes : kRowPrefetchBytes;
  for (int64_t k = 0; k < n; k += 64) __builtin_prefetch(p + k, 0, 3);
}

#if defined(TF_SCATTER_OPS_AVX2)

// dst 64-byte aligned, bytes a multiple of 64.
__attribute__((target(TF_SCATTER_OPS_AVX512))) inline void StreamRow64(
    void* dst, const void* src, int64_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  for (int64_t k = 0; k < bytes; k += 64) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + k), _mm512_loadu_si512(s + k));
  }
}

// dst 32-byte aligned, bytes a multiple of 32.
__attribute__((target(TF_SCATTER_OPS_AVX2))) inline void StreamRow32(
    void* dst, const void* src, int64_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  for (int64_t k = 0; k < bytes; k += 32) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + k),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + k)));
  }
}

// The streaming copy for rows of `row_bytes` into `out` (`total_bytes` in
// all) under the active ISA, or nullptr for ordinary copies.
inline StreamRowFn PickStreamRow(const void* out, int64_t row_bytes, int64_t total_bytes) {
  // Outputs that stay in cache keep ordinary stores, so that the op that
  // reads them next finds them there.
  if (total_bytes < kCacheBytes) return nullptr;
  const uintptr_t address = reinterpret_cast<uintptr_t>(out);
  const Isa isa = ActiveIsa();
  if (isa >= Isa::kAvx512 && row_bytes % 64 == 0 && address % 64 == 0) return StreamRow64;
  if (isa >= Isa::kAvx2 && row_bytes % 32 == 0 && address % 32 == 0) return StreamRow32;
  return nullptr;
}

inline void StreamFence() { _mm_sfence(); }

#else  // no streaming: PickStreamRow says so and StreamFence is never needed

inline StreamRowFn PickStreamRow(const void*, int64_t, int64_t) { return nullptr; }
inline void StreamFence() {}

#endif

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_ROW_COPY_H_
