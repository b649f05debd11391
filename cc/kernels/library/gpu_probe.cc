// The facts of this process for the GPU gate (gpu_gate.h), gathered once
// when the library loads, without creating a CUDA context: the driver's
// management library (NVML, libnvidia-ml.so.1) gives the driver's CUDA
// version and every GPU's compute capability and UUID without initialising
// CUDA, so a process that forks afterwards can still use CUDA in the child.
// Where NVML is missing (a container given the driver's compute libraries
// only) or fails, the driver API (libcuda.so.1) is asked instead: cuInit
// creates no context, and it applies CUDA_VISIBLE_DEVICES itself.
//
// Both libraries are opened with dlopen and their few functions declared
// here, so the library builds without CUDA headers and loads without a driver.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "library/gpu_gate.h"
#if TFSO_WITH_CUDA
#include "cuda/scatter_gpu.h"
#endif

namespace tf_scatter_ops {
namespace {

const char* Env(const char* name) { return std::getenv(name); }

template <typename F>
F Symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

// NVML: every function returns 0 (NVML_SUCCESS) on success.
bool ProbeNvml(GpuFacts* f) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return false;
  using Device = void*;
  auto init = Symbol<int (*)()>(lib, "nvmlInit_v2");
  auto shutdown = Symbol<int (*)()>(lib, "nvmlShutdown");
  auto driver = Symbol<int (*)(int*)>(lib, "nvmlSystemGetCudaDriverVersion_v2");
  auto count = Symbol<int (*)(unsigned*)>(lib, "nvmlDeviceGetCount_v2");
  auto handle = Symbol<int (*)(unsigned, Device*)>(lib, "nvmlDeviceGetHandleByIndex_v2");
  auto capability = Symbol<int (*)(Device, int*, int*)>(lib, "nvmlDeviceGetCudaComputeCapability");
  auto uuid = Symbol<int (*)(Device, char*, unsigned)>(lib, "nvmlDeviceGetUUID");
  auto name = Symbol<int (*)(Device, char*, unsigned)>(lib, "nvmlDeviceGetName");
  bool ok = init && shutdown && driver && count && handle && capability && uuid && name;
  int rc = ok ? init() : -1;
  if (rc != 0) {
    f->probe_error = "NVML " + std::string(ok ? "nvmlInit failed with " + std::to_string(rc)
                                              : "lacks a function");
    dlclose(lib);
    return false;
  }
  unsigned n = 0;
  ok = driver(&f->driver) == 0 && count(&n) == 0;
  for (unsigned i = 0; ok && i < n; ++i) {
    Device h = nullptr;
    GpuDevice d;
    d.index = static_cast<int>(i);
    char text[96] = {0};
    ok = handle(i, &h) == 0 && capability(h, &d.major, &d.minor) == 0;
    if (ok && uuid(h, text, sizeof(text) - 1) == 0) d.uuid = text;
    text[0] = 0;
    if (ok && name(h, text, sizeof(text) - 1) == 0) d.name = text;
    f->devices.push_back(d);
  }
  shutdown();
  dlclose(lib);
  if (!ok) {
    f->devices.clear();
    f->probe_error = "NVML could not list the GPUs";
    return false;
  }
  f->driver_source = "nvml";
  f->probe_error.clear();
  return true;
}

// The driver API: every function returns 0 (CUDA_SUCCESS) on success.
void ProbeDriverApi(GpuFacts* f) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return;  // kept open: TensorFlow opens it too
  auto version = Symbol<int (*)(int*)>(lib, "cuDriverGetVersion");
  auto init = Symbol<int (*)(unsigned)>(lib, "cuInit");
  auto count = Symbol<int (*)(int*)>(lib, "cuDeviceGetCount");
  auto get = Symbol<int (*)(int*, int)>(lib, "cuDeviceGet");
  auto attribute = Symbol<int (*)(int*, int, int)>(lib, "cuDeviceGetAttribute");
  auto name = Symbol<int (*)(char*, int, int)>(lib, "cuDeviceGetName");
  auto uuid = Symbol<int (*)(unsigned char*, int)>(lib, "cuDeviceGetUuid");
  f->driver_source = "cuda";
  f->devices_are_visible = true;
  if (!(version && init && count && get && attribute && name && uuid)) {
    f->probe_error = "libcuda.so.1 lacks a function";
    return;
  }
  f->driver = 0;
  version(&f->driver);
  const int rc = init(0);
  int n = 0;
  if (rc != 0 || count(&n) != 0) {
    f->probe_error = "cuInit failed with " + std::to_string(rc);
    return;
  }
  constexpr int kMajor = 75, kMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_*
  for (int i = 0; i < n; ++i) {
    int dev = 0;
    GpuDevice d;
    d.index = i;
    char text[96] = {0};
    unsigned char id[16] = {0};
    if (get(&dev, i) != 0 || attribute(&d.major, kMajor, dev) != 0 ||
        attribute(&d.minor, kMinor, dev) != 0) {
      f->probe_error = "the driver API could not describe GPU " + std::to_string(i);
      f->devices.clear();
      return;
    }
    if (name(text, sizeof(text) - 1, dev) == 0) d.name = text;
    if (uuid(id, dev) == 0) {
      char s[48];
      std::snprintf(s, sizeof(s),
                    "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                    id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10],
                    id[11], id[12], id[13], id[14], id[15]);
      d.uuid = s;
    }
    f->devices.push_back(d);
  }
}

GpuFacts Probe() {
  GpuFacts f;
#if TFSO_WITH_CUDA
  const gpu::BuildInfo built = gpu::Built();
  f.built_with_gpu = true;
  f.runtime = built.runtime;
  f.sass.assign(built.sass, built.sass + built.num_sass);
  f.ptx = built.ptx;
#endif
  if (const char* v = Env("CUDA_VISIBLE_DEVICES")) {
    f.visible_set = true;
    f.visible = v;
  }
  if (const char* v = Env("CUDA_DEVICE_ORDER")) f.order = v;
  if (const char* v = Env("TF_SCATTER_OPS_GPU")) f.setting = v;
  // Nothing to ask the driver when there are no GPU kernels or the setting
  // decides; else NVML first, then the driver API.
  if (f.built_with_gpu && f.setting != "0" && f.setting != "1" && !ProbeNvml(&f)) {
    ProbeDriverApi(&f);
  }
  return f;
}

}  // namespace

const GpuFacts& ProcessGpuFacts() {
  static const GpuFacts* facts = new GpuFacts(Probe());
  return *facts;
}

const GpuDecision& ProcessGpuDecision() {
  static const GpuDecision* decision = new GpuDecision(DecideGpu(ProcessGpuFacts()));
  return *decision;
}

}  // namespace tf_scatter_ops
