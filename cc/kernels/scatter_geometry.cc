#include "scatter_geometry.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cpu/index_linearize.h"
#include "shape_messages.h"
#include "tensorflow/core/framework/types.h"
#include "tensorflow/core/lib/core/threadpool.h"
#if TFSO_WITH_CUDA
#include "xla/stream_executor/stream.h"
#endif

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
        "TF_SCATTER_OPS_GPU=1;";
#else
        "TF_SCATTER_OPS_GPU=0;";
#endif

namespace tf_scatter_ops {
namespace {

using ::absl::InvalidArgumentError;
using ::absl::StrCat;

std::string Str(const TensorShape& s) { return s.DebugString(); }

// Product of dims [begin, end) of a valid TensorShape (cannot overflow:
// TensorShape already bounds its element count).
int64_t DimProduct(const TensorShape& s, int begin, int end) {
  int64_t p = 1;
  for (int d = begin; d < end; ++d) p *= s.dim_size(d);
  return p;
}

Status CheckIndexDepth(const TensorShape& target, const TensorShape& indices,
                       const char* what) {
  if (indices.dims() < 1) {
    return InvalidArgumentError(messages::IndicesRank(Str(indices)));
  }
  const int64_t depth = indices.dim_size(indices.dims() - 1);
  if (depth > target.dims()) {
    return InvalidArgumentError(messages::DepthExceedsRank(
        depth, target.dims(), what, Str(target), Str(indices)));
  }
  return absl::OkStatus();
}

void Fill(const TensorShape& target, const TensorShape& indices, Geometry* g) {
  g->depth = static_cast<int>(indices.dim_size(indices.dims() - 1));
  g->n = DimProduct(indices, 0, indices.dims() - 1);
  g->nslots = DimProduct(target, 0, g->depth);
  g->slice = DimProduct(target, g->depth, target.dims());
}

template <typename Index>
Status BadRowTyped(const Tensor& indices, const Geometry& g, int64_t row,
                   const TensorShape& target, bool gather) {
  const Index* r = indices.flat<Index>().data() + row * g.depth;
  return BadIndexError(indices.shape(), row, std::vector<int64_t>(r, r + g.depth),
                       target, gather);
}

}  // namespace

Status ParseBadIndicesPolicy(OpKernelConstruction* c, bool* ignore) {
  std::string policy;
  TF_RETURN_IF_ERROR(c->GetAttr("bad_indices_policy", &policy));
  if (policy.empty() || policy == "DEFAULT" || policy == "ERROR") {
    *ignore = false;
  } else if (policy == "IGNORE") {
    *ignore = true;
  } else {
    return InvalidArgumentError(StrCat(
        "Unknown bad_indices_policy '", policy,
        "': expected '', 'DEFAULT', 'ERROR' or 'IGNORE' (upper case)"));
  }
  return absl::OkStatus();
}

Status ScatterGeometry(const TensorShape& output, const TensorShape& indices,
                       const TensorShape& updates, Geometry* g) {
  TF_RETURN_IF_ERROR(CheckIndexDepth(output, indices, "output"));
  if (updates.dims() < 1) {
    return InvalidArgumentError(messages::UpdatesRank(Str(updates), Str(indices)));
  }
  const int outer = indices.dims() - 1;
  const int depth = static_cast<int>(indices.dim_size(outer));
  bool outer_ok = updates.dims() >= outer;
  for (int d = 0; outer_ok && d < outer; ++d) {
    outer_ok = indices.dim_size(d) == updates.dim_size(d);
  }
  if (!outer_ok) {
    return InvalidArgumentError(
        messages::OuterMismatch(Str(indices), outer, Str(updates)));
  }
  bool inner_ok = updates.dims() - outer == output.dims() - depth;
  for (int d = 0; inner_ok && d < output.dims() - depth; ++d) {
    inner_ok = updates.dim_size(outer + d) == output.dim_size(depth + d);
  }
  if (!inner_ok) {
    return InvalidArgumentError(messages::InnerMismatch(
        Str(output), depth, output.dims(), Str(updates), outer, updates.dims()));
  }
  if (output.num_elements() == 0 && indices.num_elements() > 0) {
    return InvalidArgumentError(
        messages::EmptyOutput(Str(output), Str(indices), Str(updates)));
  }
  Fill(output, indices, g);
  return absl::OkStatus();
}

Status GatherGeometry(const TensorShape& params, const TensorShape& indices,
                      Geometry* g, TensorShape* output) {
  TF_RETURN_IF_ERROR(CheckIndexDepth(params, indices, "params"));
  Fill(params, indices, g);
  *output = TensorShape();
  for (int d = 0; d < indices.dims() - 1; ++d) {
    TF_RETURN_IF_ERROR(output->AddDimWithStatus(indices.dim_size(d)));
  }
  for (int d = g->depth; d < params.dims(); ++d) {
    TF_RETURN_IF_ERROR(output->AddDimWithStatus(params.dim_size(d)));
  }
  return absl::OkStatus();
}

Status ShapeFromTensor(const Tensor& shape, TensorShape* output) {
  if (shape.dims() != 1) {
    return InvalidArgumentError(messages::ShapeNotVector(Str(shape.shape())));
  }
  std::vector<int64_t> dims(shape.NumElements());
  for (int64_t d = 0; d < shape.NumElements(); ++d) {
    switch (shape.dtype()) {
      case ::tensorflow::DT_INT16: dims[d] = shape.flat<int16_t>()(d); break;
      case ::tensorflow::DT_INT32: dims[d] = shape.flat<int32_t>()(d); break;
      case ::tensorflow::DT_INT64: dims[d] = shape.flat<int64_t>()(d); break;
      default:
        return InvalidArgumentError("shape must be int16, int32 or int64");
    }
  }
  const std::string text = StrCat("[", absl::StrJoin(dims, ", "), "]");
  int64_t elements = 1;
  for (int64_t v : dims) {
    if (v < 0) {
      return InvalidArgumentError(
          StrCat("shape ", text, " has a negative dimension ", v));
    }
    if (v != 0 && elements > INT64_MAX / v) {
      return InvalidArgumentError(StrCat(
          "shape ", text, " has too many elements (the product overflows int64)"));
    }
    elements *= v;
  }
  Status s = TensorShape::BuildTensorShape(dims, output);
  if (!s.ok()) {
    return InvalidArgumentError(StrCat("shape ", text, " is not a valid tensor shape: ", s.message()));
  }
  return absl::OkStatus();
}

Status MakeCpuRows(const Tensor& indices, const Geometry& g,
                   const TensorShape& target, CpuRows* r) {
  r->dims.resize(g.depth);
  r->strides.resize(g.depth);
  int64_t stride = 1;
  for (int d = g.depth - 1; d >= 0; --d) {
    r->dims[d] = target.dim_size(d);
    r->strides[d] = stride;
    stride *= r->dims[d];
  }
  const int64_t* dims = r->dims.data();
  const int64_t* strides = r->strides.data();
  switch (indices.dtype()) {
    case ::tensorflow::DT_INT16:
      r->rows = MakeIndexRows(indices.flat<int16_t>().data(), g.n, g.depth, dims, strides);
      return absl::OkStatus();
    case ::tensorflow::DT_INT32:
      r->rows = MakeIndexRows(indices.flat<int32_t>().data(), g.n, g.depth, dims, strides);
      return absl::OkStatus();
    case ::tensorflow::DT_INT64:
      r->rows = MakeIndexRows(indices.flat<int64_t>().data(), g.n, g.depth, dims, strides);
      return absl::OkStatus();
    default:
      return InvalidArgumentError(
          StrCat("indices must be int16, int32 or int64, got ",
                 ::tensorflow::DataTypeString(indices.dtype())));
  }
}

Status BadRowError(const Tensor& indices, const Geometry& g, int64_t row,
                   const TensorShape& target, bool gather) {
  switch (indices.dtype()) {
    case ::tensorflow::DT_INT16: return BadRowTyped<int16_t>(indices, g, row, target, gather);
    case ::tensorflow::DT_INT32: return BadRowTyped<int32_t>(indices, g, row, target, gather);
    default: return BadRowTyped<int64_t>(indices, g, row, target, gather);
  }
}

Status BadIndexError(const TensorShape& indices, int64_t row,
                     const std::vector<int64_t>& coords,
                     const TensorShape& target, bool gather) {
  if (!gather) {
    return InvalidArgumentError(messages::BadIndex({row}, coords, Str(target), false));
  }
  if (target.num_elements() == 0) {
    return InvalidArgumentError(messages::EmptyParams(Str(target)));
  }
  // The row's position in indices' outer dimensions.
  std::vector<int64_t> position(std::max(indices.dims() - 1, 0));
  for (int d = static_cast<int>(position.size()) - 1; d >= 0; --d) {
    position[d] = row % indices.dim_size(d);
    row /= indices.dim_size(d);
  }
  return InvalidArgumentError(messages::BadIndex(position, coords, Str(target), true));
}

void* TfScratch::Allocate(size_t bytes) {
  Tensor t;
  // A zero-byte tensor has no buffer; nullptr would read as out of memory.
  status_ = c_->allocate_temp(
      ::tensorflow::DT_UINT8,
      TensorShape({static_cast<int64_t>(bytes > 0 ? bytes : 1)}), &t);
  if (!status_.ok()) return nullptr;
  held_.push_back(t);
  return t.data();
}

#if TFSO_WITH_CUDA

Status PrepareGpuCall(const Tensor& indices, const Geometry& g,
                      const TensorShape& target, bool ignore,
                      GpuCallState* s) {
  gpu::Call& call = s->call;
  switch (indices.dtype()) {
    case ::tensorflow::DT_INT16: call.index_type = gpu::IndexType::kInt16; break;
    case ::tensorflow::DT_INT32: call.index_type = gpu::IndexType::kInt32; break;
    case ::tensorflow::DT_INT64: call.index_type = gpu::IndexType::kInt64; break;
    default:
      return InvalidArgumentError(
          StrCat("indices must be int16, int32 or int64, got ",
                 ::tensorflow::DataTypeString(indices.dtype())));
  }
  auto* stream = s->scratch.context()->op_device_context()->stream();
  if (stream == nullptr) return absl::InternalError("no GPU stream for the op");
  s->dims.resize(g.depth);
  for (int d = 0; d < g.depth; ++d) s->dims[d] = target.dim_size(d);
  s->bad_coords.assign(g.depth, 0);
  call.indices = indices.data();
  call.n = g.n;
  call.depth = g.depth;
  call.dims = s->dims.data();
  call.slice = g.slice;
  call.nslots = g.nslots;
  call.ignore = ignore;
  call.stream = stream->platform_specific_handle().stream;
  call.scratch = &s->scratch;
  call.bad_coords = s->bad_coords.data();
  return absl::OkStatus();
}

Status GpuCallStatus(const GpuCallState& s, const char* error,
                     const TensorShape& indices, const TensorShape& target,
                     bool gather) {
  if (!s.scratch.status().ok()) return s.scratch.status();  // out of memory
  if (error != nullptr) {
    return absl::InternalError(StrCat("tf_scatter_ops GPU kernel: ", error));
  }
  if (s.call.bad_row >= 0) {
    return BadIndexError(indices, s.call.bad_row, s.bad_coords, target, gather);
  }
  return absl::OkStatus();
}
#endif  // TFSO_WITH_CUDA

Parallel CpuParallel(OpKernelContext* c) {
  Parallel p;
  auto* pool = c->device()->tensorflow_cpu_worker_threads()->workers;
  p.threads = pool->NumThreads();
  p.run = [pool](int64_t total, int64_t cost, const Parallel::Body& body) {
    pool->ParallelFor(total, cost, body);
  };
  return p;
}

}  // namespace tf_scatter_ops
