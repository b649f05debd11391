// What the CPU we run on can do, for the few loops that pick an instruction
// set at run time. TensorFlow-free.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_FEATURES_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_FEATURES_H_

#if defined(__x86_64__) && defined(__GNUC__)
// Functions built with __attribute__((target(TF_SCATTER_OPS_AVX512))) run
// only where HasAvx512() says so.
#define TF_SCATTER_OPS_AVX512 "avx512f,avx512dq,avx512vl,avx512bw"

namespace tf_scatter_ops {
inline bool HasAvx512() {
  static const bool has =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  return has;
}
}  // namespace tf_scatter_ops
#endif

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_FEATURES_H_
