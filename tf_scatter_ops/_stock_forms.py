"""The forms stock_ops() (_calls.py) writes: each plugin op as TensorFlow
built-in ops with the plugin's results for valid input (and IGNORE's results
for bad rows), chosen among the ops that TensorFlow's kernels, TFLite's
built-in ops and tf2onnx all take, so that one export serves all three.

- Index dtypes: int16 indices are widened to int32.
- Index depths TensorFlow's scatters do not take (0, above 7) become depth 1
  on the first `depth` dimensions flattened (a row with a bad coordinate
  gets an index outside them).
- tensor_scatter_nd_update: only the last update of each distinct index row
  goes to TensorFlow's op (converters such as TFLite's lower it in a way
  that counts duplicates).
- tensor_scatter_nd_sub: TensorScatterAdd of the negated updates (bitwise
  the same: x - u is x + (-u)); unsigned dtypes keep TensorScatterSub.
- tensor_scatter_nd_min/max: UnsortedSegmentMin/Max of the updates per
  flattened index row, combined with the rows they touch.
- segment_*: UnsortedSegment* over the last id + 1 segments (gaps 0, as
  TensorFlow's sorted kernels give them), mean as the sum over the row count
  (truncated for integers); ids that are not sorted or negative fail an
  Assert under the default policy.
- sparse_segment_*: a gather of the rows and UnsortedSegmentSum, mean and
  sqrt_n as TensorFlow's kernels scale (sum * (1 / count), sum * (1 /
  sqrt(count))): bitwise their results.
- IGNORE: unsorted_segment_* ids >= num_segments become -1 (dropped, as
  TensorFlow drops negative ids); segment_* and sparse_segment_* drop the
  rows whose id (or index) is out of range; the scatters and gather_nd take
  TensorFlow's bad_indices_policy.
"""

import numpy as np
import tensorflow as tf

from tf_scatter_ops import _table

MAX_SCATTER_DEPTH = 7  # TensorFlow's scatter kernels
_UNSORTED = {"segment_sum": tf.raw_ops.UnsortedSegmentSum,
             "segment_prod": tf.raw_ops.UnsortedSegmentProd,
             "segment_min": tf.raw_ops.UnsortedSegmentMin,
             "segment_max": tf.raw_ops.UnsortedSegmentMax,
             "segment_mean": tf.raw_ops.UnsortedSegmentSum}


def call(op, theirs, policy, inputs, lowered):
    """TensorFlow's ops for the plugin's `op` on `inputs`; `theirs`, its
    TensorFlow op, is built by `lowered(op, theirs, policy, **inputs)`
    (dtype widening, attributes)."""
    kind = _table.BY_PY[op].kind
    if kind in ("ScatterNd", "TensorScatter"):
        return _scatter(op, theirs, policy, inputs, lowered)
    if kind == "SortedSegment":
        return _sorted_segment(op, policy, inputs)
    if kind == "SparseSegment":
        return _sparse_segment(op, policy, inputs)
    if policy == "IGNORE" and kind == "UnsortedSegment":
        ids = wide(inputs["segment_ids"])
        inputs["segment_ids"] = tf.where(ids >= tf.cast(inputs["num_segments"], ids.dtype),
                                         tf.constant(-1, ids.dtype), ids)
        policy = ""
    return lowered(op, theirs, policy, **inputs)


def wide(indices):
    """int16 indices as int32 (TensorFlow's scatter and segment kernels take
    int32 and int64 only); others unchanged."""
    return tf.cast(indices, tf.int32) if indices.dtype == tf.int16 else indices


def _check_sorted(op, ids):
    """TensorFlow's sorted segment kernels' checks, which the unsorted ops
    that replace them do not make: ids non-negative and sorted."""
    ok = tf.reduce_all(ids[1:] >= ids[:-1]) & tf.reduce_all(ids >= 0)
    return tf.debugging.Assert(ok, [f"{op}: segment ids must be sorted and non-negative"])


def _row_counts(ids, n, dtype, data_rank):
    """Each segment's row count (at least 1) in `dtype`, shaped to divide a
    [n] + data.shape[1:] sum."""
    count = tf.math.unsorted_segment_sum(tf.ones(tf.shape(ids), dtype), ids, n)
    return tf.reshape(tf.maximum(count, tf.ones([], dtype)),
                      tf.concat([[-1], tf.ones([data_rank - 1], tf.int32)], 0))


def _segments_to_last_id(ids):
    """The number of segments of sorted ids: the last id + 1 (0 for none)."""
    return tf.reduce_max(tf.concat([tf.constant([-1], ids.dtype), ids], 0)) + 1


def _sorted_segment(op, policy, inputs):
    data, ids = inputs["data"], wide(inputs["segment_ids"])
    n = _segments_to_last_id(ids)
    checks = [] if policy == "IGNORE" else [_check_sorted(op, ids)]
    with tf.control_dependencies(checks):
        # IGNORE: negative ids are dropped, as the unsorted op drops them
        out = _UNSORTED[op](data=data, segment_ids=ids, num_segments=n)
        if op in ("segment_min", "segment_max", "segment_mean"):
            counts = tf.math.unsorted_segment_sum(tf.ones(tf.shape(ids), tf.int32), ids, n)
            shape = tf.concat([[-1], tf.ones([tf.rank(data) - 1], tf.int32)], 0)
            counts = tf.reshape(counts, shape)
            if op == "segment_mean":
                count = tf.cast(tf.maximum(counts, 1), data.dtype)
                return (tf.truncatediv(out, count) if data.dtype.is_integer
                        else out / count)
            return tf.where(counts > 0, out, tf.zeros([], data.dtype))  # gaps: 0
        return out


def _sparse_segment(op, policy, inputs):
    data, indices, ids = inputs["data"], wide(inputs["indices"]), wide(inputs["segment_ids"])
    n = inputs.get("num_segments")
    n = _segments_to_last_id(ids) if n is None else tf.cast(n, ids.dtype)
    checks = []
    if policy == "IGNORE":
        rows = tf.shape(data, out_type=indices.dtype)[0]
        keep = (indices >= 0) & (indices < rows) & (ids >= 0) & (ids < n)
        indices, ids = tf.boolean_mask(indices, keep), tf.boolean_mask(ids, keep)
    else:
        checks = [_check_sorted(op, ids)]
    with tf.control_dependencies(checks):
        total = tf.math.unsorted_segment_sum(tf.gather(data, indices), ids, n)
    if op == "sparse_segment_sum":
        return total
    count = _row_counts(ids, n, data.dtype, data.shape.rank or tf.rank(data))
    scale = 1 / (count if op == "sparse_segment_mean" else tf.sqrt(count))
    return total * scale


def _last_of_duplicates(indices, updates):
    """The last update of each distinct index row (in index order): what
    tensor_scatter_nd_update keeps, given to TensorFlow's op without the
    duplicates, whose handling differs between its kernels and converters
    (TFLite's lowering counts every duplicate)."""
    depth = indices.shape[-1]
    flat = tf.reshape(indices, [-1, depth])
    rows = tf.reshape(updates, tf.concat([[-1], tf.shape(updates)[indices.shape.rank - 1:]], 0))
    if depth == 1:
        distinct, which = tf.unique(flat[:, 0], out_idx=tf.int32)
    else:
        distinct, which = tf.raw_ops.UniqueV2(x=flat, axis=[0], out_idx=tf.int32)
    last = tf.math.unsorted_segment_max(tf.range(tf.size(which)), which, tf.shape(distinct)[0])
    return {"indices": tf.gather(flat, last), "updates": tf.gather(rows, last)}


def _linear(indices, dims, depth, bad_index):
    """Index rows of depth `depth` as positions in the first `depth`
    dimensions `dims` flattened (Horner's rule: no cumulative product, which
    TFLite lacks); a row with a coordinate out of range gets `bad_index`."""
    linear = indices[..., 0]
    for i in range(1, depth):
        linear = linear * dims[i] + indices[..., i]
    bad = tf.reduce_any((indices < 0) | (indices >= dims), axis=-1)
    return tf.where(bad, tf.cast(bad_index, indices.dtype), linear)


def _flat_index_dtype(indices, shape, depth):
    """int64 unless the flattened dimensions are known to fit the indices'
    dtype."""
    static = tf.get_static_value(shape)
    if (static is not None and indices.dtype == tf.int32
            and int(np.prod(static[:depth], dtype=np.int64)) < 2**31 - 1):
        return tf.int32
    return tf.int64


def _scatter(op, theirs, policy, inputs, lowered):
    indices = wide(inputs["indices"])
    depth = indices.shape[-1] if indices.shape.rank is not None else None
    if depth is None:
        raise ValueError(
            f"stock_ops: {op} needs indices whose last dimension (the index depth) is known "
            f"when the function is traced, to write it with TensorFlow's ops; got {indices.shape}")
    flatten = op in ("tensor_scatter_nd_min", "tensor_scatter_nd_max")
    if 1 <= depth <= MAX_SCATTER_DEPTH and not flatten:
        return _lowered_scatter(op, theirs, policy, dict(inputs, indices=indices), lowered)
    shape = (inputs["shape"] if op == "scatter_nd"
             else tf.shape(inputs["tensor"], out_type=indices.dtype))
    dtype = _flat_index_dtype(indices, shape, depth)
    indices, dims = tf.cast(indices, dtype), tf.cast(shape[:depth], dtype)
    rows = tf.reduce_prod(dims)[None]
    if depth == 0:  # the whole tensor: depth 1 on a leading dimension of 1
        flat_indices = tf.zeros(tf.concat([tf.shape(indices)[:-1], [1]], 0), dtype)
        rows = tf.ones([1], dtype)
    else:
        bad = -1 if policy == "IGNORE" or not flatten else rows[0]  # (TensorFlow's check)
        flat_indices = _linear(indices, dims, depth, bad)[..., None]
    flat_shape = tf.concat([rows, tf.cast(shape[depth:], dtype)], 0)
    if flatten:
        out = _scatter_min_max(op, tf.reshape(inputs["tensor"], flat_shape), flat_indices,
                               inputs["updates"], rows[0])
    else:
        flat = dict(inputs, indices=flat_indices)
        if op == "scatter_nd":
            flat["shape"] = tf.cast(flat_shape, shape.dtype)
            flat["indices"] = tf.cast(flat_indices, shape.dtype)
        else:
            flat["tensor"] = tf.reshape(inputs["tensor"], flat_shape)
        out = _lowered_scatter(op, theirs, policy, flat, lowered)
    return tf.reshape(out, shape)


def _scatter_min_max(op, tensor, indices, updates, rows):
    """tensor_scatter_nd_min/max on a [rows, ...] tensor and depth-1 indices:
    the updates' minimum (maximum) per row, where a row has updates, combined
    with the row's value. A negative index is dropped; one >= rows is
    TensorFlow's out-of-range error (on the CPU)."""
    ids = tf.reshape(indices, [-1])
    updates = tf.reshape(updates, tf.concat([[-1], tf.shape(tensor)[1:]], 0))
    reduce, combine = ((tf.math.unsorted_segment_min, tf.minimum) if op == "tensor_scatter_nd_min"
                       else (tf.math.unsorted_segment_max, tf.maximum))
    extreme = reduce(updates, ids, rows)
    touched = tf.math.unsorted_segment_max(tf.ones(tf.shape(ids), tf.int32), ids, rows) > 0
    touched = tf.reshape(touched, tf.concat([[-1], tf.ones([tf.rank(tensor) - 1], tf.int32)], 0))
    return tf.where(touched, combine(tensor, extreme), tensor)


def _lowered_scatter(op, theirs, policy, inputs, lowered):
    """TensorFlow's scatter on indices of depth 1 to 7."""
    if op == "tensor_scatter_nd_update":
        inputs = dict(inputs, **_last_of_duplicates(inputs["indices"], inputs["updates"]))
    elif op == "tensor_scatter_nd_sub" and not inputs["updates"].dtype.is_unsigned:
        op, theirs = "tensor_scatter_nd_add", tf.raw_ops.TensorScatterAdd
        inputs = dict(inputs, updates=-inputs["updates"])
    return lowered(op, theirs, policy, **inputs)
