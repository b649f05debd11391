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

// TensorFlow's first error for sorted ids, in the order its kernel meets
// them: at each change of id, an id below the run's, then the run's id
// outside [0, rows), then (sparse_segment_*: `x` not null) an index of the
// run's rows outside [0, data_rows). OK if there is none. Only called when
// a faster pass has seen that something is wrong.
template <typename Id, typename Index>
Status SortedIdsError(const Id* v, int64_t n, int64_t rows, const Index* x, int64_t data_rows) {
  int64_t start = 0;
  for (int64_t end = 1; end <= n; ++end) {
    if (end < n && v[end] == v[start]) continue;
    const int64_t id = static_cast<int64_t>(v[start]);
    if (end < n && v[end] < v[start]) {
      return absl::InvalidArgumentError(
          messages::SegmentIdsNotIncreasing(end, static_cast<int64_t>(v[end]), id));
    }
    if (id < 0 || id >= rows) {
      return absl::InvalidArgumentError(messages::SortedSegmentIdOutOfRange(id, rows));
    }
    for (int64_t i = start; x != nullptr && i < end; ++i) {
      const int64_t index = static_cast<int64_t>(x[i]);
      if (index < 0 || index >= data_rows) {
        return absl::InvalidArgumentError(messages::SparseIndexOutOfRange(i, index, data_rows));
      }
    }
    start = end;
  }
  // The faster pass saw a bad row that the search above did not: never OK.
  return absl::InternalError("segment ids: a bad row was seen but not found again");
}

// The first id below the one before it (IGNORE drops bad ids, not disorder).
template <typename Id>
Status FirstDecrease(const Id* v, int64_t from, int64_t n) {
  for (int64_t i = std::max<int64_t>(from, 1); i < n; ++i) {
    if (v[i] < v[i - 1]) {
      return absl::InvalidArgumentError(messages::SegmentIdsNotIncreasing(
          i, static_cast<int64_t>(v[i]), static_cast<int64_t>(v[i - 1])));
    }
  }
  return absl::OkStatus();
}

template <typename Id>
Status OutputRows(const Tensor& ids, int64_t num_segments, bool ignore, int64_t* rows) {
  const Id* v = IdsOf<Id>(ids);
  const int64_t n = ids.NumElements();
  const int64_t last = n == 0 ? 0 : static_cast<int64_t>(v[n - 1]);
  // (under IGNORE with num_segments given such an id is only dropped)
  if (last == std::numeric_limits<int64_t>::max() && !(ignore && num_segments >= 0)) {
    return absl::InvalidArgumentError(messages::LastSegmentIdTooLarge(last));
  }
  const int64_t last_plus_one =
      n == 0 || last == std::numeric_limits<int64_t>::max() ? 0 : last + 1;
  if (num_segments >= 0) {
    if (!ignore && num_segments < last_plus_one) {
      for (int64_t i = 0;; ++i) {  // the first id out of range (the last one is)
        if (static_cast<int64_t>(v[i]) >= num_segments) {
          return absl::InvalidArgumentError(messages::SparseSegmentIdTooLarge(
              i, static_cast<int64_t>(v[i]), num_segments));
        }
      }
    }
    *rows = num_segments;
  } else {
    *rows = ignore ? std::max<int64_t>(last_plus_one, 0) : last_plus_one;
  }
  if (!ignore && (*rows < 0 || (n > 0 && *rows == 0))) {
    return absl::InvalidArgumentError(messages::NegativeSegmentIds());
  }
  return absl::OkStatus();
}

// Two passes over the ids, each in parallel chunks. The first counts each
// chunk's runs and finds a decrease; the second writes the runs straight into
// place, without branches on the data: each row is stored at the next free
// slot, which the next run start overwrites, until the chunk's last run is
// stored. Without a decrease, the ids are in [v[0], rows): only a negative
// first id can be out of range.
template <typename Index>
Status Sorted(const Tensor& ids, int64_t rows, bool ignore, const Parallel& parallel,
              Runs* runs) {
  const Index* v = IdsOf<Index>(ids);
  const int64_t n = ids.NumElements();
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
    if (!ignore) {
      return SortedIdsError<Index, int32_t>(v, n, rows, nullptr, 0);
    }
    return FirstDecrease(v, lo(c), n);
  }
  if (n > 0 && v[0] < 0 && !ignore) {
    return SortedIdsError<Index, int32_t>(v, n, rows, nullptr, 0);
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
  return absl::OkStatus();
}

// One pass: bad rows are dropped (ignore) or send the error search to
// SortedIdsError, which reports the one TensorFlow would.
template <typename Index, typename SegmentId>
Status Sparse(const Tensor& indices, const Tensor& ids, int64_t data_rows, int64_t nsegments,
              bool ignore, std::vector<int64_t>* rows, Runs* runs) {
  const Index* x = IdsOf<Index>(indices);
  const SegmentId* v = IdsOf<SegmentId>(ids);
  const int64_t n = ids.NumElements();
  rows->reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = static_cast<int64_t>(v[i]), index = static_cast<int64_t>(x[i]);
    const bool ok = id >= 0 && id < nsegments && index >= 0 && index < data_rows &&
                    (i == 0 || v[i] >= v[i - 1]);
    if (!ok) {
      if (!ignore) return SortedIdsError(v, n, nsegments, x, data_rows);
      if (i > 0 && v[i] < v[i - 1]) return FirstDecrease(v, i, n);
      continue;
    }
    AddRow(runs, static_cast<int64_t>(rows->size()), id);
    rows->push_back(index);
  }
  CloseRuns(runs, static_cast<int64_t>(rows->size()));
  return absl::OkStatus();
}

template <typename Index>
Status SparseOf(const Tensor& indices, const Tensor& ids, int64_t data_rows, int64_t nsegments,
                bool ignore, std::vector<int64_t>* rows, Runs* runs) {
  switch (ids.dtype()) {
    case ::tensorflow::DT_INT16:
      return Sparse<Index, int16_t>(indices, ids, data_rows, nsegments, ignore, rows, runs);
    case ::tensorflow::DT_INT32:
      return Sparse<Index, int32_t>(indices, ids, data_rows, nsegments, ignore, rows, runs);
    default:
      return Sparse<Index, int64_t>(indices, ids, data_rows, nsegments, ignore, rows, runs);
  }
}
}  // namespace

Status SortedOutputRows(const Tensor& ids, int64_t num_segments, bool ignore, int64_t* rows) {
  switch (ids.dtype()) {
    case ::tensorflow::DT_INT16: return OutputRows<int16_t>(ids, num_segments, ignore, rows);
    case ::tensorflow::DT_INT32: return OutputRows<int32_t>(ids, num_segments, ignore, rows);
    default: return OutputRows<int64_t>(ids, num_segments, ignore, rows);
  }
}

Status SortedRuns(const Tensor& ids, int64_t rows, bool ignore, const Parallel& parallel,
                  Runs* runs) {
  switch (ids.dtype()) {
    case ::tensorflow::DT_INT16: return Sorted<int16_t>(ids, rows, ignore, parallel, runs);
    case ::tensorflow::DT_INT32: return Sorted<int32_t>(ids, rows, ignore, parallel, runs);
    default: return Sorted<int64_t>(ids, rows, ignore, parallel, runs);
  }
}

Status SparseRuns(const Tensor& indices, const Tensor& ids, int64_t data_rows, int64_t nsegments,
                  bool ignore, std::vector<int64_t>* rows, Runs* runs) {
  switch (indices.dtype()) {
    case ::tensorflow::DT_INT16:
      return SparseOf<int16_t>(indices, ids, data_rows, nsegments, ignore, rows, runs);
    case ::tensorflow::DT_INT32:
      return SparseOf<int32_t>(indices, ids, data_rows, nsegments, ignore, rows, runs);
    default:
      return SparseOf<int64_t>(indices, ids, data_rows, nsegments, ignore, rows, runs);
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
