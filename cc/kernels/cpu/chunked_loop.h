// The parallel-for of production (cpu/parallel.h's Parallel over a thread
// pool): the TensorFlow glue runs it on the op's intra-op pool, the C++ test
// driver and the thread-scaling benchmark on a pool of std::threads. Only the
// pool's size and a way to hand it a closure are needed. TensorFlow-free.
//
// It never waits for a thread to wake up before it starts: the range is cut
// into chunks that the caller and helpers from the pool claim one at a time,
// so the caller works from the first chunk on and a helper that starts late
// finds less (or nothing) to do. The caller waits only for chunks already
// claimed. (A static split waits for each share's thread; on a VM an idle
// thread's wake-up can cost more than the whole loop.) The core's results do
// not depend on the split.
#ifndef TF_SCATTER_OPS_CC_KERNELS_CPU_CHUNKED_LOOP_H_
#define TF_SCATTER_OPS_CC_KERNELS_CPU_CHUNKED_LOOP_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>

#include "cpu/parallel.h"
#include "cpu/thresholds.h"

namespace tf_scatter_ops {

class ChunkedLoop {
 public:
  // Hands a closure to one of the pool's threads.
  using Schedule = std::function<void(std::function<void()>)>;

  // Threads and chunks from the work's cycles (cpu/thresholds.h).
  static void Run(int pool_threads, const Schedule& schedule, int64_t total, int64_t cost,
                  const Parallel::Body& body) {
    const int64_t cycles = total * std::max<int64_t>(cost, 1);
    const int64_t threads = std::min<int64_t>(pool_threads, cycles / kCyclesPerThread);
    const int64_t chunks = std::min({total, cycles / kMinChunkCycles, threads * kChunksPerThread});
    if (threads <= 1 || chunks <= 1) {
      body(0, total);
      return;
    }
    auto loop = std::make_shared<ChunkedLoop>(total, chunks, body);
    const int64_t helpers = std::min(threads, chunks) - 1;
    for (int64_t h = 0; h < helpers; ++h) schedule([loop] { loop->Work(); });
    loop->Work();
    loop->Wait();
  }

  // Chunks of equal length, but the last: none is empty.
  ChunkedLoop(int64_t total, int64_t chunks, const Parallel::Body& body)
      : total_(total),
        chunk_((total + chunks - 1) / chunks),
        chunks_((total + chunk_ - 1) / chunk_),
        body_(&body) {}

 private:
  // Claims and runs chunks until none is left. body_ is used only for a
  // claimed chunk, which the caller waits for, so it is alive.
  void Work() {
    for (int64_t c; (c = next_.fetch_add(1, std::memory_order_relaxed)) < chunks_;) {
      (*body_)(c * chunk_, std::min(total_, (c + 1) * chunk_));
      if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks_) {
        std::lock_guard<std::mutex> lock(mu_);
        finished_.notify_all();
      }
    }
  }

  void Wait() {
    if (done_.load(std::memory_order_acquire) == chunks_) return;
    std::unique_lock<std::mutex> lock(mu_);
    finished_.wait(lock, [this] { return done_.load(std::memory_order_acquire) == chunks_; });
  }

  const int64_t total_, chunk_, chunks_;
  const Parallel::Body* body_;
  std::atomic<int64_t> next_{0};
  std::atomic<int64_t> done_{0};
  std::mutex mu_;
  std::condition_variable finished_;
};

// The Parallel of a pool of `threads` threads that runs closures by `schedule`.
inline Parallel ChunkedParallel(int threads, ChunkedLoop::Schedule schedule) {
  Parallel p;
  p.threads = threads;
  p.run = [threads, schedule = std::move(schedule)](int64_t total, int64_t cost,
                                                     const Parallel::Body& body) {
    ChunkedLoop::Run(threads, schedule, total, cost, body);
  };
  return p;
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_CPU_CHUNKED_LOOP_H_
