// Host stand-in for <cuda_runtime.h> (tests/cc/host_cuda/README.md): the
// runtime API, what device code sees (host_launch.h), and the C++ overloads
// the real header adds.
#ifndef TF_SCATTER_OPS_TESTS_CC_HOST_CUDA_CUDA_RUNTIME_H_
#define TF_SCATTER_OPS_TESTS_CC_HOST_CUDA_CUDA_RUNTIME_H_

#include "cuda_runtime_api.h"
#include "host_launch.h"

template <typename T>
cudaError_t cudaMalloc(T** ptr, size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(ptr), bytes);
}

#endif  // TF_SCATTER_OPS_TESTS_CC_HOST_CUDA_CUDA_RUNTIME_H_
