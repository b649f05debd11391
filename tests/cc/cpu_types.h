// What both CPU references of the CUDA core's host tests (cpu_core_ref.cc,
// new_ops_cpu_ref.cc) share: the CPU kernels' element type for each of the
// CUDA core's (as the glue maps them, tf/scatter_kernels.h: Eigen::half for
// F16, Eigen::bfloat16 for BF16, std::complex for Complex), pointer casts
// between the two, and scratch from the heap. Needs Eigen (TensorFlow's
// headers).
#ifndef TF_SCATTER_OPS_TESTS_CC_CPU_TYPES_H_
#define TF_SCATTER_OPS_TESTS_CC_CPU_TYPES_H_

#include <Eigen/Core>

#include <algorithm>
#include <complex>
#include <cstddef>
#include <memory>
#include <vector>

#include "common/element_types.h"
#include "common/scratch.h"

namespace tfso_cpu_types {

template <typename T>
struct CpuType {
  using type = T;
};
template <>
struct CpuType<::tf_scatter_ops::F16> {
  using type = Eigen::half;
};
template <>
struct CpuType<::tf_scatter_ops::BF16> {
  using type = Eigen::bfloat16;
};
template <typename R>
struct CpuType<::tf_scatter_ops::Complex<R>> {
  using type = std::complex<R>;
};
template <typename T>
using Cpu = typename CpuType<T>::type;

template <typename T>
Cpu<T>* As(T* p) {
  static_assert(sizeof(Cpu<T>) == sizeof(T), "layout-compatible types only");
  return reinterpret_cast<Cpu<T>*>(p);
}
template <typename T>
const Cpu<T>* As(const T* p) {
  return reinterpret_cast<const Cpu<T>*>(p);
}

class HeapScratch : public ::tf_scatter_ops::Scratch {
 public:
  void* Allocate(size_t bytes) override {
    held_.emplace_back(new char[std::max<size_t>(bytes, 1)]);
    return held_.back().get();
  }

 private:
  std::vector<std::unique_ptr<char[]>> held_;
};

}  // namespace tfso_cpu_types

#endif  // TF_SCATTER_OPS_TESTS_CC_CPU_TYPES_H_
