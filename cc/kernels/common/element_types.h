// Element types of the TensorFlow-free cores.
//
// Assign and gather only move bits, so they run on an unsigned type of the
// element's width (one instantiation per width). The CUDA core cannot see
// Eigen's half/bfloat16 or std::complex, so it works on layout-compatible
// stand-ins whose arithmetic matches Eigen's: convert to float, operate,
// round to nearest even.
#ifndef TF_SCATTER_OPS_CC_KERNELS_COMMON_ELEMENT_TYPES_H_
#define TF_SCATTER_OPS_CC_KERNELS_COMMON_ELEMENT_TYPES_H_

#include <cstdint>
#include <cstring>

#include "common/reducers.h"

namespace tf_scatter_ops {

template <int kBytes> struct Bits;
template <> struct Bits<1> { using type = uint8_t; };
template <> struct Bits<2> { using type = uint16_t; };
template <> struct Bits<4> { using type = uint32_t; };
template <> struct Bits<8> { using type = uint64_t; };
struct Bits128 { uint64_t lo, hi; };
template <> struct Bits<16> { using type = Bits128; };

template <typename To, typename From>
TFSO_HD To BitCast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "BitCast needs equal sizes");
  To to;
  memcpy(&to, &from, sizeof(To));
  return to;
}

// IEEE binary16, bit-compatible with Eigen::half.
struct F16 {
  uint16_t bits;
};
// bfloat16, bit-compatible with Eigen::bfloat16.
struct BF16 {
  uint16_t bits;
};
// complex64 / complex128, layout-compatible with std::complex.
template <typename R>
struct Complex {
  R re, im;
};

TFSO_HD float ToFloat(F16 h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  const uint32_t exp = (h.bits >> 10) & 0x1fu;
  uint32_t man = h.bits & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);  // inf / nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;  // +-0
  } else {  // subnormal: normalise
    int e = 113;
    while ((man & 0x400u) == 0) {
      man <<= 1;
      --e;
    }
    bits = sign | (static_cast<uint32_t>(e) << 23) | ((man & 0x3ffu) << 13);
  }
  return BitCast<float>(bits);
}

TFSO_HD F16 ToF16(float f) {
  const uint32_t x = BitCast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan (keep nan quiet)
    return F16{static_cast<uint16_t>(sign | 0x7c00u |
                                     (abs > 0x7f800000u ? 0x200u : 0u))};
  }
  if (abs >= 0x477ff000u) return F16{static_cast<uint16_t>(sign | 0x7c00u)};
  if (abs < 0x38800000u) {  // result is subnormal or zero
    if (abs < 0x33000000u) return F16{sign};  // below half the smallest
    const uint32_t e = abs >> 23;
    const uint32_t man = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24
    uint32_t q = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return F16{static_cast<uint16_t>(sign | q)};
  }
  // Normal: rebias the exponent, round the 13 dropped bits to nearest even.
  uint32_t r = abs - 0x38000000u;
  r += 0xfffu + ((r >> 13) & 1u);
  return F16{static_cast<uint16_t>(sign | (r >> 13))};
}

TFSO_HD float ToFloat(BF16 b) {
  return BitCast<float>(static_cast<uint32_t>(b.bits) << 16);
}

TFSO_HD BF16 ToBF16(float f) {
  const uint32_t x = BitCast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {  // nan: Eigen's canonical quiet nan
    return BF16{static_cast<uint16_t>(((x >> 16) & 0x8000u) | 0x7fc0u)};
  }
  return BF16{static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16)};
}

TFSO_HD F16& operator+=(F16& a, F16 b) { return a = ToF16(ToFloat(a) + ToFloat(b)); }
TFSO_HD F16& operator-=(F16& a, F16 b) { return a = ToF16(ToFloat(a) - ToFloat(b)); }
TFSO_HD F16& operator*=(F16& a, F16 b) { return a = ToF16(ToFloat(a) * ToFloat(b)); }
TFSO_HD F16& operator/=(F16& a, F16 b) { return a = ToF16(ToFloat(a) / ToFloat(b)); }
TFSO_HD bool operator<(F16 a, F16 b) { return ToFloat(a) < ToFloat(b); }
TFSO_HD BF16& operator+=(BF16& a, BF16 b) { return a = ToBF16(ToFloat(a) + ToFloat(b)); }
TFSO_HD BF16& operator-=(BF16& a, BF16 b) { return a = ToBF16(ToFloat(a) - ToFloat(b)); }
TFSO_HD BF16& operator*=(BF16& a, BF16 b) { return a = ToBF16(ToFloat(a) * ToFloat(b)); }
TFSO_HD BF16& operator/=(BF16& a, BF16 b) { return a = ToBF16(ToFloat(a) / ToFloat(b)); }
TFSO_HD bool operator<(BF16 a, BF16 b) { return ToFloat(a) < ToFloat(b); }

template <typename R>
TFSO_HD Complex<R>& operator+=(Complex<R>& a, Complex<R> b) {
  a.re += b.re;
  a.im += b.im;
  return a;
}
template <typename R>
TFSO_HD Complex<R>& operator-=(Complex<R>& a, Complex<R> b) {
  a.re -= b.re;
  a.im -= b.im;
  return a;
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_COMMON_ELEMENT_TYPES_H_
