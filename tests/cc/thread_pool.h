// A fixed pool of std::threads for the C++ drivers (core_test.cc,
// benchmarks/cpu_scaling.cc): what TensorFlow's intra-op pool is to the kernels,
// so that the drivers run production's ChunkedLoop (cpu/chunked_loop.h).
#ifndef TF_SCATTER_OPS_TESTS_CC_THREAD_POOL_H_
#define TF_SCATTER_OPS_TESTS_CC_THREAD_POOL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "cpu/chunked_loop.h"

namespace tf_scatter_ops {

class ThreadPool {
 public:
  explicit ThreadPool(int threads) : threads_(threads) {
    for (int t = 0; t < threads; ++t) workers_.emplace_back([this] { Serve(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Schedule(std::function<void()> work) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(work));
    }
    wake_.notify_one();
  }

  // The kernels' Parallel over this pool, as the glue builds it on
  // TensorFlow's (tf_adapters.cc, PoolParallel).
  Parallel AsParallel() {
    return ChunkedParallel(threads_, [this](std::function<void()> w) { Schedule(std::move(w)); });
  }

 private:
  void Serve() {
    for (;;) {
      std::function<void()> work;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      work();
    }
  }

  const int threads_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_TESTS_CC_THREAD_POOL_H_
