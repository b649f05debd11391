// The host stand-in for the CUDA runtime (tests/cc/host_cuda/README.md): the
// functions of cuda_runtime_api.h and the launch machinery of host_launch.h.
//
// - Memory: cudaMalloc hands out host memory and keeps a table of it, so
//   kernels, copies and CUB calls can check that they were given device
//   memory (bounds included). Up to 1 GiB it is heap memory (so ASan sees
//   overruns), filled with 0xa5 (device memory is not zeroed); larger
//   allocations are mapped lazily, between two inaccessible pages, so the
//   64-bit cases can address 2^32 elements and only pay for what they touch.
// - Streams: each has a host thread that runs its work in call order. The
//   legacy default stream (0) and blocking streams share one queue;
//   non-blocking streams have their own. The copy functions follow the
//   runtime's documented host synchronisation: cudaMemcpyAsync never waits
//   (a pageable host source is staged before it returns), cudaMemcpy waits
//   only for a copy to the host, cudaMemset does not wait, cudaFree waits
//   for the device.
// - Kernels: the stream's thread and TFSO_HOST_CUDA_THREADS - 1 helpers run a
//   grid's blocks in an order shuffled from TFSO_HOST_CUDA_SEED (printed at
//   start-up; random unless set), each block's threads one after another.
// - The device: one, with TFSO_HOST_CUDA_SMS multiprocessors (default 4, so
//   GridFor makes grids of several blocks), a 1 GHz clock and
//   TFSO_HOST_CUDA_MEMORY_GB of memory (default 64, lazily backed;
//   cudaMemGetInfo's free memory is also capped by the host's available
//   memory).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cuda_runtime.h"

namespace tfso_host {
namespace {

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  return end != v ? x : fallback;
}

struct Config {
  uint64_t seed;
  int threads;  // the stream's thread and the helpers
  int sms;
  size_t memory;
};

const Config& Settings() {
  static const Config config = [] {
    Config c;
    const char* s = std::getenv("TFSO_HOST_CUDA_SEED");
    c.seed = s != nullptr && *s != '\0' ? std::strtoull(s, nullptr, 10)
                                        : std::random_device()() % 1000000000u;
    c.threads = static_cast<int>(std::max<int64_t>(1, EnvInt("TFSO_HOST_CUDA_THREADS", 4)));
    c.sms = static_cast<int>(std::max<int64_t>(1, EnvInt("TFSO_HOST_CUDA_SMS", 4)));
    c.memory = static_cast<size_t>(std::max<int64_t>(1, EnvInt("TFSO_HOST_CUDA_MEMORY_GB", 64)))
               << 30;
    std::printf(
        "host CUDA (tests/cc/host_cuda): blocks in shuffled order, seed %llu "
        "(TFSO_HOST_CUDA_SEED=%llu repeats it), %d threads, %d SMs\n",
        (unsigned long long)c.seed, (unsigned long long)c.seed, c.threads, c.sms);
    std::fflush(stdout);
    return c;
  }();
  return config;
}

thread_local cudaError_t last_error = cudaSuccess;

cudaError_t Record(cudaError_t e) {
  if (e != cudaSuccess) last_error = e;
  return e;
}

// ---- memory ----------------------------------------------------------------

constexpr size_t kMappedFrom = size_t{1} << 30;

struct Allocation {
  size_t bytes;
  void* map_base;  // mapped allocations: the whole mapping (else null)
  size_t map_bytes;
};

std::mutex& AllocMutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}
std::map<uintptr_t, Allocation>& Allocations() {  // by start address
  static auto* m = new std::map<uintptr_t, Allocation>;
  return *m;
}
size_t allocated = 0;  // under AllocMutex

size_t PageBytes() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

size_t HostAvailable() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  size_t kb = 0;
  while (f >> key >> kb) {
    if (key == "MemAvailable:") return kb << 10;
    f.ignore(1 << 10, '\n');
  }
  return size_t{1} << 40;
}

// ---- streams ---------------------------------------------------------------

class Queue {
 public:
  Queue() : thread_([this] { Loop(); }) {}
  ~Queue() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    thread_.join();
  }
  void Push(std::function<void()> work) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      items_.push_back(std::move(work));
    }
    work_cv_.notify_one();
  }
  void WaitIdle() {
    std::unique_lock<std::mutex> lock(mu_);
    idle_cv_.wait(lock, [this] { return items_.empty() && !busy_; });
  }
  bool Idle() {
    std::lock_guard<std::mutex> lock(mu_);
    return items_.empty() && !busy_;
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      work_cv_.wait(lock, [this] { return stop_ || !items_.empty(); });
      if (items_.empty()) return;  // stopping
      std::function<void()> work = std::move(items_.front());
      items_.pop_front();
      busy_ = true;
      lock.unlock();
      work();
      work = nullptr;
      lock.lock();
      busy_ = false;
      if (items_.empty()) idle_cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable work_cv_, idle_cv_;
  std::deque<std::function<void()>> items_;
  bool busy_ = false, stop_ = false;
  std::thread thread_;
};

std::mutex& StreamMutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}
std::set<cudaStream_t>& Streams() {  // the live non-default streams
  static auto* s = new std::set<cudaStream_t>;
  return *s;
}

Queue& Legacy() {
  static Queue* q = new Queue;  // never destroyed: its thread outlives main
  return *q;
}

}  // namespace
}  // namespace tfso_host

struct CUstream_st {
  unsigned int flags;
  std::unique_ptr<tfso_host::Queue> own;  // non-blocking streams
};

struct CUevent_st {
  std::mutex mu;
  std::condition_variable cv;
  int pending = 0;
  bool recorded = false;
  std::chrono::steady_clock::time_point when;
};

namespace tfso_host {
namespace {

// The queue of a stream handle, or null for one that is not live.
Queue* QueueOf(cudaStream_t s) {
  if (s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread) return &Legacy();
  std::lock_guard<std::mutex> lock(StreamMutex());
  if (Streams().count(s) == 0) return nullptr;
  return s->own ? s->own.get() : &Legacy();
}

void SynchronizeAll() {
  std::vector<Queue*> queues{&Legacy()};
  {
    std::lock_guard<std::mutex> lock(StreamMutex());
    for (cudaStream_t s : Streams()) {
      if (s->own) queues.push_back(s->own.get());
    }
  }
  for (Queue* q : queues) q->WaitIdle();
}

// ---- grids -----------------------------------------------------------------

struct Grid {
  dim3 grid, block;
  const std::function<void()>* body;
  uint64_t seed;
  std::vector<uint32_t> order;  // block numbers in the order they are taken
  std::atomic<uint64_t> next{0}, done{0};
};

void RunBlock(const Grid& g, uint32_t b) {
  gridDim = g.grid;
  blockDim = g.block;
  blockIdx = {b % g.grid.x, b / g.grid.x % g.grid.y, b / (g.grid.x * g.grid.y)};
  const uint32_t threads = g.block.x * g.block.y * g.block.z;
  // Each block's threads in turn, upward or downward (seeded per block).
  const bool down = ((g.seed ^ (uint64_t{b} * 0x9e3779b97f4a7c15ull)) >> 17) & 1;
  for (uint32_t k = 0; k < threads; ++k) {
    const uint32_t t = down ? threads - 1 - k : k;
    threadIdx = {t % g.block.x, t / g.block.x % g.block.y, t / (g.block.x * g.block.y)};
    (*g.body)();
  }
}

class Pool {
 public:
  explicit Pool(int helpers) {
    for (int i = 0; i < helpers; ++i) threads_.emplace_back([this] { Help(); });
  }
  bool has_helpers() const { return !threads_.empty(); }

  // Runs every block of g, with whichever helpers are free.
  void Run(const std::shared_ptr<Grid>& g) {
    const uint64_t total = g->order.size();
    {
      std::lock_guard<std::mutex> lock(mu_);
      grids_.push_back(g);
    }
    work_cv_.notify_all();
    Work(*g);
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return g->done.load(std::memory_order_acquire) == total; });
    grids_.erase(std::find(grids_.begin(), grids_.end(), g));
  }

 private:
  void Work(Grid& g) {
    const uint64_t total = g.order.size();
    for (uint64_t i; (i = g.next.fetch_add(1, std::memory_order_relaxed)) < total;) {
      RunBlock(g, g.order[i]);
      if (g.done.fetch_add(1, std::memory_order_acq_rel) + 1 == total) {
        std::lock_guard<std::mutex> lock(mu_);
        done_cv_.notify_all();
      }
    }
  }

  void Help() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      std::shared_ptr<Grid> g;
      work_cv_.wait(lock, [&] {
        for (const auto& x : grids_) {
          if (x->next.load(std::memory_order_relaxed) < x->order.size()) {
            g = x;
            return true;
          }
        }
        return false;
      });
      lock.unlock();
      Work(*g);
      g.reset();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::vector<std::shared_ptr<Grid>> grids_;
  std::vector<std::thread> threads_;
};

Pool& Helpers() {
  static Pool* pool = new Pool(Settings().threads - 1);  // never destroyed
  return *pool;
}

std::atomic<uint64_t> launches{0};

}  // namespace

// ---- host_launch.h ----------------------------------------------------------

cudaError_t Enqueue(cudaStream_t stream, std::function<void()> work) {
  Queue* q = QueueOf(stream);
  if (q == nullptr) return cudaErrorInvalidResourceHandle;
  q->Push(std::move(work));
  return cudaSuccess;
}

void RunGrid(dim3 grid, dim3 block, const std::function<void()>& thread_body) {
  auto g = std::make_shared<Grid>();
  g->grid = grid;
  g->block = block;
  g->body = &thread_body;
  const uint64_t launch = launches.fetch_add(1, std::memory_order_relaxed);
  g->seed = Settings().seed * 0x100000001b3ull + launch;
  const uint64_t total = uint64_t{grid.x} * grid.y * grid.z;
  g->order.resize(total);
  for (uint64_t i = 0; i < total; ++i) g->order[i] = static_cast<uint32_t>(i);
  std::mt19937_64 rng(g->seed);
  std::shuffle(g->order.begin(), g->order.end(), rng);
  if (total == 1 || !Helpers().has_helpers()) {
    for (uint32_t b : g->order) RunBlock(*g, b);
  } else {
    Helpers().Run(g);
  }
}

bool IsDeviceRange(const void* p, size_t bytes) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(AllocMutex());
  auto it = Allocations().upper_bound(a);
  if (it == Allocations().begin()) return false;
  --it;
  return a - it->first <= it->second.bytes && bytes <= it->second.bytes - (a - it->first);
}

void SetLastError(cudaError_t error) { Record(error); }

void Fatal(const char* what, const char* detail) {
  std::fprintf(stderr, "host CUDA: %s %s\n", what, detail);
  std::fflush(stderr);
  std::abort();
}

long long Nanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace tfso_host

// ---- cuda_runtime_api.h -----------------------------------------------------

using tfso_host::Record;

cudaError_t cudaGetLastError() {
  const cudaError_t e = tfso_host::last_error;
  tfso_host::last_error = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() { return tfso_host::last_error; }

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    default: return "cudaErrorUnknown";
  }
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorNotSupported: return "operation not supported";
    default: return "unknown error";
  }
}

cudaError_t cudaGetDeviceCount(int* count) {
  tfso_host::Settings();
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  tfso_host::Settings();
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  return device == 0 ? cudaSuccess : Record(cudaErrorInvalidDevice);
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (device != 0) return Record(cudaErrorInvalidDevice);
  const auto& c = tfso_host::Settings();
  std::memset(prop, 0, sizeof(*prop));
  std::snprintf(prop->name, sizeof(prop->name), "host CPU threads (tests/cc/host_cuda)");
  prop->totalGlobalMem = c.memory;
  prop->major = 0;
  prop->minor = 0;
  prop->multiProcessorCount = c.sms;
  prop->clockRate = 1000000;
  prop->maxThreadsPerBlock = 1024;
  prop->maxGridSize[0] = 0x7fffffff;
  prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
  prop->warpSize = 32;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (device != 0) return Record(cudaErrorInvalidDevice);
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrClockRate: *value = p.clockRate; break;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    default: return Record(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
  *version = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  tfso_host::SynchronizeAll();
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** ptr, size_t bytes) {
  using namespace tfso_host;  // NOLINT
  const size_t budget = Settings().memory;
  *ptr = nullptr;
  if (bytes == 0) return cudaSuccess;
  {
    std::lock_guard<std::mutex> lock(AllocMutex());
    if (bytes > budget - allocated) return Record(cudaErrorMemoryAllocation);
    allocated += bytes;
  }
  Allocation a{bytes, nullptr, 0};
  void* p = nullptr;
  if (bytes < kMappedFrom) {
    if (posix_memalign(&p, 256, bytes) != 0) p = nullptr;
    if (p != nullptr) std::memset(p, 0xa5, bytes);
  } else {
    // Lazily backed, an inaccessible page on each side; the allocation ends
    // within 255 bytes of the upper one.
    const size_t page = PageBytes();
    const size_t body = (bytes + page - 1) / page * page;
    a.map_bytes = body + 2 * page;
    a.map_base = mmap(nullptr, a.map_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                      -1, 0);
    if (a.map_base == MAP_FAILED) {
      a.map_base = nullptr;
    } else {
      char* base = static_cast<char*>(a.map_base);
      if (mprotect(base + page, body, PROT_READ | PROT_WRITE) != 0) {
        munmap(a.map_base, a.map_bytes);
        a.map_base = nullptr;
      } else {
        p = base + page + (body - ((bytes + 255) & ~size_t{255}));
      }
    }
  }
  std::lock_guard<std::mutex> lock(AllocMutex());
  if (p == nullptr) {
    allocated -= bytes;
    return Record(cudaErrorMemoryAllocation);
  }
  Allocations()[reinterpret_cast<uintptr_t>(p)] = a;
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  using namespace tfso_host;  // NOLINT
  if (ptr == nullptr) return cudaSuccess;
  SynchronizeAll();  // as the runtime's cudaFree
  Allocation a;
  {
    std::lock_guard<std::mutex> lock(AllocMutex());
    auto it = Allocations().find(reinterpret_cast<uintptr_t>(ptr));
    if (it == Allocations().end()) return Record(cudaErrorInvalidValue);
    a = it->second;
    Allocations().erase(it);
    allocated -= a.bytes;
  }
  if (a.map_base != nullptr) {
    munmap(a.map_base, a.map_bytes);
  } else {
    std::free(ptr);
  }
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  using namespace tfso_host;  // NOLINT
  const size_t total = Settings().memory;
  size_t used;
  {
    std::lock_guard<std::mutex> lock(AllocMutex());
    used = allocated;
  }
  *total_bytes = total;
  *free_bytes = std::min(total - used, HostAvailable());
  return cudaSuccess;
}

namespace tfso_host {
namespace {

void CheckDevice(const void* p, size_t bytes, const char* what) {
  if (!IsDeviceRange(p, bytes)) {
    char detail[160];
    std::snprintf(detail, sizeof(detail), "[%p, +%zu) is not inside one device allocation", p,
                  bytes);
    Fatal(what, detail);
  }
}

// A copy's kind, with cudaMemcpyDefault resolved from the allocation table;
// the device sides checked.
cudaMemcpyKind Resolve(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                       const char* what) {
  if (kind == cudaMemcpyDefault) {
    const bool d = IsDeviceRange(dst, bytes), s = IsDeviceRange(src, bytes);
    kind = d ? (s ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
             : (s ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  }
  if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice) {
    CheckDevice(dst, bytes, what);
  }
  if (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice) {
    CheckDevice(src, bytes, what);
  }
  return kind;
}

// Queues a copy; a pageable host source is staged first.
cudaError_t QueueCopy(Queue* q, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (kind == cudaMemcpyHostToDevice) {
    auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src),
                                                      static_cast<const char*>(src) + bytes);
    q->Push([dst, staged] { std::memcpy(dst, staged->data(), staged->size()); });
  } else {
    q->Push([dst, src, bytes] { std::memmove(dst, src, bytes); });
  }
  return cudaSuccess;
}

}  // namespace
}  // namespace tfso_host

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  using namespace tfso_host;  // NOLINT
  if (bytes == 0) return cudaSuccess;
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) {
    return Record(cudaErrorInvalidValue);
  }
  kind = Resolve(dst, src, bytes, kind, "cudaMemcpyAsync:");
  Queue* q = QueueOf(stream);
  if (q == nullptr) return Record(cudaErrorInvalidResourceHandle);
  return QueueCopy(q, dst, src, bytes, kind);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  using namespace tfso_host;  // NOLINT
  if (bytes == 0) return cudaSuccess;
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) {
    return Record(cudaErrorInvalidValue);
  }
  kind = Resolve(dst, src, bytes, kind, "cudaMemcpy:");
  Queue& q = Legacy();
  switch (kind) {
    case cudaMemcpyHostToDevice:  // after the stream's work; returns once staged
      q.WaitIdle();
      return QueueCopy(&q, dst, src, bytes, kind);
    case cudaMemcpyDeviceToDevice:  // no host synchronisation
      return QueueCopy(&q, dst, src, bytes, kind);
    default:  // to the host: returns when done
      QueueCopy(&q, dst, src, bytes, kind);
      q.WaitIdle();
      return cudaSuccess;
  }
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t bytes, cudaStream_t stream) {
  using namespace tfso_host;  // NOLINT
  if (bytes == 0) return cudaSuccess;
  CheckDevice(ptr, bytes, "cudaMemset:");
  Queue* q = QueueOf(stream);
  if (q == nullptr) return Record(cudaErrorInvalidResourceHandle);
  q->Push([ptr, value, bytes] { std::memset(ptr, value, bytes); });
  return cudaSuccess;
}

cudaError_t cudaMemset(void* ptr, int value, size_t bytes) {
  return cudaMemsetAsync(ptr, value, bytes, 0);
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  using namespace tfso_host;  // NOLINT
  if (flags > cudaStreamNonBlocking) return Record(cudaErrorInvalidValue);
  Settings();
  auto* s = new CUstream_st;
  s->flags = flags;
  if (flags & cudaStreamNonBlocking) s->own.reset(new Queue);
  std::lock_guard<std::mutex> lock(StreamMutex());
  Streams().insert(s);
  *stream = s;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  using namespace tfso_host;  // NOLINT
  {
    std::lock_guard<std::mutex> lock(StreamMutex());
    if (Streams().erase(stream) == 0) return Record(cudaErrorInvalidResourceHandle);
  }
  // Its queued work still runs (the queue finishes before its thread ends).
  if (stream->own) stream->own->WaitIdle();
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  tfso_host::Queue* q = tfso_host::QueueOf(stream);
  if (q == nullptr) return Record(cudaErrorInvalidResourceHandle);
  q->WaitIdle();
  return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  tfso_host::Queue* q = tfso_host::QueueOf(stream);
  if (q == nullptr) return Record(cudaErrorInvalidResourceHandle);
  return q->Idle() ? cudaSuccess : cudaErrorNotReady;  // not-ready is not recorded
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  *event = new CUevent_st;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (event == nullptr) return Record(cudaErrorInvalidResourceHandle);
  cudaEventSynchronize(event);
  delete event;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  tfso_host::Queue* q = tfso_host::QueueOf(stream);
  if (q == nullptr || event == nullptr) return Record(cudaErrorInvalidResourceHandle);
  {
    std::lock_guard<std::mutex> lock(event->mu);
    ++event->pending;
  }
  q->Push([event] {
    std::lock_guard<std::mutex> lock(event->mu);
    event->when = std::chrono::steady_clock::now();
    event->recorded = true;
    --event->pending;
    event->cv.notify_all();
  });
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  std::unique_lock<std::mutex> lock(event->mu);
  event->cv.wait(lock, [event] { return event->pending == 0; });
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  std::lock_guard<std::mutex> lock(event->mu);
  return event->pending == 0 ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  std::chrono::steady_clock::time_point t[2];
  cudaEvent_t events[2] = {start, end};
  for (int k = 0; k < 2; ++k) {
    std::lock_guard<std::mutex> lock(events[k]->mu);
    if (!events[k]->recorded || events[k]->pending) return Record(cudaErrorNotReady);
    t[k] = events[k]->when;
  }
  *ms = std::chrono::duration<float, std::milli>(t[1] - t[0]).count();
  return cudaSuccess;
}
