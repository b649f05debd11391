// The value and index dtypes of the family, written once, by TensorFlow's
// dtype names. Each list is an X-macro: LIST(X, m) expands X(m, name) for
// each dtype, so that every user maps the names its own way:
//
//   op_table.h                each op's list, by the name after TFSO_
//   cc/ops/scatter_ops.cc     the ops' type attrs ("T: {bfloat16, half, ...}")
//   register_kernels.h        a CPU and a GPU kernel per dtype, through
//                             TensorFlow's TF_CALL_<name>(m)
//   library_info.cc           the names, for tf_scatter_ops/_base/table.py
//   cuda/scatter_gpu.h        the CUDA core's instantiations, on its own
//                             element types (gpu::dtype_<name>)
#ifndef TF_SCATTER_OPS_CC_KERNELS_COMMON_DTYPES_H_
#define TF_SCATTER_OPS_CC_KERNELS_COMMON_DTYPES_H_

#define TFSO_FLOAT_DTYPES(X, m) X(m, bfloat16) X(m, half) X(m, float) X(m, double)
#define TFSO_COMPLEX_DTYPES(X, m) X(m, complex64) X(m, complex128)
#define TFSO_INTEGER_DTYPES(X, m)                                      \
  X(m, int8) X(m, int16) X(m, int32) X(m, int64) X(m, uint8) X(m, uint16) \
  X(m, uint32) X(m, uint64)

// tensor_scatter_nd_min / _max: the real numbers.
#define TFSO_MINMAX_DTYPES(X, m) TFSO_FLOAT_DTYPES(X, m) TFSO_INTEGER_DTYPES(X, m)
// tensor_scatter_nd_add / _sub: every number.
#define TFSO_ADD_DTYPES(X, m) \
  TFSO_FLOAT_DTYPES(X, m) TFSO_COMPLEX_DTYPES(X, m) TFSO_INTEGER_DTYPES(X, m)
// scatter_nd, tensor_scatter_nd_update and gather_nd on a GPU: numbers and
// bool (scatter_nd ORs bools).
#define TFSO_GPU_ALL_DTYPES(X, m) TFSO_ADD_DTYPES(X, m) X(m, bool)
// ... and on the CPU strings too (no GPU kernel for strings, as in
// TensorFlow).
#define TFSO_ALL_DTYPES(X, m) TFSO_GPU_ALL_DTYPES(X, m) X(m, string)

// Index dtypes of every op.
#define TFSO_INDEX_DTYPES(X, m) X(m, int16) X(m, int32) X(m, int64)

#endif  // TF_SCATTER_OPS_CC_KERNELS_COMMON_DTYPES_H_
