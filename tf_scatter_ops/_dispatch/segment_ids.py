"""Segment ids as the segment ops take them: converted and checked, a
num_segments that is a grid's shape made flat ids of its cells, the policy
resolved (bounds.py), the output's size checked where it is known; and the
row count of each segment (the means and their gradients)."""

import numpy as np
import tensorflow as tf

from tf_scatter_ops._dispatch import backends, bounds, context, convert


def inputs(op, data, segment_ids, num_segments, policy):
    """unsorted_segment_*'s inputs as tensors, data's dtype checked against
    `op`'s (this module's functions, the group-wise and the arg ones):
    (data, ids, num_segments, policy, grid); see segment_ids."""
    data = convert.tensor(data, name="data")
    convert.check_dtype(op, data.dtype)
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
        product([int(num)] + [int(d) for d in inner])


def segment_ids_of(segment_ids, num_segments, policy):
    """(ids, num_segments, policy, grid): the segment ids and the policy the
    op is built with (bounds.py: CLIP's ids clamped). A num_segments that is a
    vector is a grid of cells: segment_ids are then index rows [..., depth]
    into it, made flat (row-major) ids of its cells here, and `grid` is the
    vector (None otherwise), for ungrid to shape the result."""
    num_segments = num_segments_tensor(num_segments)
    segment_ids = convert.indices(segment_ids)
    if num_segments.shape.rank != 1:
        segment_ids, policy = bounds.ids(policy, segment_ids, num_segments,
                                          negatives_dropped=True)
        return segment_ids, num_segments, policy, None
    grid = num_segments
    depth = segment_ids.shape[-1] if segment_ids.shape.rank else None
    if segment_ids.shape.rank == 0 or (depth is not None and grid.shape[0] is not None
                                       and depth != grid.shape[0]):
        raise ValueError(
            f"num_segments {convert.describe(grid)} is a grid of {grid.shape[0]} dims, so "
            f"segment_ids must be index rows [..., {grid.shape[0]}] into it; got shape "
            f"{segment_ids.shape}")
    static = tf.get_static_value(grid)
    if static is not None and (np.asarray(static) < 0).any():
        raise tf.errors.InvalidArgumentError(
            None, None, f"num_segments = {np.asarray(static).tolist()} as a grid's shape must "
            "not have a negative dimension")
    if static is not None:
        static = np.asarray(static)
        cells = product(static.tolist(), f"num_segments = {static.tolist()} as a grid's shape: ")
    elif not context.in_xla_context():
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
        if context.in_xla_context():
            grid = tf.reshape(grid, tf.shape(segment_ids)[-1:])
        else:
            with tf.control_dependencies([tf.debugging.assert_equal(
                    tf.shape(segment_ids)[-1], tf.size(grid), message=(
                        "num_segments is the shape of a grid, so segment_ids must be index "
                        "rows [..., depth] with depth = the rank of the grid"))]):
                segment_ids, grid = tf.identity(segment_ids), tf.identity(grid)
    segment_ids, policy = bounds.nd(policy, segment_ids, shape=grid)
    dims = tf.cast(grid, tf.int64)
    if static is not None:  # strides as constants, in int32 where the ids and cells fit it
        dtype = tf.int32 if segment_ids.dtype != tf.int64 and cells < 2**31 else tf.int64
        strides = np.cumprod(np.concatenate([[1], np.asarray(static)[:0:-1]]))[::-1]
        strides = tf.constant(strides.astype(dtype.as_numpy_dtype))
    else:
        cells, dtype = tf.reduce_prod(dims), tf.int64
        strides = tf.math.cumprod(dims, exclusive=True, reverse=True)
    columns = bounds.static_columns(tf.cast(segment_ids, dtype))
    if columns:
        flat = columns[-1]
        for d, column in enumerate(columns[:-1]):
            flat += column * strides[d]
    else:
        flat = tf.reduce_sum(tf.cast(segment_ids, dtype) * strides, axis=-1)
    bad = bounds.bad_rows(segment_ids, dims)
    if policy == "IGNORE" or context.in_xla_context():
        # dropped (under XLA as TensorFlow's segment ops there drop bad ids)
        flat = tf.where(bad, tf.constant(-1, dtype), flat)
    else:
        with tf.control_dependencies([bounds.check_rows(segment_ids, bad, grid, "segment_ids")]):
            flat = tf.identity(flat)
    return flat, num_segments_tensor(cells), policy, grid


def product(dims, what=""):
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



def counts(data, segment_ids, num_segments, policy, rows=None, hints=None):
    """How many rows each segment has, at least 1, in data's dtype, shaped to
    divide the segment sums of `data` (TensorFlow's formula: a segment sum of
    ones). `rows`, one weight per id, counts only some rows (the gradients
    count the rows the forward op kept). Used by mean and sqrt_n, their XLA
    forms and their gradients."""
    num_segments = convert.int_tensor(num_segments, tf.int32, "num_segments")
    if rows is None:
        rows = tf.ones(tf.shape(segment_ids), dtype=data.dtype)
    n = backends.run("unsorted_segment_sum", policy, hints, data=rows, segment_ids=segment_ids,
                     num_segments=num_segments)
    shape = tf.concat([num_segments[tf.newaxis],
                       tf.ones([tf.rank(data) - tf.rank(segment_ids)], dtype=num_segments.dtype)],
                      axis=0)
    return tf.maximum(tf.reshape(n, shape), 1)



def sparse_num_segments(num_segments):
    """sparse_segment_*'s num_segments, negative values refused as TensorFlow
    refuses them (a ValueError where a graph is built, its kernel's error in
    eager mode), so that none reaches the kernel as -1, its 'not given'."""
    num_segments = num_segments_tensor(num_segments)
    static = tf.get_static_value(num_segments)
    if static is not None and np.ndim(static) == 0 and static < 0:  # (not a scalar: the kernel)
        if tf.executing_eagerly():
            raise tf.errors.InvalidArgumentError(None, None, "segment ids must be >= 0")
        raise ValueError(f"Cannot specify a negative value for num_segments; got {static}")
    if static is None and not context.in_xla_context():
        with tf.control_dependencies([tf.debugging.assert_non_negative(
                num_segments, message="segment ids must be >= 0")]):
            num_segments = tf.identity(num_segments)
    return num_segments


def num_segments_tensor(num_segments):
    num_segments = convert.int_tensor(num_segments, tf.int32, "num_segments")
    if num_segments.dtype not in (tf.int32, tf.int64):
        raise ValueError(f"num_segments must be int32 or int64, got {num_segments.dtype.name}")
    return num_segments
