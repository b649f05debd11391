"""Functions of each segment's rows, fused on the plugin's cores:

    tso.segment_softmax(data, segment_ids, num_segments)       # shaped like data
    tso.segment_log_softmax(data, segment_ids, num_segments)
    tso.segment_logsumexp(data, segment_ids, num_segments)     # [num_segments] + data.shape[ids.rank:]
    tso.segment_var(data, segment_ids, num_segments, ddof=0)
    tso.segment_std(data, segment_ids, num_segments, ddof=0)

The segment ids are unsorted_segment_*'s: int16/32/64, any shape that is a
prefix of data's, negative ids dropped, an id >= num_segments an
InvalidArgumentError naming the first one unless
bad_indices_policy="IGNORE" (then dropped). A dropped row's softmax and
log-softmax are 0, and so is its gradient. Each function is taken over the
rows of a segment, per element of the row's slice:

    softmax      exp(x - m) / sum(exp(x - m))
    log_softmax  (x - m) - log(sum(exp(x - m)))
    logsumexp    m + log(sum(exp(x - m)))          -inf for an empty segment
    var          sum((x - mean)^2) / (n - ddof)      NaN where n - ddof <= 0
    std          sqrt(var)

m is the segment's maximum where finite, else 0 (SciPy's logsumexp rule).
One kernel computes each function: streaming passes over the rows between
segment reductions on the scatter core (sums in index order: the same bits
on any thread count), with a fused gradient op (and a second order).
16-bit floats are computed in float32. The kernels (CPU and GPU) compute the
same steps in the same order with the library's own exp and log, so a GPU
gives the CPU's bits. Under XLA and inside stock_ops() the functions are
TensorFlow's unsorted_segment_max / _sum with gathers and element-wise ops
(the same formulas, TensorFlow's order of summation).
"""

import tensorflow as tf

from tf_scatter_ops import _calls, _convert, _stock_forms, _table, segments

_NAMES = tuple(row.py for row in _table.GROUPWISE)
_PER_ROW = ("segment_softmax", "segment_log_softmax")  # shaped like data


def _check_ddof(ddof):
    if isinstance(ddof, bool) or not isinstance(ddof, int) or ddof < 0:
        raise ValueError(f"ddof must be a non-negative Python int, got {ddof!r}")
    return ddof


def _call(op, data, segment_ids, num_segments, ddof, bad_indices_policy, name):
    policy = _convert.check_policy(bad_indices_policy)
    ddof = _check_ddof(ddof)
    with _convert.scope(name or op):
        data, segment_ids, num_segments, policy, grid = segments.inputs(
            op, data, segment_ids, num_segments, policy)
        if _calls.lowering(xla_ours=False):
            out = composed(op, data, segment_ids, num_segments, ddof, policy)
        else:
            out = _calls.library_op(_table.BY_PY[op].op)(
                data=data, segment_ids=segment_ids, num_segments=num_segments, ddof=ddof,
                bad_indices_policy=policy)
        return out if op in _PER_ROW else segments.ungrid(out, grid)


def _function(op, doc, takes_ddof):
    if takes_ddof:
        def f(data, segment_ids, num_segments, ddof=0, name=None, bad_indices_policy=""):
            return _call(op, data, segment_ids, num_segments, ddof, bad_indices_policy, name)
    else:
        def f(data, segment_ids, num_segments, name=None, bad_indices_policy=""):
            return _call(op, data, segment_ids, num_segments, 0, bad_indices_policy, name)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return _convert.public(f)


segment_softmax = _function(
    "segment_softmax",
    "The softmax of each segment's rows (per element of the slice), shaped like `data`.", False)
segment_log_softmax = _function(
    "segment_log_softmax",
    "The log-softmax of each segment's rows (per element of the slice), shaped like `data`.",
    False)
segment_logsumexp = _function(
    "segment_logsumexp",
    "log(sum(exp(rows))) of each segment, [num_segments] + data.shape[segment_ids.rank:] "
    "(-inf for an empty segment).", False)
segment_var = _function(
    "segment_var",
    "The variance of each segment's rows, sum((x - mean)^2) / (n - ddof) (NaN where "
    "n - ddof <= 0).", True)
segment_std = _function(
    "segment_std",
    "The standard deviation of each segment's rows, sqrt(segment_var(..., ddof)).", True)


# The same with segment reductions (TensorFlow's where the wrappers lower,
# else ours) and TensorFlow's gathers and element-wise ops: under XLA, inside
# stock_ops(), and the tests' second opinion.

def _parts(segment_ids, num_segments):
    """(the ids flattened, with the dropped ones at 0; kept: [ids.size] bool)."""
    ids = tf.reshape(_stock_forms.wide(segment_ids), [-1])
    num = tf.cast(num_segments, ids.dtype)
    kept = (ids >= 0) & (ids < num)
    safe = tf.where(kept, ids, tf.zeros_like(ids))
    return safe, kept


def _flat_rows(x, segment_ids):
    """x as [ids.size] + x.shape[ids.rank:]."""
    return tf.reshape(x, tf.concat([[-1], tf.shape(x, tf.int64)[tf.rank(segment_ids):]], 0))


def _counts(x, segment_ids, num_segments, policy):
    """Rows per segment, in x's dtype, shaped to divide its segment sums."""
    ones = tf.ones(tf.shape(segment_ids), x.dtype)
    n = segments.unsorted_segment_sum(ones, segment_ids, num_segments, bad_indices_policy=policy)
    # int64 shapes: int32's wrap a segment count of 2**31 or more (to 0 when
    # XLA folds them), which would reshape the counts wrongly
    shape = tf.concat([tf.shape(n, tf.int64),
                       tf.ones([tf.rank(x) - tf.rank(segment_ids)], tf.int64)], 0)
    return tf.reshape(n, shape)


def _compute_dtype(dtype):
    return tf.float32 if dtype in (tf.float16, tf.bfloat16) else dtype


def composed(op, data, segment_ids, num_segments, ddof=0, policy=""):
    """`op` (a name of _NAMES) written with unsorted_segment_max / _sum (ours,
    or TensorFlow's where the wrappers lower), gathers and element-wise ops."""
    x = tf.cast(data, _compute_dtype(data.dtype))
    safe, kept = _parts(segment_ids, num_segments)

    def per_row(values):  # a segment's value at each data row
        return tf.reshape(tf.gather(values, safe), tf.shape(x, tf.int64))

    def drop(rows):  # 0 at the dropped rows
        flat = _flat_rows(rows, segment_ids)
        return tf.reshape(_stock_forms._select_rows(kept, flat, tf.zeros_like(flat)),
                          tf.shape(x, tf.int64))

    if op in ("segment_var", "segment_std"):
        n = _counts(x, segment_ids, num_segments, policy)
        mean = segments.unsorted_segment_sum(x, segment_ids, num_segments,
                                             bad_indices_policy=policy) / n
        d = x - per_row(mean)
        divisor = n - ddof
        # + 0 / 0 = NaN where n - ddof <= 0, as arithmetic: tf2onnx writes a
        # float select as c * a + (1 - c) * b, which a NaN operand spoils
        nan_where_too_few = tf.zeros_like(divisor) / tf.cast(divisor > 0, x.dtype)
        out = segments.unsorted_segment_sum(d * d, segment_ids, num_segments,
                                            bad_indices_policy=policy) / tf.maximum(divisor, 1)
        out = out + nan_where_too_few
        if op == "segment_std":
            out = tf.sqrt(out)
    else:
        m = segments.unsorted_segment_max(x, segment_ids, num_segments, bad_indices_policy=policy)
        shift = tf.where(tf.math.is_finite(m), m, tf.zeros_like(m))
        shifted = x - per_row(shift)
        total = segments.unsorted_segment_sum(tf.exp(shifted), segment_ids, num_segments,
                                              bad_indices_policy=policy)
        if op == "segment_logsumexp":
            out = shift + tf.math.log(total)
        elif op == "segment_log_softmax":
            out = drop(shifted - per_row(tf.math.log(total)))
        else:
            out = drop(tf.exp(shifted) / per_row(total))
    return tf.cast(out, data.dtype)


def composed_grad(op, data, grad, segment_ids, num_segments, ddof=0, policy=""):
    """The gradient of composed(...) with respect to data for the output's
    gradient `grad`, by TensorFlow's gradients of those ops."""
    with tf.GradientTape() as tape:
        tape.watch(data)
        out = composed(op, data, segment_ids, num_segments, ddof, policy)
    return tape.gradient(out, data, output_gradients=grad)
