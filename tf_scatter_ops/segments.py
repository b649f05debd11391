"""TensorFlow's segment reductions with TensorFlow's names and signatures,
on the plugin's cores:

    tso.unsorted_segment_sum(data, segment_ids, num_segments)   # also _prod, _min, _max,
    tso.unsorted_segment_mean(data, segment_ids, num_segments)  # _mean and _sqrt_n
    tso.segment_sum(data, segment_ids)                  # sorted ids; _prod, _min, _max, _mean
    tso.sparse_segment_sum(data, indices, segment_ids)  # data[indices], sorted ids; _mean, _sqrt_n

`segment_ids` (int16, int32 or int64) may have any shape that is a prefix of
`data`'s; the output is `[num_segments] + data.shape[segment_ids.rank:]`.
Rows are reduced in index order (sums bitwise equal to TensorFlow's CPU
kernel, the same for any thread count). Empty segments hold TensorFlow's
values: 0 (sum, mean, sqrt_n), 1 (prod), the dtype's lowest (max) or highest
(min) value. Negative ids are dropped, as TensorFlow drops them. An id
`>= num_segments` is TensorFlow's `InvalidArgumentError` naming the first
one, unless `bad_indices_policy="IGNORE"` (or "FILL"), which drops it, or
"CLIP", which makes it num_segments - 1 (negative ids stay dropped).
unsorted_segment_* also take JAX's indices_are_sorted / unique_indices: with
indices_are_sorted=True (ids that never decrease, dropped ones aside; with
unique_indices too, strictly increasing) the CPU kernel skips its grouping
passes and checks the promise as it reads the ids (an InvalidArgumentError
naming the first id that breaks it, unless IGNORE; not under XLA);
unique_indices alone changes nothing.

segment_* and sparse_segment_* take sorted 1-D ids (TensorFlow's error for
ids that are not sorted, naming the first); each segment's rows are one run,
reduced by one thread in one pass with no sort. segment_*'s output has the
last id + 1 rows, gaps 0 (1 for prod). sparse_segment_* reduces data's rows
at `indices` without gathering them first, in TensorFlow's order (its sums
are bitwise TensorFlow's); its output has num_segments rows, or the last id
+ 1. IGNORE (or FILL) drops the rows whose id (or index) is out of range,
which then count for no mean; CLIP clamps them into range (a negative id to
0, an index to data's rows, an id to num_segments - 1 where it is given).
Under XLA the functions build TensorFlow's ops.
"""

import numpy as np
import tensorflow as tf

from tf_scatter_ops import _bounds, _calls, _convert, _stock_forms, _table


def inputs(op, data, segment_ids, num_segments, policy):
    """unsorted_segment_*'s inputs as tensors, data's dtype checked against
    `op`'s (this module's functions, the group-wise and the arg ones):
    (data, ids, num_segments, policy, grid); see segment_ids."""
    data = _convert.tensor(data, name="data")
    _convert.check_dtype(op, data.dtype)
    segment_ids, num_segments, policy, grid = segment_ids_of(segment_ids, num_segments, policy)
    check_output_size(data, segment_ids.shape.rank, num_segments)
    return data, segment_ids, num_segments, policy, grid


def check_output_size(data, ids_rank, num_segments):
    """The output [num_segments] + data.shape[ids_rank:], where its size is
    known when the graph is built: one whose element count overflows int64
    is TensorFlow's InvalidArgumentError here, before TensorFlow's graph
    machinery multiplies the dims unchecked (Grappler and XLA abort the
    process on it, for TensorFlow's own segment ops too). The kernels check
    the sizes known only at run time."""
    num = tf.get_static_value(num_segments)
    if num is None or np.ndim(num) != 0 or ids_rank is None or data.shape.rank is None:
        return
    inner = data.shape[ids_rank:]
    if int(num) >= 0 and all(d is not None for d in inner):
        _product([int(num)] + [int(d) for d in inner])


def segment_ids_of(segment_ids, num_segments, policy):
    """(ids, num_segments, policy, grid): the segment ids and the policy the
    op is built with (_bounds: CLIP's ids clamped). A num_segments that is a
    vector is a grid of cells: segment_ids are then index rows [..., depth]
    into it, made flat (row-major) ids of its cells here, and `grid` is the
    vector (None otherwise), for ungrid to shape the result."""
    num_segments = _num_segments(num_segments)
    segment_ids = _convert.indices(segment_ids)
    if num_segments.shape.rank != 1:
        segment_ids, policy = _bounds.ids(policy, segment_ids, num_segments,
                                          negatives_dropped=True)
        return segment_ids, num_segments, policy, None
    grid = num_segments
    depth = segment_ids.shape[-1] if segment_ids.shape.rank else None
    if segment_ids.shape.rank == 0 or (depth is not None and grid.shape[0] is not None
                                       and depth != grid.shape[0]):
        raise ValueError(
            f"num_segments {_convert.describe(grid)} is a grid of {grid.shape[0]} dims, so "
            f"segment_ids must be index rows [..., {grid.shape[0]}] into it; got shape "
            f"{segment_ids.shape}")
    static = tf.get_static_value(grid)
    if static is not None and (np.asarray(static) < 0).any():
        raise tf.errors.InvalidArgumentError(
            None, None, f"num_segments = {np.asarray(static).tolist()} as a grid's shape must "
            "not have a negative dimension")
    if static is not None:
        static = np.asarray(static)
        cells = _product(static.tolist(), f"num_segments = {static.tolist()} as a grid's shape: ")
    elif not _calls.in_xla_context():
        with tf.control_dependencies([
                tf.debugging.assert_non_negative(
                    grid, message="num_segments as the shape of a grid must not have a "
                    "negative dimension"),
                tf.debugging.assert_less(
                    tf.reduce_prod(tf.cast(grid, tf.float64)), tf.constant(2.0**63, tf.float64),
                    message="num_segments as the shape of a grid has more cells than int64 "
                    "holds")]):
            grid = tf.identity(grid)
    if depth is None or grid.shape[0] is None:
        # known at run time: checked (under XLA, where asserts do nothing, the
        # grid reshaped to the depth fails to compile on a mismatch)
        if _calls.in_xla_context():
            grid = tf.reshape(grid, tf.shape(segment_ids)[-1:])
        else:
            with tf.control_dependencies([tf.debugging.assert_equal(
                    tf.shape(segment_ids)[-1], tf.size(grid), message=(
                        "num_segments is the shape of a grid, so segment_ids must be index "
                        "rows [..., depth] with depth = the rank of the grid"))]):
                segment_ids, grid = tf.identity(segment_ids), tf.identity(grid)
    segment_ids, policy = _bounds.nd(policy, segment_ids, shape=grid)
    dims = tf.cast(grid, tf.int64)
    if static is not None:  # strides as constants, in int32 where the ids and cells fit it
        dtype = tf.int32 if segment_ids.dtype != tf.int64 and cells < 2**31 else tf.int64
        strides = np.cumprod(np.concatenate([[1], np.asarray(static)[:0:-1]]))[::-1]
        strides = tf.constant(strides.astype(dtype.as_numpy_dtype))
    else:
        cells, dtype = tf.reduce_prod(dims), tf.int64
        strides = tf.math.cumprod(dims, exclusive=True, reverse=True)
    columns = _bounds.static_columns(tf.cast(segment_ids, dtype))
    if columns:
        flat = columns[-1]
        for d, column in enumerate(columns[:-1]):
            flat += column * strides[d]
    else:
        flat = tf.reduce_sum(tf.cast(segment_ids, dtype) * strides, axis=-1)
    bad = _bounds.bad_rows(segment_ids, dims)
    if policy == "IGNORE" or _calls.in_xla_context():
        # dropped (under XLA as TensorFlow's segment ops there drop bad ids)
        flat = tf.where(bad, tf.constant(-1, dtype), flat)
    else:
        with tf.control_dependencies([_bounds.check_rows(segment_ids, bad, grid, "segment_ids")]):
            flat = tf.identity(flat)
    return flat, _num_segments(cells), policy, grid


def _product(dims, what=""):
    """The product of these non-negative dims, multiplied as TensorFlow
    multiplies a shape's dims: one that overflows int64 is its
    InvalidArgumentError (after `what`), not a wrapped number."""
    total = 1
    for d in dims:
        if total * d > np.iinfo(np.int64).max:
            wrapped = (total * d + 2**63) % 2**64 - 2**63
            raise tf.errors.InvalidArgumentError(
                None, None, f"{what}Encountered overflow when multiplying {total} with {d}, "
                f"result: {wrapped}")
        total *= d
    return total


def ungrid(out, grid):
    """A result of `cells` rows as the grid's shape (segment_ids_of)."""
    if grid is None:
        return out
    return tf.reshape(out, tf.concat([tf.cast(grid, tf.int64),
                                      tf.shape(out, out_type=tf.int64)[1:]], axis=0))


def _segment(op, data, segment_ids, num_segments, bad_indices_policy, name,
             indices_are_sorted=False, unique_indices=False):
    policy = _convert.check_policy(bad_indices_policy)
    hints = _calls.hints(indices_are_sorted, unique_indices, xla_ours=False)
    with _convert.scope(name or op):
        data, segment_ids, num_segments, policy, grid = inputs(
            op, data, segment_ids, num_segments, policy)
        return ungrid(_calls.raw_op(op, xla_ours=False)(
            data=data, segment_ids=segment_ids, num_segments=num_segments,
            bad_indices_policy=policy, **hints), grid)


def _segment_function(op, doc):
    def f(data, segment_ids, num_segments, name=None, bad_indices_policy="",
          indices_are_sorted=False, unique_indices=False):
        return _segment(op, data, segment_ids, num_segments, bad_indices_policy, name,
                        indices_are_sorted, unique_indices)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return _convert.public(f)


unsorted_segment_sum = _segment_function(
    "unsorted_segment_sum",
    "The sum of `data`'s rows per segment id, in index order (0 for an empty segment).")
unsorted_segment_prod = _segment_function(
    "unsorted_segment_prod",
    "The product of `data`'s rows per segment id, in index order (1 for an empty segment).")
unsorted_segment_min = _segment_function(
    "unsorted_segment_min",
    "The minimum of `data`'s rows per segment id (the dtype's highest value for an empty "
    "segment).")
unsorted_segment_max = _segment_function(
    "unsorted_segment_max",
    "The maximum of `data`'s rows per segment id (the dtype's lowest value for an empty "
    "segment).")


def _counts(data, segment_ids, num_segments, policy, rows=None, hints=None):
    """How many rows each segment has, at least 1, in data's dtype, shaped to
    divide the segment sums of `data` (TensorFlow's formula: a segment sum of
    ones). `rows`, one weight per id, counts only some rows (the gradients
    count the rows the forward op kept). Used by mean and sqrt_n, their XLA
    forms and their gradients."""
    num_segments = _convert.int_tensor(num_segments, tf.int32, "num_segments")
    if rows is None:
        rows = tf.ones(tf.shape(segment_ids), dtype=data.dtype)
    n = unsorted_segment_sum(rows, segment_ids, num_segments, bad_indices_policy=policy,
                             **(hints or {}))
    shape = tf.concat([num_segments[tf.newaxis],
                       tf.ones([tf.rank(data) - tf.rank(segment_ids)], dtype=num_segments.dtype)],
                      axis=0)
    return tf.maximum(tf.reshape(n, shape), 1)


def _normalized_function(op, of_count, doc):
    """unsorted_segment_mean / _sqrt_n: the segment sum over of_count(count)."""
    def f(data, segment_ids, num_segments, name=None, bad_indices_policy="",
          indices_are_sorted=False, unique_indices=False):
        policy = _convert.check_policy(bad_indices_policy)
        hints = {"indices_are_sorted": indices_are_sorted, "unique_indices": unique_indices}
        with _convert.scope(name or op):
            data = _convert.tensor(data, name="data")
            segment_ids, num_segments, policy, grid = segment_ids_of(segment_ids, num_segments,
                                                                     policy)
            check_output_size(data, segment_ids.shape.rank, num_segments)
            n = _counts(data, segment_ids, num_segments, policy, hints=hints)
            return ungrid(unsorted_segment_sum(data, segment_ids, num_segments,
                                               bad_indices_policy=policy, **hints)
                          / of_count(n), grid)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return _convert.public(f)


unsorted_segment_mean = _normalized_function(
    "unsorted_segment_mean", lambda n: n,
    """The mean of `data`'s rows per segment id (0 for an empty segment):
    TensorFlow's formula, the segment sum over the segment's row count.""")
unsorted_segment_sqrt_n = _normalized_function(
    "unsorted_segment_sqrt_n", tf.sqrt,
    """The sum of `data`'s rows per segment id over the square root of the
    segment's row count (0 for an empty segment), as TensorFlow computes it.""")


def _sorted_function(op, doc):
    def f(data, segment_ids, name=None, bad_indices_policy=""):
        policy = _convert.check_policy(bad_indices_policy)
        with _convert.scope(name or op):
            data = _convert.tensor(data, name="data")
            _convert.check_dtype(op, data.dtype)
            segment_ids, policy = _bounds.ids(policy, _convert.indices(segment_ids))
            return _calls.raw_op(op, xla_ours=False)(
                data=data, segment_ids=segment_ids, bad_indices_policy=policy)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return _convert.public(f)


segment_sum = _sorted_function(
    "segment_sum", "The sum of `data`'s rows per sorted segment id, in index order.")
segment_prod = _sorted_function(
    "segment_prod", "The product of `data`'s rows per sorted segment id, in index order.")
segment_min = _sorted_function(
    "segment_min", "The minimum of `data`'s rows per sorted segment id.")
segment_max = _sorted_function(
    "segment_max", "The maximum of `data`'s rows per sorted segment id.")
segment_mean = _sorted_function(
    "segment_mean", "The mean of `data`'s rows per sorted segment id: the index-order sum "
    "over the row count (integer division for integers).")


def _sparse_function(op, doc):
    def f(data, indices, segment_ids, num_segments=None, name=None, sparse_gradient=False,
          bad_indices_policy=""):
        policy = _convert.check_policy(bad_indices_policy)
        with _convert.scope(name or op):
            data = _convert.tensor(data, name="data")
            _convert.check_dtype(op, data.dtype)
            indices = _convert.indices(indices)
            if num_segments is not None:
                num_segments = _sparse_num_segments(num_segments)
                check_output_size(data, 1, num_segments)
            if policy == "CLIP":  # into data's rows
                indices, _ = _bounds.ids(policy, indices, tf.shape(data)[0])
            segment_ids, policy = _bounds.ids(policy, _convert.indices(segment_ids), num_segments)
            inputs = dict(data=data, indices=indices, segment_ids=segment_ids,
                          sparse_gradient=bool(sparse_gradient))
            if num_segments is not None:
                inputs["num_segments"] = num_segments
            if _calls.lowering(xla_ours=False):
                if num_segments is None or _calls.emitting_stock():
                    # TensorFlow's op (which XLA does not compile)
                    theirs = getattr(tf.raw_ops, _table.BY_PY[op].tf.replace(
                        "WithNumSegments", "") + ("" if num_segments is None else "WithNumSegments"))
                    return _calls._lowered(op, theirs, policy, **inputs)
                return _sparse_for_xla(op, inputs, policy)
            inputs.setdefault("num_segments", tf.constant(-1, tf.int32))
            return _calls.library_op(_table.BY_PY[op].op)(bad_indices_policy=policy, **inputs)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return _convert.public(f)


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
    wide = _stock_forms.wide(indices)
    outside = (wide < 0) | (wide >= tf.shape(data, out_type=wide.dtype)[0])
    ids = tf.where(outside, tf.constant(-1, ids.dtype), ids)
    rows = tf.gather(data, tf.where(outside, tf.zeros_like(wide), wide))
    total = unsorted_segment_sum(rows, ids, num_segments, bad_indices_policy=policy)
    if op == "sparse_segment_sum":
        return total
    n = _counts(rows, ids, num_segments, policy)
    return total / (n if op == "sparse_segment_mean" else tf.sqrt(n))


def _sparse_num_segments(num_segments):
    """sparse_segment_*'s num_segments, negative values refused as TensorFlow
    refuses them (a ValueError where a graph is built, its kernel's error in
    eager mode), so that none reaches the kernel as -1, its 'not given'."""
    num_segments = _num_segments(num_segments)
    static = tf.get_static_value(num_segments)
    if static is not None and np.ndim(static) == 0 and static < 0:  # (not a scalar: the kernel)
        if tf.executing_eagerly():
            raise tf.errors.InvalidArgumentError(None, None, "segment ids must be >= 0")
        raise ValueError(f"Cannot specify a negative value for num_segments; got {static}")
    if static is None and not _calls.in_xla_context():
        with tf.control_dependencies([tf.debugging.assert_non_negative(
                num_segments, message="segment ids must be >= 0")]):
            num_segments = tf.identity(num_segments)
    return num_segments


def _num_segments(num_segments):
    num_segments = _convert.int_tensor(num_segments, tf.int32, "num_segments")
    if num_segments.dtype not in (tf.int32, tf.int64):
        raise ValueError(f"num_segments must be int32 or int64, got {num_segments.dtype.name}")
    return num_segments


sparse_segment_sum = _sparse_function(
    "sparse_segment_sum",
    "The sum of `data[indices]`'s rows per sorted segment id, without gathering them, in "
    "TensorFlow's order.")
sparse_segment_mean = _sparse_function(
    "sparse_segment_mean",
    "The mean of `data[indices]`'s rows per sorted segment id (0 for an empty segment).")
sparse_segment_sqrt_n = _sparse_function(
    "sparse_segment_sqrt_n",
    "The sum of `data[indices]`'s rows per sorted segment id over the square root of the "
    "segment's row count (0 for an empty segment).")
