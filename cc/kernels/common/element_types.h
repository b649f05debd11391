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

#include "common/fp_ops.h"
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
TFSO_HD bool operator==(F16 a, F16 b) { return ToFloat(a) == ToFloat(b); }
TFSO_HD bool operator!=(F16 a, F16 b) { return ToFloat(a) != ToFloat(b); }
TFSO_HD BF16& operator+=(BF16& a, BF16 b) { return a = ToBF16(ToFloat(a) + ToFloat(b)); }
TFSO_HD BF16& operator-=(BF16& a, BF16 b) { return a = ToBF16(ToFloat(a) - ToFloat(b)); }
TFSO_HD BF16& operator*=(BF16& a, BF16 b) { return a = ToBF16(ToFloat(a) * ToFloat(b)); }
TFSO_HD BF16& operator/=(BF16& a, BF16 b) { return a = ToBF16(ToFloat(a) / ToFloat(b)); }
TFSO_HD bool operator<(BF16 a, BF16 b) { return ToFloat(a) < ToFloat(b); }
TFSO_HD bool operator==(BF16 a, BF16 b) { return ToFloat(a) == ToFloat(b); }
TFSO_HD bool operator!=(BF16 a, BF16 b) { return ToFloat(a) != ToFloat(b); }

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

// The product of std::complex as the CPU kernels compute it (g++, C99's
// Annex G, which libstdc++'s operator*= follows): x = ac - bd, y = ad + bc,
// each product rounded on its own; where both come out NaN, libgcc's
// __mulsc3 / __muldc3 recover the infinities (an infinite factor "boxed" to
// +-1 and its partner's NaNs to 0, or, after an overflow, every NaN to 0)
// and return inf * (the product again). Written from the standard's rules,
// and checked against std::complex (tests/cc/new_ops_cpu_ref.cc).
template <typename R>
TFSO_HD Complex<R>& operator*=(Complex<R>& z, Complex<R> w) {
  using fp::Add;
  using fp::CopySign;
  using fp::IsInf;
  using fp::IsNan;
  using fp::Mul;
  using fp::Sub;
  R a = z.re, b = z.im, c = w.re, d = w.im;
  const R ac = Mul(a, c), bd = Mul(b, d), ad = Mul(a, d), bc = Mul(b, c);
  R x = Sub(ac, bd), y = Add(ad, bc);
  if (IsNan(x) && IsNan(y)) {
    bool recalc = false;
    if (IsInf(a) || IsInf(b)) {
      a = CopySign(IsInf(a) ? R(1) : R(0), a);
      b = CopySign(IsInf(b) ? R(1) : R(0), b);
      if (IsNan(c)) c = CopySign(R(0), c);
      if (IsNan(d)) d = CopySign(R(0), d);
      recalc = true;
    }
    if (IsInf(c) || IsInf(d)) {
      c = CopySign(IsInf(c) ? R(1) : R(0), c);
      d = CopySign(IsInf(d) ? R(1) : R(0), d);
      if (IsNan(a)) a = CopySign(R(0), a);
      if (IsNan(b)) b = CopySign(R(0), b);
      recalc = true;
    }
    if (!recalc && (IsInf(ac) || IsInf(bd) || IsInf(ad) || IsInf(bc))) {
      if (IsNan(a)) a = CopySign(R(0), a);
      if (IsNan(b)) b = CopySign(R(0), b);
      if (IsNan(c)) c = CopySign(R(0), c);
      if (IsNan(d)) d = CopySign(R(0), d);
      recalc = true;
    }
    if (recalc) {
      const R inf = fp::Infinity<R>();
      x = Mul(inf, Sub(Mul(a, c), Mul(b, d)));
      y = Mul(inf, Add(Mul(a, d), Mul(b, c)));
    }
  }
  z.re = x;
  z.im = y;
  return z;
}

// A complex segment mean's division, z / complex(n) for a row count n >= 1,
// as the CPU kernels compute it: std::complex's operator/ is libgcc's
// __divsc3 / __divdc3 (GCC 12 and later, whose results these are), with
// the divisor's imaginary part +0.
//   complex64: in double, x = (ac + bd) / (c^2 + d^2), y = (bc - ad) / (c^2
//     + d^2), each rounded to float (c = float(n), d = +0);
//   complex128: Smith's quotient, which for d = +0 is x = (a + 0 * (b / c)) / c,
//     y = (b - 0 * (a / c)) / c (so a zero's sign and a NaN from an infinite
//     partner as libgcc gives them; its scaling of tiny operands by powers
//     of two does not change these quotients).
// Where both parts come out NaN, an infinite numerator is boxed to +-1 (its
// NaN part to +-0) and x = inf * (a'c + b'd), y = inf * (b'c - a'd).
TFSO_HD Complex<float> DivideByCount(Complex<float> z, int64_t n) {
  using fp::Add;
  using fp::Mul;
  using fp::Sub;
  const float cf = static_cast<float>(n), df = 0.0f;
  const double a = z.re, b = z.im, c = cf, d = df;
  const double denom = Add(Mul(c, c), Mul(d, d));
  float x = static_cast<float>(fp::Div(Add(Mul(a, c), Mul(b, d)), denom));
  float y = static_cast<float>(fp::Div(Sub(Mul(b, c), Mul(a, d)), denom));
  if (fp::IsNan(x) && fp::IsNan(y) && (fp::IsInf(z.re) || fp::IsInf(z.im))) {
    const float ab = fp::CopySign(fp::IsInf(z.re) ? 1.0f : 0.0f, z.re);
    const float bb = fp::CopySign(fp::IsInf(z.im) ? 1.0f : 0.0f, z.im);
    const float inf = fp::Infinity<float>();
    x = Mul(inf, Add(Mul(ab, cf), Mul(bb, df)));
    y = Mul(inf, Sub(Mul(bb, cf), Mul(ab, df)));
  }
  return {x, y};
}

TFSO_HD Complex<double> DivideByCount(Complex<double> z, int64_t n) {
  using fp::Add;
  using fp::Div;
  using fp::Mul;
  using fp::Sub;
  const double a = z.re, b = z.im, c = static_cast<double>(n), d = 0.0;
  double x = Div(Add(a, Mul(d, Div(b, c))), c);
  double y = Div(Sub(b, Mul(d, Div(a, c))), c);
  if (fp::IsNan(x) && fp::IsNan(y) && (fp::IsInf(a) || fp::IsInf(b))) {
    const double ab = fp::CopySign(fp::IsInf(a) ? 1.0 : 0.0, a);
    const double bb = fp::CopySign(fp::IsInf(b) ? 1.0 : 0.0, b);
    const double inf = fp::Infinity<double>();
    x = Mul(inf, Add(Mul(ab, c), Mul(bb, d)));
    y = Mul(inf, Sub(Mul(bb, c), Mul(ab, d)));
  }
  return {x, y};
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_COMMON_ELEMENT_TYPES_H_
