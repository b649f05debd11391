// Host stand-in for CUB's version header (tests/cc/host_cuda/README.md): the
// version the stand-in's algorithms behave as (64-bit item counts, as CUB 2.5
// and newer), and the namespace macros (CUB_WRAPPED_NAMESPACE as in CUB).
#ifndef TF_SCATTER_OPS_TESTS_CC_HOST_CUDA_CUB_VERSION_CUH_
#define TF_SCATTER_OPS_TESTS_CC_HOST_CUDA_CUB_VERSION_CUH_

#define CUB_VERSION 200800

#ifdef CUB_WRAPPED_NAMESPACE
#define CUB_NS_QUALIFIER ::CUB_WRAPPED_NAMESPACE::cub
#define CUB_NAMESPACE_BEGIN \
  namespace CUB_WRAPPED_NAMESPACE {  \
  namespace cub {
#define CUB_NAMESPACE_END \
  }                       \
  }
#else
#define CUB_NS_QUALIFIER ::cub
#define CUB_NAMESPACE_BEGIN namespace cub {
#define CUB_NAMESPACE_END }
#endif

#endif  // TF_SCATTER_OPS_TESTS_CC_HOST_CUDA_CUB_VERSION_CUH_
