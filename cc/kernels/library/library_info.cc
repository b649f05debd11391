// What the library tells Python about itself (tf_scatter_ops/_base/library.py and
// _base/stamp.py): the TensorFlow it was built against and whether it has GPU and
// XLA kernels (read from the file before it is loaded), and, once loaded, the
// ISA its vectorised loops use and the best the CPU has (cpu_features.h),
// what the GPU gate found and decided (gpu_gate.h; tf_scatter_ops/gpu.py),
// the op table (op_table.h; tf_scatter_ops/_base/table.py) and the policies the
// kernels implement (kernel_policies.h).
#include <string>

#include "common/dtypes.h"
#include "cpu/cpu_features.h"
#include "library/gpu_gate.h"
#include "ops/kernel_policies.h"
#include "ops/op_table.h"

// Marks the .so with the TensorFlow it was compiled against (the build
// passes TFSO_TF_VERSION from tf.__version__; pip's headers do not define
// TF_MAJOR_VERSION). The Python loader reads it from the file before loading.
#ifndef TFSO_TF_VERSION
#error "build with -DTFSO_TF_VERSION=<tf.__version__>"
#endif
#define TFSO_STR_(x) #x
#define TFSO_STR(x) TFSO_STR_(x)
extern "C" __attribute__((used, visibility("default"))) const char
    tf_scatter_ops_built_against[] =
        "TF_SCATTER_OPS_BUILT_AGAINST_TF=" TFSO_STR(TFSO_TF_VERSION) ";"
#if TFSO_WITH_CUDA
        "TF_SCATTER_OPS_GPU=1;"
#else
        "TF_SCATTER_OPS_GPU=0;"
#endif
#if TFSO_XLA
        "TF_SCATTER_OPS_XLA=1;";
#else
        "TF_SCATTER_OPS_XLA=0;";
#endif

extern "C" __attribute__((used, visibility("default"))) const char*
tf_scatter_ops_active_isa() {
  return tf_scatter_ops::IsaName(tf_scatter_ops::ActiveIsa());
}

extern "C" __attribute__((used, visibility("default"))) const char*
tf_scatter_ops_cpu_isa() {
  return tf_scatter_ops::IsaName(tf_scatter_ops::CpuIsa());
}

// This process's GPU facts and decision, and the decision for facts given in
// the same text form (the tests inject them).
extern "C" __attribute__((used, visibility("default"))) const char*
tf_scatter_ops_gpu_status() {
  static const std::string* text = new std::string(
      tf_scatter_ops::FactsText(tf_scatter_ops::ProcessGpuFacts()) +
      tf_scatter_ops::DecisionText(tf_scatter_ops::ProcessGpuDecision()));
  return text->c_str();
}

extern "C" __attribute__((used, visibility("default"))) const char*
tf_scatter_ops_gpu_decide(const char* facts) {
  thread_local std::string text;
  text = tf_scatter_ops::DecisionText(tf_scatter_ops::DecideGpu(tf_scatter_ops::ParseFacts(facts)));
  return text.c_str();
}

// The op table, a line per row: "op=ScatterNd py=scatter_nd ... dtypes=
// bfloat16,half,...,".
#define TFSO_DTYPE_TEXT(m, name) #name ","
#define TFSO_ROW_TEXT(OP, PY, KIND, REDUCER, DTYPES, VARIABLE, GRADIENT, TF, ALIAS)      \
  "op=" #OP " py=" #PY " kind=" #KIND " reducer=" #REDUCER                               \
  " dtypes=" TFSO_##DTYPES##_DTYPES(TFSO_DTYPE_TEXT, ) " variable=" #VARIABLE          \
  " gradient=" #GRADIENT " tf=" #TF " alias=" #ALIAS "\n"

extern "C" __attribute__((used, visibility("default"))) const char*
tf_scatter_ops_op_table() {
  return TFSO_OPS(TFSO_ROW_TEXT);
}

// The bad_indices_policy values the kernels implement, each followed by a
// newline: a line per policy, in the list's order, the first one empty (the
// policy ''): "\nDEFAULT\nERROR\nIGNORE\n". Python's str.splitlines() gives
// ['', 'DEFAULT', 'ERROR', 'IGNORE']. No name holds a newline.
extern "C" __attribute__((used, visibility("default"))) const char*
tf_scatter_ops_kernel_policies() {
  static const std::string* text = [] {
    auto* t = new std::string;
    for (const tf_scatter_ops::KernelPolicy& p : tf_scatter_ops::kKernelPolicies) {
      *t += p.name;
      *t += '\n';
    }
    return t;
  }();
  return text->c_str();
}
