// How the TensorFlow-free CPU core asks for parallel work. The TensorFlow
// glue backs it with the op's intra-op thread pool; tests and the sanitizer
// driver back it with a serial loop. The core's results never depend on how
// the range is split.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_PARALLEL_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_PARALLEL_H_

#include <cstdint>
#include <functional>

#include "cpu/thresholds.h"

namespace tf_scatter_ops {

struct Parallel {
  using Body = std::function<void(int64_t, int64_t)>;
  // Runs body over a split of [0, total); cost_per_unit is a rough count of
  // cycles per unit used to decide how finely to split. Null: serial.
  std::function<void(int64_t total, int64_t cost_per_unit, const Body& body)>
      run;
  int threads = 1;

  void For(int64_t total, int64_t cost_per_unit, const Body& body) const {
    if (total <= 0) return;
    if (!run || threads <= 1 || total * cost_per_unit < kSerialBelowCycles) {
      body(0, total);
    } else {
      run(total, cost_per_unit, body);
    }
  }
};

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_PARALLEL_H_
