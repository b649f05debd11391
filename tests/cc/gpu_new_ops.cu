// The GPU kernels that issues 46 and 49 added, against the CPU kernels
// (new_ops_cpu_ref.h), on random cases:
//
//   segment_softmax, _log_softmax, _logsumexp, _var, _std and their fused
//     gradients (cuda/groupwise_gpu.h), bfloat16 / half / float / double;
//   tensor_scatter_nd_{max_with_argmax,min_with_argmin} and
//     unsorted_segment_{max_with_argmax,min_with_argmin} (cuda/arg_gpu.h),
//     every real dtype;
//   complex64 / complex128 unsorted_segment_prod (the scatter core),
//     segment_prod and segment_mean (the sorted core);
//   gather_reduce (sum, mean, max, min; weighted or not, per head) and
//     edge_combine (add, sub, mul, dot) (cuda/message_gpu.h), bfloat16 /
//     half / float / double: values, positions and the first bad edge.
//
// First, on the host: the CUDA core's complex arithmetic against
// std::complex's (every special value).
//
// Each case draws sizes (empty ones included), ids or index rows with bad
// ones (negative, past the end, the index type's extremes) under both
// policies, int32 and int64 indices, and values with NaNs, infinities,
// signed zeros, subnormals and overflowing products; the first bad row and
// every output must equal the CPU's. Elements are compared by their bits,
// except that any NaN equals any NaN (GPU arithmetic returns the canonical
// NaN, and the CPU's own NaN payloads follow the compiler's operand order).
//
// Built with nvcc for a GPU, or by g++ against the host stand-in of the
// CUDA runtime (mk/host_new_ops.mk: `make gpu-host-new-ops`), where the
// kernels run on host threads in a shuffled block order.
//
//   gpu_new_ops [--quick]
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "common/dtypes.h"
#include "common/element_types.h"
#include "cuda/arg_gpu.h"
#include "cuda/groupwise_gpu.h"
#include "cuda/message_gpu.h"
#include "cuda/scatter_gpu.h"
#include "cuda/segment_gpu.h"
#include "new_ops_cpu_ref.h"

using namespace tf_scatter_ops;  // NOLINT
namespace g = tf_scatter_ops::gpu;
namespace ref = tfso_new_ops;

#define CK(x)                                                                     \
  do {                                                                            \
    cudaError_t e_ = (x);                                                         \
    if (e_ != cudaSuccess) {                                                      \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(2);                                                               \
    }                                                                             \
  } while (0)

namespace {

int failures = 0;
int64_t cases_run = 0;
int repeats = 300;

void Fail(const std::string& what) {
  if (++failures <= 30) std::printf("FAIL %s\n", what.c_str());
}

std::mt19937_64 rng(4646);
int64_t Uniform(int64_t lo, int64_t hi) {  // [lo, hi]
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// Host arrays (no std::vector<bool> packing, data() never null).
template <typename T>
struct Vec {
  std::vector<T> v;
  explicit Vec(size_t n = 0, T value = T{}) : v(std::max<size_t>(n, 1), value), n(n) {}
  size_t n;
  T* data() { return v.data(); }
  const T* data() const { return v.data(); }
  T& operator[](size_t i) { return v[i]; }
  const T& operator[](size_t i) const { return v[i]; }
};

class Arena : public g::Scratch {
 public:
  explicit Arena(size_t bytes) : size_(bytes) { CK(cudaMalloc(&base_, bytes)); }
  ~Arena() { cudaFree(base_); }
  void* Allocate(size_t bytes) override {
    bytes = (bytes + 255) & ~size_t{255};
    if (used_ + bytes > size_) return nullptr;
    void* p = static_cast<char*>(base_) + used_;
    used_ += bytes;
    return p;
  }
  void Reset() { used_ = 0; }

 private:
  void* base_ = nullptr;
  size_t size_, used_ = 0;
};

template <typename T>
struct Dev {
  T* p = nullptr;
  size_t n;
  explicit Dev(size_t count) : n(count) { CK(cudaMalloc(&p, std::max<size_t>(1, n) * sizeof(T))); }
  explicit Dev(const Vec<T>& h) : Dev(h.n) { Put(h); }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  void Put(const Vec<T>& h) {
    if (n) CK(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  Vec<T> Get() const {
    Vec<T> h(n);
    if (n) CK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

// ---- values ---------------------------------------------------------------

template <typename R>
R RandomReal() {
  switch (Uniform(0, 24)) {
    case 0: return std::numeric_limits<R>::quiet_NaN();
    case 1: return -std::numeric_limits<R>::quiet_NaN();
    case 2: return R(0);
    case 3: return -R(0);
    case 4: return std::numeric_limits<R>::infinity();
    case 5: return -std::numeric_limits<R>::infinity();
    case 6: return std::numeric_limits<R>::denorm_min() * R(Uniform(1, 1000));
    case 7: return std::numeric_limits<R>::max() / R(Uniform(1, 4));
    case 8: return R(Uniform(-100, 100)) * R(1e15);  // products overflow
    default: return R(Uniform(-4000, 4000)) / R(64) + R(Uniform(0, 1000)) / R(7919);
  }
}

template <typename T>
T Random() {
  if constexpr (std::is_integral<T>::value) {
    if (Uniform(0, 9) == 0) {
      return Uniform(0, 1) ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
    }
    return static_cast<T>(Uniform(std::is_signed<T>::value ? -20 : 0, 20));  // many ties
  } else if constexpr (std::is_floating_point<T>::value) {
    return RandomReal<T>();
  } else if constexpr (std::is_same<T, F16>::value) {
    return ToF16(RandomReal<float>());
  } else if constexpr (std::is_same<T, BF16>::value) {
    return ToBF16(RandomReal<float>());
  } else {
    using R = decltype(T{}.re);
    return {RandomReal<R>(), RandomReal<R>()};
  }
}

// Moderate values for the group-wise functions (with NaN, infinities and
// signed zeros now and then): what a softmax sees.
template <typename T>
T RandomActivation() {
  float v;
  switch (Uniform(0, 30)) {
    case 0: v = std::numeric_limits<float>::quiet_NaN(); break;
    case 1: v = std::numeric_limits<float>::infinity(); break;
    case 2: v = -std::numeric_limits<float>::infinity(); break;
    case 3: v = -0.0f; break;
    case 4: v = static_cast<float>(Uniform(-200, 200)); break;  // exp under- and overflow
    default: v = static_cast<float>(Uniform(-3000, 3000)) / 512.0f;
  }
  if constexpr (std::is_same<T, F16>::value) {
    return ToF16(v);
  } else if constexpr (std::is_same<T, BF16>::value) {
    return ToBF16(v);
  } else if constexpr (std::is_same<T, double>::value) {
    return static_cast<double>(v) + static_cast<double>(Uniform(0, 1000)) * 1e-9;
  } else {
    return v;
  }
}

template <typename R>
bool SameReal(R a, R b) {
  return std::memcmp(&a, &b, sizeof(R)) == 0 || (a != a && b != b);
}

template <typename T>
bool SameElement(const T& a, const T& b) {
  if constexpr (std::is_same<T, F16>::value || std::is_same<T, BF16>::value) {
    return a.bits == b.bits || (ToFloat(a) != ToFloat(a) && ToFloat(b) != ToFloat(b));
  } else if constexpr (std::is_floating_point<T>::value) {
    return SameReal(a, b);
  } else if constexpr (std::is_integral<T>::value) {
    return a == b;
  } else {
    return SameReal(a.re, b.re) && SameReal(a.im, b.im);
  }
}

template <typename T>
int64_t FirstDifference(const Vec<T>& a, const Vec<T>& b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!SameElement(a[i], b[i])) return static_cast<int64_t>(i);
  }
  return -1;
}

// ---- ids --------------------------------------------------------------------

// n depth-1 ids into [0, nslots): mostly in range, some negative, some past
// the end, now and then the index type's extremes; `hot`: most rows in one
// segment.
std::vector<int64_t> RandomIds(int64_t n, int64_t nslots, bool wide) {
  const bool hot = Uniform(0, 3) == 0;
  const int64_t lo = wide ? INT64_MIN : INT32_MIN, hi = wide ? INT64_MAX : INT32_MAX;
  std::vector<int64_t> ids(n);
  for (int64_t& id : ids) {
    const int64_t r = Uniform(0, 40);
    if (r == 0) id = -Uniform(1, 3);
    else if (r == 1) id = nslots + Uniform(0, 3);
    else if (r == 2) id = Uniform(0, 1) ? lo : hi;
    else if (nslots == 0) id = -1;
    else id = hot && Uniform(0, 4) > 0 ? 0 : Uniform(0, nslots - 1);
  }
  return ids;
}

// Ids (int64 values) on the device in the call's index type.
struct DevIds {
  void* p = nullptr;
  g::IndexType type;
  DevIds(const std::vector<int64_t>& ids, bool wide)
      : type(wide ? g::IndexType::kInt64 : g::IndexType::kInt32) {
    const size_t size = wide ? 8 : 4;
    std::vector<char> host(std::max<size_t>(1, ids.size()) * size);
    for (size_t i = 0; i < ids.size(); ++i) {
      if (wide) {
        std::memcpy(&host[i * 8], &ids[i], 8);
      } else {
        const int32_t v = static_cast<int32_t>(ids[i]);
        std::memcpy(&host[i * 4], &v, 4);
      }
    }
    CK(cudaMalloc(&p, host.size()));
    CK(cudaMemcpy(p, host.data(), host.size(), cudaMemcpyHostToDevice));
  }
  ~DevIds() { cudaFree(p); }
};

struct CallState {
  std::vector<int64_t> dims, bad_coords;
  g::Call call;
  CallState(const DevIds& ids, int64_t n, std::vector<int64_t> outer, int64_t slice, bool ignore,
            bool drop_negative, Arena* arena)
      : dims(std::move(outer)), bad_coords(std::max<size_t>(1, dims.size()), 0) {
    int64_t nslots = 1;
    for (int64_t d : dims) nslots *= d;
    call.form = {n, static_cast<int>(dims.size()), nslots, slice};
    call.indices = ids.p;
    call.index_type = ids.type;
    call.dims = dims.data();
    call.ignore = ignore;
    call.drop_negative = drop_negative;
    call.stream = nullptr;
    call.scratch = arena;
    call.bad_coords = bad_coords.data();
    arena->Reset();
  }
};

std::string Describe(const char* op, const char* type, int64_t n, int64_t nslots, int64_t slice,
                     bool ignore) {
  char buf[200];
  std::snprintf(buf, sizeof(buf), "%s<%s> n=%lld nslots=%lld slice=%lld %s", op, type,
                (long long)n, (long long)nslots, (long long)slice, ignore ? "IGNORE" : "ERROR");
  return buf;
}

template <typename T>
void Compare(const std::string& desc, const char* what, const Vec<T>& gpu, const Vec<T>& cpu,
             size_t n) {
  const int64_t at = FirstDifference(gpu, cpu, n);
  if (at >= 0) Fail(desc + ": " + what + " differs from the CPU's at element " + std::to_string(at));
}

// ---- the group-wise functions -------------------------------------------------

template <typename T, Groupwise kF>
void GroupwiseCase(const char* op, const char* type, Arena* arena) {
  constexpr bool kPerSegment = GroupwiseFn<kF>::kPerSegment;
  const bool ignore = Uniform(0, 1) == 1, wide = Uniform(0, 1) == 1;
  int64_t nsegments = Uniform(0, 10) == 0 ? 0 : Uniform(1, 12);
  const int64_t slice = Uniform(0, 10) == 0 ? 0 : Uniform(1, 4);
  const int64_t n = Uniform(0, 10) == 0 ? 0 : Uniform(1, Uniform(0, 3) == 0 ? 400 : 60);
  const int64_t ddof = Uniform(0, 2);
  const std::vector<int64_t> id_values = RandomIds(n, nsegments, wide);
  const ref::Ids ids{id_values.data(), n, 1, &nsegments};
  const int64_t out_size = (kPerSegment ? nsegments : n) * slice;
  Vec<T> x(n * slice);
  for (size_t i = 0; i < x.n; ++i) x[i] = RandomActivation<T>();
  const std::string desc = Describe(op, type, n, nsegments, slice, ignore);

  // forward
  Vec<T> y_cpu(out_size);
  const int64_t bad = ref::GroupwiseForward<T, kF>(ids, slice, ignore, ddof, x.data(), y_cpu.data());
  DevIds d_ids(id_values, wide);
  Dev<T> d_x(x), d_y(out_size);
  {
    CallState s(d_ids, n, {nsegments}, slice, ignore, /*drop_negative=*/true, arena);
    const char* err = g::GroupwiseForward<T, kF>(s.call, ddof, d_x.p, d_y.p);
    CK(cudaDeviceSynchronize());
    ++cases_run;
    if (err) return Fail(desc + " forward: " + err);
    if (s.call.bad_row != bad) {
      return Fail(desc + " forward: first bad row " + std::to_string(s.call.bad_row) +
                  ", the CPU's " + std::to_string(bad));
    }
    if (bad >= 0) {
      if (s.bad_coords[0] != id_values[bad]) Fail(desc + " forward: wrong bad id");
      return;  // the op fails: nothing to compare
    }
    Compare(desc + " forward", "output", d_y.Get(), y_cpu, out_size);
  }

  // backward, at the CPU's output and a random gradient
  Vec<T> grad(out_size), dx_cpu(n * slice);
  for (size_t i = 0; i < grad.n; ++i) grad[i] = RandomActivation<T>();
  const int64_t bad_back = ref::GroupwiseBackward<T, kF>(ids, slice, ignore, ddof, x.data(),
                                                         y_cpu.data(), grad.data(), dx_cpu.data());
  Dev<T> d_g(grad), d_dx(n * slice);
  d_y.Put(y_cpu);
  CallState s(d_ids, n, {nsegments}, slice, ignore, /*drop_negative=*/true, arena);
  const char* err = g::GroupwiseBackward<T, kF>(s.call, ddof, d_x.p, d_y.p, d_g.p, d_dx.p);
  CK(cudaDeviceSynchronize());
  ++cases_run;
  if (err) return Fail(desc + " backward: " + err);
  if (s.call.bad_row != bad_back) return Fail(desc + " backward: first bad row differs");
  Compare(desc + " backward", "gradient", d_dx.Get(), dx_cpu, n * slice);
}

template <typename T>
void GroupwiseType(const char* type, Arena* arena) {
  for (int r = 0; r < repeats; ++r) {
    GroupwiseCase<T, Groupwise::kSoftmax>("segment_softmax", type, arena);
    GroupwiseCase<T, Groupwise::kLogSoftmax>("segment_log_softmax", type, arena);
    GroupwiseCase<T, Groupwise::kLogSumExp>("segment_logsumexp", type, arena);
    GroupwiseCase<T, Groupwise::kVar>("segment_var", type, arena);
    GroupwiseCase<T, Groupwise::kStd>("segment_std", type, arena);
  }
}

// ---- the arg reductions ---------------------------------------------------

template <typename T, typename Op>
void ArgCase(const char* op, const char* type, bool segment, Arena* arena) {
  const bool ignore = Uniform(0, 1) == 1, wide = Uniform(0, 1) == 1;
  std::vector<int64_t> dims;
  const int depth = segment ? 1 : static_cast<int>(Uniform(0, 2));
  for (int d = 0; d < depth; ++d) dims.push_back(Uniform(0, 12) == 0 ? 0 : Uniform(1, 7));
  int64_t nslots = 1;
  for (int64_t d : dims) nslots *= d;
  const int64_t slice = Uniform(0, 10) == 0 ? 0 : Uniform(1, 4);
  const int64_t n = Uniform(0, 10) == 0 ? 0 : Uniform(1, 80);
  std::vector<int64_t> coords;  // [n, depth]
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<int64_t> row = [&] {
      std::vector<int64_t> r;
      for (int d = 0; d < depth; ++d) r.push_back(RandomIds(1, dims[d], wide)[0]);
      return r;
    }();
    coords.insert(coords.end(), row.begin(), row.end());
  }
  Vec<T> updates(n * slice), init(nslots * slice);
  for (size_t i = 0; i < updates.n; ++i) updates[i] = Random<T>();
  for (size_t i = 0; i < init.n; ++i) init[i] = Random<T>();
  // (copies of existing updates now and then: ties, and equal NaNs)
  for (size_t i = 1; i < updates.n; ++i) {
    if (Uniform(0, 5) == 0) updates[i] = updates[Uniform(0, i - 1)];
  }
  const ref::Ids ids{coords.data(), n, depth, dims.data()};
  Vec<T> out_cpu(nslots * slice);
  Vec<int64_t> arg_cpu(nslots * slice);
  const int64_t bad = ref::ArgScatter<T, Op>(ids, slice, ignore, segment, updates.data(),
                                             init.data(), out_cpu.data(), arg_cpu.data());
  DevIds d_ids(coords, wide);
  Dev<T> d_updates(updates), d_init(init), d_out(nslots * slice);
  Dev<int64_t> d_arg(nslots * slice);
  CallState s(d_ids, n, dims, slice, ignore, /*drop_negative=*/segment, arena);
  const bool in_place = !segment && Uniform(0, 1) == 1;
  const char* err = nullptr;
  if (segment) {
    err = g::Fill<T>(nullptr, d_out.p, static_cast<int64_t>(nslots * slice),
                     ref::ArgSegmentEmpty<T, Op>());
  } else if (in_place) {
    d_out.Put(init);
  }
  if (!err) {
    err = g::ArgScatter<T, Op>(s.call, /*seeded=*/!segment, d_updates.p, d_init.p,
                               in_place || segment ? Init::kInPlace : Init::kCopy, d_out.p,
                               d_arg.p);
  }
  CK(cudaDeviceSynchronize());
  ++cases_run;
  const std::string desc = Describe(op, type, n, nslots, slice, ignore);
  if (err) return Fail(desc + ": " + err);
  if (s.call.bad_row != bad) {
    return Fail(desc + ": first bad row " + std::to_string(s.call.bad_row) + ", the CPU's " +
                std::to_string(bad));
  }
  if (bad >= 0) {
    for (int d = 0; d < depth; ++d) {
      if (s.bad_coords[d] != coords[bad * depth + d]) Fail(desc + ": wrong bad coordinates");
    }
    if (in_place && FirstDifference(d_out.Get(), init, init.n) >= 0) {
      Fail(desc + ": a failed call changed the tensor in place");
    }
    return;
  }
  Compare(desc, "value", d_out.Get(), out_cpu, nslots * slice);
  Compare(desc, "position", d_arg.Get(), arg_cpu, nslots * slice);
}

template <typename T>
void ArgType(const char* type, Arena* arena) {
  for (int r = 0; r < repeats; ++r) {
    ArgCase<T, ArgMaxOp>("tensor_scatter_nd_max_with_argmax", type, false, arena);
    ArgCase<T, ArgMinOp>("tensor_scatter_nd_min_with_argmin", type, false, arena);
    ArgCase<T, ArgMaxOp>("unsorted_segment_max_with_argmax", type, true, arena);
    ArgCase<T, ArgMinOp>("unsorted_segment_min_with_argmin", type, true, arena);
  }
}

// ---- complex products and means ------------------------------------------------

template <typename T>
void UnsortedProdCase(const char* type, Arena* arena) {
  const bool ignore = Uniform(0, 1) == 1, wide = Uniform(0, 1) == 1;
  int64_t nsegments = Uniform(0, 10) == 0 ? 0 : Uniform(1, 10);
  const int64_t slice = Uniform(0, 10) == 0 ? 0 : Uniform(1, 4);
  const int64_t n = Uniform(0, 10) == 0 ? 0 : Uniform(1, 80);
  const std::vector<int64_t> id_values = RandomIds(n, nsegments, wide);
  const ref::Ids ids{id_values.data(), n, 1, &nsegments};
  Vec<T> data(n * slice), out_cpu(nsegments * slice);
  for (size_t i = 0; i < data.n; ++i) data[i] = Random<T>();
  const int64_t bad = ref::UnsortedProd<T>(ids, slice, ignore, data.data(), out_cpu.data());
  DevIds d_ids(id_values, wide);
  Dev<T> d_data(data), d_out(nsegments * slice);
  CallState s(d_ids, n, {nsegments}, slice, ignore, /*drop_negative=*/true, arena);
  T one{};
  one.re = 1;
  const char* err = g::Fill<T>(nullptr, d_out.p, nsegments * slice, one);
  if (!err) err = g::Scatter<T, MulOp>(s.call, d_data.p, nullptr, Init::kInPlace, d_out.p);
  CK(cudaDeviceSynchronize());
  ++cases_run;
  const std::string desc = Describe("unsorted_segment_prod", type, n, nsegments, slice, ignore);
  if (err) return Fail(desc + ": " + err);
  if (s.call.bad_row != bad) return Fail(desc + ": first bad row differs from the CPU's");
  if (bad < 0) Compare(desc, "output", d_out.Get(), out_cpu, nsegments * slice);
}

template <typename T, typename Op>
void SortedCase(const char* op, const char* type, Arena* arena) {
  const int64_t nsegments = Uniform(0, 10) == 0 ? 0 : Uniform(1, 20);
  const int64_t slice = Uniform(0, 10) == 0 ? 0 : Uniform(1, 4);
  std::vector<int64_t> offsets(nsegments + 1, 0);
  offsets[0] = Uniform(0, 2);  // rows before the first run: dropped ids
  for (int64_t s = 0; s < nsegments; ++s) {
    const int64_t r = Uniform(0, 9);
    offsets[s + 1] = offsets[s] + (r < 2 ? 0 : r < 4 ? Uniform(10, 40) : Uniform(1, 9));
  }
  const int64_t rows = offsets[nsegments];
  Vec<T> data(rows * slice), out_cpu(nsegments * slice);
  for (size_t i = 0; i < data.n; ++i) data[i] = Random<T>();
  T gap{};
  if (std::is_same<Op, MulOp>::value) gap.re = 1;  // the glue's gaps: 1 for prod, 0 for mean
  ref::SortedSegment<T, Op>(offsets.data(), nsegments, slice, data.data(), gap, out_cpu.data());
  Dev<T> d_data(data), d_out(nsegments * slice);
  g::SegmentCall call;
  call.nsegments = nsegments;
  call.slice = slice;
  call.offsets = offsets.data();
  call.scratch = arena;
  arena->Reset();
  const char* err = g::SortedSegment<T, Op, Order::kIndex, T>(call, d_data.p, gap, d_out.p);
  CK(cudaDeviceSynchronize());
  ++cases_run;
  const std::string desc = Describe(op, type, rows, nsegments, slice, false);
  if (err) return Fail(desc + ": " + err);
  Compare(desc, "output", d_out.Get(), out_cpu, nsegments * slice);
}

template <typename T>
void ComplexType(const char* type, Arena* arena) {
  for (int r = 0; r < repeats; ++r) {
    UnsortedProdCase<T>(type, arena);
    SortedCase<T, MulOp>("segment_prod", type, arena);
    SortedCase<T, MeanOp>("segment_mean", type, arena);
  }
}

// ---- message passing (issue 49) ---------------------------------------------

// Edge ids into [0, nslots): RandomIds' (bad ones among them) or, every
// other case, only good ones where there are any, so that the ERROR policy
// is compared on whole outputs too.
std::vector<int64_t> EdgeIds(int64_t n, int64_t nslots, bool wide, bool clean) {
  std::vector<int64_t> ids = RandomIds(n, nslots, wide);
  if (clean && nslots > 0) {
    for (int64_t& id : ids) id = Uniform(0, nslots - 1);
  }
  return ids;
}

// A call on src -> dst (int64 values; int32 or int64 on the device).
struct EdgeState {
  DevIds src, dst;
  g::EdgeCall call;
  EdgeState(const std::vector<int64_t>& s, const std::vector<int64_t>& d, bool wide,
            int64_t src_rows, int64_t dst_rows, bool ignore, Arena* arena)
      : src(s, wide), dst(d, wide) {
    call.src = src.p;
    call.dst = dst.p;
    call.index_type = src.type;
    call.nedges = static_cast<int64_t>(s.size());
    call.src_rows = src_rows;
    call.dst_rows = dst_rows;
    call.ignore = ignore;
    call.scratch = arena;
    arena->Reset();
  }
};

// The first bad edge and its ids, against the CPU's; true when the case
// ends there (the op fails: nothing to compare).
bool SameBadEdge(const std::string& desc, const g::EdgeCall& call, int64_t bad,
                 const std::vector<int64_t>& src, const std::vector<int64_t>& dst) {
  if (call.bad_edge != bad) {
    Fail(desc + ": first bad edge " + std::to_string(call.bad_edge) + ", the CPU's " +
         std::to_string(bad));
    return true;
  }
  if (bad < 0) return false;
  if (call.bad_src != src[bad] || call.bad_dst != dst[bad]) Fail(desc + ": wrong bad edge ids");
  return true;
}

template <typename T, EdgeReduce kReduce>
void GatherReduceCase(const char* op, const char* type, Arena* arena) {
  const bool ignore = Uniform(0, 1) == 1, wide = Uniform(0, 1) == 1;
  const bool weighted = Uniform(0, 1) == 1;
  const int64_t rows = Uniform(0, 10) == 0 ? 0 : Uniform(1, 10);
  const int64_t num = Uniform(0, 10) == 0 ? 0 : Uniform(1, 12);
  const int64_t heads = Uniform(1, 3);
  const int64_t width = Uniform(0, 10) == 0 ? 0 : Uniform(1, 4);
  const int64_t slice = heads * width;
  const int64_t n = Uniform(0, 10) == 0 ? 0 : Uniform(1, Uniform(0, 3) == 0 ? 400 : 60);
  const bool clean = Uniform(0, 1) == 1;
  const std::vector<int64_t> src = EdgeIds(n, rows, wide, clean);
  const std::vector<int64_t> dst = EdgeIds(n, num, wide, clean);
  Vec<T> params(rows * slice), weights(weighted ? n * heads : 0);
  for (size_t i = 0; i < params.n; ++i) params[i] = Random<T>();
  for (size_t i = 0; i < weights.n; ++i) weights[i] = Random<T>();
  for (size_t i = 1; i < params.n; ++i) {  // ties, and equal NaNs
    if (Uniform(0, 5) == 0) params[i] = params[Uniform(0, i - 1)];
  }
  const int64_t size = num * slice;
  constexpr bool kArg = kReduce == EdgeReduce::kMax || kReduce == EdgeReduce::kMin;
  Vec<T> out_cpu(size);
  Vec<int64_t> pos_cpu(size, -1);
  const int64_t bad = ref::GatherReduce<T, kReduce>(
      src.data(), dst.data(), n, rows, num, heads, width, ignore, params.data(),
      weighted ? weights.data() : nullptr, out_cpu.data(), kArg ? pos_cpu.data() : nullptr);
  EdgeState s(src, dst, wide, rows, num, ignore, arena);
  Dev<T> d_params(params), d_weights(weights), d_out(size);
  Dev<int64_t> d_pos(size);
  const char* err = g::GatherReduce<T, kReduce>(
      s.call, d_params.p, weighted ? d_weights.p : nullptr, heads, width,
      ref::GatherReduceEmpty<T>(kReduce), d_out.p, kArg ? d_pos.p : nullptr);
  CK(cudaDeviceSynchronize());
  ++cases_run;
  std::string desc = Describe(op, type, n, num, slice, ignore);
  desc += " rows=" + std::to_string(rows) + " heads=" + std::to_string(heads) +
          (weighted ? " weighted" : "");
  if (err) return Fail(desc + ": " + err);
  if (SameBadEdge(desc, s.call, bad, src, dst)) return;
  Compare(desc, "output", d_out.Get(), out_cpu, size);
  if (kArg) Compare(desc, "position", d_pos.Get(), pos_cpu, size);
}

template <typename T, EdgeOp kOp>
void EdgeCombineCase(const char* op, const char* type, Arena* arena) {
  const bool ignore = Uniform(0, 1) == 1, wide = Uniform(0, 1) == 1;
  const int64_t arows = Uniform(0, 10) == 0 ? 0 : Uniform(1, 10);
  const int64_t brows = Uniform(0, 10) == 0 ? 0 : Uniform(1, 10);
  const int64_t heads = Uniform(1, 3);
  const int64_t width = Uniform(0, 10) == 0 ? 0 : Uniform(1, kOp == EdgeOp::kDot ? 40 : 4);
  const int64_t slice = heads * width;
  const int64_t out_slice = kOp == EdgeOp::kDot ? heads : slice;
  const int64_t n = Uniform(0, 10) == 0 ? 0 : Uniform(1, Uniform(0, 3) == 0 ? 400 : 60);
  const bool clean = Uniform(0, 1) == 1;
  const std::vector<int64_t> src = EdgeIds(n, arows, wide, clean);
  const std::vector<int64_t> dst = EdgeIds(n, brows, wide, clean);
  Vec<T> a(arows * slice), b(brows * slice);
  // (dot: moderate values, whose sums of products do not all overflow)
  const auto value = [] { return kOp == EdgeOp::kDot ? RandomActivation<T>() : Random<T>(); };
  for (size_t i = 0; i < a.n; ++i) a[i] = value();
  for (size_t i = 0; i < b.n; ++i) b[i] = value();
  Vec<T> out_cpu(n * out_slice);
  const int64_t bad = ref::EdgeCombine<T, kOp>(src.data(), dst.data(), n, arows, brows, slice,
                                              kOp == EdgeOp::kDot ? width : 1, out_slice, ignore,
                                              a.data(), b.data(), out_cpu.data());
  EdgeState s(src, dst, wide, arows, brows, ignore, arena);
  Dev<T> d_a(a), d_b(b), d_out(n * out_slice);
  const char* err = g::EdgeCombine<T, kOp>(s.call, d_a.p, d_b.p, slice,
                                           kOp == EdgeOp::kDot ? width : 1, out_slice, d_out.p);
  CK(cudaDeviceSynchronize());
  ++cases_run;
  const std::string desc = Describe(op, type, n, brows, slice, ignore);
  if (err) return Fail(desc + ": " + err);
  if (SameBadEdge(desc, s.call, bad, src, dst)) return;
  Compare(desc, "output", d_out.Get(), out_cpu, n * out_slice);
}

template <typename T>
void MessageType(const char* type, Arena* arena) {
  for (int r = 0; r < repeats; ++r) {
    GatherReduceCase<T, EdgeReduce::kSum>("gather_reduce sum", type, arena);
    GatherReduceCase<T, EdgeReduce::kMean>("gather_reduce mean", type, arena);
    GatherReduceCase<T, EdgeReduce::kMax>("gather_reduce max", type, arena);
    GatherReduceCase<T, EdgeReduce::kMin>("gather_reduce min", type, arena);
    EdgeCombineCase<T, EdgeOp::kAdd>("edge_combine add", type, arena);
    EdgeCombineCase<T, EdgeOp::kSub>("edge_combine sub", type, arena);
    EdgeCombineCase<T, EdgeOp::kMul>("edge_combine mul", type, arena);
    EdgeCombineCase<T, EdgeOp::kDot>("edge_combine dot", type, arena);
  }
}

template <typename F>
void Group(const char* name, F&& run) {
  const int before = failures;
  const int64_t cases_before = cases_run;
  run();
  std::printf("%-58s %6lld cases, %s\n", name, (long long)(cases_run - cases_before),
              failures == before ? "ok" : "FAILED");
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) repeats = 40;
  }
  Group("complex product and mean on the host, against std::complex", [&] {
    const int differ = ref::CheckComplexArithmetic();
    cases_run += 1;
    if (differ) Fail(std::to_string(differ) + " complex results differ from std::complex's");
  });
  Arena arena(size_t{64} << 20);
  Group("group-wise functions and gradients, every float dtype", [&] {
#define FLOAT(unused, name) GroupwiseType<g::dtype_##name>(#name, &arena);
    TFSO_FLOAT_DTYPES(FLOAT, )
#undef FLOAT
  });
  Group("arg reductions (scatter and segment), every real dtype", [&] {
#define REAL(unused, name) ArgType<g::dtype_##name>(#name, &arena);
    TFSO_MINMAX_DTYPES(REAL, )
#undef REAL
  });
  Group("complex unsorted_segment_prod, segment_prod, segment_mean", [&] {
#define COMPLEX(unused, name) ComplexType<g::dtype_##name>(#name, &arena);
    TFSO_COMPLEX_DTYPES(COMPLEX, )
#undef COMPLEX
  });
  Group("gather_reduce and edge_combine, every float dtype", [&] {
#define FLOAT(unused, name) MessageType<g::dtype_##name>(#name, &arena);
    TFSO_FLOAT_DTYPES(FLOAT, )
#undef FLOAT
  });
  std::printf("%s\n", failures ? "NEW OPS FAILED" : "NEW OPS PASSED");
  return failures ? 1 : 0;
}
