// The CPU kernels of the issue-46 ops for tests/cc/gpu_new_ops.cu
// (new_ops_cpu_ref.h): each maps the CUDA core's element types to the glue's
// (Eigen::half, Eigen::bfloat16, std::complex) and runs the CPU code the
// glue runs, serially (its results do not depend on its threads).
#include "new_ops_cpu_ref.h"
#include "cpu_types.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#include "common/arg_reducers.h"
#include "common/dtypes.h"
#include "common/element_types.h"
#include "common/groupwise.h"
#include "common/reducers.h"
#include "cpu/arg_scatter_cpu.h"
#include "cpu/groupwise_cpu.h"
#include "cpu/message_cpu.h"
#include "cpu/scatter_cpu.h"
#include "cpu/segment_cpu.h"
#include "cuda/scatter_gpu.h"

namespace tfso_new_ops {
namespace {

namespace tso = tf_scatter_ops;

using tfso_cpu_types::As;
using tfso_cpu_types::Cpu;
using tfso_cpu_types::HeapScratch;

// The CPU core's call for `ids` into [nslots, slice] (nslots: the product of
// ids.dims).
struct Prepared {
  std::vector<int64_t> strides;
  tso::CpuCall call;
  Prepared(const Ids& ids, int64_t slice) : strides(ids.depth) {
    int64_t stride = 1;
    for (int d = ids.depth - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= ids.dims[d];
    }
    call.form = {ids.n, ids.depth, stride, slice};
    call.rows = tso::MakeIndexRows<int64_t>(ids.values, ids.n, ids.depth, ids.dims,
                                            strides.data());
  }
};

// The first depth-1 id >= nslots from row `from` on (the glue's
// FirstSegmentIdOutOfRange), or -1.
int64_t FirstTooLarge(const Ids& ids, int64_t from) {
  for (int64_t i = std::max<int64_t>(from, 0); i < ids.n; ++i) {
    if (ids.values[i] >= ids.dims[0]) return i;
  }
  return -1;
}

// tf/groupwise_kernels.h's SegmentPasses without TensorFlow: the reductions
// on the CPU scatter core with every id read (CpuSegment), the first id out
// of range as the status (-1: OK).
template <typename C>
struct Passes {
  using Status = int64_t;
  using Holder = std::vector<C>;
  static bool IsOk(Status s) { return s < 0; }
  static Status Ok() { return -1; }

  const Ids& ids;
  int64_t n, nsegments, slice;
  bool ignore;

  int64_t size() const { return nsegments * slice; }

  Status Temp(int64_t count, Holder* h, C** data) const {
    h->resize(std::max<int64_t>(count, 1));
    *data = h->data();
    return Ok();
  }

  template <typename Op>
  Status Reduce(const C* x, tso::Init mode, C* out) const {
    const Prepared p(ids, slice);
    HeapScratch scratch;
    tso::ScatterCpu<C, Op>(p.call, /*ignore=*/true, x, nullptr, mode, out, tso::Parallel(),
                           scratch);
    return CheckIds();
  }

  template <typename Out, typename F>
  void Rows(Out* out, const F& f) const {
    tso::RowsFromSegments(ids.values, n, nsegments, slice, out, tso::Parallel(), f);
  }

  std::vector<int64_t> Counts() const {
    std::vector<int64_t> counts(nsegments, 0);
    for (int64_t i = 0; i < n; ++i) {
      if (ids.values[i] >= 0 && ids.values[i] < nsegments) ++counts[ids.values[i]];
    }
    return counts;
  }

  Status CheckIds() const { return ignore ? Ok() : FirstTooLarge(ids, 0); }
};

// The glue's AsCompute: values converted element-wise to C.
template <typename C, typename T>
std::vector<C> InCompute(const T* p, int64_t count) {
  std::vector<C> v(count);
  for (int64_t i = 0; i < count; ++i) v[i] = static_cast<C>(p[i]);
  return v;
}

}  // namespace

template <typename T, tf_scatter_ops::Groupwise kF>
int64_t GroupwiseForward(const Ids& ids, int64_t slice, bool ignore, int64_t ddof, const T* x,
                         T* y) {
  using E = Cpu<T>;
  using C = typename std::conditional<std::is_same<E, Eigen::half>::value ||
                                          std::is_same<E, Eigen::bfloat16>::value,
                                      float, E>::type;
  const Passes<C> p{ids, ids.n, ids.dims[0], slice, ignore};
  const std::vector<C> xc = InCompute<C>(As(x), ids.n * slice);
  return tso::GroupwiseForwardCpu<tso::GroupwiseFn<kF>, E, C>(p, xc.data(), ddof, As(y));
}

template <typename T, tf_scatter_ops::Groupwise kF>
int64_t GroupwiseBackward(const Ids& ids, int64_t slice, bool ignore, int64_t ddof, const T* x,
                          const T* y, const T* g, T* dx) {
  using E = Cpu<T>;
  using C = typename std::conditional<std::is_same<E, Eigen::half>::value ||
                                          std::is_same<E, Eigen::bfloat16>::value,
                                      float, E>::type;
  const Passes<C> p{ids, ids.n, ids.dims[0], slice, ignore};
  const int64_t out_rows = tso::GroupwiseFn<kF>::kPerSegment ? ids.dims[0] : ids.n;
  const std::vector<C> xc = InCompute<C>(As(x), ids.n * slice);
  const std::vector<C> yc = InCompute<C>(As(y), out_rows * slice);
  const std::vector<C> gc = InCompute<C>(As(g), out_rows * slice);
  return tso::GroupwiseBackwardCpu<tso::GroupwiseFn<kF>, E, C>(p, xc.data(), yc.data(),
                                                               gc.data(), ddof, As(dx));
}

template <typename T, typename Op>
T ArgSegmentEmpty() {
  using E = Cpu<T>;
  using Segment = typename std::conditional<std::is_same<Op, tso::ArgMaxOp>::value,
                                            tso::SegmentMaxOp, tso::SegmentMinOp>::type;
  const E empty = tso::UnsortedSegmentEmpty<Segment, E>();
  T t;
  std::memcpy(&t, &empty, sizeof(T));
  return t;
}

template <typename T, typename Op>
int64_t ArgScatter(const Ids& ids, int64_t slice, bool ignore, bool segment, const T* updates,
                   const T* init, T* out, int64_t* arg) {
  using E = Cpu<T>;
  const Prepared p(ids, slice);
  const int64_t size = p.call.form.nslots * slice;
  if (segment) {
    const T identity = ArgSegmentEmpty<T, Op>();
    std::fill(out, out + size, identity);
  } else {
    std::copy(As(init), As(init) + size, As(out));
  }
  std::fill(arg, arg + size, int64_t{-1});
  HeapScratch scratch;
  const int64_t bad = tso::ArgScatterCpu<E, Op>(p.call, ignore || segment, /*seeded=*/!segment,
                                                As(updates), As(out), arg, tso::Parallel(),
                                                scratch);
  if (bad < 0 || ignore) return -1;
  return segment ? FirstTooLarge(ids, bad) : bad;
}

template <typename T>
int64_t UnsortedProd(const Ids& ids, int64_t slice, bool ignore, const T* data, T* out) {
  using E = Cpu<T>;
  const Prepared p(ids, slice);
  std::fill(As(out), As(out) + p.call.form.nslots * slice, E(1));
  HeapScratch scratch;
  tso::ScatterCpu<E, tso::MulOp>(p.call, /*ignore=*/true, As(data), nullptr, tso::Init::kInPlace,
                                 As(out), tso::Parallel(), scratch);
  return ignore ? -1 : FirstTooLarge(ids, 0);
}

template <typename T, typename Op>
void SortedSegment(const int64_t* offsets, int64_t nsegments, int64_t slice, const T* data,
                   T gap, T* out) {
  tso::Runs runs;
  runs.first.clear();
  for (int64_t s = 0; s < nsegments; ++s) {
    if (offsets[s] < offsets[s + 1]) {
      runs.first.push_back(offsets[s]);
      runs.segment.push_back(s);
    }
  }
  runs.first.push_back(offsets[nsegments]);
  using E = Cpu<T>;
  tso::SortedSegmentCpu<E, Op, tso::Order::kIndex, E, int64_t>(
      runs, As(data), static_cast<const int64_t*>(nullptr), slice, nsegments, *As(&gap), As(out),
      tso::Parallel());
}

template <typename T>
T GatherReduceEmpty(tso::EdgeReduce reduce) {
  using E = Cpu<T>;
  E empty = reduce == tso::EdgeReduce::kMax ? tso::UnsortedSegmentEmpty<tso::SegmentMaxOp, E>()
            : reduce == tso::EdgeReduce::kMin ? tso::UnsortedSegmentEmpty<tso::SegmentMinOp, E>()
                                              : E(0);
  T out;
  std::memcpy(&out, &empty, sizeof(T));
  return out;
}

template <typename T, tso::EdgeReduce kReduce>
int64_t GatherReduce(const int64_t* src, const int64_t* dst, int64_t nedges, int64_t rows,
                     int64_t num, int64_t heads, int64_t width, bool ignore, const T* params,
                     const T* weights, T* out, int64_t* positions) {
  if (!ignore) {
    const int64_t bad = tso::FirstBadEdge(src, dst, nedges, rows, num, /*negative_dst_ok=*/true);
    if (bad >= 0) return bad;
  }
  if (num * heads * width == 0) return -1;
  tso::EdgeGroups groups;
  tso::GroupEdges(src, dst, nedges, num,
                  [&](int64_t e) {
                    return dst[e] >= 0 && dst[e] < num && src[e] >= 0 && src[e] < rows;
                  },
                  &groups);
  const T empty = GatherReduceEmpty<T>(kReduce);
  HeapScratch scratch;
  tso::GatherReduceCpu<kReduce>(groups, As(params), As(weights), heads, width, *As(&empty),
                                As(out), positions, tso::Parallel(), scratch);
  return -1;
}

template <typename T, tso::EdgeOp kOp>
int64_t EdgeCombine(const int64_t* src, const int64_t* dst, int64_t nedges, int64_t arows,
                    int64_t brows, int64_t slice, int64_t width, int64_t out_slice, bool ignore,
                    const T* a, const T* b, T* out) {
  if (!ignore) {
    const int64_t bad = tso::FirstBadEdge(src, dst, nedges, arows, brows,
                                          /*negative_dst_ok=*/false);
    if (bad >= 0) return bad;
  }
  if (nedges * out_slice == 0) return -1;
  using E = Cpu<T>;
  // the glue's SegmentAccumulator: float for the 16-bit floats
  using A = typename std::conditional<std::is_same<E, Eigen::half>::value ||
                                          std::is_same<E, Eigen::bfloat16>::value,
                                      float, E>::type;
  const auto keep = [&](int64_t e) {
    return src[e] >= 0 && src[e] < arows && dst[e] >= 0 && dst[e] < brows;
  };
  tso::EdgeCombineCpu<kOp, E, A>(As(a), As(b), src, dst, nedges, slice, width, out_slice, keep,
                                 As(out), tso::Parallel());
  return -1;
}

namespace {

// std::complex as the CPU kernels use it (MulOp::Apply, Finalize<MeanOp>),
// not inlined into the loop, so that the compiler sees no constant divisor.
template <typename R>
__attribute__((noinline)) std::complex<R> CpuProduct(std::complex<R> a, std::complex<R> b) {
  tso::MulOp::Apply(a, b);
  return a;
}
template <typename R>
__attribute__((noinline)) std::complex<R> CpuMean(std::complex<R> sum, int64_t n) {
  tso::Finalize<tso::MeanOp>(sum, n);
  return sum;
}

template <typename R>
bool SameOrNans(R a, R b) {
  return std::memcmp(&a, &b, sizeof(R)) == 0 || (a != a && b != b);
}

template <typename R>
int CheckComplex(const char* name) {
  const R inf = std::numeric_limits<R>::infinity(), nan = std::numeric_limits<R>::quiet_NaN();
  const R big = std::numeric_limits<R>::max(), tiny = std::numeric_limits<R>::min();
  const R sub = std::numeric_limits<R>::denorm_min();
  const std::vector<R> special = {R(0), -R(0), R(1), R(-1), R(2.5), R(-3), inf, -inf, nan, -nan,
                                  big, -big, tiny, -tiny, sub, -sub, R(1e-30), R(3e30), R(0.1),
                                  R(7), std::sqrt(big), -std::sqrt(big) * 2};
  int bad = 0;
  const auto product = [&](R a, R b, R c, R d) {
    const std::complex<R> cpu = CpuProduct<R>({a, b}, {c, d});
    tso::Complex<R> gpu{a, b};
    tso::MulOp::Apply(gpu, tso::Complex<R>{c, d});
    if (!SameOrNans(cpu.real(), gpu.re) || !SameOrNans(cpu.imag(), gpu.im)) {
      if (++bad <= 5) {
        std::printf("FAIL %s (%a, %a) * (%a, %a): CPU (%a, %a), the core's (%a, %a)\n", name, a,
                    b, c, d, cpu.real(), cpu.imag(), gpu.re, gpu.im);
      }
    }
  };
  const auto mean = [&](R a, R b, int64_t n) {
    const std::complex<R> cpu = CpuMean<R>({a, b}, n);
    const tso::Complex<R> gpu = tso::DivideByCount(tso::Complex<R>{a, b}, n);
    if (!SameOrNans(cpu.real(), gpu.re) || !SameOrNans(cpu.imag(), gpu.im)) {
      if (++bad <= 5) {
        std::printf("FAIL %s (%a, %a) / %lld: CPU (%a, %a), the core's (%a, %a)\n", name, a, b,
                    static_cast<long long>(n), cpu.real(), cpu.imag(), gpu.re, gpu.im);
      }
    }
  };
  for (R a : special) {
    for (R b : special) {
      for (R c : special) {
        for (R d : special) product(a, b, c, d);
      }
    }
  }
  const std::vector<int64_t> counts = {1,       2,           3,       7,        10,
                                       12345,   1 << 24,     (1 << 24) + 1, int64_t{1} << 40,
                                       (int64_t{1} << 53) + 1, std::numeric_limits<int64_t>::max()};
  for (R a : special) {
    for (R b : special) {
      for (int64_t n : counts) mean(a, b, n);
    }
  }
  std::mt19937_64 rng(46);
  const auto random = [&]() -> R {
    if (rng() % 8 == 0) return special[rng() % special.size()];
    return std::ldexp(static_cast<R>(std::uniform_real_distribution<double>(-1, 1)(rng)),
                      static_cast<int>(rng() % 300) - 150);
  };
  for (int i = 0; i < 200000; ++i) {
    product(random(), random(), random(), random());
    const int64_t n = counts[rng() % counts.size()];
    mean(random(), random(), n < (int64_t{1} << 62) ? n + static_cast<int64_t>(rng() % 1000) : n);
  }
  return bad;
}

}  // namespace

int CheckComplexArithmetic() {
  return CheckComplex<float>("complex64") + CheckComplex<double>("complex128");
}

// ---- instantiations: those of the GPU kernels ------------------------------

namespace g = tf_scatter_ops::gpu;
using tf_scatter_ops::Groupwise;
#define GROUPWISE(T, F)                                                                     \
  template int64_t GroupwiseForward<T, F>(const Ids&, int64_t, bool, int64_t, const T*, T*); \
  template int64_t GroupwiseBackward<T, F>(const Ids&, int64_t, bool, int64_t, const T*,     \
                                           const T*, const T*, T*);
#define FLOAT(T)                            \
  GROUPWISE(T, Groupwise::kSoftmax)         \
  GROUPWISE(T, Groupwise::kLogSoftmax)      \
  GROUPWISE(T, Groupwise::kLogSumExp)       \
  GROUPWISE(T, Groupwise::kVar)             \
  GROUPWISE(T, Groupwise::kStd)
TFSO_FLOAT_DTYPES(TFSO_GPU_DTYPE, FLOAT)
#undef FLOAT
#undef GROUPWISE
#define ARG(T)                                                                             \
  template T ArgSegmentEmpty<T, tf_scatter_ops::ArgMaxOp>();                                    \
  template T ArgSegmentEmpty<T, tf_scatter_ops::ArgMinOp>();                                    \
  template int64_t ArgScatter<T, tf_scatter_ops::ArgMaxOp>(const Ids&, int64_t, bool, bool, \
                                                           const T*, const T*, T*, int64_t*); \
  template int64_t ArgScatter<T, tf_scatter_ops::ArgMinOp>(const Ids&, int64_t, bool, bool, \
                                                           const T*, const T*, T*, int64_t*);
TFSO_MINMAX_DTYPES(TFSO_GPU_DTYPE, ARG)
#undef ARG
#define MESSAGE(T)                                                                            \
  template T GatherReduceEmpty<T>(tf_scatter_ops::EdgeReduce);                                \
  MESSAGE_REDUCE(T, kSum) MESSAGE_REDUCE(T, kMean) MESSAGE_REDUCE(T, kMax)                    \
  MESSAGE_REDUCE(T, kMin) MESSAGE_OP(T, kAdd) MESSAGE_OP(T, kSub) MESSAGE_OP(T, kMul)         \
  MESSAGE_OP(T, kDot)
#define MESSAGE_REDUCE(T, R)                                                                  \
  template int64_t GatherReduce<T, tf_scatter_ops::EdgeReduce::R>(                            \
      const int64_t*, const int64_t*, int64_t, int64_t, int64_t, int64_t, int64_t, bool,      \
      const T*, const T*, T*, int64_t*);
#define MESSAGE_OP(T, OP)                                                                     \
  template int64_t EdgeCombine<T, tf_scatter_ops::EdgeOp::OP>(                                \
      const int64_t*, const int64_t*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,   \
      bool, const T*, const T*, T*);
TFSO_FLOAT_DTYPES(TFSO_GPU_DTYPE, MESSAGE)
#undef MESSAGE_OP
#undef MESSAGE_REDUCE
#undef MESSAGE
#define COMPLEX(T)                                                                           \
  template int64_t UnsortedProd<T>(const Ids&, int64_t, bool, const T*, T*);                 \
  template void SortedSegment<T, tf_scatter_ops::MulOp>(const int64_t*, int64_t, int64_t,    \
                                                         const T*, T, T*);                   \
  template void SortedSegment<T, tf_scatter_ops::MeanOp>(const int64_t*, int64_t, int64_t,   \
                                                          const T*, T, T*);
TFSO_COMPLEX_DTYPES(TFSO_GPU_DTYPE, COMPLEX)
#undef COMPLEX

}  // namespace tfso_new_ops
