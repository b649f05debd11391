// The one definition of each reduction, shared by the CPU kernels and the
// CUDA core. TensorFlow-free: T is any element type the caller instantiates.
//
// Every reducer applies one update to one output element: out = op(out, upd).
// Updates are applied in index order, so these definitions fix the result
// bit for bit (last write wins for Assign, index-order sums for Add/Sub).
#ifndef TF_SCATTER_OPS_CC_KERNELS_COMMON_REDUCERS_H_
#define TF_SCATTER_OPS_CC_KERNELS_COMMON_REDUCERS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "common/fp_ops.h"  // TFSO_HD, fp::Infinity

namespace tf_scatter_ops {

// Signed integer overflow is undefined behaviour in C++; TensorFlow wraps.
// Doing the arithmetic in the unsigned type gives the same wrapped bits
// without the undefined behaviour (and keeps UBSan quiet).
template <typename T>
struct Wrapping {
  static constexpr bool value = std::is_integral<T>::value &&
                                std::is_signed<T>::value &&
                                !std::is_same<T, bool>::value;
};

// Strings (tstring) have append() but no operator+=; scatter_nd concatenates.
template <typename T, typename = void>
struct HasAppend : std::false_type {};
template <typename T>
struct HasAppend<T, std::void_t<decltype(std::declval<T&>().append(
                        std::declval<const T&>()))>> : std::true_type {};

struct AssignOp {
  template <typename T>
  static TFSO_HD void Apply(T& out, const T& upd) { out = upd; }
};

struct AddOp {
  template <typename T>
  static TFSO_HD void Apply(T& out, const T& upd) {
    if constexpr (std::is_same<T, bool>::value) {
      out = out || upd;  // scatter_nd on bool: duplicates OR together
    } else if constexpr (Wrapping<T>::value) {
      using U = typename std::make_unsigned<T>::type;
      out = static_cast<T>(static_cast<U>(out) + static_cast<U>(upd));
    } else if constexpr (std::is_arithmetic<T>::value) {
      out = static_cast<T>(out + upd);
    } else if constexpr (HasAppend<T>::value) {
      out.append(upd);  // scatter_nd on strings: duplicates concatenate
    } else {
      out += upd;  // Eigen half/bfloat16, std::complex
    }
  }
};

struct SubOp {
  template <typename T>
  static TFSO_HD void Apply(T& out, const T& upd) {
    if constexpr (Wrapping<T>::value) {
      using U = typename std::make_unsigned<T>::type;
      out = static_cast<T>(static_cast<U>(out) - static_cast<U>(upd));
    } else if constexpr (std::is_arithmetic<T>::value) {
      out = static_cast<T>(out - upd);
    } else {
      out -= upd;
    }
  }
};

// min/max keep TensorFlow's (and std::min/std::max's) NaN behaviour: a NaN
// already in the output stays, a NaN update never replaces a number.
struct MinOp {
  template <typename T>
  static TFSO_HD void Apply(T& out, const T& upd) {
    out = upd < out ? upd : out;  // a select, not a branch: minss on floats
  }
};

struct MaxOp {
  template <typename T>
  static TFSO_HD void Apply(T& out, const T& upd) {
    out = out < upd ? upd : out;
  }
};

struct MulOp {
  template <typename T>
  static TFSO_HD void Apply(T& out, const T& upd) {
    if constexpr (Wrapping<T>::value) {
      using U = typename std::make_unsigned<T>::type;
      out = static_cast<T>(static_cast<U>(out) * static_cast<U>(upd));
    } else if constexpr (std::is_arithmetic<T>::value) {
      out = static_cast<T>(out * upd);
    } else {
      out *= upd;  // Eigen half/bfloat16, std::complex
    }
  }
};

// tensor_scatter_nd_div: the output divided by each update in index order
// (floating dtypes only: an integer division by zero would trap).
struct DivOp {
  template <typename T>
  static TFSO_HD void Apply(T& out, const T& upd) {
    if constexpr (std::is_arithmetic<T>::value) {
      static_assert(!std::is_integral<T>::value, "DivOp divides floating types only");
      out = static_cast<T>(out / upd);
    } else {
      out /= upd;  // Eigen half/bfloat16, the CUDA core's 16-bit types
    }
  }
};

// The segment reductions' min/max keep TensorFlow's segment kernels' NaN
// behaviour, which differs from its scatters': a NaN update replaces the
// output, and the next number replaces a NaN output (measured on TF 2.21's
// CPU kernels for slices of 1 to 64 elements).
struct SegmentMinOp {
  template <typename T>
  static TFSO_HD void Apply(T& out, const T& upd) {
    out = out < upd ? out : upd;
  }
};

struct SegmentMaxOp {
  template <typename T>
  static TFSO_HD void Apply(T& out, const T& upd) {
    out = upd < out ? out : upd;
  }
};

// The segment mean and sqrt_n: a sum, then Finalize divides each segment's
// result by its row count n (mean: out / n in the output's type, integer
// division for integers; sqrt_n: out / sqrt(n)), TensorFlow's formulas.
struct MeanOp : AddOp {};
struct SqrtNOp : AddOp {};

// by_reciprocal: times 1 / n (or 1 / sqrt(n)) instead, as TensorFlow's
// sparse_segment_* kernels scale a segment of at most 9 rows.
template <typename Op, typename T>
TFSO_HD void Finalize(T& out, int64_t n, bool by_reciprocal = false) {
  if constexpr (std::is_same<Op, MeanOp>::value || std::is_same<Op, SqrtNOp>::value) {
    T d = static_cast<T>(n);
    if constexpr (std::is_same<Op, SqrtNOp>::value) {
      using std::sqrt;
      d = sqrt(d);
    }
    out = by_reciprocal ? out * (static_cast<T>(1) / d) : out / d;
  }
}

// What an output element starts from, before any update: three facts, each
// written once here (T: the element type, or the compute type of a float
// kernel; Python's wrappers state the first once more, for the forms they
// compose from TensorFlow's ops).
//
//   Identity<Op, T>()              the reduction's identity: op(identity, u)
//                                  is u for every update u. 0 for the sums
//                                  (AddOp, MeanOp, SqrtNOp), 1 for MulOp, +inf
//                                  for a min and -inf for a max of a floating
//                                  type, an integer's highest and lowest value.
//                                  The group-wise functions' maximum starts
//                                  there.
//   UnsortedSegmentEmpty<Op, T>()  what TensorFlow's unsorted_segment_* (and
//                                  our *_with_argmax / _argmin segments) give
//                                  an empty segment: the identity, but the
//                                  finite extremes for a floating min or max
//                                  (lowest(): -FLT_MAX for an empty segment of
//                                  unsorted_segment_max on float32, not -inf).
//   SortedSegmentEmpty<Op, T>()    what TensorFlow's segment_* and
//                                  sparse_segment_* give an empty segment (a
//                                  gap in the ids): 1 for prod, 0 for every
//                                  other reduction, min and max included.
//
// The last two are host-only (the glue fills the output before a core runs).
template <typename Op>
struct IsMinReduction
    : std::integral_constant<bool, std::is_same<Op, MinOp>::value ||
                                       std::is_same<Op, SegmentMinOp>::value> {};
template <typename Op>
struct IsMaxReduction
    : std::integral_constant<bool, std::is_same<Op, MaxOp>::value ||
                                       std::is_same<Op, SegmentMaxOp>::value> {};

template <typename Op, typename T>
TFSO_HD T Identity() {
  constexpr bool kMin = IsMinReduction<Op>::value, kMax = IsMaxReduction<Op>::value;
  if constexpr (kMin || kMax) {
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
      return kMin ? fp::Infinity<T>() : -fp::Infinity<T>();  // the same bits on a device
    } else if constexpr (std::numeric_limits<T>::has_infinity) {  // Eigen's 16-bit floats
      return kMin ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
    } else {
      return kMin ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
    }
  } else if constexpr (std::is_same<Op, MulOp>::value) {
    return T(1);
  } else {
    static_assert(std::is_same<Op, AddOp>::value || std::is_same<Op, MeanOp>::value ||
                      std::is_same<Op, SqrtNOp>::value,
                  "no identity: Assign, Sub and Div do not start from one");
    return T(0);
  }
}

template <typename Op, typename T>
inline T UnsortedSegmentEmpty() {
  if constexpr (IsMinReduction<Op>::value) {
    return std::numeric_limits<T>::max();
  } else if constexpr (IsMaxReduction<Op>::value) {
    return std::numeric_limits<T>::lowest();
  } else {
    return Identity<Op, T>();
  }
}

template <typename Op, typename T>
inline T SortedSegmentEmpty() {
  return std::is_same<Op, MulOp>::value ? T(1) : T(0);
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_COMMON_REDUCERS_H_
