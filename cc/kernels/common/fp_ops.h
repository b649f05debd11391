// Floating-point operations that give the same bits on the host and on a
// device, for the arithmetic that the CPU and CUDA cores share (group-wise
// functions, complex products and means). TensorFlow-free, device-free.
//
// nvcc contracts a * b + c into one fused multiply-add (one rounding instead
// of two) wherever it sees one in device code; g++ does not on x86-64 (the
// library is built with --std=c++17, whose default is -ffp-contract=off, and
// for a baseline ISA without FMA). Each operation here is one IEEE operation
// rounded to nearest: on a device the CUDA intrinsic that is never
// contracted (__fmul_rn, ...), on the host the operator itself. Division and
// square root are IEEE on both (nvcc's defaults, -prec-div and -prec-sqrt,
// which --use_fast_math would turn off: the core is never built with it).
#ifndef TF_SCATTER_OPS_CC_KERNELS_COMMON_FP_OPS_H_
#define TF_SCATTER_OPS_CC_KERNELS_COMMON_FP_OPS_H_

#include <cmath>
#include <cstdint>
#include <cstring>

// Inline on the host and on a device under nvcc (every core header uses it).
#if defined(__CUDACC__)
#define TFSO_HD __host__ __device__ __forceinline__
#else
#define TFSO_HD inline
#endif

namespace tf_scatter_ops {
namespace fp {

TFSO_HD float Add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
TFSO_HD double Add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
TFSO_HD float Sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
TFSO_HD double Sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
TFSO_HD float Mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
TFSO_HD double Mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
TFSO_HD float Div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
TFSO_HD double Div(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
TFSO_HD float Sqrt(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}
TFSO_HD double Sqrt(double a) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

// The bits of a float or double, and back.
template <typename C>
struct BitsOf;
template <>
struct BitsOf<float> {
  using type = uint32_t;
  static constexpr uint32_t kSign = 0x80000000u;
  static constexpr uint32_t kInf = 0x7f800000u;
};
template <>
struct BitsOf<double> {
  using type = uint64_t;
  static constexpr uint64_t kSign = 0x8000000000000000ull;
  static constexpr uint64_t kInf = 0x7ff0000000000000ull;
};
template <typename C>
TFSO_HD typename BitsOf<C>::type ToBits(C x) {
  typename BitsOf<C>::type b;
  memcpy(&b, &x, sizeof(b));
  return b;
}
template <typename C>
TFSO_HD C FromBits(typename BitsOf<C>::type b) {
  C x;
  memcpy(&x, &b, sizeof(x));
  return x;
}

// Classification from the bits (no library call on either side).
template <typename C>
TFSO_HD bool IsNan(C x) {
  return (ToBits(x) & ~BitsOf<C>::kSign) > BitsOf<C>::kInf;
}
template <typename C>
TFSO_HD bool IsInf(C x) {
  return (ToBits(x) & ~BitsOf<C>::kSign) == BitsOf<C>::kInf;
}
template <typename C>
TFSO_HD bool IsFinite(C x) {
  return (ToBits(x) & ~BitsOf<C>::kSign) < BitsOf<C>::kInf;
}
// |magnitude| with the sign bit of `sign` (a NaN's too), as std::copysign.
template <typename C>
TFSO_HD C CopySign(C magnitude, C sign) {
  return FromBits<C>((ToBits(magnitude) & ~BitsOf<C>::kSign) |
                     (ToBits(sign) & BitsOf<C>::kSign));
}
template <typename C>
TFSO_HD C Infinity() {
  return FromBits<C>(BitsOf<C>::kInf);
}
template <typename C>
TFSO_HD C QuietNan() {  // numeric_limits<C>::quiet_NaN()'s bits
  return FromBits<C>(BitsOf<C>::kInf | (BitsOf<C>::kInf >> 1));
}

}  // namespace fp
}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_COMMON_FP_OPS_H_
