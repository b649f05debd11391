// Scratch memory for one call of a kernel core. TensorFlow-free, CUDA-free.
//
// TensorFlow backs it with allocate_temp on the op's device (so the op's
// allocator, its limits and its out-of-memory error apply); tests back it
// with new or cudaMalloc. Memory stays valid until the call (on a GPU: its
// work on the stream) has finished. Allocate returns nullptr when out of
// memory, and the core then returns without writing its output.
#ifndef TF_SCATTER_OPS_CC_KERNELS_COMMON_SCRATCH_H_
#define TF_SCATTER_OPS_CC_KERNELS_COMMON_SCRATCH_H_

#include <cstddef>

namespace tf_scatter_ops {

class Scratch {
 public:
  virtual void* Allocate(size_t bytes) = 0;

 protected:
  ~Scratch() = default;
};

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_COMMON_SCRATCH_H_
