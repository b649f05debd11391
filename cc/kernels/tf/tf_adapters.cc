#include "tf/tf_adapters.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cpu/chunked_loop.h"
#include "ops/kernel_policies.h"
#include "ops/shape_checks.h"
#include "tensorflow/core/framework/allocator.h"
#include "tensorflow/core/framework/types.h"
#include "tensorflow/core/lib/core/threadpool.h"
#include "tensorflow/core/platform/cpu_info.h"
#include "tensorflow/core/platform/env.h"
#if TFSO_WITH_CUDA
#include "xla/stream_executor/stream.h"
#endif

namespace tf_scatter_ops {
namespace {

using ::absl::InvalidArgumentError;
using ::absl::StrCat;

}  // namespace

Status IndexDtypeError(const Tensor& indices) {
  return InvalidArgumentError(StrCat("indices must be int16, int32 or int64, got ",
                                     ::tensorflow::DataTypeString(indices.dtype())));
}

Status ParseBadIndicesPolicy(OpKernelConstruction* c, bool* ignore) {
  std::string policy;
  TF_RETURN_IF_ERROR(c->GetAttr("bad_indices_policy", &policy));
  const KernelPolicy* known = FindKernelPolicy(policy);
  if (known == nullptr) {
    return InvalidArgumentError(StrCat("Unknown bad_indices_policy '", policy, "': expected ",
                                       KernelPolicyNames(), " (upper case)"));
  }
  *ignore = known->ignore;
  return absl::OkStatus();
}

Status PrepareCpuCall(const Tensor& indices, const ScatterForm& f,
                      const TensorShape& target, CpuCallState* s) {
  s->call.form = f;
  s->dims.resize(f.depth);
  s->strides.resize(f.depth);
  int64_t stride = 1;
  for (int d = f.depth - 1; d >= 0; --d) {
    s->dims[d] = target.dim_size(d);
    s->strides[d] = stride;
    stride *= s->dims[d];
  }
  return WithIndexType(indices, [&](auto index) {
    using Index = decltype(index);
    s->call.rows = MakeIndexRows(indices.flat<Index>().data(), f.n, f.depth,
                                 s->dims.data(), s->strides.data());
    return absl::OkStatus();
  });
}

Status BadRowError(const Tensor& indices, const ScatterForm& f, int64_t row,
                   const TensorShape& target, bool gather) {
  return WithIndexType(indices, [&](auto index) {
    const auto* r = indices.flat<decltype(index)>().data() + row * f.depth;
    return BadIndexError(indices.shape(), row, std::vector<int64_t>(r, r + f.depth),
                         target, gather);
  });
}

Status FalseHintError(const Tensor& indices, const ScatterForm& f, int64_t row, bool strict,
                      bool segment_ids) {
  return WithIndexType(indices, [&](auto index) {
    const auto* r = indices.flat<decltype(index)>().data() + row * f.depth;
    const std::string named =
        segment_ids
            ? absl::StrCat("segment_ids[",
                           absl::StrJoin(PositionOf(indices.shape(), indices.dims(), row), ","),
                           "] = ", static_cast<int64_t>(*r))
            : absl::StrCat("indices[", row, "] = [",
                           absl::StrJoin(std::vector<int64_t>(r, r + f.depth), ", "), "]");
    return InvalidArgumentError(messages::FalseHint(named, strict));
  });
}

Status BadIndexError(const TensorShape& indices, int64_t row,
                     const std::vector<int64_t>& coords,
                     const TensorShape& target, bool gather) {
  if (!gather) {
    return InvalidArgumentError(messages::BadIndex({row}, coords, target.DebugString(), false));
  }
  if (target.num_elements() == 0) {
    return InvalidArgumentError(messages::EmptyParams(target.DebugString()));
  }
  // The row's position in indices' outer dimensions.
  const auto position = PositionOf(indices, std::max(indices.dims() - 1, 0), row);
  return InvalidArgumentError(messages::BadIndex(position, coords, target.DebugString(), true));
}

std::vector<int64_t> PositionOf(const TensorShape& shape, int dims, int64_t flat) {
  std::vector<int64_t> position(dims);
  for (int d = dims - 1; d >= 0; --d) {
    position[d] = flat % shape.dim_size(d);
    flat /= shape.dim_size(d);
  }
  return position;
}

void* TfScratch::Allocate(size_t bytes) {
  // A zero-byte tensor has no buffer; nullptr would read as out of memory.
  const TensorShape shape({static_cast<int64_t>(bytes > 0 ? bytes : 1)});
  Tensor t;
  if (c_ != nullptr) {
    status_ = c_->allocate_temp(::tensorflow::DT_UINT8, shape, &t);
  } else {
    t = Tensor(::tensorflow::cpu_allocator(), ::tensorflow::DT_UINT8, shape);
    if (!t.IsInitialized()) {
      status_ = absl::ResourceExhaustedError(
          StrCat("tf_scatter_ops: out of memory allocating ", bytes, " bytes of scratch"));
    }
  }
  if (!status_.ok()) return nullptr;
  held_.push_back(t);
  return t.data();
}

namespace {

class UnownedBuffer : public ::tensorflow::TensorBuffer {
 public:
  UnownedBuffer(void* data, size_t bytes) : TensorBuffer(data), bytes_(bytes) {}
  size_t size() const override { return bytes_; }
  TensorBuffer* root_buffer() override { return this; }
  void FillAllocationDescription(::tensorflow::AllocationDescription*) const override {}
  bool OwnsMemory() const override { return false; }

 private:
  size_t bytes_;
};

}  // namespace

Tensor UnownedTensor(::tensorflow::DataType dtype, const TensorShape& shape,
                     const void* data) {
  auto* buffer = new UnownedBuffer(const_cast<void*>(data),
                                   shape.num_elements() * ::tensorflow::DataTypeSize(dtype));
  Tensor t(dtype, shape, buffer);
  buffer->Unref();  // the tensor holds its own reference
  return t;
}

namespace {

Parallel PoolParallel(::tensorflow::thread::ThreadPool* pool) {
  return ChunkedParallel(pool->NumThreads(),
                         [pool](std::function<void()> work) { pool->Schedule(std::move(work)); });
}

}  // namespace

Parallel HostParallel() {
  static auto* pool = new ::tensorflow::thread::ThreadPool(
      ::tensorflow::Env::Default(), "tf_scatter_ops", ::tensorflow::port::MaxParallelism());
  return PoolParallel(pool);
}

#if TFSO_WITH_CUDA

Status GpuStreamOf(OpKernelContext* c, void** stream) {
  auto* s = c->op_device_context() == nullptr ? nullptr : c->op_device_context()->stream();
  if (s == nullptr) return absl::InternalError("no GPU stream for the op");
  *stream = s->platform_specific_handle().stream;
  return absl::OkStatus();
}

Status PrepareGpuCall(const Tensor& indices, const ScatterForm& f,
                      const TensorShape& target, bool ignore,
                      GpuCallState* s) {
  gpu::Call& call = s->call;
  TF_RETURN_IF_ERROR(WithIndexType(indices, [&](auto index) {
    constexpr size_t kBytes = sizeof(index);
    call.index_type = kBytes == 2   ? gpu::IndexType::kInt16
                      : kBytes == 4 ? gpu::IndexType::kInt32
                                    : gpu::IndexType::kInt64;
    return absl::OkStatus();
  }));
  TF_RETURN_IF_ERROR(GpuStreamOf(s->scratch.context(), &call.stream));
  s->dims.resize(f.depth);
  for (int d = 0; d < f.depth; ++d) s->dims[d] = target.dim_size(d);
  s->bad_coords.assign(f.depth, 0);
  call.indices = indices.data();
  call.form = f;
  call.dims = s->dims.data();
  call.ignore = ignore;
  call.scratch = &s->scratch;
  call.bad_coords = s->bad_coords.data();
  return absl::OkStatus();
}

Status GpuCoreStatus(const StatusScratch& scratch, const char* error) {
  if (!scratch.status().ok()) return scratch.status();  // out of memory
  if (error != nullptr) {
    return absl::InternalError(StrCat("tf_scatter_ops GPU kernel: ", error));
  }
  return absl::OkStatus();
}

Status GpuCallStatus(const GpuCallState& s, const char* error,
                     const TensorShape& indices, const TensorShape& target,
                     bool gather) {
  TF_RETURN_IF_ERROR(GpuCoreStatus(s.scratch, error));
  if (s.call.bad_row >= 0) {
    return BadIndexError(indices, s.call.bad_row, s.bad_coords, target, gather);
  }
  return absl::OkStatus();
}
#endif  // TFSO_WITH_CUDA

Parallel CpuParallel(OpKernelContext* c) {
  return PoolParallel(c->device()->tensorflow_cpu_worker_threads()->workers);
}

}  // namespace tf_scatter_ops
