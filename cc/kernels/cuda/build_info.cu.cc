// What the CUDA core was built with (scatter_gpu.h, BuildInfo): nvcc lists
// the architectures it compiles for in __CUDA_ARCH_LIST__ (750 for sm_75),
// each of them as SASS (tools/cuda_archs.sh); the build names the one that
// also goes in as PTX. The runtime is the one this library's calls reach
// (cudaRuntimeGetVersion needs no driver): the static cudart linked inside
// the library, unless a build let the linker bind the calls elsewhere
// (TensorFlow's own runtime), which tests/helpers/library_link.py checks.
#include <cuda_runtime_api.h>

#include "cuda/scatter_gpu.h"

#if !defined(__CUDA_ARCH_LIST__) || !defined(TFSO_CUDA_PTX)
#error "build with nvcc and the flags of tools/cuda_archs.sh"
#endif

namespace tf_scatter_ops {
namespace gpu {

BuildInfo Built() {
  static constexpr int kList[] = {__CUDA_ARCH_LIST__};
  constexpr int kCount = sizeof(kList) / sizeof(kList[0]);
  static const int* sass = [] {
    int* s = new int[kCount];
    for (int i = 0; i < kCount; ++i) s[i] = kList[i] / 10;
    return s;
  }();
  int linked = 0;
  if (cudaRuntimeGetVersion(&linked) != cudaSuccess) linked = CUDART_VERSION;
  return {linked, sass, kCount, TFSO_CUDA_PTX};
}

}  // namespace gpu
}  // namespace tf_scatter_ops
