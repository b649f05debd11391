// What the output of a scatter holds before the updates are applied; shared
// by the CPU and CUDA cores. TensorFlow-free.
#ifndef TF_SCATTER_OPS_CC_KERNELS_COMMON_INIT_MODE_H_
#define TF_SCATTER_OPS_CC_KERNELS_COMMON_INIT_MODE_H_

namespace tf_scatter_ops {

enum class Init {
  kInPlace,  // output already holds the tensor (forwarded buffer)
  kZero,     // scatter_nd: zeros
  kCopy,     // tensor_scatter_*: a copy of `init`
};

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_COMMON_INIT_MODE_H_
