// Whether the library registers its GPU kernels: a pure decision over facts
// about the build and the machine, so that it can be tested with any facts.
// gpu_probe.cc gathers the real facts once, when the library loads; the GPU
// registrations (scatter_kernels.h) ask GpuKernelsRegistered().
//
// The GPU kernels run only where the driver supports the CUDA runtime they
// were linked with and every visible GPU has code for it in the fatbin (SASS
// of its major version and a minor at most its own, or PTX of a capability
// at most its own, which the driver compiles). Anywhere else none is
// registered: TensorFlow places the ops on the CPU, where they work.
//
// Includes neither TensorFlow nor CUDA.
#ifndef TF_SCATTER_OPS_CC_KERNELS_LIBRARY_GPU_GATE_H_
#define TF_SCATTER_OPS_CC_KERNELS_LIBRARY_GPU_GATE_H_

#include <string>
#include <vector>

namespace tf_scatter_ops {

struct GpuDevice {
  int index = 0;            // in the probe's order (NVML: PCI bus order)
  int major = 0, minor = 0;  // compute capability
  std::string uuid;         // "GPU-..."
  std::string name;
};

struct GpuFacts {
  // The build.
  bool built_with_gpu = false;
  int runtime = 0;          // the CUDA runtime linked, e.g. 13000 for 13.0
  std::vector<int> sass;    // SASS in the fatbin, e.g. {75, 80, 86}
  int ptx = 0;              // the PTX in the fatbin (0: none)
  // The machine.
  std::string driver_source;  // "nvml", "cuda" (driver API) or "" (none)
  int driver = 0;             // the CUDA version the driver supports
  std::vector<GpuDevice> devices;
  bool devices_are_visible = false;  // the probe applied CUDA_VISIBLE_DEVICES
  bool visible_set = false;          // CUDA_VISIBLE_DEVICES is set
  std::string visible;               // its value
  std::string order;                 // CUDA_DEVICE_ORDER
  std::string setting;               // TF_SCATTER_OPS_GPU ("", "0" or "1")
  std::string probe_error;           // why the probe found no devices, if it failed
};

struct GpuDecision {
  bool registered = false;
  bool warn = false;  // GPUs are visible, but the kernels cannot run on them
  // Per visible device (index into GpuFacts::devices): the code it runs,
  // "sm_80" or "compute_90", or "" for none.
  std::vector<std::pair<int, std::string>> code;
  std::string why;
};

GpuDecision DecideGpu(const GpuFacts& facts);

// The facts and the decision as "key=value" lines (tf_scatter_ops/gpu.py
// reads them; its tests write facts in the same form).
std::string FactsText(const GpuFacts& facts);
GpuFacts ParseFacts(const std::string& text);
std::string DecisionText(const GpuDecision& decision);

// The decision for this process, made on first use from gpu_probe.cc's facts.
const GpuFacts& ProcessGpuFacts();
const GpuDecision& ProcessGpuDecision();
inline bool GpuKernelsRegistered() { return ProcessGpuDecision().registered; }

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_KERNELS_LIBRARY_GPU_GATE_H_
