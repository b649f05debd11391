// Standalone harness of the CUDA core (cc/kernels/cuda/scatter_gpu.h), built with
// nvcc alone (no TensorFlow): tools/gpu_check.sh builds and runs it. The host
// build (mk/gpu_host.mk: g++, -DTFSO_HOST_CUDA, tests/cc/host_cuda/ as its
// CUDA runtime) runs the same harness on CPU threads, under ASan and UBSan in
// `make test`; there results are compared bit for bit, NaNs included, and
// (TFSO_HARNESS_CPU_CORE) also with the CPU core (cpu_core_ref.h).
//
//   gpu_harness [--quick] [--skip-huge] [--seed N (of the cases, 12345)] [--dump DIR]
//               [--show N (failures printed, 30)]
//
// 1. Correctness: every op and dtype on random cases (duplicates, bad rows
//    under both policies, rows into empty outputs, zero sizes, int16/32/64
//    indices, copy / in-place / zero init, grids of many blocks) against a
//    serial host reference built from the same reducers (common/reducers.h),
//    compared bitwise: the reference and the bad coordinates the CPU core's
//    driver uses too (cases.h); with TFSO_HARNESS_CPU_CORE, every result and
//    first bad row also against the CPU core itself.
// 2. Determinism: large cases with many duplicates and a hot destination,
//    run three times, bitwise equal to each other and to the reference.
//    The segment reductions likewise: the sorted core (segment_*, sparse_segment_*
//    in TensorFlow's order) against a serial reference of common/segment_order.h,
//    and the scatter core with negative ids dropped (unsorted_segment_*).
// 3. Scale, streams and 64 bits: 10M rows with 5% bad rows (IGNORE) and
//    with bad rows far apart (ERROR: the first reported, nothing written),
//    gathers from empty params and of empty slices, calls on a non-blocking
//    stream behind a spinning kernel (no hidden synchronisation), a uint8
//    add into 2^32 + 8 slots and a gather of 2.2e9 elements (about 10 GiB:
//    --skip-huge skips these two); the host build also runs 64-bit keys
//    against the CPU core on lazily backed memory.
// 4. Timing: the CPU-speed workloads W1-W7 (float32) against the device's
//    copy bandwidth; with --dump DIR, writes their data and our times for
//    benchmarks/gpu_torch_bench.py. Not in the host build.
// Exit status 0 only if every check passed.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cases.h"
#include "cuda/launch.cuh"
#include "cuda/scatter_gpu.h"
#include "cuda/segment_elements.h"
#include "cuda/segment_gpu.h"
#ifdef TFSO_HARNESS_CPU_CORE
#include "cpu_core_ref.h"
#endif
#ifdef TFSO_HOST_CUDA
#include <sys/mman.h>
#include <unistd.h>
#endif

using namespace tf_scatter_ops;  // NOLINT
namespace g = tf_scatter_ops::gpu;

#define CK(x)                                                           \
  do {                                                                  \
    cudaError_t e_ = (x);                                               \
    if (e_ != cudaSuccess) {                                            \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,           \
                   cudaGetErrorString(e_));                             \
      std::exit(2);                                                     \
    }                                                                   \
  } while (0)

namespace {

int failures = 0;
int failures_shown = 30;  // --show N
int64_t cases_run = 0;

void Fail(const std::string& what) {
  if (++failures <= failures_shown) std::printf("FAIL %s\n", what.c_str());
}

// Host element arrays (std::vector<bool> packs bits, so it cannot be used).
template <typename T>
class Vec {
 public:
  explicit Vec(size_t n = 0, T value = T{}) : n_(n), p_(new T[std::max<size_t>(1, n)]) {
    std::fill(p_.get(), p_.get() + n_, value);
  }
  Vec(const Vec& o) : Vec(o.n_) { std::copy(o.begin(), o.end(), p_.get()); }
  Vec& operator=(const Vec& o) { Vec t(o); std::swap(n_, t.n_); std::swap(p_, t.p_); return *this; }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  T* data() { return p_.get(); }
  const T* data() const { return p_.get(); }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T* begin() { return p_.get(); }
  T* end() { return p_.get() + n_; }
  const T* begin() const { return p_.get(); }
  const T* end() const { return p_.get() + n_; }

 private:
  size_t n_;
  std::unique_ptr<T[]> p_;
};

// Stream-ordered bump allocator over one cudaMalloc: reset between calls
// (with no work in flight). The host build gives each block an allocation of
// its own, of exactly the size asked for (so ASan sees the core overrun its
// scratch), filled with a byte that changes from block to block (so a core
// that reads scratch it did not write sees garbage).
class Arena : public g::Scratch {
 public:
  explicit Arena(size_t bytes) : size_(bytes) {
#ifndef TFSO_HOST_CUDA
    CK(cudaMalloc(&base_, bytes));
#endif
  }
  ~Arena() {
    Reset();
    cudaFree(base_);
  }
  void* Allocate(size_t bytes) override {
    const size_t rounded = (bytes + 255) & ~size_t{255};
    if (used_ + rounded > size_) return nullptr;
#ifdef TFSO_HOST_CUDA
    static std::mt19937 garbage(7);
    void* p = nullptr;
    CK(cudaMalloc(&p, std::max<size_t>(1, bytes)));
    std::memset(p, static_cast<int>(garbage() & 0xff), bytes);
    held_.push_back(p);
#else
    void* p = static_cast<char*>(base_) + used_;
#endif
    used_ += rounded;
    return p;
  }
  void Reset() {
    used_ = 0;
    for (void* p : held_) cudaFree(p);
    held_.clear();
  }

 private:
  void* base_ = nullptr;
  size_t size_, used_ = 0;
  std::vector<void*> held_;  // the host build's blocks
};

template <typename T>
struct Dev {
  T* p = nullptr;
  size_t n = 0;
  explicit Dev(size_t count) : n(count) {
    CK(cudaMalloc(&p, std::max<size_t>(1, n) * sizeof(T)));
  }
  Dev(const Vec<T>& h) : Dev(h.size()) { Put(h); }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  void Put(const Vec<T>& h) {
    if (n) CK(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  Vec<T> Get() const {
    Vec<T> h(n);
    if (n) CK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

std::mt19937_64 rng(12345);
int64_t Uniform(int64_t lo, int64_t hi) {  // [lo, hi]
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// Where two NaNs meet in arithmetic, which one's bits the result keeps is
// the compiler's choice of operand order (x86 keeps the first operand's), and
// the CUDA core, the CPU core and the reference are compiled apart. So the
// cases of the arithmetic ops draw every NaN as the machine's default NaN
// (what inf - inf gives), which is then the only NaN any of them can make,
// and NaN bits compare exactly; the cases of the selects (min, max, update,
// gather) draw NaNs of either sign, quiet or signalling, with any payload.
bool varied_nans = true;

template <typename Op>
constexpr bool kSelects = std::is_same<Op, AssignOp>::value || std::is_same<Op, MinOp>::value ||
                          std::is_same<Op, MaxOp>::value ||
                          std::is_same<Op, SegmentMinOp>::value ||
                          std::is_same<Op, SegmentMaxOp>::value;

template <typename T>
T DefaultNan() {
  if constexpr (std::is_same<T, F16>::value) {
    return ToF16(DefaultNan<float>());
  } else if constexpr (std::is_same<T, BF16>::value) {
    return ToBF16(DefaultNan<float>());
  } else {
    volatile T inf = std::numeric_limits<T>::infinity();
    return inf - inf;
  }
}

// A NaN of either sign, quiet or signalling, with a random payload.
template <typename T, typename U>
T RandomNan() {
  if (!varied_nans) return DefaultNan<T>();
  constexpr int kBits = sizeof(U) * 8;
  constexpr int kMantissa = std::is_same<T, double>::value ? 52 : std::is_same<T, float>::value ? 23
                            : std::is_same<T, F16>::value ? 10 : 7;
  const U exponent = static_cast<U>(((U{1} << (kBits - 1 - kMantissa)) - 1) << kMantissa);
  const U payload = static_cast<U>(rng() & ((U{1} << kMantissa) - 1));
  const U sign = Uniform(0, 1) ? static_cast<U>(U{1} << (kBits - 1)) : U{0};
  return BitCast<T>(static_cast<U>(sign | exponent | (payload ? payload : U{1})));
}

// Random values, with the awkward ones (NaNs of every kind, -0, infinities,
// extremes) now and then.
template <typename T>
T Random() {
  if constexpr (std::is_same<T, bool>::value) {
    return Uniform(0, 1) == 1;
  } else if constexpr (std::is_integral<T>::value) {
    if (Uniform(0, 9) == 0) {
      return Uniform(0, 1) ? std::numeric_limits<T>::max()
                           : std::numeric_limits<T>::min();
    }
    return static_cast<T>(Uniform(std::is_signed<T>::value ? -50 : 0, 50));
  } else if constexpr (std::is_floating_point<T>::value) {
    using U = typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type;
    switch (Uniform(0, 29)) {
      case 0: return varied_nans ? static_cast<T>(std::nan("")) : DefaultNan<T>();
      case 1: return T(-0.0);
      case 2: return T(0.0);
      case 3: return RandomNan<T, U>();
      case 4: return Uniform(0, 1) ? std::numeric_limits<T>::infinity()
                                   : -std::numeric_limits<T>::infinity();
      default: return static_cast<T>(Uniform(-4000, 4000)) / T(64);
    }
  } else if constexpr (std::is_same<T, F16>::value) {
    return Uniform(0, 29) == 0 ? RandomNan<F16, uint16_t>() : ToF16(Random<float>());
  } else if constexpr (std::is_same<T, BF16>::value) {
    return Uniform(0, 29) == 0 ? RandomNan<BF16, uint16_t>() : ToBF16(Random<float>());
  } else if constexpr (std::is_same<T, Complex<float>>::value) {
    return {Random<float>(), Random<float>()};
  } else if constexpr (std::is_same<T, Complex<double>>::value) {
    return {Random<double>(), Random<double>()};
  } else {  // Bits128
    return {static_cast<uint64_t>(rng()), static_cast<uint64_t>(rng())};
  }
}

// Equal bits, except that on a GPU any NaN equals any NaN: its float
// arithmetic returns the canonical NaN where the host keeps the payload. The
// host build runs the same arithmetic on the host, so there every bit counts.
template <typename T>
bool IsNan(const T& v) {
  if constexpr (std::is_floating_point<T>::value) {
    return std::isnan(v);
  } else if constexpr (std::is_same<T, F16>::value || std::is_same<T, BF16>::value) {
    return std::isnan(ToFloat(v));
  } else {
    return false;
  }
}

template <typename T>
bool SameElement(const T& a, const T& b) {
#ifdef TFSO_HOST_CUDA
  return std::memcmp(&a, &b, sizeof(T)) == 0;
#else
  if constexpr (std::is_same<T, Complex<float>>::value ||
                std::is_same<T, Complex<double>>::value) {
    return SameElement(a.re, b.re) && SameElement(a.im, b.im);
  } else {
    return std::memcmp(&a, &b, sizeof(T)) == 0 || (IsNan(a) && IsNan(b));
  }
#endif
}

// An element whose bits are not all zero.
template <typename T>
T NonZero() {
  if constexpr (std::is_same<T, Complex<float>>::value || std::is_same<T, Complex<double>>::value) {
    return {1, 1};
  } else {
    return T{1};
  }
}

// An element's bits in hex, for messages.
template <typename T>
std::string Hex(const T& v) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  std::string s = "0x";
  char two[3];
  for (size_t i = sizeof(T); i-- > 0;) {
    std::snprintf(two, sizeof(two), "%02x", b[i]);
    s += two;
  }
  return s;
}

template <typename T>
bool SameBits(const Vec<T>& a, const Vec<T>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameElement(a[i], b[i])) return false;
  }
  return true;
}

// "" if equal, else where and how they first differ.
template <typename T>
std::string FirstDifference(const Vec<T>& got, const Vec<T>& want) {
  if (got.size() != want.size()) {
    return " (sizes " + std::to_string(got.size()) + " and " + std::to_string(want.size()) + ")";
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (!SameElement(got[i], want[i])) {
      return " (element " + std::to_string(i) + ": " + Hex(got[i]) + ", expected " +
             Hex(want[i]) + ")";
    }
  }
  return "";
}

// A random problem in canonical form, with its host reference slots.
struct Problem {
  int depth = 1;
  std::vector<int64_t> dims;  // outer dims
  int64_t nslots = 1, slice = 1, n = 0;
  std::vector<int64_t> coords;  // [n, depth]
  std::vector<int64_t> slots;   // -1 for bad rows
  int64_t first_bad = -1;
  g::IndexType index_type = g::IndexType::kInt32;
};

int64_t IndexMax(g::IndexType t) {
  return t == g::IndexType::kInt16 ? INT16_MAX
         : t == g::IndexType::kInt32 ? INT32_MAX : INT64_MAX;
}

// A small problem, or (one in ten) a medium one whose grids have many
// blocks. An output may be empty (a zero dim, or empty slices) and still
// have rows: each of them is checked all the same.
Problem RandomProblem(g::IndexType index_type, bool allow_bad) {
  Problem p;
  p.index_type = index_type;
  const bool medium = Uniform(0, 9) == 0;
  p.depth = static_cast<int>(Uniform(0, 3));
  if (Uniform(0, 30) == 0) p.depth = 14;  // deeper than the inline dims
  p.nslots = 1;
  for (int d = 0; d < p.depth; ++d) {
    const int64_t most = medium ? (p.depth == 1 ? 3000 : 50) : 7;
    p.dims.push_back(p.depth > 3 ? Uniform(1, 2) : Uniform(Uniform(0, 20) == 0 ? 0 : 1, most));
    p.nslots *= p.dims.back();
  }
  p.slice = Uniform(0, 12) == 0 ? 0 : Uniform(1, medium ? 8 : 5);
  p.n = Uniform(0, 12) == 0 ? 0 : medium ? Uniform(300, 3000) : Uniform(1, 80);
  const int64_t imax = IndexMax(p.index_type);
  for (int64_t i = 0; i < p.n; ++i) {
    for (int d = 0; d < p.depth; ++d) {
      p.coords.push_back(allow_bad && Uniform(0, 60) == 0
                             ? tfso_test::BadCoordinate(rng, p.dims[d], -imax - 1, imax)
                         : p.dims[d] == 0 ? Uniform(0, 2)  // bad: the dim is empty
                                          : Uniform(0, p.dims[d] - 1));
    }
  }
  p.first_bad = tfso_test::ReferenceSlots(p.coords.data(), p.n, p.dims, &p.slots);
  return p;
}

// The indices of a problem on the device, in its index type (and the host
// copy the CPU core reads).
struct DevIndices {
  void* ptr = nullptr;
  int bytes = 4;
  std::vector<char> host;
  explicit DevIndices(const Problem& p) {
    bytes = p.index_type == g::IndexType::kInt16 ? 2 : p.index_type == g::IndexType::kInt32 ? 4 : 8;
    host.assign(std::max<size_t>(1, p.coords.size() * bytes), 0);
    for (size_t i = 0; i < p.coords.size(); ++i) {
      const int64_t v = p.coords[i];
      if (bytes == 2) { const int16_t x = static_cast<int16_t>(v); std::memcpy(&host[i * 2], &x, 2); }
      if (bytes == 4) { const int32_t x = static_cast<int32_t>(v); std::memcpy(&host[i * 4], &x, 4); }
      if (bytes == 8) std::memcpy(&host[i * 8], &v, 8);
    }
    CK(cudaMalloc(&ptr, host.size()));
    CK(cudaMemcpy(ptr, host.data(), host.size(), cudaMemcpyHostToDevice));
  }
  ~DevIndices() { cudaFree(ptr); }
  DevIndices(const DevIndices&) = delete;
};

#ifdef TFSO_HARNESS_CPU_CORE
tfso_cpu::Rows CpuRows(const Problem& p, const DevIndices& idx) {
  tfso_cpu::Rows r;
  r.indices = idx.host.data();
  r.index_bytes = idx.bytes;
  r.n = p.n;
  r.depth = p.depth;
  r.dims = p.dims.data();
  return r;
}

// The CUDA core's result and first bad row against the CPU core's (run on
// the same input): `compare` says whether the GPU wrote a result (not under
// ERROR with a bad row, where only the row is compared). False on a
// difference, with its failure reported.
template <typename T>
bool SameAsCpu(const std::string& desc, bool ignore, int64_t gpu_bad, int64_t cpu_bad,
               bool compare, const Vec<T>& gpu, const Vec<T>& cpu) {
  if (!ignore && gpu_bad != cpu_bad) {
    Fail(desc + ": first bad row " + std::to_string(gpu_bad) + ", the CPU core's " +
         std::to_string(cpu_bad));
    return false;
  }
  if (compare && !SameBits(gpu, cpu)) {
    Fail(desc + ": differs from the CPU core" + FirstDifference(gpu, cpu));
    return false;
  }
  return true;
}
#endif

g::Call MakeCall(const Problem& p, const DevIndices& idx, bool ignore,
                 Arena* arena, std::vector<int64_t>* bad_coords) {
  g::Call c;
  c.indices = idx.ptr;
  c.index_type = p.index_type;
  c.form = {p.n, p.depth, p.nslots, p.slice};
  c.dims = p.dims.data();
  c.ignore = ignore;
  c.stream = nullptr;
  c.scratch = arena;
  bad_coords->assign(std::max(1, p.depth), 0);
  c.bad_coords = bad_coords->data();
  return c;
}

std::string Describe(const char* op, const char* type, const Problem& p,
                     bool ignore) {
  char buf[200];
  std::snprintf(buf, sizeof(buf), "%s<%s> depth=%d nslots=%lld slice=%lld n=%lld idx=%d %s",
                op, type, p.depth, (long long)p.nslots, (long long)p.slice,
                (long long)p.n, (int)p.index_type, ignore ? "IGNORE" : "ERROR");
  return buf;
}

bool CheckBadRow(const char* what, const g::Call& c, const Problem& p,
                 const std::vector<int64_t>& coords, const std::string& desc) {
  if (c.bad_row != p.first_bad) {
    Fail(desc + " " + what + ": first bad row " + std::to_string(c.bad_row) +
         ", expected " + std::to_string(p.first_bad));
    return false;
  }
  for (int d = 0; d < p.depth && p.first_bad >= 0; ++d) {
    if (coords[d] != p.coords[p.first_bad * p.depth + d]) {
      Fail(desc + " " + what + ": wrong coordinates of the bad row");
      return false;
    }
  }
  return true;
}

template <typename T, typename Op>
void ScatterCase(const char* op, const char* type, Init mode, bool ignore,
                 g::IndexType index_type, Arena* arena) {
  varied_nans = kSelects<Op>;
  Problem p = RandomProblem(index_type, /*allow_bad=*/Uniform(0, 3) != 0);
  if (mode != Init::kZero) mode = Uniform(0, 1) ? Init::kCopy : Init::kInPlace;
  const std::string desc = Describe(op, type, p, ignore);
  Vec<T> init(p.nslots * p.slice), upd(p.n * p.slice);
  for (auto& v : init) v = Random<T>();
  for (auto& v : upd) v = Random<T>();
  Vec<T> expect = mode == Init::kZero ? Vec<T>(init.size(), T{}) : init;
  const bool fails = !ignore && p.first_bad >= 0;
  if (!fails) tfso_test::ReferenceScatter<Op>(p.slots, p.slice, upd.data(), expect.data());
  DevIndices idx(p);
  Dev<T> d_init(init), d_upd(upd), d_out(init.size());
  if (mode == Init::kInPlace) d_out.Put(init);
  std::vector<int64_t> coords;
  g::Call c = MakeCall(p, idx, ignore, arena, &coords);
  arena->Reset();
  const char* err = g::Scatter<T, Op>(c, d_upd.p, d_init.p, mode, d_out.p);
  CK(cudaDeviceSynchronize());
  ++cases_run;
  if (err) return Fail(desc + ": " + err);
  if (!ignore && !CheckBadRow("scatter", c, p, coords, desc)) return;
  const Vec<T> got = d_out.Get();
  if (fails) {  // nothing written: an in-place tensor is intact
    if (mode == Init::kInPlace && !SameBits(got, init)) {
      return Fail(desc + ": output changed although the call failed");
    }
  } else if (!SameBits(got, expect)) {
    return Fail(desc + ": result differs from the serial reference" + FirstDifference(got, expect));
  }
#ifdef TFSO_HARNESS_CPU_CORE
  Vec<T> cpu = mode == Init::kInPlace ? init : Vec<T>(init.size(), Random<T>());
  const int64_t cpu_bad =
      tfso_cpu::Scatter<T, Op>(CpuRows(p, idx), p.nslots, p.slice, ignore, upd.data(),
                               mode == Init::kCopy ? init.data() : nullptr, mode, cpu.data());
  SameAsCpu(desc, ignore, c.bad_row, cpu_bad, !fails, got, cpu);
#endif
}

template <typename T>
void GatherCase(const char* type, bool ignore, g::IndexType index_type, Arena* arena) {
  varied_nans = true;
  Problem p = RandomProblem(index_type, /*allow_bad=*/Uniform(0, 3) != 0);
  const std::string desc = Describe("gather", type, p, ignore);
  Vec<T> params(p.nslots * p.slice);
  for (auto& v : params) v = Random<T>();
  Vec<T> expect(p.n * p.slice, T{});
  tfso_test::ReferenceGather(p.slots, p.slice, params.data(), expect.data());
  DevIndices idx(p);
  Dev<T> d_params(params), d_out(expect.size());
  std::vector<int64_t> coords;
  g::Call c = MakeCall(p, idx, ignore, arena, &coords);
  arena->Reset();
  const char* err = g::Gather<T>(c, d_params.p, d_out.p);
  CK(cudaDeviceSynchronize());
  ++cases_run;
  if (err) return Fail(desc + ": " + err);
  if (!ignore && !CheckBadRow("gather", c, p, coords, desc)) return;
  const bool fails = !ignore && p.first_bad >= 0;  // nothing written
  const Vec<T> got = d_out.Get();
  if (!fails && !SameBits(got, expect)) {
    return Fail(desc + ": result differs from the reference" + FirstDifference(got, expect));
  }
#ifdef TFSO_HARNESS_CPU_CORE
  Vec<T> cpu(expect.size(), Random<T>());
  const int64_t cpu_bad =
      tfso_cpu::Gather<T>(CpuRows(p, idx), p.nslots, p.slice, params.data(), cpu.data());
  SameAsCpu(desc, ignore, c.bad_row, cpu_bad, !fails, got, cpu);
#endif
}

// A failed CUDA call on this thread, then good calls: they must succeed
// (the runtime's last error is read off on entry to every host call).
void AfterAFailedCall(Arena* arena) {
  void* p = nullptr;
  const cudaError_t failed = cudaMalloc(&p, size_t{1} << 62);
  if (failed == cudaSuccess) {
    cudaFree(p);
    return Fail("sticky error: a 2^62-byte cudaMalloc succeeded; the case proves nothing");
  }
  Problem p10;
  p10.index_type = g::IndexType::kInt32;
  p10.depth = 1;
  p10.dims = {100};
  p10.nslots = 100;
  p10.slice = 4;
  p10.n = 10;
  p10.first_bad = -1;
  for (int64_t i = 0; i < p10.n; ++i) {
    p10.coords.push_back(i * 7);
    p10.slots.push_back(i * 7);
  }
  DevIndices idx(p10);
  Vec<uint32_t> params(p10.nslots * p10.slice);
  for (size_t k = 0; k < params.size(); ++k) params[k] = static_cast<uint32_t>(k);
  Dev<uint32_t> d_params(params), d_out(p10.n * p10.slice);
  std::vector<int64_t> coords;
  g::Call c = MakeCall(p10, idx, /*ignore=*/false, arena, &coords);
  arena->Reset();
  const char* err = g::Gather<uint32_t>(c, d_params.p, d_out.p);
  CK(cudaDeviceSynchronize());
  ++cases_run;
  if (err) return Fail(std::string("a good gather after a failed cudaMalloc: ") + err);
  const Vec<uint32_t> got = d_out.Get();
  for (int64_t i = 0; i < p10.n; ++i) {
    for (int64_t j = 0; j < p10.slice; ++j) {
      if (got[i * p10.slice + j] != params[p10.slots[i] * p10.slice + j]) {
        return Fail("a good gather after a failed cudaMalloc: wrong values");
      }
    }
  }
  // and the same after one of our own calls failed (scratch exhausted)
  Arena tiny(256);
  g::Call starved = MakeCall(p10, idx, false, &tiny, &coords);
  if (g::Gather<uint32_t>(starved, d_params.p, d_out.p) == nullptr) {
    return Fail("a gather with 256 bytes of scratch did not fail");
  }
  arena->Reset();
  c = MakeCall(p10, idx, false, arena, &coords);
  err = g::Gather<uint32_t>(c, d_params.p, d_out.p);
  CK(cudaDeviceSynchronize());
  ++cases_run;
  if (err) Fail(std::string("a good gather after a failed one: ") + err);
}

int repeats = 150;

// Each policy with each index type in turn.
template <typename T, typename Op>
void ScatterType(const char* op, const char* type, Init mode, Arena* arena) {
  for (int r = 0; r < repeats; ++r) {
    ScatterCase<T, Op>(op, type, mode, r % 2 == 1, static_cast<g::IndexType>(r / 2 % 3), arena);
  }
}
template <typename T>
void GatherType(const char* type, Arena* arena) {
  for (int r = 0; r < repeats; ++r) {
    GatherCase<T>(type, r % 2 == 1, static_cast<g::IndexType>(r / 2 % 3), arena);
  }
}

// Large problems with many duplicates (and one hot destination): three runs
// are bitwise equal to each other and to the serial reference.
template <typename T, typename Op>
void DeterminismCase(const char* op, const char* type, int64_t nslots,
                     int64_t slice, int64_t n, bool hot, Arena* arena) {
  varied_nans = kSelects<Op>;
  Problem p;
  p.depth = 1;
  p.dims = {nslots};
  p.nslots = nslots;
  p.slice = slice;
  p.n = n;
  p.index_type = g::IndexType::kInt64;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t s = hot && Uniform(0, 1) ? 7 % nslots : Uniform(0, nslots - 1);
    p.coords.push_back(s);
    p.slots.push_back(s);
  }
  Vec<T> init(nslots * slice), upd(n * slice);
  for (auto& v : init) v = Random<T>();
  for (auto& v : upd) v = Random<T>();
  Vec<T> expect = init;
  tfso_test::ReferenceScatter<Op>(p.slots, slice, upd.data(), expect.data());
  DevIndices idx(p);
  Dev<T> d_init(init), d_upd(upd), d_out(init.size());
  char desc[160];
  std::snprintf(desc, sizeof(desc), "determinism %s<%s> nslots=%lld slice=%lld n=%lld%s",
                op, type, (long long)nslots, (long long)slice, (long long)n, hot ? " hot" : "");
#ifdef TFSO_HARNESS_CPU_CORE
  Vec<T> cpu(init.size());
  tfso_cpu::Scatter<T, Op>(CpuRows(p, idx), nslots, slice, false, upd.data(), init.data(),
                           Init::kCopy, cpu.data());
  if (!SameBits(cpu, expect)) {
    return Fail(std::string(desc) + ": the CPU core differs from the serial reference" +
                FirstDifference(cpu, expect));
  }
#endif
  for (int run = 0; run < 3; ++run) {
    std::vector<int64_t> coords;
    g::Call c = MakeCall(p, idx, false, arena, &coords);
    arena->Reset();
    const char* err = g::Scatter<T, Op>(c, d_upd.p, d_init.p, Init::kCopy, d_out.p);
    CK(cudaDeviceSynchronize());
    ++cases_run;
    if (err) return Fail(std::string(desc) + ": " + err);
    const Vec<T> got = d_out.Get();
    if (!SameBits(got, expect)) {
      return Fail(std::string(desc) + ": run " + std::to_string(run) + " differs" +
                  FirstDifference(got, expect));
    }
  }
}

// ---- cases at scale, on streams and past 32 bits -------------------------

// A depth-1 problem over `nslots` slots from the given index values (any
// value outside [0, nslots) is a bad row).
Problem RowsProblem(int64_t nslots, int64_t slice, const std::vector<int64_t>& values,
                    g::IndexType type) {
  Problem p;
  p.depth = 1;
  p.dims = {nslots};
  p.nslots = nslots;
  p.slice = slice;
  p.n = static_cast<int64_t>(values.size());
  p.index_type = type;
  p.coords = values;
  p.slots.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const bool ok = values[i] >= 0 && values[i] < nslots;
    p.slots[i] = ok ? values[i] : -1;
    if (!ok && p.first_bad < 0) p.first_bad = static_cast<int64_t>(i);
  }
  return p;
}

template <typename T, typename Op>
Vec<T> Reference(const Problem& p, const Vec<T>& init, const Vec<T>& upd) {
  Vec<T> expect = init;
  tfso_test::ReferenceScatter<Op>(p.slots, p.slice, upd.data(), expect.data());
  return expect;
}

// 10M rows into 1000 slots, 5% of them bad, under IGNORE: the bad rows sort
// to the tail and are dropped; the rest equals the host reference.
// Rows of the cases at scale.
constexpr int64_t scale_rows = 10000000;

template <typename T, typename Op>
void IgnoreAtScale(const char* what, Arena* arena) {
  varied_nans = kSelects<Op>;
  const int64_t n = scale_rows, nslots = 1000;
  std::vector<int64_t> values(n);
  for (auto& v : values) {
    v = Uniform(0, 19) ? Uniform(0, nslots - 1) : (Uniform(0, 1) ? -1 - Uniform(0, 5) : nslots + Uniform(0, 5));
  }
  const Problem p = RowsProblem(nslots, 1, values, g::IndexType::kInt32);
  Vec<T> init(nslots), upd(n);
  for (auto& v : init) v = Random<T>();
  for (auto& v : upd) v = Random<T>();
  const Vec<T> expect = Reference<T, Op>(p, init, upd);
  DevIndices idx(p);
  Dev<T> d_init(init), d_upd(upd), d_out(nslots);
  std::vector<int64_t> coords;
  g::Call c = MakeCall(p, idx, /*ignore=*/true, arena, &coords);
  arena->Reset();
  const char* err = g::Scatter<T, Op>(c, d_upd.p, d_init.p, Init::kCopy, d_out.p);
  CK(cudaDeviceSynchronize());
  ++cases_run;
  const std::string desc = std::string("scale: IGNORE ") + what + ", " + std::to_string(n) +
                           " rows into 1000 slots, 5% bad";
  if (err) return Fail(desc + ": " + err);
  const Vec<T> got = d_out.Get();
  if (!SameBits(got, expect)) return Fail(desc + ": differs from the reference" + FirstDifference(got, expect));
#ifdef TFSO_HARNESS_CPU_CORE
  Vec<T> cpu(nslots);
  const int64_t cpu_bad = tfso_cpu::Scatter<T, Op>(CpuRows(p, idx), nslots, 1, true, upd.data(),
                                                   init.data(), Init::kCopy, cpu.data());
  SameAsCpu(desc, true, -1, cpu_bad, true, got, cpu);
#endif
}

// 10M rows with bad rows at 99.9999% and 60.00001% of them (9,999,990 and
// 6,000,001): the first is reported (with its index value) and nothing is
// written, in every init mode.
template <typename T, typename Op>
void ErrorAtScale(const char* what, Arena* arena) {
  varied_nans = kSelects<Op>;
  const int64_t n = scale_rows, nslots = 1000;
  const int64_t late = n - n / 1000000, first = n / 10 * 6 + 1;
  std::vector<int64_t> values(n);
  for (auto& v : values) v = Uniform(0, nslots - 1);
  values[late] = nslots + 3;
  values[first] = -2;
  const Problem p = RowsProblem(nslots, 1, values, g::IndexType::kInt64);
  Vec<T> init(nslots), upd(n);
  for (auto& v : init) v = Random<T>();
  for (auto& v : upd) v = Random<T>();
  DevIndices idx(p);
  Dev<T> d_init(init), d_upd(upd), d_out(nslots);
  for (Init mode : {Init::kZero, Init::kCopy, Init::kInPlace}) {
    const std::string desc = std::string("scale: ERROR ") + what + " init mode " + std::to_string(int(mode));
    if (mode == Init::kInPlace) {
      d_out.Put(init);
    } else {
      CK(cudaMemset(d_out.p, 0xab, nslots * sizeof(T)));
    }
    const Vec<T> before = d_out.Get();
    std::vector<int64_t> coords;
    g::Call c = MakeCall(p, idx, /*ignore=*/false, arena, &coords);
    arena->Reset();
    const char* err = g::Scatter<T, Op>(c, d_upd.p, d_init.p, mode, d_out.p);
    CK(cudaDeviceSynchronize());
    ++cases_run;
    if (err) { Fail(desc + ": " + err); continue; }
    if (c.bad_row != first || coords[0] != -2) {
      Fail(desc + ": reported row " + std::to_string(c.bad_row) + " = [" + std::to_string(coords[0]) +
           "], expected " + std::to_string(first) + " = [-2]");
    }
    if (!SameBits(d_out.Get(), before)) Fail(desc + ": the output was written although the call failed");
  }
}

// Gathers with n > 0 from params without elements, and with empty slices.
void GatherEdges(Arena* arena) {
  std::vector<int64_t> coords;
  {  // params of no rows: every row is bad; IGNORE gives zeros, ERROR row 0
    const Problem p = RowsProblem(0, 3, std::vector<int64_t>(1000, 0), g::IndexType::kInt32);
    DevIndices idx(p);
    Dev<uint32_t> d_params(0), d_out(p.n * p.slice);
    CK(cudaMemset(d_out.p, 0xab, p.n * p.slice * sizeof(uint32_t)));
    g::Call c = MakeCall(p, idx, /*ignore=*/true, arena, &coords);
    arena->Reset();
    const char* err = g::Gather<uint32_t>(c, d_params.p, d_out.p);
    CK(cudaDeviceSynchronize());
    ++cases_run;
    if (err) Fail(std::string("gather from empty params, IGNORE: ") + err);
    else if (!SameBits(d_out.Get(), Vec<uint32_t>(p.n * p.slice, 0u))) Fail("gather from empty params, IGNORE: not zeros");
    c = MakeCall(p, idx, /*ignore=*/false, arena, &coords);
    arena->Reset();
    err = g::Gather<uint32_t>(c, d_params.p, d_out.p);
    CK(cudaDeviceSynchronize());
    ++cases_run;
    if (err) Fail(std::string("gather from empty params, ERROR: ") + err);
    else if (c.bad_row != 0) Fail("gather from empty params, ERROR: bad row " + std::to_string(c.bad_row));
  }
  {  // empty slices: nothing to copy, but a bad row is still reported
    std::vector<int64_t> values(1000, 7);
    values[500] = 100;
    const Problem p = RowsProblem(100, 0, values, g::IndexType::kInt16);
    DevIndices idx(p);
    Dev<uint32_t> d_params(0), d_out(0);
    for (bool ignore : {true, false}) {
      g::Call c = MakeCall(p, idx, ignore, arena, &coords);
      arena->Reset();
      const char* err = g::Gather<uint32_t>(c, d_params.p, d_out.p);
      CK(cudaDeviceSynchronize());
      ++cases_run;
      if (err) Fail(std::string("gather of empty slices: ") + err);
      else if (!ignore && c.bad_row != 500) Fail("gather of empty slices: bad row " + std::to_string(c.bad_row));
    }
  }
}

__global__ void SpinKernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// On a non-blocking stream created here, behind a kernel that spins for half
// a second (two in the host build): an IGNORE call must return to the host
// while the spin still runs, within half of it (no hidden synchronisation,
// nothing on another stream), and its result, after synchronising only that
// stream, must equal the host reference.
void NonBlockingStream(Arena* arena) {
  varied_nans = false;  // a float add
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int device = 0, khz = 0;
  CK(cudaGetDevice(&device));
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
#ifdef TFSO_HOST_CUDA
  // The host build's calls are host code under sanitizers: they may take
  // hundreds of milliseconds themselves, so the spin lasts longer.
  constexpr long long kSpinMs = 2000;
#else
  constexpr long long kSpinMs = 500;
#endif
  const long long cycles = static_cast<long long>(khz) * kSpinMs;
  const int64_t n = 1000000, nslots = 100000;
  std::vector<int64_t> values(n);
  for (auto& v : values) v = Uniform(0, 99) ? Uniform(0, nslots - 1) : nslots + 1;
  const Problem p = RowsProblem(nslots, 2, values, g::IndexType::kInt64);
  Vec<float> init(nslots * 2), upd(n * 2);
  for (auto& v : init) v = Random<float>();
  for (auto& v : upd) v = Random<float>();
  const Vec<float> expect = Reference<float, AddOp>(p, init, upd);
  DevIndices idx(p);
  Dev<float> d_init(init), d_upd(upd), d_out(init.size()), d_rows(n * 2);
  CK(cudaDeviceSynchronize());
  std::vector<int64_t> coords;
  const char* steps[2] = {"scatter", "gather"};
  for (int step = 0; step < 2; ++step) {
    g::Call c = MakeCall(p, idx, /*ignore=*/true, arena, &coords);
    c.stream = s;
    arena->Reset();
    TFSO_LAUNCH(1, 1, s, SpinKernel)(cycles);
    const auto t0 = std::chrono::steady_clock::now();
    const char* err = step == 0 ? g::Scatter<float, AddOp>(c, d_upd.p, d_init.p, Init::kCopy, d_out.p)
                                : g::Gather<uint32_t>(c, reinterpret_cast<const uint32_t*>(d_out.p),
                                                      reinterpret_cast<uint32_t*>(d_rows.p));
    const double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const cudaError_t pending = cudaStreamQuery(s);
    (void)cudaGetLastError();
    CK(cudaStreamSynchronize(s));
    ++cases_run;
    const std::string desc = std::string("non-blocking stream, ") + steps[step];
    if (err) { Fail(desc + ": " + err); continue; }
    if (pending != cudaErrorNotReady || host_ms > kSpinMs / 2) {
      Fail(desc + ": the call waited for the stream (returned after " + std::to_string(host_ms) + " ms)");
    }
  }
  const Vec<float> got = d_out.Get();
  if (!SameBits(got, expect)) {
    Fail("non-blocking stream, scatter: differs from the reference" + FirstDifference(got, expect));
  }
#ifdef TFSO_HARNESS_CPU_CORE
  Vec<float> cpu(init.size());
  tfso_cpu::Scatter<float, AddOp>(CpuRows(p, idx), nslots, 2, true, upd.data(), init.data(),
                                  Init::kCopy, cpu.data());
  SameAsCpu("non-blocking stream, scatter", true, -1, -1, true, got, cpu);
#endif
  const Vec<float> rows = d_rows.Get();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < 2; ++j) {
      const float want = p.slots[i] < 0 ? 0.0f : expect[p.slots[i] * 2 + j];
      if (!SameElement(rows[i * 2 + j], want)) {
        Fail("non-blocking stream, gather: row " + std::to_string(i) + " differs");
        i = n;
        break;
      }
    }
  }
  CK(cudaStreamDestroy(s));
}

// Past 32 bits: a uint8 add into nslots = 2^32 + 8 slots in place (wide keys,
// a 33-bit sort) with rows on slots {0, 2^32 - 1, 2^32, 2^32 + 7} and one bad
// row, under both policies; a gather of more than 2^31 elements, checked at
// sampled positions. Skipped with a line when the device is short of memory.
void PastThirtyTwoBits() {
  size_t free_bytes = 0, total_bytes = 0;
  CK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const int64_t nslots = (int64_t{1} << 32) + 8;
  const size_t need = size_t{12} << 30;
  if (free_bytes < need) {
    std::printf("64-bit cases: skipped (%.1f GiB free, need %.0f)\n", free_bytes / 1073741824.0,
                need / 1073741824.0);
    return;
  }
  Arena arena(size_t{1} << 30);
  const int64_t targets[4] = {0, (int64_t{1} << 32) - 1, int64_t{1} << 32, (int64_t{1} << 32) + 7};
  std::vector<int64_t> values(4000);
  for (auto& v : values) v = targets[Uniform(0, 3)];
  values[1234] = nslots;  // bad
  const Problem p = RowsProblem(nslots, 1, values, g::IndexType::kInt64);
  Vec<uint8_t> upd(p.n);
  for (auto& v : upd) v = static_cast<uint8_t>(Uniform(0, 50));
  uint8_t* out = nullptr;
  CK(cudaMalloc(&out, nslots));
  CK(cudaMemset(out, 1, nslots));
  DevIndices idx(p);
  Dev<uint8_t> d_upd(upd);
  auto slot_values = [&] {
    uint8_t v[4];
    for (int k = 0; k < 4; ++k) CK(cudaMemcpy(&v[k], out + targets[k], 1, cudaMemcpyDeviceToHost));
    return std::vector<uint8_t>(v, v + 4);
  };
  for (bool ignore : {false, true}) {
    std::vector<int64_t> coords;
    g::Call c = MakeCall(p, idx, ignore, &arena, &coords);
    arena.Reset();
    const char* err = g::Scatter<uint8_t, AddOp>(c, d_upd.p, nullptr, Init::kInPlace, out);
    CK(cudaDeviceSynchronize());
    ++cases_run;
    const std::string desc = std::string("64-bit: uint8 add into 2^32+8 slots, ") + (ignore ? "IGNORE" : "ERROR");
    if (err) { Fail(desc + ": " + err); continue; }
    std::vector<uint8_t> want(4, 1);
    if (ignore) {
      for (int64_t i = 0; i < p.n; ++i) {
        for (int k = 0; k < 4; ++k) if (p.slots[i] == targets[k]) want[k] = static_cast<uint8_t>(want[k] + upd[i]);
      }
    } else if (c.bad_row != 1234) {
      Fail(desc + ": reported row " + std::to_string(c.bad_row) + ", expected 1234");
    }
    if (slot_values() != want) Fail(desc + ": wrong values at the target slots");
    for (int k = 0; k < 200; ++k) {  // elsewhere untouched
      const int64_t at = Uniform(1, nslots - 9);
      if (at == targets[1]) continue;
      uint8_t v = 0;
      CK(cudaMemcpy(&v, out + at, 1, cudaMemcpyDeviceToHost));
      if (v != 1) { Fail(desc + ": slot " + std::to_string(at) + " changed"); break; }
    }
  }
  CK(cudaFree(out));

  // gather: 2100 rows of 2^20 bytes from [4096, 2^20] params (2.2e9 elements out)
  const int64_t rows = 4096, slice = int64_t{1} << 20, n = 2100;
  uint8_t *params = nullptr, *gathered = nullptr;
  CK(cudaMalloc(&params, rows * slice));
  CK(cudaMalloc(&gathered, n * slice));
  for (int64_t r = 0; r < rows; ++r) CK(cudaMemset(params + r * slice, static_cast<int>(r % 251), slice));
  std::vector<int64_t> picks(n);
  for (auto& v : picks) v = Uniform(0, rows - 1);
  const Problem q = RowsProblem(rows, slice, picks, g::IndexType::kInt32);
  DevIndices qidx(q);
  std::vector<int64_t> coords;
  g::Call c = MakeCall(q, qidx, false, &arena, &coords);
  arena.Reset();
  const char* err = g::Gather<uint8_t>(c, params, gathered);
  CK(cudaDeviceSynchronize());
  ++cases_run;
  if (err) {
    Fail(std::string("64-bit: gather of 2.2e9 elements: ") + err);
  } else {
    for (int k = 0; k < 2000; ++k) {
      const int64_t i = Uniform(0, n - 1), j = Uniform(0, slice - 64);
      uint8_t v[64];
      CK(cudaMemcpy(v, gathered + i * slice + j, 64, cudaMemcpyDeviceToHost));
      if (std::any_of(v, v + 64, [&](uint8_t b) { return b != picks[i] % 251; })) {
        Fail("64-bit: gather of 2.2e9 elements: wrong bytes in row " + std::to_string(i));
        break;
      }
    }
  }
  CK(cudaFree(params));
  CK(cudaFree(gathered));
}

#if defined(TFSO_HOST_CUDA) && defined(TFSO_HARNESS_CPU_CORE)
// ---- 64-bit keys against the CPU core (host build) -------------------------
//
// The stand-in maps allocations of 1 GiB and more lazily (host_cuda.cc), so
// outputs of 2^32 and more slots cost only the pages written. Each case
// scatters in place into slots at both ends of the 32-bit range (and a few
// between) with a bad row at 1234 (one past the end) and another at 2345
// (negative), under both policies, on the CUDA core and on the CPU core (its
// output mapped alike), and compares the two over every page either wrote.

// Memory mapped on demand (zeros), for the CPU core's output.
struct Mapped {
  void* base = nullptr;
  size_t bytes = 0;
  explicit Mapped(size_t n) : bytes(n) {
    base = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                -1, 0);
    if (base == MAP_FAILED) base = nullptr;
  }
  ~Mapped() {
    if (base) munmap(base, bytes);
  }
};

// The pages of [p, p + bytes) that are resident (touched).
std::vector<unsigned char> Resident(const void* p, size_t bytes, uintptr_t* first_page) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p) / page * page;
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(p) + bytes + page - 1) / page * page;
  std::vector<unsigned char> in((hi - lo) / page);
  if (mincore(reinterpret_cast<void*>(lo), hi - lo, in.data()) != 0) in.assign(in.size(), 1);
  *first_page = lo;
  return in;
}

// Whether a[0, n) and b[0, n) (lazily mapped) are equal: compared where a
// page of either is resident, zeros (untouched) elsewhere.
template <typename T>
bool SameMapped(const T* a, const T* b, int64_t n, std::string* where) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const int64_t per_page = static_cast<int64_t>(page / sizeof(T));
  std::vector<std::pair<int64_t, int64_t>> ranges;  // element ranges to compare
  for (const T* x : {a, b}) {
    uintptr_t lo = 0;
    const std::vector<unsigned char> in = Resident(x, sizeof(T) * n, &lo);
    for (size_t k = 0; k < in.size(); ++k) {
      if (!(in[k] & 1)) continue;
      const int64_t begin =
          (static_cast<int64_t>(lo + k * page) - reinterpret_cast<int64_t>(x)) / int64_t(sizeof(T));
      ranges.push_back({std::max<int64_t>(0, begin - 1), std::min(n, begin + per_page + 1)});
    }
  }
  int64_t compared = 0;
  for (const auto& r : ranges) {
    for (int64_t i = r.first; i < r.second; ++i) {
      if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) {
        *where = "element " + std::to_string(i) + ": " + Hex(a[i]) + ", the CPU core's " + Hex(b[i]);
        return false;
      }
    }
    compared += r.second - r.first;
  }
  if (compared > (int64_t{1} << 28)) {
    *where = "(the CUDA core touched " + std::to_string(compared) + " elements)";
    return false;
  }
  return true;
}

template <typename T, typename Op>
void WideScatter(const char* name, const std::vector<int64_t>& dims, g::IndexType type) {
  varied_nans = kSelects<Op>;
  int64_t nslots = 1;
  for (int64_t d : dims) nslots *= d;
  const int depth = static_cast<int>(dims.size());
  const int64_t top = int64_t{1} << 32;
  std::vector<int64_t> targets = {0, top - 2, top - 1, top, top + 1, nslots - 1};
  for (int k = 0; k < 10; ++k) targets.push_back(Uniform(0, nslots - 1));
  Problem p;
  p.depth = depth;
  p.dims = dims;
  p.nslots = nslots;
  p.slice = 1;
  p.n = 4000;
  p.index_type = type;
  for (int64_t i = 0; i < p.n; ++i) {
    int64_t slot = targets[Uniform(0, targets.size() - 1)];
    std::vector<int64_t> c(depth);
    for (int d = depth - 1; d >= 0; --d) {
      c[d] = slot % dims[d];
      slot /= dims[d];
    }
    if (i == 1234) c[0] = dims[0];  // one past the end
    if (i == 2345) c[depth - 1] = -1;
    p.coords.insert(p.coords.end(), c.begin(), c.end());
  }
  p.first_bad = tfso_test::ReferenceSlots(p.coords.data(), p.n, p.dims, &p.slots);
  Vec<T> upd(p.n);
  for (auto& v : upd) v = Random<T>();
  Arena arena(size_t{64} << 20);
  DevIndices idx(p);
  Dev<T> d_upd(upd);
  for (bool ignore : {false, true}) {
    const std::string desc = std::string("64-bit keys: ") + name + " into " +
                             std::to_string(nslots) + " slots, " + (ignore ? "IGNORE" : "ERROR");
    T* out = nullptr;
    Mapped cpu(sizeof(T) * nslots);
    if (cudaMalloc(&out, sizeof(T) * nslots) != cudaSuccess || cpu.base == nullptr) {
      (void)cudaGetLastError();
      std::printf("%s: skipped (no %.0f GiB of address space)\n", desc.c_str(),
                  sizeof(T) * nslots / 1073741824.0);
      cudaFree(out);
      return;
    }
    T* cpu_out = static_cast<T*>(cpu.base);
    for (int64_t t : targets) {  // the same values at the targets, zeros elsewhere
      const T v = Random<T>();
      CK(cudaMemcpy(out + t, &v, sizeof(T), cudaMemcpyHostToDevice));
      cpu_out[t] = v;
    }
    std::vector<int64_t> coords;
    g::Call c = MakeCall(p, idx, ignore, &arena, &coords);
    arena.Reset();
    const char* err = g::Scatter<T, Op>(c, d_upd.p, nullptr, Init::kInPlace, out);
    CK(cudaDeviceSynchronize());
    ++cases_run;
    const int64_t cpu_bad = tfso_cpu::Scatter<T, Op>(CpuRows(p, idx), nslots, 1, ignore,
                                                     upd.data(), nullptr, Init::kInPlace, cpu_out);
    std::string where;
    if (err) {
      Fail(desc + ": " + err);
    } else if (!ignore && (c.bad_row != cpu_bad || c.bad_row != 1234 ||
                           coords[0] != dims[0])) {
      Fail(desc + ": first bad row " + std::to_string(c.bad_row) + ", the CPU core's " +
           std::to_string(cpu_bad) + " (expected 1234)");
    } else if (!SameMapped(out, cpu_out, nslots, &where)) {
      Fail(desc + ": differs from the CPU core at " + where);
    }
    CK(cudaFree(out));
  }
}

// A gather of uint32 from 2^32 + 8 slots, under both policies.
void WideGather() {
  const int64_t nslots = (int64_t{1} << 32) + 8;
  const std::string what = "64-bit keys: uint32 gather from " + std::to_string(nslots) + " slots";
  uint32_t* params = nullptr;
  if (cudaMalloc(&params, sizeof(uint32_t) * nslots) != cudaSuccess) {
    (void)cudaGetLastError();
    std::printf("%s: skipped (no 16 GiB of address space)\n", what.c_str());
    return;
  }
  std::vector<int64_t> values(3000);
  for (auto& v : values) {
    v = Uniform(0, 3) == 0 ? Uniform(0, nslots - 1) : (int64_t{1} << 32) - 4 + Uniform(0, 11);
  }
  values[1500] = nslots;
  const Problem p = RowsProblem(nslots, 1, values, g::IndexType::kInt64);
  for (int64_t v : values) {  // the rows' values; zeros elsewhere
    if (v >= nslots) continue;
    const uint32_t x = Random<uint32_t>();
    CK(cudaMemcpy(params + v, &x, sizeof(x), cudaMemcpyHostToDevice));
  }
  CK(cudaDeviceSynchronize());
  Arena arena(size_t{64} << 20);
  DevIndices idx(p);
  Dev<uint32_t> d_out(p.n);
  // The host build's device memory is host memory: the CPU core reads the
  // same params.
  Vec<uint32_t> cpu(p.n);
  const int64_t cpu_bad = tfso_cpu::Gather<uint32_t>(CpuRows(p, idx), nslots, 1, params, cpu.data());
  for (bool ignore : {false, true}) {
    const std::string desc = what + (ignore ? ", IGNORE" : ", ERROR");
    std::vector<int64_t> coords;
    g::Call c = MakeCall(p, idx, ignore, &arena, &coords);
    arena.Reset();
    const char* err = g::Gather<uint32_t>(c, params, d_out.p);
    CK(cudaDeviceSynchronize());
    ++cases_run;
    if (err) {
      Fail(desc + ": " + err);
    } else if (cpu_bad != 1500) {
      Fail(desc + ": the CPU core's first bad row is " + std::to_string(cpu_bad));
    } else {
      SameAsCpu(desc, ignore, c.bad_row, cpu_bad, ignore, d_out.Get(), cpu);
    }
  }
  CK(cudaFree(params));
}

void WideKeys() {
  const int64_t top = int64_t{1} << 32;
  // uint8 add: sorted runs on 64-bit keys (33-bit sort), depth 1, int64
  WideScatter<uint8_t, AddOp>("uint8 add", {top + 8}, g::IndexType::kInt64);
  // update of uint16: the last row of each run, depth 2 of int32 indices
  WideScatter<uint16_t, AssignOp>("uint16 update", {65537, 65536}, g::IndexType::kInt32);
  // the atomics: int32 add and uint32 max
  WideScatter<int32_t, AddOp>("int32 add (atomics)", {top + 8}, g::IndexType::kInt64);
  WideScatter<uint32_t, MaxOp>("uint32 max (atomics)", {65537, 65536}, g::IndexType::kInt32);
  WideGather();
}
#endif  // TFSO_HOST_CUDA && TFSO_HARNESS_CPU_CORE

// Runs one group of cases and prints its line: cases run, failures, seconds.
template <typename F>
void Group(const char* name, F&& run) {
  const int failed_before = failures;
  const int64_t cases_before = cases_run;
  const auto t0 = std::chrono::steady_clock::now();
  run();
  std::printf("%s: %lld cases, %d failures (%.1f s)\n", name,
              (long long)(cases_run - cases_before), failures - failed_before,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  std::fflush(stdout);
}

void ScaleCases(bool skip_huge) {
  Arena arena(size_t{2} << 30);
  Group("bad rows at scale", [&] {
    IgnoreAtScale<float, AddOp>("float add", &arena);
    IgnoreAtScale<uint32_t, AssignOp>("update (32-bit)", &arena);
    ErrorAtScale<float, AddOp>("float add", &arena);
    ErrorAtScale<uint32_t, AssignOp>("update (32-bit)", &arena);
    GatherEdges(&arena);
  });
  Group("non-blocking stream", [&] { NonBlockingStream(&arena); });
  if (skip_huge) {
    std::printf("64-bit paths (4 GiB written, 2.2e9 elements gathered): skipped (--skip-huge)\n");
  } else {
    Group("64-bit paths", [&] { PastThirtyTwoBits(); });
  }
#if defined(TFSO_HOST_CUDA) && defined(TFSO_HARNESS_CPU_CORE)
  Group("64-bit keys against the CPU core", [&] { WideKeys(); });
#endif
}

// ---- segments -----------------------------------------------------------

// The sorted segment core's serial reference: each segment's rows in the
// order of common/segment_order.h, then Finalize.
template <typename T, typename Op, Order kOrder>
Vec<T> SegmentReference(const std::vector<int64_t>& offsets, const std::vector<int64_t>& rows,
                        const Vec<T>& data, int64_t slice, T gap) {
  using A = typename std::conditional<kOrder == Order::kGroups8, g::Groups8Accumulator<T>,
                                      T>::type;
  const int64_t nsegments = static_cast<int64_t>(offsets.size()) - 1;
  Vec<T> out(nsegments * slice, gap);
  for (int64_t s = 0; s < nsegments; ++s) {
    const int64_t b = offsets[s], e = offsets[s + 1], n = e - b;
    for (int64_t j = 0; j < slice && n > 0; ++j) {
      const auto at = [&](int64_t i) { return data[(rows.empty() ? i : rows[i]) * slice + j]; };
      if constexpr (kOrder == Order::kIndex) {
        T acc = at(b);
        for (int64_t i = b + 1; i < e; ++i) Op::Apply(acc, at(i));
        g::FinalizeElement<Op>(acc, n, false);
        out[s * slice + j] = acc;
      } else {
        A acc = g::Widen<A>(at(b));
        const int64_t head = b + Groups8Head(n);
        for (int64_t i = b + 1; i < head; ++i) AddOp::Apply(acc, g::Widen<A>(at(i)));
        for (int64_t i = head; i < e; i += 8) {
          A group = g::Widen<A>(at(i));
          for (int64_t k = i + 1; k < i + 8; ++k) AddOp::Apply(group, g::Widen<A>(at(k)));
          AddOp::Apply(acc, group);
        }
        g::FinalizeElement<Op>(acc, n, n <= kGroups8ReciprocalRows);
        out[s * slice + j] = g::Narrow<T>(acc);
      }
    }
  }
  return out;
}

// segment_* (kIndex: rows are positions, after a dropped prefix) or
// sparse_segment_* (kGroups8: gathered rows) on random CSR segments: gaps,
// short runs, and runs past the head and the reciprocal rule.
template <typename T, typename Op, Order kOrder>
void SortedSegmentCase(const char* op, const char* type, Arena* arena) {
  varied_nans = kSelects<Op>;
  using A = typename std::conditional<kOrder == Order::kGroups8, g::Groups8Accumulator<T>,
                                      T>::type;
  const bool sparse = kOrder == Order::kGroups8;
  const bool medium = Uniform(0, 9) == 0;  // many blocks
  const int64_t nsegments = Uniform(0, 12) == 0 ? 0 : Uniform(1, medium ? 400 : 30);
  const int64_t slice = Uniform(0, 12) == 0 ? 0 : Uniform(1, medium ? 8 : 5);
  std::vector<int64_t> offsets(nsegments + 1);
  offsets[0] = sparse ? 0 : Uniform(0, 3);
  for (int64_t s = 0; s < nsegments; ++s) {
    const int64_t r = Uniform(0, 9);
    offsets[s + 1] = offsets[s] + (r < 2 ? 0 : r < 4 ? Uniform(10, 40) : Uniform(1, 9));
  }
  const int64_t positions = offsets[nsegments];
  const int64_t data_rows = sparse ? Uniform(1, 50) : positions;
  std::vector<int64_t> rows;
  for (int64_t i = 0; sparse && i < positions; ++i) rows.push_back(Uniform(0, data_rows - 1));
  Vec<T> data(data_rows * slice);
  for (auto& v : data) v = Random<T>();
  const T gap = Random<T>();
  const Vec<T> expect = SegmentReference<T, Op, kOrder>(offsets, rows, data, slice, gap);
  Dev<T> d_data(data), d_out(expect.size());
  g::SegmentCall call;
  call.nsegments = nsegments;
  call.slice = slice;
  call.offsets = offsets.data();
  call.rows = sparse ? rows.data() : nullptr;
  call.scratch = arena;
  arena->Reset();
  char desc[160];
  std::snprintf(desc, sizeof(desc), "%s<%s> segments=%lld slice=%lld positions=%lld", op, type,
                (long long)nsegments, (long long)slice, (long long)positions);
  const char* err = g::SortedSegment<T, Op, kOrder, A>(call, d_data.p, gap, d_out.p);
  CK(cudaDeviceSynchronize());
  ++cases_run;
  if (err) return Fail(std::string(desc) + ": " + err);
  const Vec<T> got = d_out.Get();
  if (!SameBits(got, expect)) {
    return Fail(std::string(desc) + ": differs from the reference" + FirstDifference(got, expect));
  }
#ifdef TFSO_HARNESS_CPU_CORE
  Vec<T> cpu(expect.size(), Random<T>());
  tfso_cpu::SortedSegment<T, Op, kOrder>(offsets.data(), nsegments, sparse ? rows.data() : nullptr,
                                         slice, data.data(), gap, cpu.data());
  SameAsCpu(desc, true, -1, -1, true, got, cpu);
#endif
}

// unsorted_segment_*: the scatter core on depth-1 ids with negative ids
// dropped (never reported) and ids >= num_segments reported unless IGNORE;
// the output filled first (the glue's identity; here a random value).
template <typename T, typename Op>
void UnsortedSegmentCase(const char* op, const char* type, bool ignore, g::IndexType index_type,
                         Arena* arena) {
  varied_nans = kSelects<Op>;
  Problem p;
  p.index_type = index_type;
  p.depth = 1;
  const bool medium = Uniform(0, 9) == 0;  // many blocks
  p.nslots = Uniform(0, 12) == 0 ? 0 : Uniform(1, medium ? 500 : 20);
  p.dims = {p.nslots};
  p.slice = Uniform(0, 12) == 0 ? 0 : Uniform(1, medium ? 8 : 5);
  p.n = medium ? Uniform(300, 3000) : Uniform(0, 60);
  int64_t first_too_large = -1;
  for (int64_t i = 0; i < p.n; ++i) {
    const int64_t r = Uniform(0, 30);
    const int64_t id = r == 0 ? -Uniform(1, 5) : r == 1 ? p.nslots + Uniform(0, 5)
                                                        : (p.nslots ? Uniform(0, p.nslots - 1) : -1);
    p.coords.push_back(id);
    p.slots.push_back(id >= 0 && id < p.nslots ? id : -1);
    if (id >= p.nslots && first_too_large < 0) first_too_large = i;
  }
  p.first_bad = first_too_large;
  // The sum starts at zeros (Init::kZero, as the glue's); the others filled.
  constexpr bool kZero = std::is_same<Op, AddOp>::value;
  const T fill = kZero ? T{} : Random<T>();
  Vec<T> upd(p.n * p.slice);
  for (auto& v : upd) v = Random<T>();
  Vec<T> expect(p.nslots * p.slice, fill);
  const bool fails = !ignore && p.first_bad >= 0;
  if (!fails) tfso_test::ReferenceScatter<Op>(p.slots, p.slice, upd.data(), expect.data());
  DevIndices idx(p);
  Dev<T> d_upd(upd), d_out(expect.size());
  std::vector<int64_t> coords;
  g::Call c = MakeCall(p, idx, ignore, arena, &coords);
  c.drop_negative = true;
  arena->Reset();
  const std::string desc = Describe(op, type, p, ignore);
  const char* err = nullptr;
  if constexpr (kZero) {
    d_out.Put(Vec<T>(expect.size(), NonZero<T>()));  // kZero must write the zeros
  } else {
    err = g::Fill<T>(nullptr, d_out.p, static_cast<int64_t>(expect.size()), fill);
  }
  if (!err) err = g::Scatter<T, Op>(c, d_upd.p, nullptr, kZero ? Init::kZero : Init::kInPlace, d_out.p);
  CK(cudaDeviceSynchronize());
  ++cases_run;
  if (err) return Fail(desc + ": " + err);
  if (!ignore && !CheckBadRow("segment", c, p, coords, desc)) return;
  const Vec<T> got = d_out.Get();
  if (fails) {
    if (!kZero && !SameBits(got, Vec<T>(expect.size(), fill))) {
      return Fail(desc + ": output changed although the call failed");
    }
  } else if (!SameBits(got, expect)) {
    return Fail(desc + ": result differs from the serial reference" + FirstDifference(got, expect));
  }
#ifdef TFSO_HARNESS_CPU_CORE
  // As the glue runs the CPU core (segment_kernels.h, CpuSegment): every row
  // applied but the bad ones; then, unless IGNORE, the error names the first
  // id >= num_segments from the core's first bad row on (negative ids are
  // only dropped).
  Vec<T> cpu(expect.size(), kZero ? Random<T>() : fill);
  const int64_t bad = tfso_cpu::Scatter<T, Op>(CpuRows(p, idx), p.nslots, p.slice, true,
                                               upd.data(), nullptr,
                                               kZero ? Init::kZero : Init::kInPlace, cpu.data());
  int64_t cpu_bad = -1;
  for (int64_t i = bad; bad >= 0 && i < p.n && cpu_bad < 0; ++i) {
    if (p.coords[i] >= p.nslots) cpu_bad = i;
  }
  SameAsCpu(desc, ignore, c.bad_row, cpu_bad, !fails, got, cpu);
#endif
}

template <typename T, typename Op, Order kOrder>
void SortedSegmentType(const char* op, const char* type, Arena* arena) {
  for (int r = 0; r < repeats; ++r) SortedSegmentCase<T, Op, kOrder>(op, type, arena);
}
template <typename T, typename Op>
void UnsortedSegmentType(const char* op, const char* type, Arena* arena) {
  for (int r = 0; r < repeats; ++r) {
    UnsortedSegmentCase<T, Op>(op, type, r % 2 == 1, static_cast<g::IndexType>(r / 2 % 3), arena);
  }
}

// Every segment op and dtype the glue registers on a GPU (segment_kernels.h).
void SegmentCases(Arena* arena) {
#define SUM(unused, name)                                                              \
  SortedSegmentType<g::dtype_##name, AddOp, Order::kIndex>("segment_sum", #name, arena); \
  UnsortedSegmentType<g::dtype_##name, AddOp>("unsorted_segment_sum", #name, arena);
  TFSO_ADD_DTYPES(SUM, )
#undef SUM
#define REAL(unused, name)                                                                   \
  SortedSegmentType<g::dtype_##name, MulOp, Order::kIndex>("segment_prod", #name, arena);     \
  SortedSegmentType<g::dtype_##name, MeanOp, Order::kIndex>("segment_mean", #name, arena);    \
  SortedSegmentType<g::dtype_##name, SegmentMinOp, Order::kIndex>("segment_min", #name, arena); \
  SortedSegmentType<g::dtype_##name, SegmentMaxOp, Order::kIndex>("segment_max", #name, arena); \
  SortedSegmentType<g::dtype_##name, AddOp, Order::kGroups8>("sparse_segment_sum", #name,     \
                                                             arena);                          \
  UnsortedSegmentType<g::dtype_##name, MulOp>("unsorted_segment_prod", #name, arena);         \
  UnsortedSegmentType<g::dtype_##name, SegmentMinOp>("unsorted_segment_min", #name, arena);   \
  UnsortedSegmentType<g::dtype_##name, SegmentMaxOp>("unsorted_segment_max", #name, arena);
  TFSO_MINMAX_DTYPES(REAL, )
#undef REAL
#define SCALED(unused, name)                                                                 \
  SortedSegmentType<g::dtype_##name, MeanOp, Order::kGroups8>("sparse_segment_mean", #name,   \
                                                              arena);                         \
  SortedSegmentType<g::dtype_##name, SqrtNOp, Order::kGroups8>("sparse_segment_sqrt_n", #name, \
                                                               arena);
  TFSO_FLOAT_DTYPES(SCALED, )
#undef SCALED
}

// ---- timing -------------------------------------------------------------

double MedianMs(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F>
double TimeMs(F&& f, int reps) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  f();
  f();  // warm up
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float t;
    CK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return MedianMs(ms);
}

double CopyBandwidthGBs() {  // device-to-device copy, bytes read + written
  const size_t bytes = size_t{1} << 30;
  Dev<char> a(bytes), b(bytes);
  CK(cudaMemset(a.p, 1, bytes));
  const double ms = TimeMs([&] { CK(cudaMemcpy(b.p, a.p, bytes, cudaMemcpyDeviceToDevice)); }, 10);
  return 2.0 * bytes / (ms * 1e-3) / 1e9;
}

void WriteFile(const std::string& path, const void* data, size_t bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data, 1, bytes, f) != bytes) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(2);
  }
  std::fclose(f);
}

struct Workload {
  const char* name;
  const char* op;  // add, update, max, scatter_nd, gather
  std::vector<int64_t> shape;  // target (or params) shape
  int depth;
  int64_t n;
  bool unique;
};

std::vector<int64_t> RandomRows(int64_t n, int64_t range, bool unique) {
  std::vector<int64_t> v(n);
  if (!unique) {
    for (auto& x : v) x = Uniform(0, range - 1);
    return v;
  }
  std::vector<int64_t> all(range);
  for (int64_t i = 0; i < range; ++i) all[i] = i;
  for (int64_t i = 0; i < n; ++i) std::swap(all[i], all[Uniform(i, range - 1)]);
  std::copy(all.begin(), all.begin() + n, v.begin());
  return v;
}

void RunTimings(const std::string& dump, bool quick) {
  const double bw = CopyBandwidthGBs();
  const int64_t k = quick ? 16 : 1;  // --quick: 1/16 of the sizes
  std::vector<Workload> w = {
      {"W1", "add", {16777216 / k}, 1, 1048576 / k, false},
      {"W2", "update", {16777216 / k}, 1, 1048576 / k, true},
      {"W3", "add", {1048576 / k, 64}, 1, 200000 / k, false},
      {"W4", "update", {1048576 / k, 64}, 1, 200000 / k, true},
      {"W5", "scatter_nd", {4096, 4096 / k}, 2, 2097152 / k, false},
      {"W6", "max", {16777216 / k}, 1, 1048576 / k, false},
      {"W7", "gather", {1048576 / k, 64}, 1, 1048576 / k, false},
  };
  FILE* meta = nullptr;
  if (!dump.empty()) meta = std::fopen((dump + "/workloads.txt").c_str(), "w");
  std::printf("\ncopy bandwidth %.0f GB/s\n", bw);
  // ms: the default (ERROR) policy, which waits for the bounds check and
  // copies the first bad row back; ERROR cost: what that wait adds.
  std::printf("%-4s %-10s %10s %10s %10s %10s %8s\n", "", "op", "ms", "ms IGNORE", "ERROR cost",
              "floor ms", "x floor");
  Arena arena(size_t{3} << 30);
  for (const Workload& x : w) {
    Problem p;
    p.depth = x.depth;
    p.dims.assign(x.shape.begin(), x.shape.begin() + x.depth);
    p.nslots = 1;
    for (int64_t d : p.dims) p.nslots *= d;
    p.slice = 1;
    for (size_t d = x.depth; d < x.shape.size(); ++d) p.slice *= x.shape[d];
    p.n = x.n;
    p.index_type = g::IndexType::kInt32;
    const std::vector<int64_t> flat = RandomRows(x.n, p.nslots, x.unique);
    std::vector<int32_t> idx32;
    for (int64_t s : flat) {  // flat slot -> coordinates
      int64_t r = s;
      std::vector<int64_t> c(x.depth);
      for (int d = x.depth - 1; d >= 0; --d) {
        c[d] = r % p.dims[d];
        r /= p.dims[d];
      }
      for (int64_t v : c) idx32.push_back(static_cast<int32_t>(v));
    }
    const bool gather = std::string(x.op) == "gather";
    const int64_t out_elems = gather ? x.n * p.slice : p.nslots * p.slice;
    Vec<float> upd(gather ? 0 : x.n * p.slice), tensor(p.nslots * p.slice);
    for (auto& v : upd) v = static_cast<float>(Uniform(-1000, 1000)) / 8;
    for (auto& v : tensor) v = static_cast<float>(Uniform(-1000, 1000)) / 8;
    Vec<int32_t> idx_host(idx32.size());
    std::copy(idx32.begin(), idx32.end(), idx_host.begin());
    Dev<int32_t> d_idx(idx_host);
    Dev<float> d_upd(upd), d_tensor(tensor), d_out(out_elems);
    std::vector<int64_t> coords(x.depth);
    g::Call c;
    c.indices = d_idx.p;
    c.index_type = g::IndexType::kInt32;
    c.form = {p.n, p.depth, p.nslots, p.slice};
    c.dims = p.dims.data();
        c.scratch = &arena;
    c.bad_coords = coords.data();
    const std::string op = x.op;
    const char* err = nullptr;
    auto run = [&] {
      arena.Reset();
      if (op == "add") err = g::Scatter<float, AddOp>(c, d_upd.p, d_tensor.p, Init::kCopy, d_out.p);
      if (op == "max") err = g::Scatter<float, MaxOp>(c, d_upd.p, d_tensor.p, Init::kCopy, d_out.p);
      if (op == "scatter_nd") err = g::Scatter<float, AddOp>(c, d_upd.p, nullptr, Init::kZero, d_out.p);
      if (op == "update") {
        err = g::Scatter<uint32_t, AssignOp>(c, reinterpret_cast<const uint32_t*>(d_upd.p),
                                             reinterpret_cast<const uint32_t*>(d_tensor.p),
                                             Init::kCopy, reinterpret_cast<uint32_t*>(d_out.p));
      }
      if (gather) {
        err = g::Gather<uint32_t>(c, reinterpret_cast<const uint32_t*>(d_tensor.p),
                                  reinterpret_cast<uint32_t*>(d_out.p));
      }
    };
    const double ms = TimeMs(run, quick ? 5 : 11);  // ERROR policy: waits for the check
    if (err) Fail(std::string(x.name) + ": " + err);
    c.ignore = true;
    const double ms_ignore = TimeMs(run, quick ? 5 : 11);  // IGNORE: no host round trip
    c.ignore = false;
    if (err) Fail(std::string(x.name) + " (IGNORE): " + err);
    // Memory floor: indices + updates read, touched output written, and
    // the input copied (read + write) for the tensor_scatter ops.
    const double idx_bytes = 4.0 * x.n * x.depth;
    double bytes;
    if (gather) {
      bytes = idx_bytes + 2.0 * 4 * x.n * p.slice;
    } else if (op == "scatter_nd") {
      bytes = idx_bytes + 4.0 * x.n * p.slice + 4.0 * out_elems;
    } else {
      bytes = idx_bytes + 4.0 * x.n * p.slice + 2.0 * 4 * out_elems;
    }
    const double floor_ms = bytes / (bw * 1e9) * 1e3;
    std::printf("%-4s %-10s %10.3f %10.3f %9.0f%% %10.3f %8.2f\n", x.name, x.op, ms, ms_ignore,
                100.0 * (ms - ms_ignore) / ms_ignore, floor_ms, ms / floor_ms);
    if (meta) {
      std::fprintf(meta, "%s %s %d %lld %.4f %.4f %.4f", x.name, x.op, x.depth, (long long)x.n, ms,
                   ms_ignore, floor_ms);
      for (int64_t d : x.shape) std::fprintf(meta, " %lld", (long long)d);
      std::fprintf(meta, "\n");
      const std::string base = dump + "/" + x.name;
      WriteFile(base + ".idx", idx32.data(), idx32.size() * 4);
      WriteFile(base + ".upd", upd.data(), upd.size() * 4);
      WriteFile(base + ".tensor", tensor.data(), tensor.size() * 4);
      const Vec<float> out = d_out.Get();  // ours, for the torch cross-check
      WriteFile(base + ".out", out.data(), out.size() * 4);
    }
  }
  if (meta) std::fclose(meta);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, skip_huge = false;
  std::string dump;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    if (!std::strcmp(argv[i], "--skip-huge")) skip_huge = true;
    if (!std::strcmp(argv[i], "--dump") && i + 1 < argc) dump = argv[++i];
    if (!std::strcmp(argv[i], "--show") && i + 1 < argc) failures_shown = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) rng.seed(std::strtoull(argv[++i], nullptr, 10));
  }
  int device = 0;
  cudaDeviceProp prop;
  CK(cudaGetDevice(&device));
  CK(cudaGetDeviceProperties(&prop, device));
  std::printf("device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount);
  {  // what the core says it was built with (the library's GPU gate reads it)
    const g::BuildInfo built = g::Built();
    int driver = 0;
    CK(cudaDriverGetVersion(&driver));
    std::printf("core: CUDA runtime %d.%d, SASS", built.runtime / 1000, built.runtime % 1000 / 10);
    for (int i = 0; i < built.num_sass; ++i) std::printf(" sm_%d", built.sass[i]);
    std::printf(", PTX compute_%d; driver CUDA %d.%d\n", built.ptx, driver / 1000,
                driver % 1000 / 10);
  }
  if (quick) repeats = 40;
  Arena arena(size_t{256} << 20);
  Group("sticky errors (a good call after a failed one)", [&] { AfterAFailedCall(&arena); });

#define SCATTER(OP, NAME, MODE) [&](auto tag, const char* type) { \
    using T = decltype(tag);                                        \
    ScatterType<T, OP>(NAME, type, MODE, &arena);                   \
  }
  auto update = SCATTER(AssignOp, "update", Init::kCopy);
  auto add = SCATTER(AddOp, "add", Init::kCopy);
  auto sub = SCATTER(SubOp, "sub", Init::kCopy);
  auto mn = SCATTER(MinOp, "min", Init::kCopy);
  auto mx = SCATTER(MaxOp, "max", Init::kCopy);
  auto mul = SCATTER(MulOp, "mul", Init::kCopy);
  auto div = SCATTER(DivOp, "div", Init::kCopy);
  auto snd = SCATTER(AddOp, "scatter_nd", Init::kZero);
#undef SCATTER
#define CALL(f, T, NAME) f(T{}, NAME);
#define UPDATE(T) CALL(update, T, #T) GatherType<T>(#T, &arena);
  TFSO_GPU_BITS_TYPES(UPDATE)
  // The dtype lists of common/dtypes.h, named as in TensorFlow.
#define ADD(unused, name) \
  CALL(add, g::dtype_##name, #name) CALL(sub, g::dtype_##name, #name) CALL(snd, g::dtype_##name, #name)
  TFSO_ADD_DTYPES(ADD, )
  CALL(snd, bool, "bool")
#define MINMAX(unused, name) \
  CALL(mn, g::dtype_##name, #name) CALL(mx, g::dtype_##name, #name) CALL(mul, g::dtype_##name, #name)
  TFSO_MINMAX_DTYPES(MINMAX, )
#define DIV(unused, name) CALL(div, g::dtype_##name, #name)
  TFSO_FLOAT_DTYPES(DIV, )
  const int64_t random_cases = cases_run;

  const int64_t big = quick ? 50000 : 400000;
  DeterminismCase<float, AddOp>("add", "float", 5000, 1, big, false, &arena);
  DeterminismCase<float, AddOp>("add", "float", 3000, 3, big, true, &arena);
  DeterminismCase<double, SubOp>("sub", "double", 100, 1, big, true, &arena);
  DeterminismCase<F16, AddOp>("add", "F16", 2000, 2, big, false, &arena);
  DeterminismCase<float, MaxOp>("max", "float", 5000, 1, big, true, &arena);
  DeterminismCase<float, MinOp>("min", "float", 50, 4, big, false, &arena);
  DeterminismCase<uint32_t, AssignOp>("update", "uint32", 5000, 1, big, true, &arena);
  DeterminismCase<int32_t, AddOp>("add", "int32", 5000, 1, big, true, &arena);
  DeterminismCase<int64_t, MaxOp>("max", "int64", 500, 2, big, false, &arena);
  std::printf("correctness: %lld random cases, %lld determinism runs, %d failures\n",
              (long long)random_cases, (long long)(cases_run - random_cases), failures);
  Group("segments (sorted, sparse, unsorted)", [&] { SegmentCases(&arena); });
  ScaleCases(skip_huge);

#ifdef TFSO_HOST_CUDA
  std::printf("timing: not in the host build (host threads time nothing of a GPU)\n");
  (void)&RunTimings;
#else
  RunTimings(dump, quick);
#endif
  std::printf("%s\n", failures ? "HARNESS FAILED" : "HARNESS PASSED");
  return failures ? 1 : 0;
}
