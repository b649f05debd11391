"""The ops that are functions of many steps (the group-wise functions and
their gradients, the max / min with the position of the row that holds it)
written with the scatter and segment ops and TensorFlow's gathers and
element-wise ops, the same formulas as the fused kernels: their form under
XLA and inside stock_ops() (backends.py), and the tests' second opinion.

Each takes `stock`: its scatters and segment reductions are then built in
the forms TFLite and ONNX take too; else each is routed as a call of its
own would be (routing.py: our op, or under XLA TensorFlow's where our XLA
kernels do not apply)."""

import tensorflow as tf

from tf_scatter_ops._base import table
from tf_scatter_ops._dispatch import forms, ours, routing


def emit(op, policy, inputs, stock):
    """The table's `op` on `inputs`: the stock form, or as routed here."""
    if not stock and routing.route(op, inputs) == routing.OURS:
        return ours.call(op, policy, inputs)
    return forms.lowered(op, policy, inputs, stock)


def _segment(op, data, ids, num_segments, policy, stock):
    return emit(op, policy, {"data": data, "segment_ids": ids, "num_segments": num_segments},
                stock)


def _tensor_scatter(op, tensor, indices, updates, policy, stock):
    return emit(op, policy, {"tensor": tensor, "indices": indices, "updates": updates}, stock)


def _gather_ignoring(params, indices, stock):
    return emit("gather_nd", "IGNORE", {"params": params, "indices": indices}, stock)


# The group-wise functions (segment_softmax, ...).

GROUPWISE = tuple(row.py for row in table.GROUPWISE)

def _parts(segment_ids, num_segments):
    """(the ids flattened, with the dropped ones at 0; kept: [ids.size] bool)."""
    ids = tf.reshape(forms.wide(segment_ids), [-1])
    num = tf.cast(num_segments, ids.dtype)
    kept = (ids >= 0) & (ids < num)
    safe = tf.where(kept, ids, tf.zeros_like(ids))
    return safe, kept


def _flat_rows(x, segment_ids):
    """x as [ids.size] + x.shape[ids.rank:]."""
    return tf.reshape(x, tf.concat([[-1], tf.shape(x, tf.int64)[tf.rank(segment_ids):]], 0))


def _counts(x, segment_ids, num_segments, policy, stock):
    """Rows per segment, in x's dtype, shaped to divide its segment sums."""
    ones = tf.ones(tf.shape(segment_ids), x.dtype)
    n = _segment("unsorted_segment_sum", ones, segment_ids, num_segments, policy, stock)
    # int64 shapes: int32's wrap a segment count of 2**31 or more (to 0 when
    # XLA folds them), which would reshape the counts wrongly
    shape = tf.concat([tf.shape(n, tf.int64),
                       tf.ones([tf.rank(x) - tf.rank(segment_ids)], tf.int64)], 0)
    return tf.reshape(n, shape)


def _compute_dtype(dtype):
    return tf.float32 if dtype in (tf.float16, tf.bfloat16) else dtype


def groupwise(op, data, segment_ids, num_segments, ddof=0, policy="", stock=False):
    """`op` (a name of GROUPWISE) written with unsorted_segment_max / _sum,
    gathers and element-wise ops."""
    x = tf.cast(data, _compute_dtype(data.dtype))
    safe, kept = _parts(segment_ids, num_segments)

    def per_row(values):  # a segment's value at each data row
        return tf.reshape(tf.gather(values, safe), tf.shape(x, tf.int64))

    def drop(rows):  # 0 at the dropped rows
        flat = _flat_rows(rows, segment_ids)
        return tf.reshape(forms.select_rows(kept, flat, tf.zeros_like(flat)),
                          tf.shape(x, tf.int64))

    if op in ("segment_var", "segment_std"):
        n = _counts(x, segment_ids, num_segments, policy, stock)
        mean = _segment("unsorted_segment_sum", x, segment_ids, num_segments, policy,
                           stock) / n
        d = x - per_row(mean)
        divisor = n - ddof
        # + 0 / 0 = NaN where n - ddof <= 0, as arithmetic: tf2onnx writes a
        # float select as c * a + (1 - c) * b, which a NaN operand spoils
        nan_where_too_few = tf.zeros_like(divisor) / tf.cast(divisor > 0, x.dtype)
        out = _segment("unsorted_segment_sum", d * d, segment_ids, num_segments, policy,
                           stock) / tf.maximum(divisor, 1)
        out = out + nan_where_too_few
        if op == "segment_std":
            out = tf.sqrt(out)
    else:
        m = _segment("unsorted_segment_max", x, segment_ids, num_segments, policy,
                           stock)
        # the functions do not depend on the shift (it only keeps exp in
        # range), so neither do their gradients of any order: none through
        # the max, whose gradient is most of the graph XLA compiles
        shift = tf.stop_gradient(tf.where(tf.math.is_finite(m), m, tf.zeros_like(m)))
        shifted = x - per_row(shift)
        total = _segment("unsorted_segment_sum", tf.exp(shifted), segment_ids, num_segments, policy,
                           stock)
        if op == "segment_logsumexp":
            out = shift + tf.math.log(total)
        elif op == "segment_log_softmax":
            out = drop(shifted - per_row(tf.math.log(total)))
        else:
            out = drop(tf.exp(shifted) / per_row(total))
    return tf.cast(out, data.dtype)


def groupwise_grad(op, data, grad, segment_ids, num_segments, ddof=0, policy="",
                   stock=False):
    """The gradient of groupwise(...) with respect to data for the output's
    gradient `grad`, by the gradients of those ops."""
    with tf.GradientTape() as tape:
        tape.watch(data)
        out = groupwise(op, data, segment_ids, num_segments, ddof, policy, stock)
    return tape.gradient(out, data, output_gradients=grad)


# The max / min with the position of the row that holds it.

_NO_ROW = tf.int64.max  # a position no row has (the min's identity here)


def _is_max(op):
    return "_max_" in op


def value_gradient(grad, positions, updates, outer, segment, stock=False):
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
    d_flat = emit("scatter_nd", "IGNORE", {"indices": to[:, tf.newaxis],
                                           "updates": tf.reshape(grad, [-1]),
                                           "shape": tf.maximum(size, 1)[tf.newaxis]}, stock)
    d_updates = tf.reshape(d_flat[:size], tf.shape(updates, tf.int64))
    if segment:
        return d_updates, None
    return d_updates, tf.where(positions < 0, grad, tf.zeros_like(grad))


def _worst(dtype, op):
    """What every value beats: the identity of the max (min)."""
    return table.identity("MaxOp" if _is_max(op) else "MinOp", dtype)


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


def arg_segments(op, data, segment_ids, num_segments, policy="", stock=False):
    """(value, positions) of unsorted_segment_*_with_arg* from segment max/min,
    gathers and element-wise ops, with the kernel's gradient."""
    reducer = "unsorted_segment_max" if _is_max(op) else "unsorted_segment_min"
    outer = tf.shape(segment_ids, tf.int64)

    @tf.custom_gradient
    def f(data):
        clean, code = _without_nan(op, data)
        # an empty segment holds the dtype's lowest (highest) value, as the kernel's
        best = _segment(reducer, clean, segment_ids, num_segments, policy, stock)
        code = _segment("unsorted_segment_max", code, segment_ids, num_segments, policy, stock)
        # -inf alone (+inf for a min): the segment max says the dtype's lowest value
        best = _with_nan(tf.where(tf.equal(code, 1), _worst(data.dtype, op), best), code)
        best_at = _gather_ignoring(best, segment_ids[..., tf.newaxis], stock)
        candidates = tf.where(_matches(data, best_at), _row_positions(outer, data), _NO_ROW)
        positions = _first(_segment("unsorted_segment_min", candidates, segment_ids,
                                    num_segments, policy, stock), _NO_ROW)
        value = _at_positions(data, outer, positions, best)

        def grad(g, unused_positions_grad=None):
            return value_gradient(g, positions, data, outer, True, stock)[0]
        return (value, positions), grad
    return f(data)


def arg_scatter(op, tensor, indices, updates, policy="", stock=False):
    """(value, positions) of tensor_scatter_nd_*_with_arg* from tensor scatter
    max/min, gathers and element-wise ops, with the kernel's gradient."""
    scatter = "tensor_scatter_nd_max" if _is_max(op) else "tensor_scatter_nd_min"
    outer = tf.shape(indices, tf.int64)[:-1]

    @tf.custom_gradient
    def f(tensor, updates):
        clean, code = _without_nan(op, updates)
        shape = tf.shape(tensor, tf.int64)
        best = _tensor_scatter(scatter, tf.fill(shape, _worst(tensor.dtype, op)), indices, clean,
                               policy, stock)
        code = _tensor_scatter("tensor_scatter_nd_max", tf.zeros(shape, tf.int32), indices, code,
                               policy, stock)
        best = _with_nan(best, code)
        updated = (code >= 1) & _takes(op, best, tensor)
        best_at = _gather_ignoring(best, indices, stock)
        candidates = tf.where(_matches(updates, best_at), _row_positions(outer, updates), _NO_ROW)
        first = _tensor_scatter("tensor_scatter_nd_min", tf.fill(shape, _NO_ROW), indices,
                                candidates, policy, stock)
        positions = tf.where(updated, first, tf.constant(-1, tf.int64))
        value = _at_positions(updates, outer, positions, tensor)

        def grad(g, unused_positions_grad=None):
            d_updates, d_tensor = value_gradient(g, positions, updates, outer, False, stock)
            return d_tensor, d_updates
        return (value, positions), grad
    return f(tensor, updates)
