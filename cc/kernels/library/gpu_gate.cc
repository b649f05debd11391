// The GPU kernels' gate (gpu_gate.h): the decision and its text form.
#include "library/gpu_gate.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace tf_scatter_ops {
namespace {

std::string Version(int v) {  // 12020 -> "12.2"
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string Capability(const GpuDevice& d) {
  return std::to_string(d.major) + "." + std::to_string(d.minor);
}

std::string Describe(const GpuDevice& d) {
  return "GPU " + std::to_string(d.index) + " (" + (d.name.empty() ? "" : d.name + ", ") +
         "compute capability " + Capability(d) + ")";
}

std::string Archs(const GpuFacts& f) {
  std::string s;
  for (int a : f.sass) s += (s.empty() ? "" : ", ") + ("sm_" + std::to_string(a));
  if (f.ptx) s += (s.empty() ? "" : ", ") + ("compute_" + std::to_string(f.ptx));
  return s.empty() ? "none" : s;
}

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// The devices CUDA_VISIBLE_DEVICES leaves visible, as CUDA reads it: a
// comma-separated list of indices or UUID prefixes, up to the first entry
// that names no device (or one already named). Indices count in CUDA's
// order, which is the probe's (PCI bus) order only with
// CUDA_DEVICE_ORDER=PCI_BUS_ID; in the default order, on a machine whose GPUs
// differ, every GPU is counted (*note says so). MIG entries name a slice of
// a GPU the probe does not list by that name: every GPU is counted too.
std::vector<int> VisibleDevices(const GpuFacts& f, std::string* note) {
  std::vector<int> all;
  for (size_t i = 0; i < f.devices.size(); ++i) all.push_back(static_cast<int>(i));
  if (f.devices_are_visible || !f.visible_set) return all;
  bool alike = true;
  for (const auto& d : f.devices) {
    alike = alike && d.major == f.devices[0].major && d.minor == f.devices[0].minor;
  }
  std::vector<int> picked;
  std::stringstream list(f.visible);
  for (std::string entry; std::getline(list, entry, ',');) {
    entry = Trim(entry);
    int found = -1;
    if (AllDigits(entry)) {
      const long long k = entry.size() > 9 ? -1 : std::atoll(entry.c_str());
      if (k < 0 || k >= static_cast<long long>(f.devices.size())) break;
      if (!alike && f.order != "PCI_BUS_ID") {
        *note = "CUDA_VISIBLE_DEVICES=" + f.visible +
                " counts GPUs in CUDA's default order, which the driver does not tell without "
                "starting CUDA (set CUDA_DEVICE_ORDER=PCI_BUS_ID or use UUIDs): every GPU counted";
        return all;
      }
      found = static_cast<int>(k);
    } else if (entry.rfind("GPU-", 0) == 0) {
      for (size_t i = 0; i < f.devices.size(); ++i) {
        if (f.devices[i].uuid.rfind(entry, 0) != 0) continue;
        if (found >= 0) {  // a prefix of two UUIDs names none
          found = -1;
          break;
        }
        found = static_cast<int>(i);
      }
    } else if (entry.rfind("MIG-", 0) == 0) {
      *note = "CUDA_VISIBLE_DEVICES names MIG instances: every GPU counted";
      return all;
    }
    if (found < 0 || std::find(picked.begin(), picked.end(), found) != picked.end()) break;
    picked.push_back(found);
  }
  return picked;
}

// The code a device runs from the fatbin: SASS of its major version with the
// highest minor at most its own, else PTX of a capability at most its own if
// the driver can compile it (PTX needs a driver at least as new as the
// toolkit that wrote it). "" for none.
std::string CodeFor(const GpuFacts& f, const GpuDevice& d) {
  const int cc = d.major * 10 + d.minor;
  int best = -1;
  for (int a : f.sass) {
    if (a / 10 == d.major && a <= cc) best = std::max(best, a);
  }
  if (best >= 0) return "sm_" + std::to_string(best);
  if (f.ptx && f.ptx <= cc && f.driver >= f.runtime) return "compute_" + std::to_string(f.ptx);
  return "";
}

}  // namespace

GpuDecision DecideGpu(const GpuFacts& f) {
  GpuDecision d;
  if (!f.built_with_gpu) {
    d.why = "this build has no GPU kernels (built without nvcc, or with TFSO_GPU=0)";
    return d;
  }
  if (f.setting == "0") {
    d.why = "TF_SCATTER_OPS_GPU=0";
    return d;
  }
  if (f.setting == "1") {
    d.registered = true;
    d.why = "TF_SCATTER_OPS_GPU=1: registered without checking the driver and GPUs";
    return d;
  }
  if (f.driver_source.empty()) {
    d.why = f.probe_error.empty()
                ? "no NVIDIA driver (neither libnvidia-ml.so.1 nor libcuda.so.1 loads)"
                : "no usable NVIDIA driver: " + f.probe_error;
    return d;
  }
  std::string note;
  const std::vector<int> visible = VisibleDevices(f, &note);
  const std::string noted = note.empty() ? "" : " (" + note + ")";
  if (visible.empty()) {
    d.why = f.devices.empty()
                ? "no GPU found" + (f.probe_error.empty() ? "" : ": " + f.probe_error)
                : "no visible GPU (CUDA_VISIBLE_DEVICES=" + f.visible + ")";
    return d;
  }
  for (int i : visible) d.code.emplace_back(i, CodeFor(f, f.devices[i]));
  const int needed = f.runtime / 1000 * 1000;
  if (f.driver <= 0) {
    d.warn = true;
    d.why = "the NVIDIA driver did not say which CUDA version it supports" +
            (f.probe_error.empty() ? "" : ": " + f.probe_error);
    return d;
  }
  if (f.driver < needed) {
    d.warn = true;
    d.why = "the NVIDIA driver supports CUDA " + Version(f.driver) +
            ", but the GPU kernels were built with CUDA " + Version(f.runtime) +
            ", which needs a driver for CUDA " + Version(needed) + " or newer" + noted;
    return d;
  }
  std::string lacking;
  for (const auto& [i, code] : d.code) {
    if (code.empty()) lacking += (lacking.empty() ? "" : ", ") + Describe(f.devices[i]);
  }
  if (!lacking.empty()) {
    d.warn = true;
    d.why = "no code for " + lacking + " in this library (it has " + Archs(f) + ")" +
            (f.ptx && f.driver < f.runtime
                 ? "; its PTX needs a driver for CUDA " + Version(f.runtime) + " to compile"
                 : "") +
            noted;
    return d;
  }
  d.registered = true;
  std::string runs;
  for (const auto& [i, code] : d.code) {
    runs += (runs.empty() ? "" : ", ") + Describe(f.devices[i]) + " runs " + code;
  }
  d.why = runs + noted;
  return d;
}

// ---- text form ----------------------------------------------------------

namespace {

std::string JoinInts(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

int Int(const std::string& s) { return AllDigits(s) && s.size() < 10 ? std::atoi(s.c_str()) : 0; }

// Values are one line each; a newline in a device name or an environment
// variable becomes a space.
std::string OneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace

std::string FactsText(const GpuFacts& f) {
  std::ostringstream o;
  o << "built_with_gpu=" << f.built_with_gpu << "\n"
    << "runtime=" << f.runtime << "\n"
    << "sass=" << JoinInts(f.sass) << "\n"
    << "ptx=" << f.ptx << "\n"
    << "driver_source=" << f.driver_source << "\n"
    << "driver=" << f.driver << "\n"
    << "devices_are_visible=" << f.devices_are_visible << "\n";
  if (f.visible_set) o << "visible=" << OneLine(f.visible) << "\n";
  o << "order=" << OneLine(f.order) << "\n"
    << "setting=" << OneLine(f.setting) << "\n"
    << "probe_error=" << OneLine(f.probe_error) << "\n";
  for (const auto& d : f.devices) {
    o << "device=" << d.index << "|" << d.major << "." << d.minor << "|" << OneLine(d.uuid)
      << "|" << OneLine(d.name) << "\n";
  }
  return o.str();
}

GpuFacts ParseFacts(const std::string& text) {
  GpuFacts f;
  for (const std::string& line : Split(text, '\n')) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "built_with_gpu") f.built_with_gpu = value == "1";
    if (key == "runtime") f.runtime = Int(value);
    if (key == "sass") {
      for (const auto& a : Split(value, ',')) f.sass.push_back(Int(a));
    }
    if (key == "ptx") f.ptx = Int(value);
    if (key == "driver_source") f.driver_source = value;
    if (key == "driver") f.driver = Int(value);
    if (key == "devices_are_visible") f.devices_are_visible = value == "1";
    if (key == "visible") {
      f.visible_set = true;
      f.visible = value;
    }
    if (key == "order") f.order = value;
    if (key == "setting") f.setting = value;
    if (key == "probe_error") f.probe_error = value;
    if (key == "device") {
      // index|major.minor|uuid|name (the name may hold '|')
      const auto parts = Split(value, '|');
      if (parts.size() < 3) continue;
      GpuDevice d;
      d.index = Int(parts[0]);
      const auto cc = Split(parts[1], '.');
      d.major = cc.empty() ? 0 : Int(cc[0]);
      d.minor = cc.size() < 2 ? 0 : Int(cc[1]);
      d.uuid = parts[2];
      const auto at = parts[0].size() + parts[1].size() + parts[2].size() + 3;
      d.name = at <= value.size() ? value.substr(at) : "";
      f.devices.push_back(d);
    }
  }
  return f;
}

std::string DecisionText(const GpuDecision& d) {
  std::ostringstream o;
  o << "registered=" << d.registered << "\n"
    << "warn=" << d.warn << "\n";
  for (const auto& [i, code] : d.code) o << "code=" << i << "|" << code << "\n";
  o << "why=" << OneLine(d.why) << "\n";
  return o.str();
}

}  // namespace tf_scatter_ops
