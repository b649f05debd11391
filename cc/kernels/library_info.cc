// What the loaded library does on this CPU, for Python (tf_scatter_ops/_loader.py
// reads it with ctypes): the ISA its vectorised loops use, and the best the
// CPU has (cpu_features.h).
#include "cpu/cpu_features.h"

extern "C" __attribute__((used, visibility("default"))) const char*
tf_scatter_ops_active_isa() {
  return tf_scatter_ops::IsaName(tf_scatter_ops::ActiveIsa());
}

extern "C" __attribute__((used, visibility("default"))) const char*
tf_scatter_ops_cpu_isa() {
  return tf_scatter_ops::IsaName(tf_scatter_ops::CpuIsa());
}
