// Kernel launches. nvcc builds `TFSO_LAUNCH(blocks, threads, stream, kernel)(args...)`
// as `kernel<<<blocks, threads, 0, stream>>>(args...)`; the host build of the
// core (TFSO_HOST_CUDA, tests/cc/host_cuda/) runs the same kernel's blocks on
// host threads (its name goes along for the stand-in's messages). The kernel
// comes last so that template arguments need no parentheses.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CUDA_LAUNCH_CUH_
#define TF_SCATTER_OPS_CC_KERNELS_CUDA_LAUNCH_CUH_

#ifdef TFSO_HOST_CUDA
#define TFSO_LAUNCH(blocks, threads, stream, ...) \
  ::tfso_host::Launch(blocks, threads, stream, &__VA_ARGS__, #__VA_ARGS__)
#else
#define TFSO_LAUNCH(blocks, threads, stream, ...) __VA_ARGS__<<<blocks, threads, 0, stream>>>
#endif

#endif  // TF_SCATTER_OPS_CC_KERNELS_CUDA_LAUNCH_CUH_
