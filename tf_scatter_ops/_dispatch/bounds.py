"""The out-of-bound modes CLIP and FILL (JAX's "clip" and "fill"), resolved
where a public function builds its op, so that the kernels (CPU and GPU),
XLA's forms, the stock forms and the gradients all see what they know:
indices in range and the IGNORE policy.

* CLIP clamps each index coordinate into its dimension, [0, dim - 1]: a
  minimum and a maximum over the indices (XLA fuses them). Only a row into
  an empty dimension, where nothing is in range, stays bad: a gather gives
  zeros for it (a scatter into an output with no elements keeps
  TensorFlow's error, whatever the policy).
  Segment ids: an id >= num_segments becomes num_segments - 1; a negative id
  becomes 0 where it is out of range (sorted and sparse segments) and stays
  dropped where TensorFlow defines it as dropped (unsorted_segment_*).
* FILL drops bad rows of scatters and segments (IGNORE, as JAX's "fill"
  does for scatters); a gather gives `fill_value` at the bad rows instead of
  IGNORE's zeros: the gather under IGNORE, then the bad rows written over
  (fill).

A clamped row's gradient goes where the row was clamped to (the op is built
on the clamped indices); a filled row's goes nowhere.
"""

import numpy as np
import tensorflow as tf

from tf_scatter_ops._dispatch import backends, context
from tf_scatter_ops._dispatch.convert import WRAPPER_POLICIES


def kernel_policy(policy):
    """The policy the op is built with."""
    return "IGNORE" if policy in WRAPPER_POLICIES else policy


def _top(count, dtype):
    """count - 1 in `dtype` (indices of a narrow dtype are below any count
    they cannot hold)."""
    return tf.cast(tf.minimum(tf.cast(count, tf.int64) - 1, dtype.max), dtype)


def _outer_dims(indices, like, shape):
    """The dims indices [..., depth] address (int64 [depth]): the first
    `depth` of `shape` (a 1-D tensor), or of `like`'s shape (a tensor or a
    variable), static where it is known."""
    if shape is None:
        static = tf.TensorShape(like.shape)
        shape = static.as_list() if static.is_fully_defined() else tf.shape(like, out_type=tf.int64)
    shape = tf.cast(shape, tf.int64)
    depth = indices.shape[-1] if indices.shape.rank else None
    return shape[:depth] if depth is not None else shape[:tf.shape(indices)[-1]]


def _too_deep(indices, like, shape):
    """Whether indices of a static depth address more dims than there are."""
    depth = indices.shape[-1] if indices.shape.rank else None
    rank = (tf.TensorShape(like.shape).rank if shape is None
            else tf.TensorShape(getattr(shape, "shape", np.shape(shape)))[0])
    return depth is not None and rank is not None and depth > rank


def nd(policy, indices, like=None, shape=None):
    """(indices, kernel policy) for indices [..., depth] into a tensor like
    `like` or of `shape`: under CLIP each coordinate clamped into its
    dimension."""
    if policy != "CLIP" or indices.shape.rank == 0 or _too_deep(indices, like, shape):
        return indices, kernel_policy(policy)  # the op's own error for these shapes
    dims = _outer_dims(indices, like, shape)
    return tf.minimum(tf.maximum(indices, 0), _top(dims, indices.dtype)), "IGNORE"


def ids(policy, segment_ids, num_segments=None, negatives_dropped=False):
    """(segment ids, kernel policy): under CLIP, ids >= num_segments become
    num_segments - 1 (when there is a num_segments) and negative ids 0,
    unless the op drops them by definition (`negatives_dropped`)."""
    if policy != "CLIP":
        return segment_ids, kernel_policy(policy)
    if not negatives_dropped:
        segment_ids = tf.maximum(segment_ids, 0)
    if num_segments is not None:
        segment_ids = tf.minimum(segment_ids, _top(num_segments, segment_ids.dtype))
    return segment_ids, "IGNORE"


def default_fill(dtype):
    """JAX's fill value for out-of-bound gathers: NaN (floating and
    complex), the lowest value (signed integers), the highest (unsigned),
    True (bool); an empty string for strings."""
    if dtype.is_floating or dtype.is_complex:
        return np.nan
    if dtype == tf.bool:
        return True
    if dtype == tf.string:
        return b""
    return dtype.max if dtype.is_unsigned else dtype.min


def check_fill(policy, fill_value):
    """ValueError for a fill_value without the FILL policy."""
    if fill_value is not None and policy != "FILL":
        raise ValueError(
            f"fill_value is given for bad_indices_policy='FILL', got {policy!r}: "
            "pass bad_indices_policy='FILL' too, or no fill_value")


_UNSIGNED = {tf.int16: tf.uint16, tf.int32: tf.uint32, tf.int64: tf.uint64}


def bad_rows(indices, dims):
    """bool [...]: the rows of indices [..., depth] with a coordinate out of
    [0, dims). One unsigned compare per coordinate: negative values
    reinterpreted are at least 2**(bits - 1), and a dimension is capped
    there (every non-negative index below the cap is below it too)."""
    unsigned = _UNSIGNED[indices.dtype]
    if indices.dtype != tf.int64:
        dims = tf.minimum(dims, indices.dtype.max + 1)
    cap = tf.cast(dims, unsigned)
    values = tf.bitcast(indices, unsigned)
    columns = static_columns(values)
    if columns is None:
        return tf.reduce_any(values >= cap, axis=-1)
    bad = tf.zeros(tf.shape(values)[:-1], tf.bool) if not columns else columns[0] >= cap[0]
    for d, column in enumerate(columns[1:], 1):
        bad |= column >= cap[d]
    return bad


def static_columns(indices):
    """indices[..., d] for each d of a depth known when the graph is built
    (at most 8), else None: element-wise ops on the columns beat TensorFlow's
    reductions over a short last axis (5x for depth 3)."""
    depth = indices.shape[-1] if indices.shape.rank else None
    if depth is None or depth > 8:
        return None
    return [indices[..., d] for d in range(depth)]


def _fill_tensor(fill_value, out, indices):
    """fill_value as a tensor of out's dtype that broadcasts to one gathered
    slice (out is [..., slice], indices [..., depth]); ValueError naming
    what does not fit."""
    dtype = out.dtype
    if dtype.is_integer and not isinstance(fill_value, (tf.Tensor, tf.Variable)):
        array = np.asarray(fill_value)
        if array.dtype.kind in "iu" and array.size and (
                array.min() < dtype.min or array.max() > dtype.max):
            raise ValueError(f"fill_value {array.tolist()!r} does not fit the output's dtype "
                             f"{dtype.name}")
    try:
        value = tf.convert_to_tensor(fill_value, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise ValueError(f"fill_value must be of the output's dtype {dtype.name}: {e}") from e
    if out.shape.rank is None or indices.shape.rank is None or value.shape.rank is None:
        return value
    one = out.shape[indices.shape.rank - 1:]
    tail = one[one.rank - value.shape.rank:] if value.shape.rank <= one.rank else None
    if tail is None or not all(v is None or s is None or v in (1, s)
                               for v, s in zip(value.shape, tail)):
        raise ValueError(f"fill_value of shape {value.shape} does not broadcast to a "
                         f"gathered slice of shape {one}")
    return value


def fill(policy, out, indices, fill_value, like=None, shape=None):
    """A gather's `out` ([..., slice]: the rows at indices [..., depth] of a
    tensor like `like` or of `shape`) with `fill_value` (broadcast to a
    slice; by default default_fill) at the bad rows under FILL; `out`
    otherwise. The bad rows are written into `out` (in place where it can
    be forwarded), so the cost is theirs, not the output's; under XLA, one
    select that XLA fuses into the gather."""
    if policy != "FILL":
        return out
    value = _fill_tensor(default_fill(out.dtype) if fill_value is None else fill_value, out,
                         indices)
    bad = bad_rows(indices, _outer_dims(indices, like, shape))
    if context.in_xla_context():
        slice_rank = tf.rank(out) - tf.rank(bad)
        bad = tf.reshape(bad, tf.concat([tf.shape(bad), tf.ones([slice_rank], tf.int32)], 0))
        return tf.where(bad, value, out)
    # as [rows, slice elements]: tf.where takes no scalar (one row), and
    # empty slices have nothing to fill
    shape, rows = tf.shape(out), tf.size(bad)
    slice_shape = shape[tf.rank(bad):]
    slice_size = tf.reduce_prod(slice_shape)
    at = tf.where(tf.reshape(bad, [-1]) & (slice_size > 0))
    values = tf.broadcast_to(tf.reshape(tf.broadcast_to(value, slice_shape), [1, -1]),
                             [tf.shape(at)[0], slice_size])
    filled = backends.run("tensor_scatter_nd_update", tensor=tf.reshape(out, [rows, slice_size]),
                          indices=at, updates=values)
    return tf.reshape(filled, shape)


def check_rows(indices, bad, shape, what):
    """`bad` (bad_rows of `indices` into `shape`) as the ERROR policy's
    InvalidArgumentError naming the first bad row, at run time: raised
    here in eager mode; in a graph an Assert whose message is built only
    when a row is bad. Returns a dependency for what must wait for it."""
    def message():
        flat = tf.reshape(bad, [-1])
        first = tf.argmax(tf.cast(flat, tf.int32), output_type=tf.int64)
        rows = tf.reshape(indices, [tf.size(flat), -1])
        position = tf.unravel_index(first, tf.cast(tf.shape(bad), tf.int64))
        return tf.strings.join([
            what, "[", tf.strings.reduce_join(tf.strings.as_string(position), separator=","),
            "] = [", tf.strings.reduce_join(tf.strings.as_string(rows[first]), separator=", "),
            "] does not index into shape [",
            tf.strings.reduce_join(tf.strings.as_string(shape), separator=","), "]"])

    if tf.executing_eagerly():
        if tf.reduce_any(bad):
            raise tf.errors.InvalidArgumentError(None, None, message().numpy().decode())
        return tf.no_op()

    def fail():
        with tf.control_dependencies([tf.debugging.Assert(False, [message()])]):
            return tf.constant(False)
    return tf.cond(tf.reduce_any(bad), fail, lambda: tf.constant(True))
