// The bad_indices_policy values the kernels implement: the one C++ list of
// them. The kernels' parser (tf/tf_adapters.cc: ParseBadIndicesPolicy, whose
// message lists them) reads it, and so does Python (library_info.cc:
// tf_scatter_ops_kernel_policies). The wrappers' other policies, "CLIP" and
// "FILL", are resolved in Python before an op is built: no kernel sees them.
//
// The ops' attr stays a plain string (scatter_ops.cc, kPolicyAttr, says why),
// so this list is checked when a kernel is made. TensorFlow-free.
#ifndef TF_SCATTER_OPS_CC_OPS_KERNEL_POLICIES_H_
#define TF_SCATTER_OPS_CC_OPS_KERNEL_POLICIES_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace tf_scatter_ops {

struct KernelPolicy {
  const char* name;
  bool ignore;  // drop bad rows; else fail on the first (TensorFlow's error)
};

// "" (the attr's default), "DEFAULT" and "ERROR" fail; "IGNORE" drops.
inline constexpr KernelPolicy kKernelPolicies[] = {
    {"", false}, {"DEFAULT", false}, {"ERROR", false}, {"IGNORE", true}};
inline constexpr size_t kNumKernelPolicies = sizeof(kKernelPolicies) / sizeof(kKernelPolicies[0]);

// The policy named `name` (exactly: upper case), or null.
inline const KernelPolicy* FindKernelPolicy(std::string_view name) {
  for (const KernelPolicy& p : kKernelPolicies) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

// The names as a message lists them: "'', 'DEFAULT', 'ERROR' or 'IGNORE'".
inline std::string KernelPolicyNames() {
  std::string text;
  for (size_t i = 0; i < kNumKernelPolicies; ++i) {
    if (i > 0) text += i + 1 < kNumKernelPolicies ? ", " : " or ";
    text += std::string("'") + kKernelPolicies[i].name + "'";
  }
  return text;
}

}  // namespace tf_scatter_ops

#endif  // TF_SCATTER_OPS_CC_OPS_KERNEL_POLICIES_H_
