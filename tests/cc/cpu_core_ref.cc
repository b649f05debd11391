// The CPU core for the CUDA core's harness (cpu_core_ref.h): each function
// maps the CUDA core's element type to the one production's CPU kernels use
// (tf/scatter_kernels.h: Eigen::half for F16, Eigen::bfloat16 for BF16,
// std::complex for Complex; update and gather already run on bit types) and
// calls the CPU core as the glue does, serially. Instantiated for every op
// and dtype the CUDA core has (cc/kernels/cuda/*.cu.cc).
#include "cpu_core_ref.h"
#include "cpu_types.h"

#include <Eigen/Core>

#include <complex>
#include <memory>
#include <type_traits>
#include <vector>

#include "common/dtypes.h"
#include "common/element_types.h"
#include "common/reducers.h"
#include "cpu/gather_cpu.h"
#include "cpu/scatter_cpu.h"
#include "cpu/segment_cpu.h"
#include "cuda/scatter_gpu.h"
#include "cuda/segment_elements.h"

namespace tfso_cpu {
namespace {

namespace tso = tf_scatter_ops;

using tfso_cpu_types::As;
using tfso_cpu_types::HeapScratch;
template <typename T>
using C = tfso_cpu_types::Cpu<T>;

// The CPU core's call for `rows`, with the strides it takes.
struct Prepared {
  std::vector<int64_t> strides;
  tso::CpuCall call;
  Prepared(const Rows& r, int64_t nslots, int64_t slice) : strides(r.depth) {
    int64_t stride = 1;
    for (int d = r.depth - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= r.dims[d];
    }
    tso::IndexRows rows;
    switch (r.index_bytes) {
      case 2:
        rows = tso::MakeIndexRows<int16_t>(static_cast<const int16_t*>(r.indices), r.n, r.depth,
                                           r.dims, strides.data());
        break;
      case 4:
        rows = tso::MakeIndexRows<int32_t>(static_cast<const int32_t*>(r.indices), r.n, r.depth,
                                           r.dims, strides.data());
        break;
      default:
        rows = tso::MakeIndexRows<int64_t>(static_cast<const int64_t*>(r.indices), r.n, r.depth,
                                           r.dims, strides.data());
    }
    call.form = {r.n, r.depth, nslots, slice};
    call.rows = rows;
  }
};

}  // namespace

template <typename T, typename Op>
int64_t Scatter(const Rows& rows, int64_t nslots, int64_t slice, bool ignore, const T* updates,
                const T* init, tf_scatter_ops::Init mode, T* out) {
  const Prepared p(rows, nslots, slice);
  HeapScratch scratch;
  return tso::ScatterCpu<C<T>, Op>(p.call, ignore, As(updates), As(init), mode, As(out),
                                   tso::Parallel(), scratch);
}

template <typename T>
int64_t Gather(const Rows& rows, int64_t nslots, int64_t slice, const T* params, T* out) {
  const Prepared p(rows, nslots, slice);
  return tso::GatherCpu<C<T>>(p.call, As(params), As(out), tso::Parallel());
}

template <typename T, typename Op, tf_scatter_ops::Order kOrder>
void SortedSegment(const int64_t* offsets, int64_t nsegments, const int64_t* rows, int64_t slice,
                   const T* data, T gap, T* out) {
  // The runs: the non-empty segments, contiguous in CSR form.
  tso::Runs runs;
  runs.first.clear();
  for (int64_t s = 0; s < nsegments; ++s) {
    if (offsets[s] < offsets[s + 1]) {
      runs.first.push_back(offsets[s]);
      runs.segment.push_back(s);
    }
  }
  runs.first.push_back(offsets[nsegments]);
  // The glue's accumulators (segment_kernels.h): T under kIndex; under
  // kGroups8 float for the 16-bit floats (SegmentAccumulator).
  using A = typename std::conditional<
      kOrder == tso::Order::kGroups8 &&
          (std::is_same<T, tso::F16>::value || std::is_same<T, tso::BF16>::value),
      float, C<T>>::type;
  tso::SortedSegmentCpu<C<T>, Op, kOrder, A, int64_t>(runs, As(data), rows, slice, nsegments,
                                                      *As(&gap), As(out), tso::Parallel());
}

// ---- instantiations: those of cc/kernels/cuda/*.cu.cc ----------------------

namespace tso_ops = tf_scatter_ops;
#define TFSO_REF_SCATTER(T, OP)                                                               \
  template int64_t Scatter<T, tso_ops::OP>(const Rows&, int64_t, int64_t, bool, const T*,    \
                                           const T*, tso_ops::Init, T*);
#define TFSO_REF_SORTED(T, OP, ORDER)                                                          \
  template void SortedSegment<T, tso_ops::OP, tso_ops::Order::ORDER>(                         \
      const int64_t*, int64_t, const int64_t*, int64_t, const T*, T, T*);

#define BITS(T) TFSO_REF_SCATTER(T, AssignOp) template int64_t Gather<T>(const Rows&, int64_t, \
                                                                         int64_t, const T*, T*);
TFSO_GPU_BITS_TYPES(BITS)
#undef BITS
TFSO_REF_SCATTER(bool, AddOp)
#define ADD(T) TFSO_REF_SCATTER(T, AddOp) TFSO_REF_SCATTER(T, SubOp) TFSO_REF_SORTED(T, AddOp, kIndex)
TFSO_ADD_DTYPES(TFSO_GPU_DTYPE, ADD)
#undef ADD
#define REAL(T)                                                                           \
  TFSO_REF_SCATTER(T, MinOp) TFSO_REF_SCATTER(T, MaxOp) TFSO_REF_SCATTER(T, MulOp)        \
  TFSO_REF_SCATTER(T, SegmentMinOp) TFSO_REF_SCATTER(T, SegmentMaxOp)                    \
  TFSO_REF_SORTED(T, MulOp, kIndex) TFSO_REF_SORTED(T, MeanOp, kIndex)                   \
  TFSO_REF_SORTED(T, SegmentMinOp, kIndex) TFSO_REF_SORTED(T, SegmentMaxOp, kIndex)      \
  TFSO_REF_SORTED(T, AddOp, kGroups8)
TFSO_MINMAX_DTYPES(TFSO_GPU_DTYPE, REAL)
#undef REAL
#define FLOAT(T)                                                                          \
  TFSO_REF_SCATTER(T, DivOp) TFSO_REF_SORTED(T, MeanOp, kGroups8)                         \
  TFSO_REF_SORTED(T, SqrtNOp, kGroups8)
TFSO_FLOAT_DTYPES(TFSO_GPU_DTYPE, FLOAT)
#undef FLOAT

}  // namespace tfso_cpu
