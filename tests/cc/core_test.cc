// Sanitizer driver for the TensorFlow-free CPU core.
//
// Includes only the CPU core (cc/kernels/common, cc/kernels/cpu): it builds
// and checks Linearize + ScatterCpu + GatherCpu, and SortedSegmentCpu (both
// orders, gathered or not, gaps, long runs split by columns) against naive
// per-segment loops, and the scatters against the serial reference
// the GPU harness uses too (cases.h), bitwise, for every reducer (and the arg
// core, arg_scatter_cpu.h, against its naive loop; the hinted core,
// scatter_hinted.h, against the unhinted), several element types
// (wrapping ints, floats with NaN, bool, complex, std::string), duplicates,
// bad rows (negative, too large, int64 extremes), zero sizes, every init
// mode, and a Parallel backed by std::thread with random splits. Built with
// -fsanitize=address,undefined by `make sanitize` (mk/reliability.mk); any
// sanitizer report aborts, any mismatch exits non-zero.
//
//   core_test [cases] [seed]
#include <algorithm>
#include <array>
#include <atomic>
#include <complex>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "cpu/index_linearize.h"
#include "cpu/parallel.h"
#include "common/reducers.h"
#include "cpu/arg_scatter_cpu.h"
#include "cpu/gather_cpu.h"
#include "cpu/message_cpu.h"
#include "cpu/scatter_cpu.h"
#include "cpu/scatter_hinted.h"
#include "cpu/segment_cpu.h"
#include "cases.h"
#include "thread_pool.h"

namespace tso = tf_scatter_ops;

namespace {

// The core's call for `rows` into [nslots, slice].
tso::CpuCall Call(const tso::IndexRows& rows, int64_t slice, int64_t nslots) {
  tso::CpuCall call;
  call.form = {rows.n, rows.depth, nslots, slice};
  call.rows = rows;
  return call;
}

int g_failures = 0;
int64_t g_checks = 0;
int64_t g_no_scratch = 0;  // calls checked with a failing scratch that asked for some

#define CHECK(cond, ...)                                            \
  do {                                                              \
    ++g_checks;                                                     \
    if (!(cond)) {                                                  \
      ++g_failures;                                                 \
      std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                            \
      std::fprintf(stderr, "\n");                                   \
      if (g_failures > 20) std::exit(1);                            \
    }                                                               \
  } while (0)

// A Parallel that runs the body on `threads` std::threads over a random
// split of the range (so chunk boundaries differ from run to run).
tso::Parallel ThreadParallel(int threads, uint64_t seed) {
  tso::Parallel p;
  p.threads = threads;
  auto counter = std::make_shared<std::atomic<uint64_t>>(seed);
  p.run = [threads, counter](int64_t total, int64_t, const tso::Parallel::Body& body) {
    std::mt19937_64 rng(counter->fetch_add(1));
    // Random cut points, sorted; at most 4 * threads pieces.
    const int64_t pieces = std::min<int64_t>(total, 1 + rng() % (4 * threads));
    std::vector<int64_t> cuts{0, total};
    for (int64_t k = 1; k < pieces; ++k) cuts.push_back(1 + rng() % (total - 1 > 0 ? total - 1 : 1));
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t k; (k = next.fetch_add(1)) + 1 < cuts.size();) body(cuts[k], cuts[k + 1]);
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
  };
  return p;
}

tso::Parallel Serial() { return tso::Parallel(); }

// Production's scheduler (cpu/chunked_loop.h) on a pool of std::threads, as
// the glue runs it on TensorFlow's intra-op pool. It splits only work large
// enough to pay for a thread, so the big and the forced-path cases use it.
tso::Parallel PoolParallel(int threads) {
  static tso::ThreadPool* pool = new tso::ThreadPool(8);
  return tso::ChunkedParallel(threads, [](std::function<void()> w) { pool->Schedule(std::move(w)); });
}

// Scratch from the heap, exactly sized (so ASan sees overruns), freed at the
// end of the scope; or none at all, to check the out-of-memory path.
class HeapScratch : public tso::Scratch {
 public:
  explicit HeapScratch(bool fail = false) : fail_(fail) {}
  void* Allocate(size_t bytes) override {
    ++calls;
    if (fail_) return nullptr;
    held_.emplace_back(new char[bytes]);
    return held_.back().get();
  }
  int calls = 0;

 private:
  bool fail_;
  std::vector<std::unique_ptr<char[]>> held_;
};

// ---- element types: random values and bitwise comparison -------------------

template <typename T>
T RandomValue(std::mt19937_64& rng) {
  if constexpr (std::is_same<T, bool>::value) {
    return rng() & 1;
  } else if constexpr (std::is_integral<T>::value) {
    return static_cast<T>(rng());  // full range: sums wrap
  } else if constexpr (std::is_floating_point<T>::value) {
    const uint64_t r = rng() % 64;
    if (r == 0) return std::numeric_limits<T>::quiet_NaN();
    if (r == 1) return -std::numeric_limits<T>::infinity();
    if (r == 2) return T(-0.0);
    return static_cast<T>(std::normal_distribution<double>(0, 100)(rng));
  } else if constexpr (std::is_same<T, std::string>::value) {
    std::string s(rng() % 3, 'a');
    for (char& c : s) c = static_cast<char>('a' + rng() % 26);
    return s;
  } else {  // std::complex
    using R = typename T::value_type;
    return T(static_cast<R>(std::normal_distribution<double>(0, 10)(rng)),
             static_cast<R>(std::normal_distribution<double>(0, 10)(rng)));
  }
}

template <typename T>
bool Same(const T& a, const T& b) {
  if constexpr (std::is_trivially_copyable<T>::value) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  } else {
    return a == b;
  }
}

template <typename T>
const char* TypeName() {
  if constexpr (std::is_same<T, float>::value) return "float";
  if constexpr (std::is_same<T, double>::value) return "double";
  if constexpr (std::is_same<T, int8_t>::value) return "int8";
  if constexpr (std::is_same<T, uint8_t>::value) return "uint8";
  if constexpr (std::is_same<T, int32_t>::value) return "int32";
  if constexpr (std::is_same<T, int64_t>::value) return "int64";
  if constexpr (std::is_same<T, uint64_t>::value) return "uint64";
  if constexpr (std::is_same<T, bool>::value) return "bool";
  if constexpr (std::is_same<T, std::string>::value) return "string";
  if constexpr (std::is_same<T, std::complex<float>>::value) return "complex64";
  return "?";
}

template <typename Op>
const char* OpName() {
  if constexpr (std::is_same<Op, tso::AssignOp>::value) return "assign";
  if constexpr (std::is_same<Op, tso::AddOp>::value) return "add";
  if constexpr (std::is_same<Op, tso::SubOp>::value) return "sub";
  if constexpr (std::is_same<Op, tso::MinOp>::value) return "min";
  if constexpr (std::is_same<Op, tso::MulOp>::value) return "mul";
  if constexpr (std::is_same<Op, tso::SegmentMinOp>::value) return "segment_min";
  if constexpr (std::is_same<Op, tso::SegmentMaxOp>::value) return "segment_max";
  if constexpr (std::is_same<Op, tso::MeanOp>::value) return "mean";
  if constexpr (std::is_same<Op, tso::SqrtNOp>::value) return "sqrt_n";
  return "max";
}

// A heap array of exactly n elements (std::vector<bool> has no bool&).
template <typename T>
struct Arr {
  int64_t n = 0;
  std::unique_ptr<T[]> p;
  explicit Arr(int64_t size = 0, const T& v = T()) : n(size), p(new T[std::max<int64_t>(size, 1)]) {
    for (int64_t k = 0; k < n; ++k) p[k] = v;
  }
  Arr(const Arr& o) : Arr(o.n) { std::copy(o.p.get(), o.p.get() + n, p.get()); }
  Arr& operator=(const Arr& o) { Arr c(o); std::swap(n, c.n); std::swap(p, c.p); return *this; }
  T& operator[](int64_t k) { return p[k]; }
  const T& operator[](int64_t k) const { return p[k]; }
  T* begin() { return p.get(); }
  T* end() { return p.get() + n; }
  T* data() { return p.get(); }
};

// ---- one random case ------------------------------------------------------

struct Geometry {
  std::vector<int64_t> dims;  // outer dims addressed by the index (depth of them)
  int64_t slice = 1;
  int64_t n = 0;
};

template <typename T, typename Op, typename Index>
void RunCase(std::mt19937_64& rng, const Geometry& g, double bad_fraction,
             int threads, tso::Init mode, const char* label) {
  const int depth = static_cast<int>(g.dims.size());
  int64_t nslots = 1;
  for (int64_t d : g.dims) nslots *= d;
  const int64_t S = g.slice;
  const int64_t total = nslots * S;

  // Indices: mostly valid (a few hot slots for duplicates), some bad.
  std::vector<Index> idx(g.n * depth);
  const bool hot = rng() % 2;
  for (int64_t i = 0; i < g.n; ++i) {
    const bool bad = bad_fraction > 0 &&
                     std::uniform_real_distribution<double>(0, 1)(rng) < bad_fraction;
    const int bad_dim = depth ? static_cast<int>(rng() % depth) : 0;
    for (int d = 0; d < depth; ++d) {
      const int64_t dim = g.dims[d];
      Index v;
      if (bad && d == bad_dim) {
        v = static_cast<Index>(tfso_test::BadCoordinate<Index>(rng, dim));
      } else if (dim == 0) {
        v = 0;  // any index into an empty dim is bad
      } else {
        const int64_t range = hot ? std::min<int64_t>(dim, 3) : dim;
        v = static_cast<Index>(rng() % range);
      }
      idx[i * depth + d] = v;
    }
  }
  std::vector<int64_t> ref_slots;
  const int64_t ref_bad = tfso_test::ReferenceSlots(idx.data(), g.n, g.dims, &ref_slots);

  std::vector<int64_t> strides(depth);
  int64_t stride = 1;
  for (int d = depth - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= g.dims[d];
  }
  const tso::Parallel par = threads <= 1 ? Serial()
                            : rng() % 2  ? ThreadParallel(threads, rng())
                                         : PoolParallel(threads);
  HeapScratch heap;
  const tso::IndexRows rows =
      tso::MakeIndexRows<Index>(idx.data(), g.n, depth, g.dims.data(), strides.data());
  std::vector<int64_t> slots(g.n + 1, -7);  // one guard entry past the end
  const int64_t bad = tso::Linearize(rows, slots.data(), par);
  CHECK(bad == ref_bad, "%s: first bad row %lld, expected %lld", label,
        (long long)bad, (long long)ref_bad);
  CHECK(slots[g.n] == -7, "%s: Linearize wrote past the end", label);
  for (int64_t i = 0; i < g.n; ++i) {
    CHECK(slots[i] == ref_slots[i], "%s: slot[%lld] = %lld, expected %lld", label,
          (long long)i, (long long)slots[i], (long long)ref_slots[i]);
  }

  // Scatter (bad rows dropped, as with IGNORE).
  Arr<T> updates(g.n * S), init(total);
  for (auto& v : updates) v = RandomValue<T>(rng);
  for (auto& v : init) v = RandomValue<T>(rng);
  Arr<T> expected = mode == tso::Init::kZero ? Arr<T>(total, T()) : init;
  tfso_test::ReferenceScatter<Op>(ref_slots, S, updates.data(), expected.data());
  // The core's buffers are exactly sized heap arrays, so ASan sees overruns.
  Arr<T> out_buf = mode == tso::Init::kInPlace ? init : Arr<T>(total, RandomValue<T>(rng));
  const tso::CpuCall shape = Call(rows, S, nslots);
  // Under the ERROR policy a call with a bad row reports it; in place it
  // writes nothing (a fresh output is thrown away with the failed op).
  if (ref_bad >= 0) {
    const Arr<T> before = out_buf;
    const int64_t strict_bad = tso::ScatterCpu<T, Op>(
        shape, /*ignore=*/false, updates.data(),
        mode == tso::Init::kCopy ? init.data() : nullptr, mode, out_buf.data(), par, heap);
    CHECK(strict_bad == ref_bad, "%s: scatter reported bad row %lld, expected %lld", label,
          (long long)strict_bad, (long long)ref_bad);
    for (int64_t k = 0; k < total && mode == tso::Init::kInPlace; ++k) {
      CHECK(Same(out_buf[k], before[k]), "%s: a failing scatter wrote element %lld", label,
            (long long)k);
    }
    out_buf = before;
  }
  // Without scratch (out of memory) a scatter that needs some writes nothing.
  {
    const Arr<T> before = out_buf;
    HeapScratch none(/*fail=*/true);
    const int64_t r = tso::ScatterCpu<T, Op>(
        shape, /*ignore=*/true, updates.data(),
        mode == tso::Init::kCopy ? init.data() : nullptr, mode, out_buf.data(), par, none);
    if (none.calls > 0) {
      ++g_no_scratch;
      CHECK(r == tso::kNoScratch, "%s: no scratch, but returned %lld", label, (long long)r);
      for (int64_t k = 0; k < total; ++k) {
        CHECK(Same(out_buf[k], before[k]), "%s: a scatter without scratch wrote element %lld",
              label, (long long)k);
      }
    } else {
      CHECK(r == ref_bad, "%s: scatter reported bad row %lld, expected %lld", label,
            (long long)r, (long long)ref_bad);
      out_buf = before;  // it needed no scratch and ran: undo for the run below
    }
  }
  const int64_t scatter_bad = tso::ScatterCpu<T, Op>(
      shape, /*ignore=*/true, updates.data(),
      mode == tso::Init::kCopy ? init.data() : nullptr, mode, out_buf.data(), par, heap);
  CHECK(scatter_bad == ref_bad, "%s: scatter reported bad row %lld, expected %lld", label,
        (long long)scatter_bad, (long long)ref_bad);
  int64_t wrong = 0, first_wrong = -1;
  for (int64_t k = 0; k < total; ++k) {
    if (!Same(out_buf[k], expected[k])) {
      if (first_wrong < 0) first_wrong = k;
      ++wrong;
    }
  }
  CHECK(wrong == 0, "%s: scatter %lld wrong elements, first at %lld", label,
        (long long)wrong, (long long)first_wrong);

  // Gather from the scattered tensor: bad rows give zeros.
  Arr<T> gathered(g.n * S);
  for (auto& v : gathered) v = RandomValue<T>(rng);
  const int64_t gather_bad = tso::GatherCpu<T>(shape, out_buf.data(), gathered.data(), par);
  CHECK(gather_bad == ref_bad, "%s: gather reported bad row %lld, expected %lld", label,
        (long long)gather_bad, (long long)ref_bad);
  Arr<T> want(g.n * S);
  tfso_test::ReferenceGather(ref_slots, S, expected.data(), want.data());
  wrong = 0;
  for (int64_t k = 0; k < g.n * S; ++k) wrong += !Same(gathered[k], want[k]);
  CHECK(wrong == 0, "%s: gather %lld wrong elements", label, (long long)wrong);
}

Geometry RandomGeometry(std::mt19937_64& rng, bool large) {
  Geometry g;
  const int depth = static_cast<int>(rng() % 5);  // 0..4
  const int kind = static_cast<int>(rng() % 10);
  for (int d = 0; d < depth; ++d) {
    int64_t dim = 1 + rng() % (large ? 64 : 6);
    if (kind == 0 && rng() % 3 == 0) dim = 0;  // zero-size dims
    g.dims.push_back(dim);
  }
  if (kind == 1) {
    g.slice = 0;  // empty slices
  } else if (kind == 2 && large) {
    g.slice = 4096 + rng() % 300;  // column-split path
  } else {
    g.slice = 1 + (rng() % 3 == 0 ? rng() % 40 : 0);
  }
  // Keep the output within ~4M elements (the sanitizer's memory is finite).
  auto elements = [&g] {
    int64_t e = g.slice;
    for (int64_t d : g.dims) e *= d;
    return e;
  };
  while (elements() > (int64_t(1) << 22)) {
    int64_t& biggest = *std::max_element(g.dims.begin(), g.dims.end());
    if (biggest > 1) biggest /= 2; else g.slice /= 2;
  }
  const int64_t max_n = large ? 70000 : 12;
  g.n = rng() % 5 == 0 ? 0 : static_cast<int64_t>(rng() % (max_n + 1));
  if (g.slice > 1000) g.n = std::min<int64_t>(g.n, 40);
  if (g.slice > 1) {
    // Keep one case's updates modest for the sanitizer run.
    g.n = std::min<int64_t>(g.n, 2000000 / std::max<int64_t>(g.slice, 1));
  }
  return g;
}

template <typename T, typename Op>
void RandomCase(std::mt19937_64& rng, int64_t case_no) {
  const bool large = rng() % 4 == 0;
  Geometry g = RandomGeometry(rng, large);
  // Strings concatenate: few destinations and many rows would build strings
  // of ~n characters in every gathered element (memory ~ n^2).
  if constexpr (std::is_same<T, std::string>::value) g.n = std::min<int64_t>(g.n, 1000);
  const double bad = rng() % 3 == 0 ? 0.0 : (rng() % 2 ? 0.01 : 0.3);
  const int threads = (rng() % 4 == 0) ? 1 : 2 + static_cast<int>(rng() % 7);
  tso::Init mode;
  switch (rng() % 3) {
    case 0: mode = tso::Init::kZero; break;
    case 1: mode = tso::Init::kCopy; break;
    default: mode = tso::Init::kInPlace;
  }
  char label[200];
  std::snprintf(label, sizeof label, "case %lld %s/%s depth %zu n %lld slice %lld threads %d mode %d",
                (long long)case_no, OpName<Op>(), TypeName<T>(), g.dims.size(),
                (long long)g.n, (long long)g.slice, threads, (int)mode);
  switch (rng() % 3) {
    case 0: RunCase<T, Op, int16_t>(rng, g, bad, threads, mode, label); break;
    case 1: RunCase<T, Op, int32_t>(rng, g, bad, threads, mode, label); break;
    default: RunCase<T, Op, int64_t>(rng, g, bad, threads, mode, label);
  }
}

template <typename T, bool kMinMax, bool kSub>
void AllOps(std::mt19937_64& rng, int64_t case_no) {
  const int pick = static_cast<int>(rng() % 8);
  if (pick == 0) return RandomCase<T, tso::AssignOp>(rng, case_no);
  if (pick == 1) return RandomCase<T, tso::AddOp>(rng, case_no);
  if constexpr (kSub) {  // the numbers: also the segment product
    if (pick == 2) return RandomCase<T, tso::SubOp>(rng, case_no);
    if (pick == 5) return RandomCase<T, tso::MulOp>(rng, case_no);
  }
  if constexpr (kMinMax) {  // the real numbers: the scatters' and the segments' min/max
    if (pick == 3) return RandomCase<T, tso::MinOp>(rng, case_no);
    if (pick == 4) return RandomCase<T, tso::MaxOp>(rng, case_no);
    if (pick == 6) return RandomCase<T, tso::SegmentMinOp>(rng, case_no);
    if (pick == 7) return RandomCase<T, tso::SegmentMaxOp>(rng, case_no);
  }
  RandomCase<T, tso::AssignOp>(rng, case_no);
}

// Depth-1 rows whose indices are the slots themselves (dims {nslots}).
struct SlotRows {
  SlotRows(const int64_t* slots, int64_t n, int64_t nslots) : dim(nslots) {
    rows = tso::MakeIndexRows<int64_t>(slots, n, 1, &dim, &stride);
  }
  int64_t dim, stride = 1;
  tso::IndexRows rows;
};

// Hand-made cases with known answers (not just "equal to the reference").
void FixedCases() {
  const tso::Parallel serial = Serial();
  HeapScratch heap;
  // Duplicates: last wins for assign, index-order sums for add.
  {
    const int64_t idx[] = {1, 1, 1, 3};
    const int64_t dims[] = {4}, strides[] = {1};
    const tso::IndexRows rows = tso::MakeIndexRows<int64_t>(idx, 4, 1, dims, strides);
    int64_t slots[4];
    CHECK(tso::Linearize(rows, slots, serial) == -1, "dups");
    const float upd[] = {10, 20, 30, 40};
    float init[] = {1, 2, 3, 4}, out[4];
    const tso::CpuCall s = Call(rows, 1, 4);
    tso::ScatterCpu<float, tso::AssignOp>(s, false, upd, init, tso::Init::kCopy, out, serial, heap);
    CHECK(out[0] == 1 && out[1] == 30 && out[2] == 3 && out[3] == 40, "assign dups");
    tso::ScatterCpu<float, tso::AddOp>(s, false, upd, init, tso::Init::kCopy, out, serial, heap);
    CHECK(out[0] == 1 && out[1] == 62 && out[2] == 3 && out[3] == 44, "add dups");
    tso::ScatterCpu<float, tso::AddOp>(s, false, upd, nullptr, tso::Init::kZero, out, serial, heap);
    CHECK(out[0] == 0 && out[1] == 60 && out[2] == 0 && out[3] == 40, "scatter_nd dups");
  }
  // The first bad row is reported, at every depth, with int64 extremes.
  for (int depth = 1; depth <= 4; ++depth) {
    for (int64_t extreme : {INT64_MAX, INT64_MIN, int64_t(-1), int64_t(5), INT64_MAX - 1,
                            INT64_MIN + 1}) {
      for (int bad_dim = 0; bad_dim < depth; ++bad_dim) {
        std::vector<int64_t> dims(depth, 5), strides(depth);
        int64_t st = 1;
        for (int d = depth - 1; d >= 0; --d) { strides[d] = st; st *= 5; }
        std::vector<int64_t> idx(3 * depth, 2);
        idx[1 * depth + bad_dim] = extreme;
        idx[2 * depth + bad_dim] = extreme;
        std::vector<int64_t> slots(3);
        const int64_t bad = tso::Linearize(
            tso::MakeIndexRows<int64_t>(idx.data(), 3, depth, dims.data(), strides.data()),
            slots.data(), ThreadParallel(3, depth));
        CHECK(bad == 1, "depth %d extreme %lld dim %d: first bad %lld", depth,
              (long long)extreme, bad_dim, (long long)bad);
        CHECK(slots[1] == -1 && slots[2] == -1 && slots[0] >= 0, "bad slots");
      }
    }
  }
  // A coordinate that is huge in every position must not wrap into range:
  // 2^62 * stride 4 overflows uint64 to 0.
  {
    const int64_t dims[] = {4, 4}, strides[] = {4, 1};
    const int64_t idx[] = {int64_t(1) << 62, 0};
    int64_t slot = 0;
    CHECK(tso::Linearize(tso::MakeIndexRows<int64_t>(idx, 1, 2, dims, strides), &slot,
                         serial) == 0 &&
              slot == -1,
          "wrapped offset accepted");
  }
  // min/max, hand-computed: a NaN already in the output stays, a NaN update
  // never replaces a number, and between -0 and +0 the first one stays.
  {
    const float nan = std::nanf("");
    const int64_t slots[] = {0, 0, 1, 1, 2, 2, 3};
    const float upd[] = {nan, 5.f, nan, -1.f, -0.f, 0.f, 7.f};
    const float init[] = {3.f, 2.f, 0.f, nan};
    float out[4];
    const SlotRows r(slots, 7, 4);
    const tso::CpuCall s = Call(r.rows, 1, 4);
    tso::ScatterCpu<float, tso::MinOp>(s, false, upd, init, tso::Init::kCopy, out, serial, heap);
    CHECK(out[0] == 3.f && out[1] == -1.f && out[2] == 0.f && !std::signbit(out[2]) &&
              std::isnan(out[3]), "min with nan / signed zeros");
    tso::ScatterCpu<float, tso::MaxOp>(s, false, upd, init, tso::Init::kCopy, out, serial, heap);
    CHECK(out[0] == 5.f && out[1] == 2.f && out[2] == 0.f && !std::signbit(out[2]) &&
              std::isnan(out[3]), "max with nan / signed zeros");
  }
  // Strings concatenate in index order (scatter_nd), bools OR.
  {
    const int64_t slots[] = {0, 0, 1};
    const std::string upd[] = {"a", "b", "c"};
    std::string out[2];
    const SlotRows r(slots, 3, 2);
    tso::ScatterCpu<std::string, tso::AddOp>(Call(r.rows, 1, 2), false, upd, nullptr,
                                             tso::Init::kZero, out, serial, heap);
    CHECK(out[0] == "ab" && out[1] == "c", "string concat");
    const bool bupd[] = {true, false, false};
    bool bout[2];
    tso::ScatterCpu<bool, tso::AddOp>(Call(r.rows, 1, 2), false, bupd, nullptr, tso::Init::kZero,
                                      bout, serial, heap);
    CHECK(bout[0] && !bout[1], "bool or");
  }
  // Signed overflow wraps (and UBSan must not fire).
  {
    const int64_t slots[] = {0, 0};
    const int32_t upd[] = {INT32_MAX, 1};
    int32_t out[1] = {0};
    const SlotRows r(slots, 2, 1);
    tso::ScatterCpu<int32_t, tso::AddOp>(Call(r.rows, 1, 1), false, upd, nullptr, tso::Init::kZero,
                                         out, serial, heap);
    CHECK(out[0] == INT32_MIN, "wrap add");
    const int8_t u8[] = {INT8_MIN, 1};
    int8_t o8[1] = {0};
    tso::ScatterCpu<int8_t, tso::SubOp>(Call(r.rows, 1, 1), false, u8, nullptr, tso::Init::kZero,
                                        o8, serial, heap);
    CHECK(o8[0] == 127, "wrap sub: %d", o8[0]);
  }
  // Zero sizes: nothing touched, nothing read.
  {
    const SlotRows none(nullptr, 0, 0);
    const tso::CpuCall empty = Call(none.rows, 5, 0);
    tso::ScatterCpu<float, tso::AddOp>(empty, false, nullptr, nullptr, tso::Init::kZero, nullptr,
                                       ThreadParallel(4, 1), heap);
    tso::GatherCpu<float>(empty, nullptr, nullptr, ThreadParallel(4, 1));
    int64_t slot = 0;
    const int64_t idx = 0;
    const SlotRows into_empty(&idx, 1, 0);
    CHECK(tso::Linearize(into_empty.rows, &slot, serial) == 0, "index into an empty dim is bad");
    // ... and a scatter into an empty output still reports it.
    const tso::CpuCall s = Call(into_empty.rows, 5, 0);
    const int64_t bad = tso::ScatterCpu<float, tso::AddOp>(s, false, nullptr, nullptr,
                                                           tso::Init::kZero, nullptr, serial, heap);
    CHECK(bad == 0, "bad row into an empty output");
  }
}

template <typename T>
void Big(std::mt19937_64& rng, int64_t& case_no) {
  // Geometries that force each parallel path with real threads.
  struct G { std::vector<int64_t> dims; int64_t slice, n; };
  const G gs[] = {
      // (more than 128k update elements: outputs of <= 8 MiB with fewer
      // take the serial in-cache path)
      {{60000}, 1, 300000},     // grouped, value entries
      {{3000}, 7, 20000},       // grouped, row entries
      {{40, 3}, 5, 60000},      // grouped, heavy duplicates
      {{8}, 5000, 30},          // column split
      {{}, 40000, 8},           // depth 0: one slot
      {{1 << 20}, 1, 200000},   // many blocks
  };
  for (const G& x : gs) {
    Geometry g;
    g.dims = x.dims;
    g.slice = x.slice;
    g.n = x.n;
    for (tso::Init mode : {tso::Init::kZero, tso::Init::kCopy, tso::Init::kInPlace}) {
      char label[120];
      std::snprintf(label, sizeof label, "big %lld %s", (long long)case_no++, TypeName<T>());
      RunCase<T, tso::AddOp, int64_t>(rng, g, 0.01, 4, mode, label);
      RunCase<T, tso::AssignOp, int32_t>(rng, g, 0.0, 3, mode, label);
    }
  }
}

// The linearisation picked for this CPU (AVX-512 where it has it) and the
// portable one agree on every slot and on the first bad row, for each index
// type and fixed depth, on rows with bad coordinates of every kind.
template <typename Index, int kDepth>
void SameLinearizers(std::mt19937_64& rng) {
  const int64_t n = 3000;
  int64_t dims[kDepth], strides[kDepth];
  int64_t st = 1;
  for (int d = kDepth - 1; d >= 0; --d) {
    dims[d] = 1 + static_cast<int64_t>(rng() % (sizeof(Index) == 2 ? 100 : 5000));
    strides[d] = st;
    st *= dims[d];
  }
  for (int bad_every : {0, 1000, 7}) {
    std::vector<Index> idx(n * kDepth);
    for (int64_t i = 0; i < n; ++i) {
      for (int d = 0; d < kDepth; ++d) idx[i * kDepth + d] = static_cast<Index>(rng() % dims[d]);
      if (bad_every && rng() % bad_every == 0) {
        const Index bad[] = {Index(-1), static_cast<Index>(dims[0]), std::numeric_limits<Index>::min(),
                             std::numeric_limits<Index>::max()};
        idx[i * kDepth + rng() % kDepth] = bad[rng() % 4];
      }
    }
    const tso::IndexRows rows = tso::MakeIndexRows<Index>(idx.data(), n, kDepth, dims, strides);
    std::vector<int64_t> a(n), b(n);
    for (int64_t begin = 0; begin < n; begin += 700) {
      const int64_t end = std::min(n, begin + 700);
      const int64_t bad_a = rows.Fill(begin, end, a.data() + begin);
      const int64_t bad_b = tso::internal::FillRows<Index, kDepth>(rows, begin, end, b.data() + begin);
      CHECK(bad_a == bad_b, "linearisers: first bad row %lld vs %lld (depth %d, %d-byte index)",
            (long long)bad_a, (long long)bad_b, kDepth, int(sizeof(Index)));
    }
    CHECK(a == b, "linearisers disagree on a slot (depth %d, %d-byte index)", kDepth,
          int(sizeof(Index)));
  }
}

void SameLinearizers() {
  std::mt19937_64 rng(11);
  SameLinearizers<int16_t, 1>(rng); SameLinearizers<int16_t, 2>(rng); SameLinearizers<int16_t, 3>(rng);
  SameLinearizers<int32_t, 1>(rng); SameLinearizers<int32_t, 2>(rng); SameLinearizers<int32_t, 3>(rng);
  SameLinearizers<int64_t, 1>(rng); SameLinearizers<int64_t, 2>(rng); SameLinearizers<int64_t, 3>(rng);
}

// Every ISA this CPU has (cpu_features.h), lowest first.
std::vector<tso::Isa> CpuIsas() {
  std::vector<tso::Isa> isas;
  for (tso::Isa isa : {tso::Isa::kPortable, tso::Isa::kAvx2, tso::Isa::kAvx512}) {
    if (isa <= tso::CpuIsa()) isas.push_back(isa);
  }
  return isas;
}

// Gathers large enough to stream (row_copy.h): rows of S floats into an
// aligned output of >= 8 MiB, with bad rows (zeros), checked element by
// element against the params; then the same into an output one float off
// alignment, which must fall back to ordinary copies with the same result.
// Returns how many of the two streamed.
int64_t g_streamed = 0;
int StreamedGather(int64_t S) {
  const int64_t nparams = 5000, n = 140000 * 16 / S;
  std::mt19937_64 rng(7);
  std::vector<float> params(nparams * S);
  for (auto& v : params) v = static_cast<float>(rng() % 100000) - 50000.0f;
  std::vector<int64_t> slots(n);
  int64_t first_bad = -1;
  for (int64_t i = 0; i < n; ++i) {
    slots[i] = rng() % 100 == 0 ? nparams + static_cast<int64_t>(rng() % 3) : rng() % nparams;
    if (slots[i] >= nparams && first_bad < 0) first_bad = i;
  }
  const SlotRows r(slots.data(), n, nparams);
  const tso::CpuCall shape = Call(r.rows, S, nparams);
  const int64_t bytes = n * S * int64_t(sizeof(float));
  float* buf = static_cast<float*>(std::aligned_alloc(64, bytes + 64));
  int streamed = 0;
  for (float* out : {buf, buf + 1}) {
    if (tso::PickStreamRow(out, S * sizeof(float), bytes) != nullptr) ++streamed;
    std::fill(out, out + n * S, -1.0f);
    const int64_t bad = tso::GatherCpu<float>(shape, params.data(), out, ThreadParallel(3, 1));
    CHECK(bad == first_bad, "streamed gather: bad row %lld, expected %lld", (long long)bad,
          (long long)first_bad);
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < S; ++k) {
        const float want = slots[i] < nparams ? params[slots[i] * S + k] : 0.0f;
        wrong += out[i * S + k] != want;
      }
    }
    CHECK(wrong == 0, "streamed gather (%s, %lld floats a row, offset %d): %lld wrong elements",
          tso::IsaName(tso::ActiveIsa()), (long long)S, int(out - buf), (long long)wrong);
  }
  std::free(buf);
  g_streamed += streamed;
  return streamed;
}

// The vectorised paths under every ISA the CPU has: the linearisers agree
// with the portable loop, and the streamed gathers are right and stream
// exactly when that ISA can (64-byte rows: AVX2 and AVX-512; 32-byte rows:
// AVX2 stores, also under AVX-512; aligned outputs only).
void EveryIsa() {
  for (tso::Isa isa : CpuIsas()) {
    tso::SetIsa(isa);
    CHECK(tso::ActiveIsa() == isa, "SetIsa(%s) did not take", tso::IsaName(isa));
    SameLinearizers();
    const int want = isa >= tso::Isa::kAvx2 ? 1 : 0;
    for (int64_t S : {16, 8}) {
      const int streamed = StreamedGather(S);
      CHECK(streamed == want, "%s: %d of the gathers of %lld-float rows streamed (expected %d)",
            tso::IsaName(isa), streamed, (long long)S, want);
    }
  }
  tso::SetIsa(tso::CpuIsa());
}

}  // namespace

// The sorted-segment core against a naive loop per segment: runs of random
// lengths (some long, some segments empty), rows gathered or not, every
// Parallel; kIndex with each reducer, kGroups8 sums with mean and sqrt_n.
template <typename Op, tso::Order kOrder>
void SortedSegmentCase(std::mt19937_64& rng) {
  const int64_t nsegments = 1 + rng() % 300, slice = 1 + rng() % (rng() % 4 ? 9 : 200);
  const bool gathered = kOrder == tso::Order::kGroups8 || rng() % 2;
  tso::Runs runs;
  std::vector<int64_t> rows;
  const int64_t data_rows = 1 + rng() % 500;
  runs.first[0] = gathered ? 0 : rng() % 3;  // rows before the first run are not reduced
  int64_t row = runs.first[0];
  for (int64_t seg = 0; seg < nsegments; ++seg) {
    if (rng() % 4 == 0) continue;  // a gap
    const int64_t n = 1 + (rng() % 10 == 0 ? rng() % 3000 : rng() % 20);
    runs.segment.push_back(seg);
    row += n;
    runs.first.push_back(row);
  }
  const int64_t nrows = row;
  for (int64_t i = 0; i < nrows; ++i) rows.push_back(static_cast<int64_t>(rng() % data_rows));
  std::vector<double> data((gathered ? data_rows : nrows) * slice);
  for (double& v : data) v = static_cast<double>(static_cast<int64_t>(rng() % 2001) - 1000) / 7;
  const double gap = -3;
  std::vector<double> want(nsegments * slice, gap), got(nsegments * slice, 99);
  for (int64_t k = 0; k < runs.count(); ++k) {
    const int64_t b = runs.first[k], e = runs.first[k + 1], n = e - b;
    for (int64_t j = 0; j < slice; ++j) {
      const auto at = [&](int64_t i) { return data[(gathered ? rows[i] : i) * slice + j]; };
      double acc = at(b);
      if (kOrder == tso::Order::kIndex) {
        for (int64_t i = b + 1; i < e; ++i) Op::Apply(acc, at(i));
      } else {  // the first r rows (r = n mod 8, 8 for 0, 9 for 1), then groups of 8
        int64_t head = n % 8 == 0 ? 8 : n % 8 == 1 ? 9 : n % 8;
        head = std::min(head, n);
        for (int64_t i = b + 1; i < b + head; ++i) acc += at(i);
        for (int64_t g = b + head; g < e; g += 8) {
          double group = at(g);
          for (int64_t i = g + 1; i < g + 8; ++i) group += at(i);
          acc += group;
        }
      }
      tso::Finalize<Op>(acc, n, kOrder == tso::Order::kGroups8 && n <= 9);
      want[runs.segment[k] * slice + j] = acc;
    }
  }
  const int threads = 1 + rng() % 4;
  const tso::Parallel par = threads == 1 ? Serial()
                            : rng() % 2  ? ThreadParallel(threads, rng())
                                         : PoolParallel(threads);
  tso::SortedSegmentCpu<double, Op, kOrder, double, int64_t>(
      runs, data.data(), gathered ? rows.data() : nullptr, slice, nsegments, gap, got.data(), par);
  CHECK(std::memcmp(want.data(), got.data(), want.size() * sizeof(double)) == 0,
        "sorted segment %s order %d: %lld segments x %lld, %d threads, gathered %d", OpName<Op>(),
        static_cast<int>(kOrder), (long long)nsegments, (long long)slice, threads, gathered);
}

void SortedSegments(std::mt19937_64& rng) {
  for (int c = 0; c < 60; ++c) {
    SortedSegmentCase<tso::AddOp, tso::Order::kIndex>(rng);
    SortedSegmentCase<tso::MulOp, tso::Order::kIndex>(rng);
    SortedSegmentCase<tso::SegmentMaxOp, tso::Order::kIndex>(rng);
    SortedSegmentCase<tso::SegmentMinOp, tso::Order::kIndex>(rng);
    SortedSegmentCase<tso::MeanOp, tso::Order::kIndex>(rng);
    SortedSegmentCase<tso::AddOp, tso::Order::kGroups8>(rng);
    SortedSegmentCase<tso::MeanOp, tso::Order::kGroups8>(rng);
    SortedSegmentCase<tso::SqrtNOp, tso::Order::kGroups8>(rng);
  }
}

// The arg core (cpu/arg_scatter_cpu.h) against a naive loop over the rows in
// index order with common/arg_reducers.h's rule: values with ties and NaN,
// seeded (a tensor's values) or empty (segments), bad rows dropped, on the
// pool or random thread splits, slices short (slot ranges per thread) and
// long (columns per thread).
template <typename Op>
void ArgCase(std::mt19937_64& rng) {
  const bool seeded = rng() % 2;
  const int64_t slice = 1 + rng() % (rng() % 8 ? 8 : tso::kColumnSplitSlice + 50);
  const int64_t nslots = 1 + rng() % (rng() % 4 && slice <= 8 ? 2000 : 3);
  const int64_t n = rng() % (300000 / slice + 1);
  std::vector<int64_t> idx(n);
  for (int64_t& v : idx) v = rng() % 40 == 0 ? -1 - int64_t(rng() % 3) : int64_t(rng() % nslots);
  std::vector<float> upd(n * slice), init(nslots * slice);
  const auto value = [&]() {
    return rng() % 50 == 0 ? std::numeric_limits<float>::quiet_NaN() : float(rng() % 7);
  };
  for (float& v : upd) v = value();
  for (float& v : init) v = value();
  std::vector<float> want = init;
  std::vector<int64_t> want_arg(init.size(), -1);
  int64_t want_bad = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (idx[i] < 0) {
      if (want_bad < 0) want_bad = i;
      continue;
    }
    for (int64_t j = 0; j < slice; ++j) {
      float& out = want[idx[i] * slice + j];
      int64_t& arg = want_arg[idx[i] * slice + j];
      const float u = upd[i * slice + j];
      const bool beats = std::is_same<Op, tso::ArgMaxOp>::value ? out < u : u < out;
      if ((!seeded && arg < 0) || beats || (std::isnan(u) && !std::isnan(out))) {
        out = u;
        arg = i;
      }
    }
  }
  const int64_t dims[1] = {nslots}, strides[1] = {1};
  const tso::CpuCall call =
      Call(tso::MakeIndexRows<int64_t>(idx.data(), n, 1, dims, strides), slice, nslots);
  std::vector<float> got = init;
  std::vector<int64_t> got_arg(init.size(), -1);
  const int threads = 1 + rng() % 6;
  const tso::Parallel par = rng() % 2 ? PoolParallel(threads) : ThreadParallel(threads, rng());
  HeapScratch heap;
  const int64_t bad = tso::ArgScatterCpu<float, Op>(call, /*ignore=*/true, seeded, upd.data(),
                                                    got.data(), got_arg.data(), par, heap);
  CHECK(bad == want_bad, "arg: first bad row %lld, want %lld", (long long)bad, (long long)want_bad);
  if (want_bad >= 0) {  // under ERROR: nothing written
    std::vector<float> kept = init;
    std::vector<int64_t> kept_arg(init.size(), -1);
    const int64_t strict = tso::ArgScatterCpu<float, Op>(call, /*ignore=*/false, seeded, upd.data(),
                                                         kept.data(), kept_arg.data(), par, heap);
    CHECK(strict == want_bad && kept_arg == std::vector<int64_t>(init.size(), -1) &&
              std::memcmp(kept.data(), init.data(), init.size() * sizeof(float)) == 0,
          "arg: a bad row under ERROR wrote the output");
  }
  CHECK(got_arg == want_arg && std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0,
        "arg %s: %lld rows into %lld x %lld, %d threads, seeded %d", 
        std::is_same<Op, tso::ArgMaxOp>::value ? "max" : "min", (long long)n, (long long)nslots,
        (long long)slice, threads, seeded);
}

// The hinted core (indices_are_sorted, with or without unique_indices):
// depth-1 rows made sorted (or strictly increasing), some bad, every init
// mode, adds and updates (the last row wins), zero-width slices, on the pool
// or random thread splits, equal bitwise to the unhinted core; a broken
// promise returns kFalseHint naming the first row that breaks it (the naive
// loop's), and a bad row under !ignore is returned first: in both cases
// with the output untouched.
// Bitwise equal (memcmp is not called on an empty vector's null data).
inline bool SameBytes(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

template <typename Op>
void HintedCase(std::mt19937_64& rng) {
  const bool unique = rng() % 2, ignore = rng() % 2;
  const int64_t nslots = 1 + rng() % (rng() % 8 ? 3000 : 2);
  const int64_t slice = rng() % 16 == 0 ? 0 : 1 + rng() % (rng() % 4 ? 4 : 300);
  int64_t n = unique ? rng() % (nslots + 1) : rng() % (rng() % 4 ? 5000 : 40000);
  std::vector<int64_t> idx(n);
  if (unique) {  // distinct slots: a partial shuffle
    std::vector<int64_t> all(nslots);
    for (int64_t k = 0; k < nslots; ++k) all[k] = k;
    for (int64_t k = 0; k < n; ++k) std::swap(all[k], all[k + rng() % (nslots - k)]);
    std::copy(all.begin(), all.begin() + n, idx.begin());
  } else {
    for (int64_t& v : idx) v = rng() % nslots;
  }
  std::sort(idx.begin(), idx.end());
  if (ignore || rng() % 3 == 0) {
    const int64_t every = 2 + rng() % 50;
    for (int64_t& v : idx) if (rng() % every == 0) v = rng() % 2 ? -1 : nslots + 3;
  }
  const bool broken = n > 1 && rng() % 4 == 0;
  if (broken) std::swap(idx[rng() % n], idx[rng() % n]);
  if (broken && unique && rng() % 2) idx[rng() % n] = idx[rng() % n];
  // the naive check: the first kept row that breaks the promise
  int64_t want_false = -1, previous = -1;
  for (int64_t i = 0; i < n && want_false < 0; ++i) {
    const int64_t v = idx[i];
    if (v < 0 || v >= nslots) continue;
    if (previous >= 0 && (v < previous || (unique && v == previous))) want_false = i;
    previous = v;
  }
  const int64_t dims[1] = {nslots}, strides[1] = {1};
  const tso::CpuCall call =
      Call(tso::MakeIndexRows<int64_t>(idx.data(), n, 1, dims, strides), slice, nslots);
  std::vector<double> upd(n * slice), init(nslots * slice);
  for (double& v : upd) v = RandomValue<double>(rng);
  for (double& v : init) v = RandomValue<double>(rng);
  const tso::Init mode = std::array<tso::Init, 3>{tso::Init::kInPlace, tso::Init::kCopy,
                                                  tso::Init::kZero}[rng() % 3];
  // a fresh output starts as garbage the core must overwrite
  std::vector<double> start = mode == tso::Init::kInPlace ? init : std::vector<double>(init.size(), -7.5);
  std::vector<double> want = start, got = start;
  HeapScratch heap;
  const tso::Parallel serial = Serial();
  const int64_t want_bad = tso::ScatterCpu<double, Op>(
      call, true, upd.data(), init.data(), mode, want.data(), serial, heap);
  const int threads = 1 + rng() % 6;
  const tso::Parallel par = rng() % 2 ? PoolParallel(threads) : ThreadParallel(threads, rng());
  tso::ScatterHints hints;
  hints.sorted = true;
  hints.unique = unique;
  int64_t bad = tso::ScatterSorted<double, Op>(call, ignore, &hints, upd.data(), init.data(),
                                               mode, got.data(), par);
  const int64_t first_bad = [&] {
    for (int64_t i = 0; i < n; ++i) if (idx[i] < 0 || idx[i] >= nslots) return i;
    return int64_t(-1);
  }();
  if (bad == tso::kFalseHint || bad == tso::kUnhinted || (!ignore && first_bad >= 0)) {
    CHECK(SameBytes(got, start),
          "hinted: returned %lld having written the output", (long long)bad);
  }
  if (!ignore && first_bad >= 0) {
    CHECK(bad == first_bad, "hinted: first bad row %lld, want %lld", (long long)bad,
          (long long)first_bad);
    return;
  }
  if (want_false >= 0) {
    CHECK(bad == tso::kFalseHint && hints.false_at == want_false,
          "hinted (unique %d): %lld / row %lld, want the false hint at row %lld", unique,
          (long long)bad, (long long)hints.false_at, (long long)want_false);
    return;
  }
  if (bad == tso::kUnhinted) {
    CHECK(threads > 1 && nslots == 1 && slice > 0, "hinted: unhinted for %lld slots",
          (long long)nslots);
    bad = tso::ScatterCpu<double, Op>(call, ignore, upd.data(), init.data(), mode, got.data(),
                                      par, heap);
  }
  CHECK(bad == want_bad, "hinted: first bad row %lld, want %lld", (long long)bad,
        (long long)want_bad);
  CHECK(SameBytes(got, want),
        "hinted (unique %d, mode %d): %lld rows into %lld x %lld, %d threads differ", unique,
        int(mode), (long long)n, (long long)nslots, (long long)slice, threads);
}

// The message-passing core (cpu/message_cpu.h) against a naive loop over
// the edges in edge order: gather_reduce's sum, mean, max and min with and
// without per-edge-and-head weights (edges with an id out of range dropped),
// edge_combine's four ops; any thread split gives the same bytes.
template <tso::EdgeReduce kReduce>
void MessageCase(std::mt19937_64& rng) {
  const int64_t rows = 1 + rng() % 60, nseg = rng() % 50, nedges = rng() % 900;
  const int64_t heads = 1 + rng() % 3, width = rng() % 5;
  const int64_t slice = heads * width;
  std::vector<int32_t> src(nedges), dst(nedges);
  for (int64_t e = 0; e < nedges; ++e) {
    src[e] = static_cast<int32_t>(rng() % (rows + 2)) - 1;  // some out of range
    dst[e] = static_cast<int32_t>(rng() % (nseg + 2)) - 1;
  }
  const auto value = [&] { return static_cast<double>(static_cast<int64_t>(rng() % 41) - 20) / 8; };
  std::vector<double> params(rows * slice), weights(nedges * heads);
  for (double& v : params) v = value();
  for (double& v : weights) v = value();
  const bool weighted = rng() % 2;
  const auto keep = [&](int64_t e) { return src[e] >= 0 && src[e] < rows && dst[e] >= 0 && dst[e] < nseg; };
  constexpr bool kArg = kReduce == tso::EdgeReduce::kMax || kReduce == tso::EdgeReduce::kMin;
  const double empty = kReduce == tso::EdgeReduce::kMax ? -1e300 : 1e300;
  std::vector<double> want(nseg * slice, kArg ? empty : 0.0);
  std::vector<int64_t> want_pos(kArg ? nseg * slice : 0, -1), count(nseg, 0);
  for (int64_t e = 0; e < nedges; ++e) {
    if (!keep(e)) continue;
    ++count[dst[e]];
    for (int64_t j = 0; j < slice; ++j) {
      const double x = params[src[e] * slice + j] * (weighted ? weights[e * heads + j / width] : 1.0);
      double& o = want[dst[e] * slice + j];
      if constexpr (kArg) {
        int64_t& p = want_pos[dst[e] * slice + j];
        const bool takes = kReduce == tso::EdgeReduce::kMax ? o < x : x < o;
        if (p < 0 || takes) o = x, p = e;
      } else {
        o += x;
      }
    }
  }
  if (kReduce == tso::EdgeReduce::kMean) {
    for (int64_t v = 0; v < nseg; ++v) {
      for (int64_t j = 0; j < slice && count[v] > 0; ++j) want[v * slice + j] /= count[v];
    }
  }
  const int threads = 1 + rng() % 4;
  const tso::Parallel par = threads == 1 ? Serial() : ThreadParallel(threads, rng());
  tso::EdgeGroups groups;
  tso::GroupEdges(src.data(), dst.data(), nedges, nseg, keep, &groups);
  std::vector<double> got(nseg * slice, 99);
  std::vector<int64_t> pos(want_pos.size(), 99);
  HeapScratch heap;
  const bool done = tso::GatherReduceCpu<kReduce>(groups, params.data(),
                                                  weighted ? weights.data() : nullptr, heads,
                                                  width, empty, got.data(),
                                                  kArg ? pos.data() : nullptr, par, heap);
  CHECK(done, "gather_reduce: no scratch from a heap");
  if (weighted && !groups.edges.empty() && slice > 0) {  // grouped weights need scratch
    HeapScratch none(/*fail=*/true);
    CHECK(!tso::GatherReduceCpu<kReduce>(groups, params.data(), weights.data(), heads, width,
                                         empty, got.data(), kArg ? pos.data() : nullptr, par,
                                         none),
          "gather_reduce: went on without scratch");
  }
  CHECK((want.empty() || std::memcmp(want.data(), got.data(), want.size() * sizeof(double)) == 0) &&
            want_pos == pos,
        "gather_reduce %d: %lld edges into %lld x %lld, %d threads", static_cast<int>(kReduce),
        (long long)nedges, (long long)nseg, (long long)slice, threads);
  // edge_combine over the same edges (b: params' rows, dst taken modulo them)
  std::vector<int32_t> dst_b(nedges);
  for (int64_t e = 0; e < nedges; ++e) dst_b[e] = dst[e] < 0 ? dst[e] : dst[e] % rows;
  const auto keep_b = [&](int64_t e) { return src[e] >= 0 && src[e] < rows && dst_b[e] >= 0; };
  std::vector<double> dot(nedges * heads, 99), sum(nedges * slice, 99);
  tso::EdgeCombineCpu<tso::EdgeOp::kDot, double, double>(params.data(), params.data(), src.data(),
                                                         dst_b.data(), nedges, slice, width, heads,
                                                         keep_b, dot.data(), par);
  tso::EdgeCombineCpu<tso::EdgeOp::kSub, double, double>(params.data(), params.data(), src.data(),
                                                         dst_b.data(), nedges, slice, 1, slice,
                                                         keep_b, sum.data(), par);
  for (int64_t e = 0; e < nedges; ++e) {
    for (int64_t h = 0; h < heads; ++h) {
      double acc = 0, diff = 0;
      for (int64_t f = 0; f < width && keep_b(e); ++f) {
        const int64_t j = h * width + f;
        acc += params[src[e] * slice + j] * params[dst_b[e] * slice + j];
        diff = params[src[e] * slice + j] - params[dst_b[e] * slice + j];
        CHECK(sum[e * slice + j] == diff, "edge_combine sub: edge %lld", (long long)e);
      }
      CHECK(dot[e * heads + h] == acc, "edge_combine dot: edge %lld head %lld", (long long)e,
            (long long)h);
    }
  }
}

void MessageCases(std::mt19937_64& rng) {
  for (int c = 0; c < 40; ++c) {
    MessageCase<tso::EdgeReduce::kSum>(rng);
    MessageCase<tso::EdgeReduce::kMean>(rng);
    MessageCase<tso::EdgeReduce::kMax>(rng);
    MessageCase<tso::EdgeReduce::kMin>(rng);
  }
}

int main(int argc, char** argv) {
  const int64_t cases = argc > 1 ? std::atoll(argv[1]) : 3000;
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 12345;
  std::mt19937_64 rng(seed);
  FixedCases();
  SortedSegments(rng);
  MessageCases(rng);
  for (int c = 0; c < 40; ++c) {
    ArgCase<tso::ArgMaxOp>(rng);
    ArgCase<tso::ArgMinOp>(rng);
  }
  for (int c = 0; c < 150; ++c) {
    HintedCase<tso::AddOp>(rng);
    HintedCase<tso::AssignOp>(rng);
  }
  EveryIsa();
  const std::vector<tso::Isa> isas = CpuIsas();
  int64_t case_no = 0;
  for (tso::Isa isa : isas) {
    tso::SetIsa(isa);
    Big<float>(rng, case_no);
    Big<uint8_t>(rng, case_no);
  }
  for (int64_t c = 0; c < cases; ++c, ++case_no) {
    // the random cases cycle through the ISAs the CPU has
    tso::SetIsa(isas[(c / 10) % isas.size()]);
    switch (c % 10) {
      case 0: AllOps<float, true, true>(rng, case_no); break;
      case 1: AllOps<double, true, true>(rng, case_no); break;
      case 2: AllOps<int8_t, true, true>(rng, case_no); break;
      case 3: AllOps<uint8_t, true, true>(rng, case_no); break;
      case 4: AllOps<int32_t, true, true>(rng, case_no); break;
      case 5: AllOps<int64_t, true, true>(rng, case_no); break;
      case 6: AllOps<uint64_t, true, true>(rng, case_no); break;
      case 7: AllOps<bool, false, false>(rng, case_no); break;
      case 8: AllOps<std::string, false, false>(rng, case_no); break;
      default: AllOps<std::complex<float>, false, true>(rng, case_no);
    }
  }
  CHECK(g_no_scratch > 0, "no call ran out of scratch: that path went unchecked");
  std::string names;
  for (tso::Isa isa : isas) names += std::string(names.empty() ? "" : ", ") + tso::IsaName(isa);
  std::printf("core_test: %lld random cases + fixed/big cases under %s, %lld checks (%lld calls "
              "without scratch, %lld streamed gathers), %d failures (seed %llu)\n",
              (long long)cases, names.c_str(), (long long)g_checks, (long long)g_no_scratch,
              (long long)g_streamed, g_failures, (unsigned long long)seed);
  return g_failures == 0 ? 0 : 1;
}
