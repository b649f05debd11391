// What both C++ drivers build their cases from and check them against:
// tests/cc/core_test.cc (the CPU core, under ASan/UBSan) and
// tests/cc/gpu_harness.cu (the CUDA core). Host C++ only: no TensorFlow, no
// CUDA, so nvcc and g++ build it alike.
//
// - BadCoordinate: an out-of-bound coordinate of every kind the cores must
//   reject (negative, one past the end, the index type's extremes).
// - ReferenceSlots: each row's slot in the canonical form (common/
//   scatter_form.h), -1 for a bad row, and the first bad row: a plain loop.
// - ReferenceScatter / ReferenceGather: the serial reference, row after row
//   in index order with the reducers of common/reducers.h, bad rows skipped
//   (scatter) or zeros (gather): what every strategy of either core must
//   equal bitwise.
#ifndef TF_SCATTER_OPS_TESTS_CC_CASES_H_
#define TF_SCATTER_OPS_TESTS_CC_CASES_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace tfso_test {

// An out-of-bound coordinate for a dimension of size `dim`, for an index
// type that holds [lowest, highest].
inline int64_t BadCoordinate(std::mt19937_64& rng, int64_t dim, int64_t lowest,
                             int64_t highest) {
  switch (rng() % 6) {
    case 0: return -1;
    case 1: return lowest;
    case 2: return highest;
    case 3: return std::min(dim, highest);
    case 4: return -1 - static_cast<int64_t>(rng() % 100);
    default: return std::min(dim + static_cast<int64_t>(rng() % 100), highest);
  }
}

template <typename Index>
int64_t BadCoordinate(std::mt19937_64& rng, int64_t dim) {
  return BadCoordinate(rng, dim, std::numeric_limits<Index>::min(),
                       std::numeric_limits<Index>::max());
}

// Row i's slot from coords[i * depth .. i * depth + depth) into `dims`
// (row-major), or -1 when a coordinate is out of bounds. Returns the first
// bad row, or -1.
template <typename Index>
int64_t ReferenceSlots(const Index* coords, int64_t n, const std::vector<int64_t>& dims,
                       std::vector<int64_t>* slots) {
  const int depth = static_cast<int>(dims.size());
  int64_t first_bad = -1;
  slots->assign(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    int64_t slot = 0;
    bool ok = true;
    for (int d = 0; d < depth; ++d) {
      const int64_t v = static_cast<int64_t>(coords[i * depth + d]);
      if (v < 0 || v >= dims[d]) {
        ok = false;
        break;
      }
      slot = slot * dims[d] + v;
    }
    if (ok) {
      (*slots)[i] = slot;
    } else if (first_bad < 0) {
      first_bad = i;
    }
  }
  return first_bad;
}

// out (already holding the initial values: zeros, or the input) receives
// each good row's `slice` updates in row order through Op::Apply.
template <typename Op, typename T>
void ReferenceScatter(const std::vector<int64_t>& slots, int64_t slice, const T* updates,
                      T* out) {
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i] < 0) continue;
    for (int64_t k = 0; k < slice; ++k) Op::Apply(out[slots[i] * slice + k], updates[i * slice + k]);
  }
}

// out[i] = params[slot of row i] for good rows, T() (zeros) for bad ones.
template <typename T>
void ReferenceGather(const std::vector<int64_t>& slots, int64_t slice, const T* params, T* out) {
  for (size_t i = 0; i < slots.size(); ++i) {
    for (int64_t k = 0; k < slice; ++k) {
      out[i * slice + k] = slots[i] < 0 ? T() : params[slots[i] * slice + k];
    }
  }
}

}  // namespace tfso_test

#endif  // TF_SCATTER_OPS_TESTS_CC_CASES_H_
