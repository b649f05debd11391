"""The maximum or minimum of a scatter or of segments, with the position of
the update row that holds it (PyTorch Scatter's scatter_max / scatter_min):

    out, argmax = tso.unsorted_segment_max_with_argmax(data, segment_ids, num_segments)
    argmax = tso.unsorted_segment_argmax(data, segment_ids, num_segments)
    out, argmax = tso.tensor_scatter_nd_max_with_argmax(tensor, indices, updates)
    argmax = tso.tensor_scatter_nd_argmax(tensor, indices, updates)
    # and _min_with_argmin, _argmin

One pass computes both. The positions (int64, shaped like the output) count
the update rows: data's rows as segment_ids' elements in row-major order, or
indices' outer dims in row-major order. Per output element:

- ties: the first row in index order holds it, and the value is that row's
  own (the sign of a zero, a NaN's bits);
- NaN is greater (smaller) than every number, as in NumPy's argmax: the
  first NaN wins (unsorted_segment_max's value follows TensorFlow's segment
  kernels instead: a later number replaces a NaN, -inf alone gives the
  dtype's lowest value);
- an empty segment: the dtype's lowest (highest) value, position -1;
- tensor_scatter_nd_*: the tensor's own value stays, with position -1,
  unless an update is strictly greater (smaller) or a NaN.

The inputs and bad-index rules are unsorted_segment_*'s and
tensor_scatter_nd_*'s. The gradient of the value goes to the winning row
alone (TensorFlow's segment max splits it between ties), or to the tensor
where it stayed; the positions have none. The kernels (CPU and GPU) give the
same bits; under XLA and inside stock_ops() the functions are TensorFlow's
scatters and segment max/min with gathers and element-wise ops (same results,
same gradient).
"""

import collections

import tensorflow as tf

from tf_scatter_ops import _bounds, _calls, _convert, _table, ops, segments

MaxWithArgmax = collections.namedtuple("MaxWithArgmax", ["output", "argmax"])
MinWithArgmin = collections.namedtuple("MinWithArgmin", ["output", "argmin"])

_NO_ROW = tf.int64.max  # a position no row has (the composed form's min identity)


def py_of(op_type):
    """The Python name of an arg op type (TfScatter>UnsortedSegmentMaxWithArgmax)."""
    return _PY[op_type]


_PY = {"TfScatter>" + row.op: row.py for row in _table.ARG_REDUCTIONS}


def _is_max(op):
    return "_max_" in op


def _result(op, output, positions):
    return (MaxWithArgmax if _is_max(op) else MinWithArgmin)(output, positions)


def _segments(op, data, segment_ids, num_segments, bad_indices_policy, name):
    policy = _convert.check_policy(bad_indices_policy)
    with _convert.scope(name or op):
        data, segment_ids, num_segments, policy, grid = segments.inputs(
            op, data, segment_ids, num_segments, policy)
        if _calls.lowering(xla_ours=False):
            out = composed_segments(op, data, segment_ids, num_segments, policy)
        else:
            out = _calls.library_op(_table.BY_PY[op].op)(
                data=data, segment_ids=segment_ids, num_segments=num_segments,
                bad_indices_policy=policy)
        return _result(op, *(segments.ungrid(x, grid) for x in out))


def _scatter(op, tensor, indices, updates, bad_indices_policy, name):
    policy = _convert.check_policy(bad_indices_policy)
    with _convert.scope(name or op):
        tensor = _convert.tensor(tensor, name="tensor")
        _convert.check_dtype(op, tensor.dtype)
        indices = _convert.indices(indices)
        updates = _convert.tensor(updates, dtype=tensor.dtype, name="updates")
        indices, policy = _bounds.nd(policy, indices, like=tensor)
        if _calls.lowering(xla_ours=False):
            return _result(op, *composed_scatter(op, tensor, indices, updates, policy))
        return _result(op, *_calls.library_op(_table.BY_PY[op].op)(
            tensor=tensor, indices=indices, updates=updates, bad_indices_policy=policy))


def _segment_functions(op, what):
    def both(data, segment_ids, num_segments, name=None, bad_indices_policy=""):
        return _segments(op, data, segment_ids, num_segments, bad_indices_policy, name)

    def positions(data, segment_ids, num_segments, name=None, bad_indices_policy=""):
        return _segments(op, data, segment_ids, num_segments, bad_indices_policy, name)[1]
    arg = op.rsplit("_", 1)[1]  # argmax, argmin
    both.__name__ = both.__qualname__ = op
    both.__doc__ = (f"({what} of `data`'s rows per segment id, the position of the row that "
                    f"holds it): a {type(_result(op, 0, 0)).__name__}. Ties: the first row; "
                    "an empty segment: position -1.")
    positions.__name__ = positions.__qualname__ = "unsorted_segment_" + arg
    positions.__doc__ = (f"The position of the row that holds the {what} of `data`'s rows "
                         "per segment id (the first of ties; -1 for an empty segment), int64.")
    return _convert.public(both), _convert.public(positions)


def _scatter_functions(op, what):
    def both(tensor, indices, updates, bad_indices_policy="", name=None):
        return _scatter(op, tensor, indices, updates, bad_indices_policy, name)

    def positions(tensor, indices, updates, bad_indices_policy="", name=None):
        return _scatter(op, tensor, indices, updates, bad_indices_policy, name)[1]
    arg = op.rsplit("_", 1)[1]
    both.__name__ = both.__qualname__ = op
    both.__doc__ = (f"(tensor_scatter_nd_{what}, the position of the update row that holds "
                    f"each element): a {type(_result(op, 0, 0)).__name__}. Ties: the first "
                    "row; -1 where the tensor's value stays.")
    positions.__name__ = positions.__qualname__ = "tensor_scatter_nd_" + arg
    positions.__doc__ = (f"The position of the update row that holds each element of "
                         f"tensor_scatter_nd_{what}(tensor, indices, updates) (the first of "
                         "ties; -1 where the tensor's value stays), int64.")
    return _convert.public(both), _convert.public(positions)


unsorted_segment_max_with_argmax, unsorted_segment_argmax = _segment_functions(
    "unsorted_segment_max_with_argmax", "max")
unsorted_segment_min_with_argmin, unsorted_segment_argmin = _segment_functions(
    "unsorted_segment_min_with_argmin", "min")
tensor_scatter_nd_max_with_argmax, tensor_scatter_nd_argmax = _scatter_functions(
    "tensor_scatter_nd_max_with_argmax", "max")
tensor_scatter_nd_min_with_argmin, tensor_scatter_nd_argmin = _scatter_functions(
    "tensor_scatter_nd_min_with_argmin", "min")


def value_gradient(grad, positions, updates, outer, segment):
    """The gradient of the value (for its gradient `grad`) with respect to the
    updates (a segment's data) and, unless `segment`, the tensor: each
    element's gradient goes to element (position, column) of the updates, the
    rows of the shape `outer` (int64), by one scatter with no duplicates (no
    two elements share a row's element); the tensor's where its value stayed
    (position -1). Its cost is the output's and the updates' size."""
    rows = tf.reduce_prod(outer)
    width = tf.reduce_prod(tf.shape(updates, tf.int64)[tf.size(outer):])  # a row's elements
    flat = tf.reshape(positions, [-1])
    column = tf.range(tf.size(flat, tf.int64)) % tf.maximum(width, 1)
    # an element no row holds (-1) goes to a negative index, which IGNORE drops
    to = tf.where(flat < 0, tf.constant(-1, tf.int64), flat * width + column)
    # (into at least one element: a scatter into none takes no rows at all;
    # the slice of a whole tensor is that tensor, no copy)
    size = rows * width
    d_flat = ops.scatter_nd(to[:, tf.newaxis], tf.reshape(grad, [-1]),
                            tf.maximum(size, 1)[tf.newaxis], bad_indices_policy="IGNORE")
    d_updates = tf.reshape(d_flat[:size], tf.shape(updates, tf.int64))
    if segment:
        return d_updates, None
    return d_updates, tf.where(positions < 0, grad, tf.zeros_like(grad))


# The same with TensorFlow's ops (our wrappers, which lower to them under XLA
# and inside stock_ops()), with the same gradient: the functions' form there,
# the tests' second opinion.

def _worst(dtype, op):
    """What every value beats: -inf (+inf for a min) for floats, else the
    dtype's lowest (highest) value."""
    if dtype.is_floating:
        return tf.constant(float("-inf") if _is_max(op) else float("inf"), dtype)
    return tf.constant(dtype.min if _is_max(op) else dtype.max, dtype)


def _takes(op, upd, out):
    """common/arg_reducers.h's rule: whether `upd` takes an element holding `out`."""
    beats = out < upd if _is_max(op) else upd < out
    if upd.dtype.is_floating:
        beats = beats | (tf.math.is_nan(upd) & ~tf.math.is_nan(out))
    return beats


def _without_nan(op, values):
    """values with NaN as the worst value, and a code (int32) per value whose
    max over an element says what reached it: 1 + 2 * (beyond the worst value,
    -inf for a max) + 4 * isnan, so >= 1: any value, >= 3: any beyond the
    worst or NaN, >= 5: a NaN (an empty element holds int32's lowest)."""
    if not values.dtype.is_floating:
        return values, 3 * tf.ones(tf.shape(values, tf.int64), tf.int32)
    nan = tf.math.is_nan(values)
    clean = tf.where(nan, _worst(values.dtype, op), values)
    beyond = tf.not_equal(clean, _worst(values.dtype, op))
    return clean, 1 + 2 * tf.cast(beyond, tf.int32) + 4 * tf.cast(nan, tf.int32)


def _with_nan(best, code):
    """best, NaN where a NaN reached."""
    if not best.dtype.is_floating:
        return best
    return tf.where(code >= 5, tf.constant(float("nan"), best.dtype), best)


def _matches(values, best_at):
    """Whether each update equals the best value of its element (NaN equals NaN)."""
    match = tf.equal(values, best_at)
    if values.dtype.is_floating:
        match = match | (tf.math.is_nan(values) & tf.math.is_nan(best_at))
    return match


def _row_positions(outer, like):
    """Each element's row number (int64, rows in row-major order of the shape
    `outer`), broadcast to `like`'s shape."""
    rows = tf.reshape(tf.range(tf.reduce_prod(outer), dtype=tf.int64), outer)
    trailing = tf.ones([tf.rank(like) - tf.size(outer)], outer.dtype)
    return tf.broadcast_to(tf.reshape(rows, tf.concat([outer, trailing], 0)),
                           tf.shape(like, tf.int64))


def _at_positions(values, outer, positions, otherwise):
    """values' element (position, column) where position >= 0, else
    `otherwise`: the held value with the row's own bits (NaN payload, the sign
    of zero)."""
    width = tf.reduce_prod(tf.shape(values, tf.int64)[tf.size(outer):])
    column = tf.reshape(tf.range(tf.size(positions, tf.int64)) % tf.maximum(width, 1),
                        tf.shape(positions, tf.int64))
    at = tf.gather(tf.reshape(values, [-1]), tf.maximum(positions, 0) * width + column)
    return tf.where(positions >= 0, at, otherwise)


def _first(candidates_min, none):
    """-1 where no row matched."""
    # tf.equal, not ==: in a graph outside a function (export) == compares identity
    return tf.where(tf.equal(candidates_min, none), tf.constant(-1, tf.int64), candidates_min)


def composed_segments(op, data, segment_ids, num_segments, policy=""):
    """(value, positions) of unsorted_segment_*_with_arg* from segment max/min,
    gathers and element-wise ops, with the kernel's gradient."""
    reduce = segments.unsorted_segment_max if _is_max(op) else segments.unsorted_segment_min
    outer = tf.shape(segment_ids, tf.int64)

    @tf.custom_gradient
    def f(data):
        clean, code = _without_nan(op, data)
        # an empty segment holds the dtype's lowest (highest) value, as the kernel's
        best = reduce(clean, segment_ids, num_segments, bad_indices_policy=policy)
        code = segments.unsorted_segment_max(code, segment_ids, num_segments,
                                             bad_indices_policy=policy)
        # -inf alone (+inf for a min): the segment max says the dtype's lowest value
        best = _with_nan(tf.where(tf.equal(code, 1), _worst(data.dtype, op), best), code)
        best_at = ops.gather_nd(best, segment_ids[..., tf.newaxis], bad_indices_policy="IGNORE")
        candidates = tf.where(_matches(data, best_at), _row_positions(outer, data), _NO_ROW)
        positions = _first(segments.unsorted_segment_min(
            candidates, segment_ids, num_segments, bad_indices_policy=policy), _NO_ROW)
        value = _at_positions(data, outer, positions, best)

        def grad(g, unused_positions_grad=None):
            return value_gradient(g, positions, data, outer, segment=True)[0]
        return (value, positions), grad
    return f(data)


def composed_scatter(op, tensor, indices, updates, policy=""):
    """(value, positions) of tensor_scatter_nd_*_with_arg* from tensor scatter
    max/min, gathers and element-wise ops, with the kernel's gradient."""
    scatter = ops.tensor_scatter_nd_max if _is_max(op) else ops.tensor_scatter_nd_min
    outer = tf.shape(indices, tf.int64)[:-1]

    @tf.custom_gradient
    def f(tensor, updates):
        clean, code = _without_nan(op, updates)
        shape = tf.shape(tensor, tf.int64)
        best = scatter(tf.fill(shape, _worst(tensor.dtype, op)), indices, clean,
                       bad_indices_policy=policy)
        code = ops.tensor_scatter_nd_max(tf.zeros(shape, tf.int32), indices, code,
                                         bad_indices_policy=policy)
        best = _with_nan(best, code)
        updated = (code >= 1) & _takes(op, best, tensor)
        best_at = ops.gather_nd(best, indices, bad_indices_policy="IGNORE")
        candidates = tf.where(_matches(updates, best_at), _row_positions(outer, updates), _NO_ROW)
        first = ops.tensor_scatter_nd_min(tf.fill(shape, _NO_ROW), indices, candidates,
                                          bad_indices_policy=policy)
        positions = tf.where(updated, first, tf.constant(-1, tf.int64))
        value = _at_positions(updates, outer, positions, tensor)

        def grad(g, unused_positions_grad=None):
            d_updates, d_tensor = value_gradient(g, positions, updates, outer, segment=False)
            return d_tensor, d_updates
        return (value, positions), grad
    return f(tensor, updates)
