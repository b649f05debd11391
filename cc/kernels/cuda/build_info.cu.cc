// What the CUDA core was built with (scatter_gpu.h, BuildInfo). The build
// passes the architectures it compiles for (tools/cuda_archs.sh).
#include <cuda_runtime_api.h>

#include "cuda/scatter_gpu.h"

#if !defined(TFSO_CUDA_SASS) || !defined(TFSO_CUDA_PTX)
#error "build with the flags of tools/cuda_archs.sh (-DTFSO_CUDA_SASS=..., -DTFSO_CUDA_PTX=...)"
#endif

namespace tf_scatter_ops {
namespace gpu {

BuildInfo Built() {
  static constexpr int kSass[] = {TFSO_CUDA_SASS};
  return {CUDART_VERSION, kSass, static_cast<int>(sizeof(kSass) / sizeof(kSass[0])),
          TFSO_CUDA_PTX};
}

}  // namespace gpu
}  // namespace tf_scatter_ops
