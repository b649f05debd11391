#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
// Nanoseconds per index row of the lineariser under each ISA this CPU has
// (make linearize-bench): the numbers behind PickFillRows.
#include "cpu/index_linearize.h"
namespace tso = tf_scatter_ops;
template <typename Index>
void Run(int depth) {
  const int64_t n = 1 << 22;
  std::vector<int64_t> dims(depth, depth == 1 ? 1 << 24 : (depth == 2 ? 4096 : 256)), strides(depth);
  int64_t st = 1;
  for (int d = depth - 1; d >= 0; --d) { strides[d] = st; st *= dims[d]; }
  std::mt19937_64 rng(1);
  std::vector<Index> idx(n * depth);
  for (auto& v : idx) v = static_cast<Index>(rng() % (sizeof(Index) == 2 ? 256 : dims[0] > 4096 ? 4096 : dims[0]));
  std::vector<int64_t> out(512);
  for (tso::Isa isa : {tso::Isa::kPortable, tso::Isa::kAvx2, tso::Isa::kAvx512}) {
    if (isa > tso::CpuIsa()) continue;
    tso::SetIsa(isa);
    auto rows = tso::MakeIndexRows<Index>(idx.data(), n, depth, dims.data(), strides.data());
    double best = 1e9;
    for (int r = 0; r < 5; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      int64_t sink = 0;
      for (int64_t b = 0; b < n; b += 512) { rows.Fill(b, b + 512, out.data()); sink += out[7]; }
      auto t1 = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double>(t1 - t0).count() / n * 1e9);
      if (sink == 42) std::printf("!");
    }
    std::printf("index %zu bytes, depth %d, %-8s %.3f ns/row\n", sizeof(Index), depth, tso::IsaName(isa), best);
  }
}
int main() {
  for (int depth : {1, 2, 3}) { Run<int32_t>(depth); Run<int64_t>(depth); }
}
