// Which instruction set the few vectorised loops use. TensorFlow-free.
//
// Each such loop has a portable build and builds for AVX2 and AVX-512,
// picked at run time: the best the CPU has, capped by the environment
// variable TF_SCATTER_OPS_ISA=portable|avx2|avx512 (read once; a value above
// what the CPU has is capped at it) so that any machine can run and measure
// each path it supports; tests also set it with SetIsa.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_CPU_FEATURES_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_CPU_FEATURES_H_

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace tf_scatter_ops {

enum class Isa { kPortable = 0, kAvx2 = 1, kAvx512 = 2 };

inline const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx2: return "avx2";
    default: return "portable";
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// Functions built with __attribute__((target(...))) of these run only where
// ActiveIsa() is at least that ISA.
#define TF_SCATTER_OPS_AVX2 "avx2,fma,bmi,bmi2"
#define TF_SCATTER_OPS_AVX512 "avx2,fma,bmi,bmi2,avx512f,avx512dq,avx512vl,avx512bw"

// The best the CPU has.
inline Isa CpuIsa() {
  static const Isa isa = [] {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw")) {
      return Isa::kAvx512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("bmi2")) {
      return Isa::kAvx2;
    }
    return Isa::kPortable;
  }();
  return isa;
}
#else
inline Isa CpuIsa() { return Isa::kPortable; }
#endif

namespace internal {
inline Isa Capped(Isa isa) { return isa < CpuIsa() ? isa : CpuIsa(); }

inline Isa IsaFromEnvironment() {
  const char* v = std::getenv("TF_SCATTER_OPS_ISA");
  if (v == nullptr || *v == '\0') return CpuIsa();
  if (std::strcmp(v, "portable") == 0) return Isa::kPortable;
  if (std::strcmp(v, "avx2") == 0) return Capped(Isa::kAvx2);
  if (std::strcmp(v, "avx512") == 0) return Capped(Isa::kAvx512);
  return CpuIsa();  // unknown: the Python loader rejects it with a clear error
}

inline std::atomic<int>& ActiveIsaSlot() {
  static std::atomic<int> slot{static_cast<int>(IsaFromEnvironment())};
  return slot;
}
}  // namespace internal

// What the vectorised loops use now.
inline Isa ActiveIsa() {
  return static_cast<Isa>(internal::ActiveIsaSlot().load(std::memory_order_relaxed));
}

// Picks the ISA for the calls that follow (capped at CpuIsa()); for tests.
inline void SetIsa(Isa isa) {
  internal::ActiveIsaSlot().store(static_cast<int>(internal::Capped(isa)));
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_CPU_FEATURES_H_
