// The kernels of one row of the op table (op_table.h), registered from the
// row alone: for each of its value dtypes the CPU kernel, the XLA custom-call
// target and, where the GPU gate lets them run (gpu_gate.h), the GPU kernel,
// for the op and for its variable ops. Each registration unit
// (kernels_<op>.cc) registers one row, so the instantiations of the ops
// compile in parallel:
//
//   #include "register/register_kernels.h"
//   TFSO_REGISTER_ROW(TensorScatterAdd)
#ifndef TF_SCATTER_OPS_CC_KERNELS_REGISTER_REGISTER_KERNELS_H_
#define TF_SCATTER_OPS_CC_KERNELS_REGISTER_REGISTER_KERNELS_H_

// TensorFlow's variable helpers run Eigen on the CPU thread pool
// (variable_kernels.h): before the first Eigen header.
#ifndef EIGEN_USE_THREADS
#define EIGEN_USE_THREADS
#endif

#include <initializer_list>
#include <string>
#include <type_traits>

#include "library/gpu_gate.h"
#include "ops/op_table.h"
#include "tf/arg_kernels.h"
#include "tf/groupwise_kernels.h"
#include "tf/message_kernels.h"
#include "tf/scatter_kernels.h"
#include "tf/segment_kernels.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tf/variable_kernels.h"
#include "xla/xla_targets.h"

namespace tf_scatter_ops {
namespace table {

enum class Kind {
  kScatterNd,
  kTensorScatter,
  kGatherNd,
  kUnsortedSegment,
  kSortedSegment,
  kSparseSegment,
  kGroupwise,
  kArgScatter,
  kArgSegment,
  kGatherReduce,
  kEdgeCombine
};

// The value types of a row, TensorFlow's C++ types, ending in void.
template <typename... Ts>
struct Types {};

template <typename K>
::tensorflow::OpKernel* Make(::tensorflow::OpKernelConstruction* c) {
  return new K(c);
}

// Registers the OpKernel K for TfScatter>`op` on `device` for T (its type
// attr `attr`), with the inputs `host` in host memory.
template <typename K, typename T>
void Register(const char* device, const std::string& op, const char* attr,
              std::initializer_list<const char*> host = {}) {
  const std::string name = "TfScatter>" + op;
  ::tensorflow::register_kernel::Name builder(name.c_str());
  builder.Device(device).TypeConstraint<T>(attr);
  for (const char* input : host) builder.HostMemory(input);
  ::tensorflow::kernel_factory::OpKernelRegistrar(builder.Build(), name + " " + device,
                                                  &Make<K>);
}

// The segment kernels' cores per backend (segment_kernels.h).
template <typename Backend> struct Segments { using type = CpuSegments; };
#if TFSO_WITH_CUDA
template <> struct Segments<GpuBackend> { using type = GpuSegments; };
#endif

// A segment row's kernel on one backend. On a GPU the ids that are read on
// the host (sorted and sparse ids, num_segments) are in host memory; what
// the core does not take (S::kTakes) has no kernel there.
template <typename Row, typename S, typename T, typename Op>
void RegisterSegment(const char* device, bool gpu) {
  using H = std::initializer_list<const char*>;
  const std::string op = Row::kOp;
  if constexpr (!S::template kTakes<T, Op>) {
    return;
  } else if constexpr (Row::kKind == Kind::kUnsortedSegment) {
    Register<UnsortedSegmentOp<S, T, Op>, T>(device, op, "T", gpu ? H{"num_segments"} : H{});
  } else if constexpr (Row::kKind == Kind::kSortedSegment) {
    Register<SortedSegmentOp<S, T, Op>, T>(device, op, "T", gpu ? H{"segment_ids"} : H{});
  } else {
    Register<SparseSegmentOp<S, T, Op>, T>(
        device, op, "T", gpu ? H{"indices", "segment_ids", "num_segments"} : H{});
  }
}

// The kernels of one value type T on one backend.
template <typename Row, typename Backend, typename T>
void RegisterOn(const char* device, bool gpu) {
  using Op = typename Row::Reducer;
  const std::string op = Row::kOp, variable = Row::kVariable;
  using H = std::initializer_list<const char*>;  // host-memory inputs on a GPU
  if constexpr (Row::kKind == Kind::kScatterNd) {
    Register<ScatterNdOp<Backend, T>, T>(device, op, "T", gpu ? H{"shape"} : H{});
  } else if constexpr (Row::kKind == Kind::kTensorScatter) {
    Register<TensorScatterOp<Backend, T, Op>, T>(device, op, "T");
    if (variable == "none") return;
    Register<ResourceScatterOp<Backend, T, Op>, T>(device, "Resource" + variable, "T",
                                                   gpu ? H{"ref"} : H{});
    Register<RefScatterOp<Backend, T, Op>, T>(device, variable, "T");
  } else if constexpr (Row::kKind == Kind::kGatherNd) {
    Register<GatherNdOp<Backend, T>, T>(device, op, "Tparams");
    Register<ResourceGatherNdOp<Backend, T>, T>(device, variable, "dtype",
                                               gpu ? H{"resource"} : H{});
  } else if constexpr (Row::kKind == Kind::kGroupwise) {
    Register<GroupwiseOp<Backend, T, Op>, T>(device, op, "T", gpu ? H{"num_segments"} : H{});
    Register<GroupwiseGradOp<Backend, T, Op>, T>(device, op + "Grad", "T",
                                                  gpu ? H{"num_segments"} : H{});
  } else if constexpr (Row::kKind == Kind::kArgScatter) {
    Register<ArgScatterOp<Backend, T, Op>, T>(device, op, "T");
  } else if constexpr (Row::kKind == Kind::kArgSegment) {
    Register<ArgSegmentOp<Backend, T, Op>, T>(device, op, "T", gpu ? H{"num_segments"} : H{});
  } else if constexpr (Row::kKind == Kind::kGatherReduce) {
    Register<GatherReduceOp<Backend, T>, T>(device, op, "T", gpu ? H{"num_segments"} : H{});
  } else if constexpr (Row::kKind == Kind::kEdgeCombine) {
    Register<EdgeCombineOp<Backend, T>, T>(device, op, "T");
  } else {
    RegisterSegment<Row, typename Segments<Backend>::type, T, Op>(device, gpu);
  }
}

template <typename Row, typename T>
void RegisterXlaTarget() {
#if TFSO_XLA
  const auto dtype = ::tensorflow::DataTypeToEnum<T>::v();
  if constexpr (Row::kKind == Kind::kScatterNd) {
    XlaTargetRegistrar(Row::kOp, dtype, &ScatterNdTarget<T>);
  } else if constexpr (Row::kKind == Kind::kTensorScatter) {
    XlaTargetRegistrar(Row::kOp, dtype, &TensorScatterTarget<T, typename Row::Reducer>);
  } else if constexpr (Row::kKind == Kind::kGatherNd) {
    XlaTargetRegistrar(Row::kOp, dtype, &GatherNdTarget<T>);
  }
#endif
}

template <typename Row, typename... Ts>
bool RegisterRow(Types<Ts...>) {
  const auto one = [](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if constexpr (!std::is_void<T>::value) {
      RegisterOn<Row, CpuBackend, T>(::tensorflow::DEVICE_CPU, false);
      RegisterXlaTarget<Row, T>();
#if TFSO_WITH_CUDA
      // No GPU kernel for strings, as in TensorFlow.
      if constexpr (!std::is_same<T, ::tensorflow::tstring>::value) {
        if (GpuKernelsRegistered()) RegisterOn<Row, GpuBackend, T>(::tensorflow::DEVICE_GPU, true);
      }
#endif
    }
  };
  (one(static_cast<Ts*>(nullptr)), ...);
  return true;
}

}  // namespace table
}  // namespace tf_scatter_ops

#define TFSO_TABLE_TYPE(T) T,
#define TFSO_TABLE_TYPE_OF(m, name) TF_CALL_##name(TFSO_TABLE_TYPE)

// The row OP of the table as a type, and its registration at load time.
#define TFSO_TABLE_ROW(OP, PY, KIND, REDUCER, DTYPES, VARIABLE, GRADIENT, TF, ALIAS) \
  struct Row##OP {                                                                   \
    static constexpr const char* kOp = #OP;                                          \
    static constexpr const char* kVariable = #VARIABLE;                              \
    static constexpr Kind kKind = Kind::k##KIND;                                     \
    using Reducer = REDUCER;                                                         \
    using Values = Types<TFSO_##DTYPES##_DTYPES(TFSO_TABLE_TYPE_OF, ) void>;         \
  };
#define TFSO_REGISTER_ROW(OP)                                                  \
  namespace tf_scatter_ops {                                                   \
  namespace table {                                                            \
  TFSO_OP_##OP(TFSO_TABLE_ROW)                                                 \
  [[maybe_unused]] static const bool registered_##OP =                        \
      RegisterRow<Row##OP>(Row##OP::Values());                                 \
  }                                                                            \
  }

#endif  // TF_SCATTER_OPS_CC_KERNELS_REGISTER_REGISTER_KERNELS_H_
