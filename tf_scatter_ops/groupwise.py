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

from tf_scatter_ops._dispatch import backends, convert
from tf_scatter_ops._dispatch.segment_ids import inputs, ungrid

_PER_ROW = ("segment_softmax", "segment_log_softmax")  # shaped like data


def _check_ddof(ddof):
    if isinstance(ddof, bool) or not isinstance(ddof, int) or ddof < 0:
        raise ValueError(f"ddof must be a non-negative Python int, got {ddof!r}")
    return ddof


def _call(op, data, segment_ids, num_segments, ddof, bad_indices_policy, name):
    """The body of the group-wise functions (`ddof`: 0 where they take none)."""
    policy = convert.check_policy(bad_indices_policy)
    ddof = _check_ddof(ddof)
    with convert.scope(name or op):
        data, segment_ids, num_segments, policy, grid = inputs(
            op, data, segment_ids, num_segments, policy)
        out = backends.run(op, policy, ddof=ddof, data=data, segment_ids=segment_ids,
                           num_segments=num_segments)
        return out if op in _PER_ROW else ungrid(out, grid)


@convert.public
def segment_softmax(data, segment_ids, num_segments, name=None, bad_indices_policy=""):
    """The softmax of each segment's rows, shaped like `data`.

    TensorFlow has no such function. Per element of the rows' slice, each
    row of segment `s` becomes `exp(x - m) / sum(exp(x - m))` over the rows
    of `s`, with `m` the segment's maximum where finite (else 0). One fused
    kernel, sums in index order (the same bits on any thread count and on a
    GPU); float16 and bfloat16 are computed in float32. A dropped row (a
    negative id, or a bad one under "IGNORE" or "FILL") gives 0, and so does
    its gradient. Takes the floating dtypes (bfloat16, float16, float32,
    float64).

    Args:
        data: The rows, one per element of `segment_ids`.
        segment_ids: int16, int32 or int64, of a shape that is a prefix of
            `data`'s; any order.
        num_segments: The number of segments, an int32 or int64 scalar; a
            vector is the shape of a grid, `segment_ids` then being index
            rows `[..., depth]` into it.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids `>= num_segments` (negative ids are
            dropped whatever the policy): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first; "IGNORE" and "FILL" drop
            their rows; "CLIP" counts them for the last segment.

    Returns:
        A tensor shaped and typed like `data`.

    Raises:
        InvalidArgumentError: An id `>= num_segments` under the default
            policy, a negative `num_segments`, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `segment_ids`
            or `num_segments`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.segment_softmax([1.0, 1.0, 5.0], [0, 0, 1], 2).numpy().tolist()
        [0.5, 0.5, 1.0]
    """
    return _call("segment_softmax", data, segment_ids, num_segments, 0, bad_indices_policy, name)


@convert.public
def segment_log_softmax(data, segment_ids, num_segments, name=None, bad_indices_policy=""):
    """The log-softmax of each segment's rows, shaped like `data`.

    TensorFlow has no such function. Per element of the rows' slice, each
    row of segment `s` becomes `(x - m) - log(sum(exp(x - m)))` over the
    rows of `s`, with `m` the segment's maximum where finite (else 0). One
    fused kernel, sums in index order (the same bits on any thread count and
    on a GPU); float16 and bfloat16 are computed in float32. A dropped row (a
    negative id, or a bad one under "IGNORE" or "FILL") gives 0, and so does
    its gradient. Takes the floating dtypes (bfloat16, float16, float32,
    float64).

    Args:
        data: The rows, one per element of `segment_ids`.
        segment_ids: int16, int32 or int64, of a shape that is a prefix of
            `data`'s; any order.
        num_segments: The number of segments, an int32 or int64 scalar; a
            vector is the shape of a grid, `segment_ids` then being index
            rows `[..., depth]` into it.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids `>= num_segments` (negative ids are
            dropped whatever the policy): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first; "IGNORE" and "FILL" drop
            their rows; "CLIP" counts them for the last segment.

    Returns:
        A tensor shaped and typed like `data`.

    Raises:
        InvalidArgumentError: An id `>= num_segments` under the default
            policy, a negative `num_segments`, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `segment_ids`
            or `num_segments`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> x = tf.constant([0.0, 0.0, 3.0], tf.float64)
        >>> tso.segment_log_softmax(x, [0, 0, 1], 2).numpy().round(3).tolist()
        [-0.693, -0.693, 0.0]
    """
    return _call("segment_log_softmax", data, segment_ids, num_segments, 0, bad_indices_policy,
                 name)


@convert.public
def segment_logsumexp(data, segment_ids, num_segments, name=None, bad_indices_policy=""):
    """`log(sum(exp(rows)))` of each segment.

    TensorFlow has no such function. Per element of the rows' slice, each
    segment holds `m + log(sum(exp(x - m)))` over its rows, with `m` the
    segment's maximum where finite, else 0 (SciPy's rule); an empty segment
    holds -inf. One fused kernel, sums in index order (the same bits on any
    thread count and on a GPU); float16 and bfloat16 are computed in float32.
    Negative ids drop their rows. Takes the floating dtypes (bfloat16,
    float16, float32, float64).

    Args:
        data: The rows, one per element of `segment_ids`.
        segment_ids: int16, int32 or int64, of a shape that is a prefix of
            `data`'s; any order.
        num_segments: The number of segments, an int32 or int64 scalar; a
            vector is the shape of a grid, `segment_ids` then being index
            rows `[..., depth]` into it (its shape replaces
            `[num_segments]` in the output's).
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids `>= num_segments` (negative ids are
            dropped whatever the policy): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first; "IGNORE" and "FILL" drop
            their rows; "CLIP" counts them for the last segment.

    Returns:
        A tensor of `data`'s dtype and shape
        `[num_segments] + data.shape[segment_ids.rank:]`.

    Raises:
        InvalidArgumentError: An id `>= num_segments` under the default
            policy, a negative `num_segments`, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `segment_ids`
            or `num_segments`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> x = tf.constant([0.0, 0.0, 3.0], tf.float64)
        >>> tso.segment_logsumexp(x, [0, 0, 1], 3).numpy().round(3).tolist()
        [0.693, 3.0, -inf]
    """
    return _call("segment_logsumexp", data, segment_ids, num_segments, 0, bad_indices_policy,
                 name)


@convert.public
def segment_var(data, segment_ids, num_segments, ddof=0, name=None, bad_indices_policy=""):
    """The variance of each segment's rows.

    TensorFlow has no such function. Per element of the rows' slice, each
    segment holds `sum((x - mean)^2) / (n - ddof)` over its `n` rows: NaN
    where `n - ddof <= 0` (an empty segment too). One fused kernel, sums in
    index order (the same bits on any thread count and on a GPU); float16
    and bfloat16 are computed in float32. Negative ids drop their rows.
    Takes the floating dtypes (bfloat16, float16, float32, float64).

    Args:
        data: The rows, one per element of `segment_ids`.
        segment_ids: int16, int32 or int64, of a shape that is a prefix of
            `data`'s; any order.
        num_segments: The number of segments, an int32 or int64 scalar; a
            vector is the shape of a grid, `segment_ids` then being index
            rows `[..., depth]` into it (its shape replaces
            `[num_segments]` in the output's).
        ddof: Delta degrees of freedom, a non-negative Python int: 0 for the
            population variance, 1 for the sample variance.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids `>= num_segments` (negative ids are
            dropped whatever the policy): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first; "IGNORE" and "FILL" drop
            their rows (they count for no segment); "CLIP" counts them for
            the last segment.

    Returns:
        A tensor of `data`'s dtype and shape
        `[num_segments] + data.shape[segment_ids.rank:]`.

    Raises:
        InvalidArgumentError: An id `>= num_segments` under the default
            policy, a negative `num_segments`, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `segment_ids`
            or `num_segments`), a `ddof` that is not a non-negative int, or a
            RaggedTensor or SparseTensor input.

    Example:
        >>> tso.segment_var([1.0, 3.0, 5.0], [0, 0, 1], 2).numpy().tolist()
        [1.0, 0.0]
        >>> tso.segment_var([1.0, 3.0, 5.0], [0, 0, 1], 2, ddof=1).numpy().tolist()
        [2.0, nan]
    """
    return _call("segment_var", data, segment_ids, num_segments, ddof, bad_indices_policy, name)


@convert.public
def segment_std(data, segment_ids, num_segments, ddof=0, name=None, bad_indices_policy=""):
    """The standard deviation of each segment's rows.

    TensorFlow has no such function. Per element of the rows' slice, each
    segment holds `sqrt(segment_var(..., ddof))`: the root of
    `sum((x - mean)^2) / (n - ddof)` over its `n` rows, NaN where
    `n - ddof <= 0` (an empty segment too). One fused kernel, sums in index
    order (the same bits on any thread count and on a GPU); float16 and
    bfloat16 are computed in float32. Negative ids drop their rows. Takes the
    floating dtypes (bfloat16, float16, float32, float64).

    Args:
        data: The rows, one per element of `segment_ids`.
        segment_ids: int16, int32 or int64, of a shape that is a prefix of
            `data`'s; any order.
        num_segments: The number of segments, an int32 or int64 scalar; a
            vector is the shape of a grid, `segment_ids` then being index
            rows `[..., depth]` into it (its shape replaces
            `[num_segments]` in the output's).
        ddof: Delta degrees of freedom, a non-negative Python int: 0 for the
            population standard deviation, 1 for the sample one.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids `>= num_segments` (negative ids are
            dropped whatever the policy): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first; "IGNORE" and "FILL" drop
            their rows (they count for no segment); "CLIP" counts them for
            the last segment.

    Returns:
        A tensor of `data`'s dtype and shape
        `[num_segments] + data.shape[segment_ids.rank:]`.

    Raises:
        InvalidArgumentError: An id `>= num_segments` under the default
            policy, a negative `num_segments`, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `segment_ids`
            or `num_segments`), a `ddof` that is not a non-negative int, or a
            RaggedTensor or SparseTensor input.

    Example:
        >>> tso.segment_std([1.0, 5.0, 2.0], [0, 0, 1], 2).numpy().tolist()
        [2.0, 0.0]
    """
    return _call("segment_std", data, segment_ids, num_segments, ddof, bad_indices_policy, name)
