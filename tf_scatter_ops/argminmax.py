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

- ties: the first row in index order holds it;
- NaN is greater (smaller) than every number, as in NumPy's argmax: the
  first NaN wins (unsorted_segment_max's value there follows TensorFlow's
  segment kernels instead, which a later number can replace);
- an empty segment: the dtype's lowest (highest) value, position -1;
- tensor_scatter_nd_*: the tensor's own value stays, with position -1,
  unless an update is strictly greater (smaller) or a NaN.

The inputs and bad-index rules are unsorted_segment_*'s and
tensor_scatter_nd_*'s. The gradient of the value goes to the winning row
alone (TensorFlow's segment max splits it between ties), or to the tensor
where it stayed; the positions have none. The kernel is the CPU's; under XLA,
inside stock_ops() and on a GPU the functions are TensorFlow's scatter and
segment max/min with gathers and element-wise ops (same results).
"""

import collections

import tensorflow as tf

from tf_scatter_ops import _calls, _convert, _stock_forms, _table, groupwise, ops, segments

MaxWithArgmax = collections.namedtuple("MaxWithArgmax", ["output", "argmax"])
MinWithArgmin = collections.namedtuple("MinWithArgmin", ["output", "argmin"])

_NO_ROW = tf.int64.max  # a position no row has (the composed form's min identity)


def py_of(op_type):
    """The Python name of an arg op type (TfScatter>UnsortedSegmentMaxWithArgmax)."""
    return _PY[op_type]


_PY = {"TfScatter>" + row.op: row.py for row in _table.ARG_REDUCTIONS}


def _result(op, output, positions):
    return (MaxWithArgmax if "_max_" in op else MinWithArgmin)(output, positions)


def _segments(op, data, segment_ids, num_segments, bad_indices_policy, name):
    policy = _convert.check_policy(bad_indices_policy)
    with _convert.scope(name or op):
        data = _convert.tensor(data, name="data")
        _convert.check_dtype(op, data.dtype)
        segment_ids = _convert.indices(segment_ids)
        num_segments = segments._num_segments(num_segments)
        if _calls.lowering(xla_ours=False) or groupwise._on_gpu(data):
            return _result(op, *composed_segments(op, data, segment_ids, num_segments, policy))
        return _result(op, *_calls.library_op(_table.BY_PY[op].op)(
            data=data, segment_ids=segment_ids, num_segments=num_segments,
            bad_indices_policy=policy))


def _scatter(op, tensor, indices, updates, bad_indices_policy, name):
    policy = _convert.check_policy(bad_indices_policy)
    with _convert.scope(name or op):
        tensor = _convert.tensor(tensor, name="tensor")
        _convert.check_dtype(op, tensor.dtype)
        indices = _convert.indices(indices)
        updates = _convert.tensor(updates, dtype=tensor.dtype, name="updates")
        if _calls.lowering(xla_ours=False) or groupwise._on_gpu(tensor):
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


# The same with TensorFlow's ops (our wrappers, which lower to them under XLA
# and inside stock_ops()): the tests' second opinion, and the benchmarks'.

def _is_max(op):
    return "_max_" in op


def _extreme(dtype, op, worst):
    """The dtype's lowest value for a max (`worst`) or highest, else the other."""
    low = dtype.min if dtype.is_integer else -dtype.max
    high = dtype.max
    return tf.constant((low if _is_max(op) else high) if worst else
                       (high if _is_max(op) else low), dtype)


def _takes(op, upd, out):
    """common/arg_reducers.h's rule: whether `upd` takes an element holding `out`."""
    beats = out < upd if _is_max(op) else upd < out
    if upd.dtype.is_floating:
        beats = beats | (tf.math.is_nan(upd) & ~tf.math.is_nan(out))
    return beats


def _best(op, values, reduce):
    """reduce(values with NaN as the worst value) and where any NaN went:
    NaN there (the reduction NaN wins)."""
    if not values.dtype.is_floating:
        return reduce(values), None
    nan = tf.math.is_nan(values)
    best = reduce(tf.where(nan, _extreme(values.dtype, op, worst=True), values))
    return best, nan


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
    trailing = tf.ones([tf.rank(like) - tf.size(outer)], tf.int32)
    return tf.broadcast_to(tf.reshape(rows, tf.concat([outer, trailing], 0)), tf.shape(like))


def composed_segments(op, data, segment_ids, num_segments, policy=""):
    """(value, positions) of unsorted_segment_*_with_arg* from segment max/min,
    gathers and element-wise ops."""
    reduce_name = "unsorted_segment_max" if _is_max(op) else "unsorted_segment_min"
    reduce = getattr(segments, reduce_name)

    def by_segment(x):
        return reduce(x, segment_ids, num_segments, bad_indices_policy=policy)
    best, nan = _best(op, data, by_segment)
    if nan is not None:
        any_nan = segments.unsorted_segment_max(tf.cast(nan, tf.int32), segment_ids,
                                                num_segments, bad_indices_policy=policy) > 0
        best = tf.where(any_nan, tf.constant(float("nan"), data.dtype), best)
    ids = segment_ids[..., tf.newaxis]
    best_at = ops.gather_nd(best, ids, bad_indices_policy="IGNORE")
    candidates = tf.where(_matches(data, best_at),
                          _row_positions(tf.shape(segment_ids), data), _NO_ROW)
    first = segments.unsorted_segment_min(candidates, segment_ids, num_segments,
                                          bad_indices_policy=policy)
    # tf.equal, not ==: in a graph outside a function (export) == compares identity
    return best, tf.where(tf.equal(first, _NO_ROW), tf.constant(-1, tf.int64), first)


def composed_scatter(op, tensor, indices, updates, policy=""):
    """(value, positions) of tensor_scatter_nd_*_with_arg* from tensor scatter
    max/min, gathers and element-wise ops."""
    scatter = ops.tensor_scatter_nd_max if _is_max(op) else ops.tensor_scatter_nd_min
    worst = tf.fill(tf.shape(tensor), _extreme(tensor.dtype, op, worst=True))
    best, nan = _best(op, updates, lambda u: scatter(worst, indices, u, bad_indices_policy=policy))
    flags = tf.zeros(tf.shape(tensor), tf.int32)
    touched = ops.tensor_scatter_nd_max(flags, indices, tf.ones(tf.shape(updates), tf.int32),
                                        bad_indices_policy=policy) > 0
    if nan is not None:
        any_nan = ops.tensor_scatter_nd_max(flags, indices, tf.cast(nan, tf.int32),
                                            bad_indices_policy=policy) > 0
        best = tf.where(any_nan, tf.constant(float("nan"), tensor.dtype), best)
    updated = touched & _takes(op, best, tensor)
    best_at = ops.gather_nd(best, indices, bad_indices_policy="IGNORE")
    candidates = tf.where(_matches(updates, best_at),
                          _row_positions(tf.shape(indices)[:-1], updates), _NO_ROW)
    first = ops.tensor_scatter_nd_min(tf.fill(tf.shape(tensor), _NO_ROW), indices, candidates,
                                      bad_indices_policy=policy)
    return (tf.where(updated, best, tensor),
            tf.where(updated, first, tf.constant(-1, tf.int64)))
