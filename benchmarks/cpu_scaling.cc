// How the TensorFlow-free CPU core scales with threads: W1, W3, W5 and W7 of
// the benchmark (float32 values, int32 indices) at 1, 2, 4, ... threads, on a
// pool of std::threads driven by production's scheduler (cpu/chunked_loop.h),
// as the kernels run on TensorFlow's intra-op pool. Every thread count's
// output must be bitwise the one thread's (the core is deterministic); a
// difference fails the run.
//
//   cpu_scaling [--threads 1,2,4,8,16] [--scale 1.0] [--reps 7]
//
// Prints one line per workload and thread count (median ms, GB/s of the
// bytes the op must move, speed-up over one thread) and the CPU's model.
// Outputs and scratch are allocated once and reused, as TensorFlow's BFC
// allocator would: the times are the core's, not the page faults'.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/reducers.h"
#include "cpu/cpu_features.h"
#include "cpu/gather_cpu.h"
#include "cpu/index_linearize.h"
#include "cpu/scatter_cpu.h"
#include "thread_pool.h"  // tests/cc

namespace tso = tf_scatter_ops;

namespace {

// Scratch that keeps its buffers between calls and hands them out again in
// the same order (a call asks for the same sizes each time).
class ReusedScratch : public tso::Scratch {
 public:
  void* Allocate(size_t bytes) override {
    if (next_ == held_.size()) held_.emplace_back();
    auto& b = held_[next_++];
    if (b.size() < bytes) b.assign(bytes, 0);
    return b.data();
  }
  void Reset() { next_ = 0; }

 private:
  std::vector<std::vector<char>> held_;
  size_t next_ = 0;
};

struct Workload {
  const char* name;
  const char* what;
  std::vector<int64_t> dims;  // the target's outer dims (depth = dims.size())
  int64_t slice;
  int64_t n;
  enum Kind { kAdd, kScatterNd, kGather } kind;
};

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

double MedianMs(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> thread_counts = {1, 2, 4, 8, 16};
  double scale = 1.0;
  int reps = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--threads") {
      thread_counts.clear();
      for (char* p = argv[i + 1]; *p;) {
        thread_counts.push_back(static_cast<int>(std::strtol(p, &p, 10)));
        if (*p == ',') ++p;
      }
    } else if (flag == "--scale") {
      scale = std::atof(argv[i + 1]);
    } else if (flag == "--reps") {
      reps = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: %s [--threads 1,2,4] [--scale 1.0] [--reps 7]\n", argv[0]);
      return 2;
    }
  }
  const int64_t M = static_cast<int64_t>(1 << 20);
  auto scaled = [&](int64_t v) { return std::max<int64_t>(1, static_cast<int64_t>(v * scale)); };
  const std::vector<Workload> workloads = {
      {"W1", "tensor_scatter_nd_add 16M <- 1M random (dups)", {scaled(16 * M)}, 1, scaled(M),
       Workload::kAdd},
      {"W3", "row add [1M,64] <- 200k rows (dups)", {scaled(M)}, 64, scaled(200000),
       Workload::kAdd},
      {"W5", "scatter_nd [4096,4096] <- 2M depth-2", {4096, scaled(4096)}, 1, scaled(2 * M),
       Workload::kScatterNd},
      {"W7", "gather_nd 1M rows from [1M,64]", {scaled(M)}, 64, scaled(M), Workload::kGather},
  };
  std::printf("CPU: %s, %u hardware threads, loops: %s\n", CpuModel().c_str(),
              std::thread::hardware_concurrency(), tso::IsaName(tso::ActiveIsa()));
  std::printf("%-4s %7s %10s %8s %8s\n", "", "threads", "median ms", "GB/s", "speed-up");
  std::mt19937_64 rng(1);
  int failures = 0;
  for (const Workload& w : workloads) {
    const int depth = static_cast<int>(w.dims.size());
    int64_t nslots = 1;
    std::vector<int64_t> strides(depth);
    for (int d = depth - 1; d >= 0; --d) {
      strides[d] = nslots;
      nslots *= w.dims[d];
    }
    std::vector<int32_t> idx(w.n * depth);
    for (int64_t i = 0; i < w.n; ++i) {
      for (int d = 0; d < depth; ++d) idx[i * depth + d] = static_cast<int32_t>(rng() % w.dims[d]);
    }
    const int64_t total = nslots * w.slice, rows_out = w.n * w.slice;
    std::vector<float> values(w.kind == Workload::kGather ? total : rows_out);
    for (auto& v : values) v = static_cast<float>(rng() % 1000) / 8;
    std::vector<float> init(w.kind == Workload::kAdd ? total : 0, 1.0f);
    std::vector<float> out(w.kind == Workload::kGather ? rows_out : total), first;
    // Bytes the op must move: indices read, updates (or gathered rows) read
    // and written, the output written (and, for a copy, the input read).
    const double bytes = 4.0 * (idx.size() + 2.0 * rows_out +
                                (w.kind == Workload::kGather ? 0
                                 : w.kind == Workload::kAdd   ? 2.0 * total
                                                              : total));
    double one_thread_ms = 0;
    for (int threads : thread_counts) {
      tso::ThreadPool pool(threads);
      const tso::Parallel par = threads > 1 ? pool.AsParallel() : tso::Parallel();
      const tso::IndexRows rows =
          tso::MakeIndexRows<int32_t>(idx.data(), w.n, depth, w.dims.data(), strides.data());
      tso::CpuCall call;
      call.form = {w.n, depth, nslots, w.slice};
      call.rows = rows;
      ReusedScratch scratch;
      auto run = [&] {
        scratch.Reset();
        switch (w.kind) {
          case Workload::kAdd:
            return tso::ScatterCpu<float, tso::AddOp>(call, false, values.data(), init.data(),
                                                      tso::Init::kCopy, out.data(), par, scratch);
          case Workload::kScatterNd:
            return tso::ScatterCpu<float, tso::AddOp>(call, false, values.data(), nullptr,
                                                      tso::Init::kZero, out.data(), par, scratch);
          default:
            return tso::GatherCpu<float>(call, values.data(), out.data(), par);
        }
      };
      std::vector<double> ms;
      for (int r = 0; r <= reps; ++r) {  // the first run warms up
        const auto t0 = std::chrono::steady_clock::now();
        const int64_t bad = run();
        const auto t1 = std::chrono::steady_clock::now();
        if (bad != -1) {
          std::printf("FAIL %s: the core returned %lld\n", w.name, static_cast<long long>(bad));
          ++failures;
        }
        if (r > 0) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      if (first.empty()) {
        first = out;
      } else if (std::memcmp(first.data(), out.data(), out.size() * sizeof(float)) != 0) {
        std::printf("FAIL %s: %d threads differ from %d\n", w.name, threads, thread_counts[0]);
        ++failures;
      }
      const double median = MedianMs(ms);
      if (one_thread_ms == 0) one_thread_ms = median;
      std::printf("%-4s %7d %10.2f %8.1f %7.2fx\n", w.name, threads, median,
                  bytes / median / 1e6, one_thread_ms / median);
    }
  }
  for (const Workload& w : workloads) std::printf("%s: %s\n", w.name, w.what);
  if (failures) {
    std::printf("cpu_scaling: %d FAILURES\n", failures);
    return 1;
  }
  std::printf("cpu_scaling: every thread count gave the same bits\n");
  return 0;
}
