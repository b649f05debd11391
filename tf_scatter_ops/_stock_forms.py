"""The forms TensorFlow's built-in kernels take, for stock_ops() (_calls.py):
a wrapper's inputs rewritten so that TensorFlow's op of the same meaning
gives the plugin's results for valid input, and IGNORE its results for bad
rows.

- tensor_scatter_nd_update: only the last update of each distinct index
  row goes to TensorFlow's op (converters such as TFLite's lower it in a
  way that counts duplicates).
- Scatters: TensorFlow's kernels take index depths 1 to 7. Depth 0 (each
  update is the whole tensor) becomes depth 1 on a leading dimension of 1;
  a depth above 7 becomes depth 1 on the first `depth` dimensions flattened
  (a row with a bad coordinate gets index -1, which TensorFlow's kernels
  treat as bad, as ours do).
- unsorted_segment_*: IGNORE makes ids >= num_segments -1, which
  TensorFlow's kernels drop, as they drop negative ids.
- segment_* and sparse_segment_*: IGNORE drops the rows whose id (or index)
  is out of range before TensorFlow's op; sparse_segment_* keeps the
  plugin's output length (num_segments, or the last id + 1).
- Row reads from a variable: TensorFlow's ResourceGatherNd has no policy;
  IGNORE reads row 0 for a bad row and zeros it.
"""

import tensorflow as tf

from tf_scatter_ops import _table

MAX_SCATTER_DEPTH = 7  # TensorFlow's scatter kernels


def call(op, theirs, policy, inputs, lowered):
    """TensorFlow's op `theirs` for the plugin's `op` on `inputs`, through
    `lowered(op, theirs, policy, **inputs)` (dtype widening, attributes)."""
    kind = _table.BY_PY[op].kind
    if kind in ("ScatterNd", "TensorScatter"):
        return _scatter(op, theirs, policy, inputs, lowered)
    if policy == "IGNORE" and kind == "UnsortedSegment":
        ids = wide(inputs["segment_ids"])
        inputs["segment_ids"] = tf.where(ids >= tf.cast(inputs["num_segments"], ids.dtype),
                                         tf.constant(-1, ids.dtype), ids)
        policy = ""
    elif policy == "IGNORE" and kind == "SortedSegment":
        keep = inputs["segment_ids"] >= 0
        inputs["data"] = tf.boolean_mask(inputs["data"], keep)
        inputs["segment_ids"] = tf.boolean_mask(inputs["segment_ids"], keep)
        policy = ""
    elif policy == "IGNORE" and kind == "SparseSegment":
        return _sparse_segment_ignoring(op, inputs, lowered)
    return lowered(op, theirs, policy, **inputs)


def wide(indices):
    """int16 indices as int32 (TensorFlow's scatter and segment kernels take
    int32 and int64 only); others unchanged."""
    return tf.cast(indices, tf.int32) if indices.dtype == tf.int16 else indices


def _sparse_segment_ignoring(op, inputs, lowered):
    indices, ids = wide(inputs["indices"]), wide(inputs["segment_ids"])
    num_segments = inputs.get("num_segments")
    if num_segments is None:  # the plugin's length: the last id + 1, dropped or not
        num_segments = tf.cond(tf.size(ids) > 0, lambda: tf.cast(ids[-1], tf.int64) + 1,
                               lambda: tf.constant(0, tf.int64))
    rows = tf.shape(inputs["data"], out_type=indices.dtype)[0]
    keep = ((indices >= 0) & (indices < rows) & (ids >= 0)
            & (tf.cast(ids, tf.int64) < tf.cast(num_segments, tf.int64)))
    inputs = dict(inputs, indices=tf.boolean_mask(indices, keep),
                  segment_ids=tf.boolean_mask(ids, keep), num_segments=num_segments)
    theirs = getattr(tf.raw_ops, _table.BY_PY[op].tf.replace("WithNumSegments", "")
                     + "WithNumSegments")
    return lowered(op, theirs, "", **inputs)


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


def _scatter(op, theirs, policy, inputs, lowered):
    indices = wide(inputs["indices"])
    depth = indices.shape[-1] if indices.shape.rank is not None else None
    if depth is None:
        raise ValueError(
            f"stock_ops: {op} needs indices whose last dimension (the index depth) is known "
            f"when the function is traced, to write it with TensorFlow's ops; got {indices.shape}")
    if 1 <= depth <= MAX_SCATTER_DEPTH:
        return _lowered_scatter(op, theirs, policy, inputs, lowered)
    outer = tf.shape(indices)[:-1]
    if op == "scatter_nd":
        shape = inputs["shape"]
    else:
        shape = tf.shape(inputs["tensor"], out_type=indices.dtype)
    if depth == 0:  # the whole tensor: depth 1 on a leading dimension of 1
        flat_shape = tf.concat([tf.ones([1], shape.dtype), shape], 0)
        flat_indices = tf.zeros(tf.concat([outer, [1]], 0), indices.dtype)
    else:  # the first `depth` dimensions as one
        indices = tf.cast(indices, tf.int64)
        dims = tf.cast(shape[:depth], tf.int64)
        strides = tf.math.cumprod(dims, exclusive=True, reverse=True)
        linear = tf.reduce_sum(indices * strides, axis=-1)
        bad = tf.reduce_any((indices < 0) | (indices >= dims), axis=-1)
        flat_indices = tf.where(bad, tf.constant(-1, tf.int64), linear)[..., None]
        flat_shape = tf.concat([tf.reduce_prod(dims)[None], tf.cast(shape[depth:], tf.int64)], 0)
        flat_shape = tf.cast(flat_shape, shape.dtype)
        if op == "scatter_nd" and shape.dtype != tf.int64:
            flat_indices = tf.cast(flat_indices, shape.dtype)
    inputs = dict(inputs, indices=flat_indices)
    if op == "scatter_nd":
        inputs["shape"] = flat_shape
    else:
        inputs["tensor"] = tf.reshape(inputs["tensor"], tf.cast(flat_shape, tf.int64))
    out = _lowered_scatter(op, theirs, policy, inputs, lowered)
    return tf.reshape(out, tf.cast(shape, tf.int64))


def _lowered_scatter(op, theirs, policy, inputs, lowered):
    """TensorFlow's scatter on indices of depth 1 to 7."""
    if op == "tensor_scatter_nd_update":
        inputs = dict(inputs, **_last_of_duplicates(wide(inputs["indices"]), inputs["updates"]))
    return lowered(op, theirs, policy, **inputs)
