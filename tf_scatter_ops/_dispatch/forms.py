"""Each plugin op as TensorFlow's built-in ops, in two flavours:

- XLA's (`stock=False`): TensorFlow's op of the same meaning as it is
  (int16 indices widened), which XLA compiles, where our XLA kernels do not
  apply; mul and div, which TensorFlow has no op for, as a product of
  segments; sparse segments with num_segments as a gather and a segment sum.
- stock_ops()' (`stock=True`): built-in ops with the plugin's results for
  valid input (and IGNORE's results for bad rows), chosen among the ops that
  TensorFlow's kernels, TFLite's built-in ops and tf2onnx all take, so that
  one export serves all three:

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
  flattened index row, combined with the rows they touch; _mul/_div (no
  TensorFlow op) likewise with UnsortedSegmentProd, also under XLA where
  our kernels do not apply.
- segment_*: UnsortedSegment* over the last id + 1 segments (gaps 0, as
  TensorFlow's sorted kernels give them), mean as the sum over the row count
  (truncated for integers); ids that are not sorted or negative fail an
  Assert under the default policy.
- sparse_segment_*: a gather of the rows and UnsortedSegmentSum, mean and
  sqrt_n as TensorFlow's kernels scale (sum * (1 / count), sum * (1 /
  sqrt(count))): bitwise their results.
- scatter_nd: TensorScatterAdd into zeros (ONNX's ScatterND without a
  reduction overwrites duplicates); the dtypes TensorScatterAdd does not
  take (bool, string) keep ScatterNd.
- unsorted_segment_*: one more segment, sliced off, takes the ids TensorFlow
  drops (ONNX's form wraps negative ids around).
- Row selects are gathers, not float tf.where (tf2onnx writes those as
  arithmetic, which an infinity turns into NaN).
- Rows of a variable: ReadVariableOp and GatherNd (TFLite's converter
  freezes no ResourceGatherNd).
- IGNORE: the bad rows are dropped (scatters, segments) or masked (gathers)
  before TensorFlow's op, since the converters have no policy.
"""

import numpy as np
import tensorflow as tf

import functools
import inspect

from tf_scatter_ops._base import table as _table
from tf_scatter_ops._dispatch import context

MAX_SCATTER_DEPTH = 7  # TensorFlow's scatter kernels
_UNSORTED = {"segment_sum": "unsorted_segment_sum", "segment_prod": "unsorted_segment_prod",
             "segment_min": "unsorted_segment_min", "segment_max": "unsorted_segment_max",
             "segment_mean": "unsorted_segment_sum"}


def lowered(op, policy, inputs, stock):
    """TensorFlow's ops for the plugin's `op` (a Python name of the op
    table) on `inputs` (the op's inputs by name, canonical: tensors, the
    policy resolved by bounds.py): XLA's flavour, or with `stock` the
    forms TFLite and ONNX take too."""
    row = _table.BY_PY[op]
    if row.tf is None:  # mul, div: no TensorFlow op
        return scatter_product(op, policy, **inputs)
    theirs = getattr(tf.raw_ops, row.tf)
    if row.kind == "SparseSegment":
        if "num_segments" in inputs and not stock:
            return _sparse_for_xla(op, inputs, policy)
        theirs = getattr(tf.raw_ops, row.tf.replace("WithNumSegments", "") + (
            "WithNumSegments" if "num_segments" in inputs else ""))
    if not stock and not _whole_tensor_rows(row, inputs):
        return plain(theirs, policy, inputs, op == "gather_nd")
    # the forms TensorFlow's kernels take; under XLA, rows of depth 0 as rows
    # [0] into a leading dimension of 1: XLA's scatter keeps only the last of
    # such rows, and TensorFlow's op refuses a scalar tensor
    kind = row.kind
    if kind in ("ScatterNd", "TensorScatter"):
        return _scatter(op, theirs, policy, inputs)
    if kind == "SortedSegment":
        return _sorted_segment(op, policy, inputs)
    if kind == "SparseSegment":
        return _sparse_segment(op, policy, inputs)
    if kind == "UnsortedSegment":
        return _unsorted_segment(op, inputs["data"], wide(inputs["segment_ids"]),
                                 inputs["num_segments"], policy, op)
    if policy == "IGNORE":  # gather_nd
        return _gather_nd_ignoring(inputs["params"], wide(inputs["indices"]))
    return plain(theirs, policy, inputs, True)


def _whole_tensor_rows(row, inputs):
    """A scatter whose index rows have depth 0 (each row is the whole tensor)."""
    indices = inputs.get("indices")
    return (row.kind in ("ScatterNd", "TensorScatter") and indices is not None
            and indices.shape.rank is not None and indices.shape[-1] == 0)


def plain(theirs, policy, inputs, gather=False):
    """TensorFlow's op `theirs` on `inputs`: int16 indices widened (its
    scatters and segment ops take int32 and int64 only), the policy passed
    where its op has the attr (XLA honours IGNORE in gathers: zeros; older
    TensorFlows' ops have no such attr)."""
    inputs = dict(inputs)
    if not gather:
        for name in ("segment_ids", "indices", "shape"):
            if name in inputs:
                inputs[name] = wide(inputs[name])
    if _takes(theirs, "bad_indices_policy"):
        inputs["bad_indices_policy"] = policy
    if "sparse_gradient" in inputs and not _takes(theirs, "sparse_gradient"):
        del inputs["sparse_gradient"]
    return theirs(**inputs)


@functools.lru_cache(maxsize=None)
def _takes(raw_op, attr):
    return attr in inspect.signature(raw_op).parameters


def _sparse_for_xla(op, inputs, policy):
    """sparse_segment_* with num_segments under XLA, which has no kernel for
    TensorFlow's sparse segment ops: the gather and an unsorted segment sum,
    over the counts for mean and sqrt_n (XLA's order of summation). XLA's
    gather clamps an index out of range: its row is dropped instead (its
    id made -1), as XLA's segment sum drops ids out of range."""
    data, indices, ids = inputs["data"], inputs["indices"], inputs["segment_ids"]
    num_segments = inputs["num_segments"]
    if data.shape[0] == 0:  # every index is out of range: every row dropped
        data = tf.zeros(tf.concat([[1], tf.shape(data)[1:]], 0), data.dtype)
        indices = tf.fill(tf.shape(indices), tf.constant(-1, indices.dtype))
    wide_indices = wide(indices)
    outside = (wide_indices < 0) | (wide_indices >= tf.shape(data, out_type=wide_indices.dtype)[0])
    ids = tf.where(outside, tf.constant(-1, ids.dtype), ids)
    rows = tf.gather(data, tf.where(outside, tf.zeros_like(wide_indices), wide_indices))
    total = unsorted_segment_sum(rows, ids, num_segments, policy)
    if op == "sparse_segment_sum":
        return total
    n = unsorted_segment_sum(tf.ones(tf.shape(ids), rows.dtype), ids, num_segments, policy)
    n = tf.maximum(tf.reshape(n, tf.concat([tf.shape(n)[:1], tf.ones([tf.rank(rows) - 1],
                                                                     tf.int32)], 0)), 1)
    return total / (n if op == "sparse_segment_mean" else tf.sqrt(n))


def unsorted_segment_sum(data, ids, num_segments, policy=""):
    """unsorted_segment_sum as TensorFlow's op, XLA's flavour."""
    return lowered("unsorted_segment_sum", policy,
                   {"data": data, "segment_ids": ids, "num_segments": num_segments}, False)


def gather_rows(handle, dtype, indices, policy):
    """Rows of a variable: a read of the variable and a GatherNd, which
    TFLite's converter freezes (it takes no ResourceGatherNd). In TensorFlow
    the read shares the variable's buffer, unless the function also updates
    the variable in place (then TensorFlow copies it on each read)."""
    value = tf.raw_ops.ReadVariableOp(resource=handle, dtype=dtype)
    indices = wide(indices)
    if policy == "IGNORE":
        return _gather_nd_ignoring(value, indices)
    return tf.raw_ops.GatherNd(params=value, indices=indices)


def _gather_nd_ignoring(params, indices):
    """gather_nd under IGNORE: a bad row reads row 0 and is zeroed (neither
    TFLite's nor ONNX's GatherNd has TensorFlow's policy)."""
    shape = tf.shape(params, out_type=indices.dtype)
    valid = tf.reduce_all((indices >= 0) & (indices < shape[:tf.shape(indices)[-1]]), axis=-1)
    rows = tf.raw_ops.GatherNd(params=params,
                               indices=tf.where(valid[..., None], indices, tf.zeros_like(indices)))
    flat = tf.reshape(rows, tf.concat([[-1], tf.shape(rows)[tf.rank(valid):]], 0))
    picked = select_rows(tf.reshape(valid, [-1]), flat, tf.zeros_like(flat))
    return tf.reshape(picked, tf.shape(rows))


def select_rows(cond, a, b):
    """Row i of `a` where cond[i], else of `b`. Inside stock_ops() as a
    gather: tf2onnx writes a float tf.where as cond * a + (1 - cond) * b,
    which gives NaN for an infinity in the row not chosen. Elsewhere (XLA's
    flavour) a select, which XLA fuses and whose gradient keeps static
    shapes (the gather's goes through ConcatV2's gradient of IndexedSlices,
    a Where of dynamic size: 4x the HLO of segment_softmax's gradient)."""
    if not context.emitting_stock():
        rows = tf.concat([tf.shape(cond), tf.ones([tf.rank(a) - 1], tf.int32)], 0)
        return tf.where(tf.reshape(cond, rows), a, b)
    n = tf.shape(cond)[0]
    return tf.gather(tf.concat([b, a], 0), tf.range(n) + n * tf.cast(cond, tf.int32))


def _unsorted_segment(reducer, data, ids, n, policy, op, true_extreme=False):
    """`reducer` (unsorted_segment_sum, _prod, _min or _max) as TensorFlow's
    op with one more segment, sliced off, for the ids TensorFlow drops
    (negative ones; under IGNORE those >= n too): ONNX's form of the op wraps
    negative ids around instead of dropping them. Empty segments of min and
    max get TensorFlow's value (the dtype's highest / lowest), where ONNX's
    form gives infinities; with `true_extreme`, min and max are those of the
    values (+-inf for a segment of +-inf only, where TensorFlow's unsorted
    kernels give the highest / lowest value). `op` names the caller in the
    check for ids >= n."""
    n = tf.cast(n, ids.dtype)
    checks = []
    if policy == "IGNORE":
        dropped = (ids < 0) | (ids >= n)
    else:  # TensorFlow's kernels reject ids >= n (on the CPU)
        dropped = ids < 0
        what = ("index rows must lie inside the tensor" if "scatter" in op
                else "segment ids must be < num_segments")
        checks = [tf.debugging.Assert(tf.reduce_all(ids < n), [f"{op}: {what}", n])]
    ids = tf.where(dropped, n, ids)
    theirs = getattr(tf.raw_ops, _table.BY_PY[reducer].tf)
    with tf.control_dependencies(checks):
        out = theirs(data=data, segment_ids=ids, num_segments=n + 1)[:n]
    if reducer in ("unsorted_segment_min", "unsorted_segment_max") and data.dtype.is_floating:
        is_min = reducer == "unsorted_segment_min"
        if true_extreme:  # a segment of infinities only is that infinity
            inf = tf.constant(np.inf if is_min else -np.inf, data.dtype)
            # (the values that are not that infinity: above the lowest / below the highest)
            finite = tf.less_equal if is_min else tf.greater_equal
            others = tf.raw_ops.UnsortedSegmentSum(
                data=tf.cast(finite(data, tf.constant(data.dtype.max if is_min else data.dtype.min,
                                                      data.dtype)), tf.int32), segment_ids=ids,
                num_segments=n + 1)[:n]
            # (tf2onnx writes a true select only when a branch is an infinite constant)
            out = tf.where(others > 0, out, inf)
        elif is_min:  # TensorFlow's kernels start each segment at the highest
            out = tf.minimum(out, tf.constant(data.dtype.max, data.dtype))  # (lowest) value:
        else:  # their results never pass it
            out = tf.maximum(out, tf.constant(data.dtype.min, data.dtype))
    return out


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
    [n] + data.shape[1:] sum: counted as integers, as TensorFlow's kernels
    count (a sum of half or bfloat16 ones stops at 2048 or 256)."""
    count = _unsorted_segment("unsorted_segment_sum", tf.ones(tf.shape(ids), tf.int32), ids, n,
                              "IGNORE", "count")
    return tf.cast(tf.reshape(tf.maximum(count, 1),
                              tf.concat([[-1], tf.ones([data_rank - 1], tf.int32)], 0)), dtype)


def segments_to_last_id(ids):
    """The number of segments of sorted ids: the last id + 1 (0 for none)."""
    return tf.reduce_max(tf.concat([tf.constant([-1], ids.dtype), ids], 0)) + 1


def _sorted_segment(op, policy, inputs):
    data, ids = inputs["data"], wide(inputs["segment_ids"])
    n = segments_to_last_id(ids)
    checks = [] if policy == "IGNORE" else [_check_sorted(op, ids)]
    with tf.control_dependencies(checks):
        # IGNORE: negative ids are dropped, as the unsorted form drops them
        out = _unsorted_segment(_UNSORTED[op], data, ids, n, "IGNORE", op, true_extreme=True)
        if op == "segment_mean":
            count = _row_counts(ids, n, data.dtype, tf.rank(data))
            return tf.truncatediv(out, count) if data.dtype.is_integer else out / count
        if op in ("segment_min", "segment_max"):
            counts = _unsorted_segment("unsorted_segment_sum", tf.ones(tf.shape(ids), tf.int32),
                                       ids, n, "IGNORE", op)
            return select_rows(counts > 0, out, tf.zeros_like(out))  # gaps: 0
        return out


def _sparse_segment(op, policy, inputs):
    data, indices, ids = inputs["data"], wide(inputs["indices"]), wide(inputs["segment_ids"])
    n = inputs.get("num_segments")
    n = segments_to_last_id(ids) if n is None else tf.cast(n, ids.dtype)
    checks = []
    if policy == "IGNORE":
        rows = tf.shape(data, out_type=indices.dtype)[0]
        keep = (indices >= 0) & (indices < rows) & (ids >= 0) & (ids < n)
        indices, ids = tf.boolean_mask(indices, keep), tf.boolean_mask(ids, keep)
    else:
        checks = [_check_sorted(op, ids)]
    # half and bfloat16 rows are summed and scaled in float32, as TensorFlow's kernels do
    dtype = tf.float32 if data.dtype in (tf.float16, tf.bfloat16) else data.dtype
    with tf.control_dependencies(checks):
        total = _unsorted_segment("unsorted_segment_sum", tf.cast(tf.gather(data, indices), dtype),
                                  ids, n, "IGNORE", op)
    if op != "sparse_segment_sum":
        count = _row_counts(ids, n, dtype, data.shape.rank or tf.rank(data))
        total *= 1 / (count if op == "sparse_segment_mean" else tf.sqrt(count))
    return tf.cast(total, data.dtype)


def _rows(indices, updates):
    """indices as [N, depth] rows and updates as [N, slice...] rows."""
    depth = indices.shape[-1]
    rows = tf.reshape(updates, tf.concat([[-1], tf.shape(updates)[indices.shape.rank - 1:]], 0))
    return tf.reshape(indices, [-1, depth]), rows


def _last_of_duplicates(indices, updates, dims):
    """The last update of each distinct index row (in index order): what
    tensor_scatter_nd_update keeps, given to TensorFlow's op without the
    duplicates, whose handling differs between its kernels and converters
    (TFLite's lowering counts every duplicate). The rows are told apart by
    their position in the flattened dimensions `dims`, and the last of each
    found by a stable sort (ops TFLite and ONNX both have)."""
    depth = indices.shape[-1]
    flat, rows = _rows(indices, updates)
    linear = _linear(flat, tf.cast(dims, flat.dtype), depth, -1) if depth > 1 else flat[:, 0]
    order = tf.argsort(linear, stable=True)
    ordered = tf.gather(linear, order)
    last = tf.concat([tf.not_equal(ordered[1:], ordered[:-1]), [True]], 0)[:tf.size(linear)]
    keep = tf.boolean_mask(order, last)
    return {"indices": tf.gather(flat, keep), "updates": tf.gather(rows, keep)}


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


def _scatter(op, theirs, policy, inputs):
    indices = wide(inputs["indices"])
    depth = indices.shape[-1] if indices.shape.rank is not None else None
    if depth is None:
        raise ValueError(
            f"stock_ops: {op} needs indices whose last dimension (the index depth) is known "
            f"when the function is traced, to write it with TensorFlow's ops; got {indices.shape}")
    shape = (wide(inputs["shape"]) if op == "scatter_nd"
             else tf.shape(inputs["tensor"], out_type=indices.dtype))
    adds = _table.BY_PY["tensor_scatter_nd_add"].dtypes
    if op == "scatter_nd" and inputs["updates"].dtype in adds:
        # an add into zeros (ONNX's ScatterND without a reduction overwrites duplicates)
        op, theirs = "tensor_scatter_nd_add", tf.raw_ops.TensorScatterAdd
        inputs = {"tensor": tf.zeros(shape, inputs["updates"].dtype), "indices": indices,
                  "updates": inputs["updates"]}
        shape = tf.shape(inputs["tensor"], out_type=indices.dtype)
    if policy == "IGNORE" and depth:  # drop the bad rows (converters have no policy)
        flat, rows = _rows(indices, inputs["updates"])
        valid = tf.reduce_all((flat >= 0) & (flat < tf.cast(shape[:depth], flat.dtype)), axis=-1)
        indices = tf.boolean_mask(flat, valid)
        inputs = dict(inputs, indices=indices, updates=tf.boolean_mask(rows, valid))
        policy = ""
    flatten = op in ("tensor_scatter_nd_min", "tensor_scatter_nd_max")
    if 1 <= depth <= MAX_SCATTER_DEPTH and not flatten:
        return _lowered_scatter(op, theirs, dict(inputs, indices=indices), shape[:depth])
    dtype = _flat_index_dtype(indices, shape, depth)
    indices, dims = tf.cast(indices, dtype), tf.cast(shape[:depth], dtype)
    rows = tf.reduce_prod(dims)[None]
    if depth == 0:  # the whole tensor: depth 1 on a leading dimension of 1
        flat_indices = tf.zeros(tf.concat([tf.shape(indices)[:-1], [1]], 0), dtype)
        rows = tf.ones([1], dtype)
    else:  # a bad row gets an index TensorFlow's ops reject
        flat_indices = _linear(indices, dims, depth, rows[0] if flatten else -1)[..., None]
    flat_shape = tf.concat([rows, tf.cast(shape[depth:], dtype)], 0)
    if op == "scatter_nd":  # dtypes TensorScatterAdd does not take (bool, string): ScatterNd
        flat = dict(inputs, shape=tf.cast(flat_shape, shape.dtype),
                    indices=tf.cast(flat_indices, shape.dtype))
        return tf.reshape(_lowered_scatter(op, theirs, flat, rows), shape)
    tensor = tf.reshape(inputs["tensor"], flat_shape)
    if flatten:
        out = _scatter_min_max(op, tensor, flat_indices, inputs["updates"], rows[0])
    else:
        out = _lowered_scatter(op, theirs, dict(inputs, tensor=tensor, indices=flat_indices),
                               rows)
    return tf.reshape(out, shape)


def _scatter_min_max(op, tensor, indices, updates, rows):
    """tensor_scatter_nd_min/max on a [rows, ...] tensor and depth-1 indices:
    the updates' minimum (maximum) per row, where a row has updates, combined
    with the row's value. An index >= rows fails as TensorFlow's kernels do."""
    ids = tf.reshape(indices, [-1])
    updates = tf.reshape(updates, tf.concat([[-1], tf.shape(tensor)[1:]], 0))
    reducer = "unsorted_segment_" + op[-3:]
    extreme = _unsorted_segment(reducer, updates, ids, rows, "", op, true_extreme=True)
    count = _unsorted_segment("unsorted_segment_sum", tf.ones(tf.shape(ids), tf.int32), ids,
                              rows, "IGNORE", op)
    combine = tf.minimum if op == "tensor_scatter_nd_min" else tf.maximum
    return select_rows(count > 0, combine(tensor, extreme), tensor)


def scatter_product(op, bad_indices_policy="", **inputs):
    """tensor_scatter_nd_mul / _div, which TensorFlow has no op for, of its
    ops (under XLA where ours do not apply, and in stock_ops()): the
    updates' product per flattened index row (UnsortedSegmentProd: 1 where
    none), times or into the tensor. Rounding differs from ours (the
    product first, not each update in index order). Bad rows fail an Assert
    under the default policy (XLA drops them), are dropped under IGNORE."""
    tensor, updates = inputs["tensor"], inputs["updates"]
    indices = wide(inputs["indices"])
    depth = indices.shape[-1] if indices.shape.rank is not None else None
    if depth is None:
        raise ValueError(f"{op} with TensorFlow's ops needs indices whose last dimension "
                         f"(the index depth) is known when traced; got {indices.shape}")
    shape = tf.shape(tensor, out_type=indices.dtype)
    dtype = _flat_index_dtype(indices, shape, depth)
    indices, dims = tf.cast(indices, dtype), tf.cast(shape[:depth], dtype)
    rows = tf.reduce_prod(dims)
    ids = (_linear(indices, dims, depth, rows) if depth
           else tf.zeros(tf.shape(indices)[:-1], dtype))
    flat_shape = tf.concat([rows[None], tf.cast(shape[depth:], dtype)], 0)
    values = tf.reshape(updates, tf.concat([[-1], tf.cast(shape[depth:], tf.int32)], 0))
    product = _unsorted_segment("unsorted_segment_prod", values, tf.reshape(ids, [-1]), rows,
                                bad_indices_policy, op)
    tensor = tf.reshape(tensor, flat_shape)
    out = tensor * product if op == "tensor_scatter_nd_mul" else tensor / product
    return tf.reshape(out, shape)


def _lowered_scatter(op, theirs, inputs, dims):
    """TensorFlow's scatter on indices of depth 1 to 7 into dimensions
    `dims`, every row valid or failing TensorFlow's check."""
    if op == "tensor_scatter_nd_update":
        inputs = dict(inputs, **_last_of_duplicates(inputs["indices"], inputs["updates"], dims))
    elif op == "tensor_scatter_nd_sub" and not inputs["updates"].dtype.is_unsigned:
        op, theirs = "tensor_scatter_nd_add", tf.raw_ops.TensorScatterAdd
        inputs = dict(inputs, updates=-inputs["updates"])
    return plain(theirs, "", inputs)


# The variables' forms.

def variable_scatter_xla(op, variable, indices, updates, use_locking):
    """scatter_nd_* (`op`) on a resource variable under XLA: TensorFlow's
    resource op where XLA compiles it (update, add, sub), else an assign of
    the tensor op's result (min, max), which XLA does in place. XLA drops
    out-of-bound rows whatever the policy."""
    row = _table.VARIABLE_SCATTERS[op]
    indices = wide(indices)  # TensorFlow's ops take no int16 indices
    if op in ("scatter_nd_min", "scatter_nd_max"):
        raw = getattr(tf.raw_ops, row.tf)
        return variable.assign(raw(tensor=variable.read_value(), indices=indices,
                                   updates=updates),
                               use_locking=bool(use_locking), read_value=False)
    return getattr(tf.raw_ops, "Resource" + row.variable)(
        ref=variable.handle, indices=indices, updates=updates, use_locking=bool(use_locking))


def variable_scatter_stock(op, handle, indices, updates, use_locking, policy):
    """scatter_nd_* (`op`) on the variable of `handle` inside stock_ops():
    TensorFlow's resource op of the same name, which takes the same policies
    (int32 or int64 indices of depth 1 to 7)."""
    depth = indices.shape[-1] if indices.shape.rank is not None else None
    if depth is None or not 1 <= depth <= MAX_SCATTER_DEPTH:
        raise ValueError(
            f"stock_ops: {op} on a variable has TensorFlow's resource op only for index "
            f"depths 1 to 7 known when the function is traced; got indices of shape "
            f"{indices.shape}. Use depth 1 to 7, or leave this function out of stock_ops().")
    theirs = getattr(tf.raw_ops, "Resource" + _table.VARIABLE_SCATTERS[op].variable)
    return theirs(ref=handle, indices=wide(indices), updates=updates,
                  use_locking=bool(use_locking), bad_indices_policy=policy)
