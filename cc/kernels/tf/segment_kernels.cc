#include "tf/segment_kernels.h"

namespace tf_scatter_ops {

namespace {
template <typename Index>
Status FirstOutOfRange(const Tensor& ids, int64_t from, int64_t num_segments) {
  const Index* v = ids.flat<Index>().data();
  for (int64_t i = from; i < ids.NumElements(); ++i) {
    const int64_t id = static_cast<int64_t>(v[i]);
    if (id >= num_segments) {
      return absl::InvalidArgumentError(
          messages::SegmentIdOutOfRange(PositionOf(ids.shape(), ids.dims(), i), id, num_segments));
    }
  }
  return absl::OkStatus();
}

template <typename Index>
const Index* IdsOf(const Tensor& t) {
  return t.flat<Index>().data();
}

// Appends row i with id `id` to the runs: a new run when the id changes.
inline void AddRow(Runs* runs, int64_t i, int64_t id) {
  if (runs->segment.empty() || runs->segment.back() != id) {
    if (runs->segment.empty()) runs->first[0] = i;
    else runs->first.push_back(i);
    runs->segment.push_back(id);
  }
}

inline void CloseRuns(Runs* runs, int64_t end) {
  if (runs->segment.empty()) runs->first[0] = end;
  else runs->first.push_back(end);
}

// Whether row i (> 0) starts a run: its id differs from the row before and
// is not negative (negative ids are dropped rows).
template <typename Index>
inline bool StartsRun(const Index* v, int64_t i) {
  return (v[i] != v[i - 1]) & (v[i] >= 0);
}

// Two passes over the ids, each in parallel chunks. The first counts each
// chunk's runs and finds a decrease (the error, at the first position: chunks
// are in order); the second writes the runs straight into place, without
// branches on the data: each row is stored at the next free slot, which the
// next run start overwrites, until the chunk's last run is stored.
template <typename Index>
Status Sorted(const Tensor& ids, bool ignore, const Parallel& parallel, Runs* runs,
              int64_t* nsegments) {
  const Index* v = IdsOf<Index>(ids);
  const int64_t n = ids.NumElements();
  *nsegments = n == 0 ? 0 : std::max<int64_t>(static_cast<int64_t>(v[n - 1]) + 1, 0);
  const int64_t chunks =
      std::max<int64_t>(1, std::min<int64_t>(4 * parallel.threads, n / kSortedRunsChunkRows));
  const auto lo = [&](int64_t c) { return c * n / chunks; };
  std::vector<int64_t> count(chunks + 1, 0);  // then the chunks' first slots
  std::vector<char> decreases(chunks, 0);
  parallel.For(chunks, 2 * (n / chunks + 1), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int64_t starts = 0;
      bool down = false;
      for (int64_t i = std::max<int64_t>(lo(c), 1); i < lo(c + 1); ++i) {
        starts += StartsRun(v, i);
        down |= v[i] < v[i - 1];
      }
      if (c == 0 && n > 0) starts += v[0] >= 0;
      count[c] = starts;
      decreases[c] = down;
    }
  });
  for (int64_t c = 0; c < chunks; ++c) {
    if (!decreases[c]) continue;
    for (int64_t i = std::max<int64_t>(lo(c), 1);; ++i) {
      if (v[i] < v[i - 1]) {
        return absl::InvalidArgumentError(messages::SegmentIdsNotIncreasing(
            i, static_cast<int64_t>(v[i]), static_cast<int64_t>(v[i - 1])));
      }
    }
  }
  int64_t total = 0;
  for (int64_t c = 0; c <= chunks; ++c) {
    const int64_t k = count[c];
    count[c] = total;
    total += k;
  }
  runs->first.assign(total + 1, n);
  runs->segment.resize(total);
  int64_t* first = runs->first.data();
  int64_t* segment = runs->segment.data();
  parallel.For(chunks, 3 * (n / chunks + 1), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int64_t k = count[c];
      const int64_t end = count[c + 1];
      int64_t i = lo(c);
      if (i == 0 && k < end) {
        first[k] = 0;
        segment[k] = static_cast<int64_t>(v[0]);
        k += v[0] >= 0;
        ++i;
      }
      for (; k < end; ++i) {
        first[k] = i;
        segment[k] = static_cast<int64_t>(v[i]);
        k += StartsRun(v, i);
      }
    }
  });
  if (n > 0 && v[0] < 0 && !ignore) {
    return absl::InvalidArgumentError(
        messages::NegativeSortedSegmentId(static_cast<int64_t>(v[0]), *nsegments));
  }
  return absl::OkStatus();
}

template <typename Index, typename SegmentId>
Status Sparse(const Tensor& indices, const Tensor& ids, int64_t data_rows, int64_t num_segments,
              bool ignore, std::vector<int64_t>* rows, Runs* runs, int64_t* nsegments) {
  const Index* x = IdsOf<Index>(indices);
  const SegmentId* v = IdsOf<SegmentId>(ids);
  const int64_t n = ids.NumElements();
  rows->reserve(n);
  int64_t previous = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = static_cast<int64_t>(v[i]), index = static_cast<int64_t>(x[i]);
    if (i > 0 && id < previous) {
      return absl::InvalidArgumentError(messages::SegmentIdsNotIncreasing(i, id, previous));
    }
    previous = id;
    const bool id_ok = id >= 0 && (num_segments < 0 || id < num_segments);
    const bool index_ok = index >= 0 && index < data_rows;
    if (!id_ok || !index_ok) {
      if (ignore) continue;
      if (id < 0) return absl::InvalidArgumentError(messages::NegativeSparseSegmentId(i, id));
      if (!id_ok) {
        return absl::InvalidArgumentError(
            messages::SparseSegmentIdTooLarge(i, id, num_segments));
      }
      return absl::InvalidArgumentError(messages::SparseIndexOutOfRange(i, index, data_rows));
    }
    AddRow(runs, static_cast<int64_t>(rows->size()), id);
    rows->push_back(index);
  }
  CloseRuns(runs, static_cast<int64_t>(rows->size()));
  *nsegments = num_segments >= 0 ? num_segments : n == 0 ? 0 : std::max<int64_t>(previous + 1, 0);
  return absl::OkStatus();
}

template <typename Index>
Status SparseOf(const Tensor& indices, const Tensor& ids, int64_t data_rows,
                int64_t num_segments, bool ignore, std::vector<int64_t>* rows, Runs* runs,
                int64_t* nsegments) {
  switch (ids.dtype()) {
    case ::tensorflow::DT_INT16:
      return Sparse<Index, int16_t>(indices, ids, data_rows, num_segments, ignore, rows, runs,
                                    nsegments);
    case ::tensorflow::DT_INT32:
      return Sparse<Index, int32_t>(indices, ids, data_rows, num_segments, ignore, rows, runs,
                                    nsegments);
    default:
      return Sparse<Index, int64_t>(indices, ids, data_rows, num_segments, ignore, rows, runs,
                                    nsegments);
  }
}
}  // namespace

Status SortedRuns(const Tensor& ids, bool ignore, const Parallel& parallel, Runs* runs,
                  int64_t* nsegments) {
  switch (ids.dtype()) {
    case ::tensorflow::DT_INT16: return Sorted<int16_t>(ids, ignore, parallel, runs, nsegments);
    case ::tensorflow::DT_INT32: return Sorted<int32_t>(ids, ignore, parallel, runs, nsegments);
    default: return Sorted<int64_t>(ids, ignore, parallel, runs, nsegments);
  }
}

Status SparseRuns(const Tensor& indices, const Tensor& ids, int64_t data_rows,
                  int64_t num_segments, bool ignore, std::vector<int64_t>* rows, Runs* runs,
                  int64_t* nsegments) {
  switch (indices.dtype()) {
    case ::tensorflow::DT_INT16:
      return SparseOf<int16_t>(indices, ids, data_rows, num_segments, ignore, rows, runs,
                               nsegments);
    case ::tensorflow::DT_INT32:
      return SparseOf<int32_t>(indices, ids, data_rows, num_segments, ignore, rows, runs,
                               nsegments);
    default:
      return SparseOf<int64_t>(indices, ids, data_rows, num_segments, ignore, rows, runs,
                               nsegments);
  }
}

Status FirstSegmentIdOutOfRange(const Tensor& ids, int64_t from, int64_t num_segments) {
  switch (ids.dtype()) {
    case ::tensorflow::DT_INT16: return FirstOutOfRange<int16_t>(ids, from, num_segments);
    case ::tensorflow::DT_INT32: return FirstOutOfRange<int32_t>(ids, from, num_segments);
    default: return FirstOutOfRange<int64_t>(ids, from, num_segments);
  }
}

#if TFSO_WITH_CUDA
std::vector<int64_t> SegmentOffsets(const Runs& runs, int64_t nsegments) {
  std::vector<int64_t> offsets(nsegments + 1);
  int64_t s = 0;
  for (int64_t k = 0; k < runs.count(); ++k) {
    while (s <= runs.segment[k]) offsets[s++] = runs.first[k];  // gaps end where run k starts
  }
  while (s <= nsegments) offsets[s++] = runs.first.back();
  return offsets;
}

Status GpuSegmentStatus(const GpuCallState& s, const char* error, const TensorShape& ids) {
  TF_RETURN_IF_ERROR(GpuCoreStatus(s.scratch, error));
  if (s.call.bad_row >= 0) {  // negative ids are dropped, never reported
    return absl::InvalidArgumentError(messages::SegmentIdOutOfRange(
        PositionOf(ids, ids.dims(), s.call.bad_row), s.bad_coords[0], s.call.form.nslots));
  }
  return absl::OkStatus();
}
#endif  // TFSO_WITH_CUDA

}  // namespace tf_scatter_ops
