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

import tensorflow as tf

from tf_scatter_ops._dispatch import backends, bounds, convert, messages
from tf_scatter_ops._dispatch.segment_ids import (check_output_size, counts, inputs,
                                                  segment_ids_of, sparse_num_segments, ungrid)


def _segment(op, data, segment_ids, num_segments, bad_indices_policy, name,
             indices_are_sorted=False, unique_indices=False):
    """The body of unsorted_segment_sum, _prod, _min and _max."""
    policy = convert.check_policy(bad_indices_policy)
    hints = backends.hint_attrs(indices_are_sorted, unique_indices)
    with convert.scope(name or op):
        data, segment_ids, num_segments, policy, grid = inputs(
            op, data, segment_ids, num_segments, policy)
        if op == "unsorted_segment_sum" and grid is None and not hints:
            fused = messages.fused_segment_sum(data, segment_ids, num_segments, policy)
            if fused is not None:  # gathered rows: gather_reduce, no edge tensor
                return fused
        return ungrid(backends.run(op, policy, hints, data=data, segment_ids=segment_ids,
                                   num_segments=num_segments), grid)


@convert.public
def unsorted_segment_sum(data, segment_ids, num_segments, name=None, bad_indices_policy="",
                         indices_are_sorted=False, unique_indices=False):
    """Sums `data`'s rows per segment id, in index order.

    `tf.math.unsorted_segment_sum` on the plugin's kernel. Row `r` of `data`
    (the dims of `segment_ids`) goes to segment `segment_ids[r]`; the rows
    of a segment are summed in index order, so results are bitwise
    TensorFlow's CPU result, the same for any thread count. An empty segment
    holds 0; negative ids drop their rows. Takes every numeric dtype,
    complex included.

    Args:
        data: The rows to reduce.
        segment_ids: int16, int32 or int64, of a shape that is a prefix of
            `data`'s; any order.
        num_segments: The number of segments, an int32 or int64 scalar. A
            vector is the shape of a grid: `segment_ids` are then index rows
            `[..., depth]` into it, and the grid's shape replaces
            `[num_segments]` in the output's.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids `>= num_segments` (negative ids are
            dropped whatever the policy): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first; "IGNORE" and "FILL" drop
            their rows; "CLIP" counts them for the last segment.
        indices_are_sorted: Promises ids that never decrease (dropped ones
            aside). The CPU kernel then skips its grouping passes (same
            result) and checks the promise: a false one is an
            InvalidArgumentError naming the first id that breaks it, or
            under "IGNORE" the rows are reduced as without it. Neither used
            nor checked under XLA or by the GPU kernels.
        unique_indices: Promises that no two rows share an id (with
            `indices_are_sorted`: strictly increasing). Alone it changes
            nothing.

    Returns:
        A tensor of `data`'s dtype and shape
        `[num_segments] + data.shape[segment_ids.rank:]`.

    Raises:
        InvalidArgumentError: An id `>= num_segments` under the default
            policy, a broken `indices_are_sorted` promise, a negative
            `num_segments`, shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `segment_ids`
            or `num_segments`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> data = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
        >>> tso.unsorted_segment_sum(data, [0, 2, 0, -1], 3).numpy().tolist()
        [[6.0, 8.0], [0.0, 0.0], [3.0, 4.0]]
        >>> tso.unsorted_segment_sum([1.0, 2.0, 3.0], [0, 9, -1], 3,
        ...                          bad_indices_policy="CLIP").numpy().tolist()
        [1.0, 0.0, 2.0]
    """
    return _segment("unsorted_segment_sum", data, segment_ids, num_segments, bad_indices_policy,
                    name, indices_are_sorted, unique_indices)


@convert.public
def unsorted_segment_prod(data, segment_ids, num_segments, name=None, bad_indices_policy="",
                          indices_are_sorted=False, unique_indices=False):
    """Multiplies `data`'s rows per segment id, in index order.

    `tf.math.unsorted_segment_prod` on the plugin's kernel. Row `r` of `data`
    (the dims of `segment_ids`) goes to segment `segment_ids[r]`; the rows
    of a segment are multiplied in index order, the same bits for any thread
    count. An empty segment holds 1; negative ids drop their rows. Takes
    every numeric dtype, complex included.

    Args:
        data: The rows to reduce.
        segment_ids: int16, int32 or int64, of a shape that is a prefix of
            `data`'s; any order.
        num_segments: The number of segments, an int32 or int64 scalar. A
            vector is the shape of a grid: `segment_ids` are then index rows
            `[..., depth]` into it, and the grid's shape replaces
            `[num_segments]` in the output's.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids `>= num_segments` (negative ids are
            dropped whatever the policy): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first; "IGNORE" and "FILL" drop
            their rows; "CLIP" counts them for the last segment.
        indices_are_sorted: Promises ids that never decrease (dropped ones
            aside). The CPU kernel then skips its grouping passes (same
            result) and checks the promise: a false one is an
            InvalidArgumentError naming the first id that breaks it, or
            under "IGNORE" the rows are reduced as without it. Neither used
            nor checked under XLA or by the GPU kernels.
        unique_indices: Promises that no two rows share an id (with
            `indices_are_sorted`: strictly increasing). Alone it changes
            nothing.

    Returns:
        A tensor of `data`'s dtype and shape
        `[num_segments] + data.shape[segment_ids.rank:]`.

    Raises:
        InvalidArgumentError: An id `>= num_segments` under the default
            policy, a broken `indices_are_sorted` promise, a negative
            `num_segments`, shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `segment_ids`
            or `num_segments`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.unsorted_segment_prod([2.0, 3.0, 4.0], [1, 1, 0], 3).numpy().tolist()
        [4.0, 6.0, 1.0]
    """
    return _segment("unsorted_segment_prod", data, segment_ids, num_segments, bad_indices_policy,
                    name, indices_are_sorted, unique_indices)


@convert.public
def unsorted_segment_min(data, segment_ids, num_segments, name=None, bad_indices_policy="",
                         indices_are_sorted=False, unique_indices=False):
    """The minimum of `data`'s rows per segment id.

    `tf.math.unsorted_segment_min` on the plugin's kernel. Row `r` of `data`
    (the dims of `segment_ids`) goes to segment `segment_ids[r]`. An empty
    segment holds the dtype's highest value; negative ids drop their rows.
    NaN follows TensorFlow's segment kernels: a NaN row makes the result NaN
    until a later number in the segment replaces it. Takes the real numeric
    dtypes (floats, signed and unsigned integers).

    Args:
        data: The rows to reduce.
        segment_ids: int16, int32 or int64, of a shape that is a prefix of
            `data`'s; any order.
        num_segments: The number of segments, an int32 or int64 scalar. A
            vector is the shape of a grid: `segment_ids` are then index rows
            `[..., depth]` into it, and the grid's shape replaces
            `[num_segments]` in the output's.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids `>= num_segments` (negative ids are
            dropped whatever the policy): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first; "IGNORE" and "FILL" drop
            their rows; "CLIP" counts them for the last segment.
        indices_are_sorted: Promises ids that never decrease (dropped ones
            aside). The CPU kernel then skips its grouping passes (same
            result) and checks the promise: a false one is an
            InvalidArgumentError naming the first id that breaks it, or
            under "IGNORE" the rows are reduced as without it. Neither used
            nor checked under XLA or by the GPU kernels.
        unique_indices: Promises that no two rows share an id (with
            `indices_are_sorted`: strictly increasing). Alone it changes
            nothing.

    Returns:
        A tensor of `data`'s dtype and shape
        `[num_segments] + data.shape[segment_ids.rank:]`.

    Raises:
        InvalidArgumentError: An id `>= num_segments` under the default
            policy, a broken `indices_are_sorted` promise, a negative
            `num_segments`, shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `segment_ids`
            or `num_segments`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.unsorted_segment_min([5, 3, 4], [1, 1, 0], 3).numpy().tolist()
        [4, 3, 2147483647]
    """
    return _segment("unsorted_segment_min", data, segment_ids, num_segments, bad_indices_policy,
                    name, indices_are_sorted, unique_indices)


@convert.public
def unsorted_segment_max(data, segment_ids, num_segments, name=None, bad_indices_policy="",
                         indices_are_sorted=False, unique_indices=False):
    """The maximum of `data`'s rows per segment id.

    `tf.math.unsorted_segment_max` on the plugin's kernel. Row `r` of `data`
    (the dims of `segment_ids`) goes to segment `segment_ids[r]`. An empty
    segment holds the dtype's lowest value; negative ids drop their rows.
    NaN follows TensorFlow's segment kernels: a NaN row makes the result NaN
    until a later number in the segment replaces it. Takes the real numeric
    dtypes (floats, signed and unsigned integers).

    Args:
        data: The rows to reduce.
        segment_ids: int16, int32 or int64, of a shape that is a prefix of
            `data`'s; any order.
        num_segments: The number of segments, an int32 or int64 scalar. A
            vector is the shape of a grid: `segment_ids` are then index rows
            `[..., depth]` into it, and the grid's shape replaces
            `[num_segments]` in the output's.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids `>= num_segments` (negative ids are
            dropped whatever the policy): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first; "IGNORE" and "FILL" drop
            their rows; "CLIP" counts them for the last segment.
        indices_are_sorted: Promises ids that never decrease (dropped ones
            aside). The CPU kernel then skips its grouping passes (same
            result) and checks the promise: a false one is an
            InvalidArgumentError naming the first id that breaks it, or
            under "IGNORE" the rows are reduced as without it. Neither used
            nor checked under XLA or by the GPU kernels.
        unique_indices: Promises that no two rows share an id (with
            `indices_are_sorted`: strictly increasing). Alone it changes
            nothing.

    Returns:
        A tensor of `data`'s dtype and shape
        `[num_segments] + data.shape[segment_ids.rank:]`.

    Raises:
        InvalidArgumentError: An id `>= num_segments` under the default
            policy, a broken `indices_are_sorted` promise, a negative
            `num_segments`, shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `segment_ids`
            or `num_segments`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.unsorted_segment_max([5, 3, 4], [1, 1, 0], 3).numpy().tolist()
        [4, 5, -2147483648]
    """
    return _segment("unsorted_segment_max", data, segment_ids, num_segments, bad_indices_policy,
                    name, indices_are_sorted, unique_indices)


def _normalized(op, of_count, data, segment_ids, num_segments, name, bad_indices_policy,
                indices_are_sorted, unique_indices):
    """unsorted_segment_mean / _sqrt_n: the segment sum over of_count(count)."""
    policy = convert.check_policy(bad_indices_policy)
    hints = {"indices_are_sorted": indices_are_sorted, "unique_indices": unique_indices}
    with convert.scope(name or op):
        data = convert.tensor(data, name="data")
        segment_ids, num_segments, policy, grid = segment_ids_of(segment_ids, num_segments,
                                                                 policy)
        check_output_size(data, segment_ids.shape.rank, num_segments)
        n = counts(data, segment_ids, num_segments, policy, hints=backends.hint_attrs(**hints))
        return ungrid(unsorted_segment_sum(data, segment_ids, num_segments,
                                           bad_indices_policy=policy, **hints)
                      / of_count(n), grid)


def _as_is(n):
    return n


@convert.public
def unsorted_segment_mean(data, segment_ids, num_segments, name=None, bad_indices_policy="",
                          indices_are_sorted=False, unique_indices=False):
    """The mean of `data`'s rows per segment id.

    `tf.math.unsorted_segment_mean` with TensorFlow's formula on the
    plugin's sum: the segment sum (in index order) over the segment's row
    count. An empty segment holds 0; negative ids drop their rows. Takes the
    real numeric dtypes; integer data gives a floating result (TensorFlow's
    `/`).

    Args:
        data: The rows to reduce.
        segment_ids: int16, int32 or int64, of a shape that is a prefix of
            `data`'s; any order.
        num_segments: The number of segments, an int32 or int64 scalar. A
            vector is the shape of a grid: `segment_ids` are then index rows
            `[..., depth]` into it, and the grid's shape replaces
            `[num_segments]` in the output's.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids `>= num_segments` (negative ids are
            dropped whatever the policy): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first; "IGNORE" and "FILL" drop
            their rows (which count for no mean); "CLIP" counts them for the
            last segment.
        indices_are_sorted: Promises ids that never decrease (dropped ones
            aside), as for unsorted_segment_sum: checked by the CPU kernel
            (a false one is an InvalidArgumentError naming the first id that
            breaks it, unless "IGNORE"), not under XLA or on a GPU.
        unique_indices: Promises that no two rows share an id (with
            `indices_are_sorted`: strictly increasing). Alone it changes
            nothing.

    Returns:
        A tensor of shape `[num_segments] + data.shape[segment_ids.rank:]`:
        of `data`'s dtype for floats, floating for integers.

    Raises:
        InvalidArgumentError: An id `>= num_segments` under the default
            policy, a broken `indices_are_sorted` promise, a negative
            `num_segments`, a dtype the ops do not take, shapes that do not
            fit together, or an unknown `bad_indices_policy`.
        ValueError: An index dtype the op does not take (of `segment_ids` or
            `num_segments`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> data = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
        >>> tso.unsorted_segment_mean(data, [0, 2, 0, -1], 3).numpy().tolist()
        [[3.0, 4.0], [0.0, 0.0], [3.0, 4.0]]
    """
    return _normalized("unsorted_segment_mean", _as_is, data, segment_ids, num_segments, name,
                       bad_indices_policy, indices_are_sorted, unique_indices)


@convert.public
def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None, bad_indices_policy="",
                            indices_are_sorted=False, unique_indices=False):
    """The sum of `data`'s rows per segment id over the root of their count.

    `tf.math.unsorted_segment_sqrt_n` with TensorFlow's formula on the
    plugin's sum: the segment sum (in index order) over the square root of
    the segment's row count. An empty segment holds 0; negative ids drop
    their rows. Takes the floating dtypes (bfloat16, float16, float32,
    float64).

    Args:
        data: The rows to reduce.
        segment_ids: int16, int32 or int64, of a shape that is a prefix of
            `data`'s; any order.
        num_segments: The number of segments, an int32 or int64 scalar. A
            vector is the shape of a grid: `segment_ids` are then index rows
            `[..., depth]` into it, and the grid's shape replaces
            `[num_segments]` in the output's.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids `>= num_segments` (negative ids are
            dropped whatever the policy): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first; "IGNORE" and "FILL" drop
            their rows (which then count for no segment); "CLIP" counts them
            for the last segment.
        indices_are_sorted: Promises ids that never decrease (dropped ones
            aside), as for unsorted_segment_sum: checked by the CPU kernel
            (a false one is an InvalidArgumentError naming the first id that
            breaks it, unless "IGNORE"), not under XLA or on a GPU.
        unique_indices: Promises that no two rows share an id (with
            `indices_are_sorted`: strictly increasing). Alone it changes
            nothing.

    Returns:
        A tensor of `data`'s dtype and shape
        `[num_segments] + data.shape[segment_ids.rank:]`.

    Raises:
        InvalidArgumentError: An id `>= num_segments` under the default
            policy, a broken `indices_are_sorted` promise, a negative
            `num_segments`, a dtype the ops do not take, shapes that do not
            fit together, or an unknown `bad_indices_policy`.
        ValueError: An index dtype the op does not take (of `segment_ids` or
            `num_segments`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.unsorted_segment_sqrt_n([1.0, 3.0, 5.0, 7.0], [0, 0, 0, 0], 2).numpy().tolist()
        [8.0, 0.0]
    """
    return _normalized("unsorted_segment_sqrt_n", tf.sqrt, data, segment_ids, num_segments, name,
                       bad_indices_policy, indices_are_sorted, unique_indices)


def _sorted(op, data, segment_ids, name, bad_indices_policy):
    """The body of the segment_* functions (sorted ids)."""
    policy = convert.check_policy(bad_indices_policy)
    with convert.scope(name or op):
        data = convert.tensor(data, name="data")
        convert.check_dtype(op, data.dtype)
        segment_ids, policy = bounds.ids(policy, convert.indices(segment_ids))
        return backends.run(op, policy, data=data, segment_ids=segment_ids)


@convert.public
def segment_sum(data, segment_ids, name=None, bad_indices_policy=""):
    """Sums `data`'s rows per sorted segment id, in index order.

    `tf.math.segment_sum` on the plugin's kernel. Row `r` of `data` goes to
    segment `segment_ids[r]`; each segment's rows are one run, summed by one
    thread in one pass (no sort), in index order: the same bits as
    unsorted_segment_sum for any thread count. The output has
    `segment_ids[-1] + 1` rows; a segment with no rows holds 0. Takes every
    numeric dtype, complex included.

    Args:
        data: The rows to reduce.
        segment_ids: A sorted vector of non-negative ids, one per row of
            `data`: int16, int32 or int64.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For negative ids: "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError; "IGNORE" and "FILL" drop their rows;
            "CLIP" makes them 0. Ids that are not sorted stay an error.

    Returns:
        A tensor of `data`'s dtype and shape
        `[segment_ids[-1] + 1] + data.shape[1:]`.

    Raises:
        InvalidArgumentError: Ids that are not sorted (naming the first
            offending position), a negative id under the default policy,
            shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data` or
            `segment_ids`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> data = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> tso.segment_sum(data, [0, 0, 2]).numpy().tolist()
        [[4.0, 6.0], [0.0, 0.0], [5.0, 6.0]]
    """
    return _sorted("segment_sum", data, segment_ids, name, bad_indices_policy)


@convert.public
def segment_prod(data, segment_ids, name=None, bad_indices_policy=""):
    """Multiplies `data`'s rows per sorted segment id, in index order.

    `tf.math.segment_prod` on the plugin's kernel. Row `r` of `data` goes to
    segment `segment_ids[r]`; each segment's rows are one run, multiplied by
    one thread in one pass (no sort), in index order. The output has
    `segment_ids[-1] + 1` rows; a segment with no rows holds 1. Takes every
    numeric dtype, complex included.

    Args:
        data: The rows to reduce.
        segment_ids: A sorted vector of non-negative ids, one per row of
            `data`: int16, int32 or int64.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For negative ids: "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError; "IGNORE" and "FILL" drop their rows;
            "CLIP" makes them 0. Ids that are not sorted stay an error.

    Returns:
        A tensor of `data`'s dtype and shape
        `[segment_ids[-1] + 1] + data.shape[1:]`.

    Raises:
        InvalidArgumentError: Ids that are not sorted (naming the first
            offending position), a negative id under the default policy,
            shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data` or
            `segment_ids`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.segment_prod([2.0, 3.0, 4.0], [0, 0, 2]).numpy().tolist()
        [6.0, 1.0, 4.0]
    """
    return _sorted("segment_prod", data, segment_ids, name, bad_indices_policy)


@convert.public
def segment_min(data, segment_ids, name=None, bad_indices_policy=""):
    """The minimum of `data`'s rows per sorted segment id.

    `tf.math.segment_min` on the plugin's kernel. Row `r` of `data` goes to
    segment `segment_ids[r]`; each segment's rows are one run, reduced by
    one thread in one pass (no sort), in index order (a NaN row makes the
    result NaN until a later number replaces it). The output has
    `segment_ids[-1] + 1` rows; a segment with no rows holds 0, as in
    TensorFlow. Takes the real numeric dtypes (floats, signed and unsigned
    integers).

    Args:
        data: The rows to reduce.
        segment_ids: A sorted vector of non-negative ids, one per row of
            `data`: int16, int32 or int64.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For negative ids: "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError; "IGNORE" and "FILL" drop their rows;
            "CLIP" makes them 0. Ids that are not sorted stay an error.

    Returns:
        A tensor of `data`'s dtype and shape
        `[segment_ids[-1] + 1] + data.shape[1:]`.

    Raises:
        InvalidArgumentError: Ids that are not sorted (naming the first
            offending position), a negative id under the default policy,
            shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data` or
            `segment_ids`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.segment_min([5.0, 3.0, 4.0], [0, 0, 2]).numpy().tolist()
        [3.0, 0.0, 4.0]
    """
    return _sorted("segment_min", data, segment_ids, name, bad_indices_policy)


@convert.public
def segment_max(data, segment_ids, name=None, bad_indices_policy=""):
    """The maximum of `data`'s rows per sorted segment id.

    `tf.math.segment_max` on the plugin's kernel. Row `r` of `data` goes to
    segment `segment_ids[r]`; each segment's rows are one run, reduced by
    one thread in one pass (no sort), in index order (a NaN row makes the
    result NaN until a later number replaces it). The output has
    `segment_ids[-1] + 1` rows; a segment with no rows holds 0, as in
    TensorFlow. Takes the real numeric dtypes (floats, signed and unsigned
    integers).

    Args:
        data: The rows to reduce.
        segment_ids: A sorted vector of non-negative ids, one per row of
            `data`: int16, int32 or int64.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For negative ids: "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError; "IGNORE" and "FILL" drop their rows;
            "CLIP" makes them 0. Ids that are not sorted stay an error.

    Returns:
        A tensor of `data`'s dtype and shape
        `[segment_ids[-1] + 1] + data.shape[1:]`.

    Raises:
        InvalidArgumentError: Ids that are not sorted (naming the first
            offending position), a negative id under the default policy,
            shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data` or
            `segment_ids`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.segment_max([5.0, 3.0, 4.0], [0, 0, 2]).numpy().tolist()
        [5.0, 0.0, 4.0]
    """
    return _sorted("segment_max", data, segment_ids, name, bad_indices_policy)


@convert.public
def segment_mean(data, segment_ids, name=None, bad_indices_policy=""):
    """The mean of `data`'s rows per sorted segment id.

    `tf.math.segment_mean` on the plugin's kernel: the index-order sum over
    the row count, in `data`'s dtype (integers divide with truncation, as
    TensorFlow's). Each segment's rows are one run, reduced by one thread in
    one pass (no sort). The output has `segment_ids[-1] + 1` rows; a segment
    with no rows holds 0. Takes every numeric dtype, complex included.

    Args:
        data: The rows to reduce.
        segment_ids: A sorted vector of non-negative ids, one per row of
            `data`: int16, int32 or int64.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For negative ids: "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError; "IGNORE" and "FILL" drop their rows (which
            count for no mean); "CLIP" makes them 0. Ids that are not sorted
            stay an error.

    Returns:
        A tensor of `data`'s dtype and shape
        `[segment_ids[-1] + 1] + data.shape[1:]`.

    Raises:
        InvalidArgumentError: Ids that are not sorted (naming the first
            offending position), a negative id under the default policy, a
            row count the dtype cannot hold (256 rows of int8), shapes that
            do not fit together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data` or
            `segment_ids`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.segment_mean([1.0, 2.0, 6.0], [0, 0, 2]).numpy().tolist()
        [1.5, 0.0, 6.0]
        >>> tso.segment_mean([1, 2, 6], [0, 0, 2]).numpy().tolist()
        [1, 0, 6]
    """
    return _sorted("segment_mean", data, segment_ids, name, bad_indices_policy)


def _sparse(op, data, indices, segment_ids, num_segments, name, sparse_gradient,
            bad_indices_policy):
    """The body of the sparse_segment_* functions."""
    policy = convert.check_policy(bad_indices_policy)
    with convert.scope(name or op):
        data = convert.tensor(data, name="data")
        convert.check_dtype(op, data.dtype)
        indices = convert.indices(indices)
        if num_segments is not None:
            num_segments = sparse_num_segments(num_segments)
            check_output_size(data, 1, num_segments)
        if policy == "CLIP":  # into data's rows
            indices, _ = bounds.ids(policy, indices, tf.shape(data)[0])
        segment_ids, policy = bounds.ids(policy, convert.indices(segment_ids), num_segments)
        inputs = dict(data=data, indices=indices, segment_ids=segment_ids,
                      sparse_gradient=bool(sparse_gradient))
        if num_segments is not None:
            inputs["num_segments"] = num_segments
        if num_segments is None and backends.route(op) == backends.OURS:
            inputs["num_segments"] = tf.constant(-1, tf.int32)  # the kernel's "none given"
        return backends.run(op, policy, **inputs)


@convert.public
def sparse_segment_sum(data, indices, segment_ids, num_segments=None, name=None,
                       sparse_gradient=False, bad_indices_policy=""):
    """Sums the rows `data[indices]` per sorted segment id, without gathering them.

    `tf.sparse.segment_sum` on the plugin's kernel: row `data[indices[i]]`
    goes to segment `segment_ids[i]`, read from `data` where it lies (no
    gathered copy), summed in TensorFlow's order (bitwise its result). A
    segment with no rows holds 0. Takes the real numeric dtypes (floats,
    signed and unsigned integers).

    Args:
        data: The table whose rows are reduced.
        indices: The rows of `data` to reduce, a vector: int16, int32 or
            int64.
        segment_ids: A sorted vector of non-negative ids, one per index:
            int16, int32 or int64.
        num_segments: The number of output rows, an int32 or int64 scalar;
            None gives `segment_ids[-1] + 1`.
        name: A name scope for the ops (graphs only).
        sparse_gradient: Whether the gradient with respect to `data` is a
            `tf.IndexedSlices` of the rows read (else a dense tensor).
        bad_indices_policy: For an index not in `data`'s rows and an id out
            of range (negative, or `>= num_segments` where given): "",
            "DEFAULT" or "ERROR" raise InvalidArgumentError naming the
            first; "IGNORE" and "FILL" drop those rows; "CLIP" clamps an
            index into `data`'s rows, a negative id to 0 and an id to
            `num_segments - 1`.

    Returns:
        A tensor of `data`'s dtype and shape
        `[num_segments] + data.shape[1:]`.

    Raises:
        InvalidArgumentError: A bad index or id under the default policy, ids
            that are not sorted, a negative `num_segments` (eagerly), shapes
            that do not fit together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `indices`,
            `segment_ids` or `num_segments`), a negative `num_segments` known
            when a graph is built, or a RaggedTensor or SparseTensor input.

    Example:
        >>> table = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> tso.sparse_segment_sum(table, [0, 2, 2], [0, 0, 2]).numpy().tolist()
        [[6.0, 8.0], [0.0, 0.0], [5.0, 6.0]]
        >>> tso.sparse_segment_sum(table, [0, 7], [0, 1], num_segments=3,
        ...                        bad_indices_policy="IGNORE").numpy().tolist()
        [[1.0, 2.0], [0.0, 0.0], [0.0, 0.0]]
    """
    return _sparse("sparse_segment_sum", data, indices, segment_ids, num_segments, name,
                   sparse_gradient, bad_indices_policy)


@convert.public
def sparse_segment_mean(data, indices, segment_ids, num_segments=None, name=None,
                        sparse_gradient=False, bad_indices_policy=""):
    """The mean of the rows `data[indices]` per sorted segment id, without gathering them.

    `tf.sparse.segment_mean` on the plugin's kernel: row `data[indices[i]]`
    goes to segment `segment_ids[i]`, read from `data` where it lies (no
    gathered copy); each segment holds the sum of its rows over their count,
    in TensorFlow's order. A segment with no rows holds 0. Takes the
    floating dtypes (bfloat16, float16, float32, float64).

    Args:
        data: The table whose rows are reduced.
        indices: The rows of `data` to reduce, a vector: int16, int32 or
            int64.
        segment_ids: A sorted vector of non-negative ids, one per index:
            int16, int32 or int64.
        num_segments: The number of output rows, an int32 or int64 scalar;
            None gives `segment_ids[-1] + 1`.
        name: A name scope for the ops (graphs only).
        sparse_gradient: Whether the gradient with respect to `data` is a
            `tf.IndexedSlices` of the rows read (else a dense tensor).
        bad_indices_policy: For an index not in `data`'s rows and an id out
            of range (negative, or `>= num_segments` where given): "",
            "DEFAULT" or "ERROR" raise InvalidArgumentError naming the
            first; "IGNORE" and "FILL" drop those rows (they count for no
            mean); "CLIP" clamps an index into `data`'s rows, a negative id
            to 0 and an id to `num_segments - 1`.

    Returns:
        A tensor of `data`'s dtype and shape
        `[num_segments] + data.shape[1:]`.

    Raises:
        InvalidArgumentError: A bad index or id under the default policy, ids
            that are not sorted, a negative `num_segments` (eagerly), shapes
            that do not fit together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `indices`,
            `segment_ids` or `num_segments`), a negative `num_segments` known
            when a graph is built, or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.sparse_segment_mean([1.0, 3.0, 5.0], [0, 2, 2], [0, 0, 2]).numpy().tolist()
        [3.0, 0.0, 5.0]
    """
    return _sparse("sparse_segment_mean", data, indices, segment_ids, num_segments, name,
                   sparse_gradient, bad_indices_policy)


@convert.public
def sparse_segment_sqrt_n(data, indices, segment_ids, num_segments=None, name=None,
                          sparse_gradient=False, bad_indices_policy=""):
    """The sum of the rows `data[indices]` per sorted segment id over the root of their count.

    `tf.sparse.segment_sqrt_n` on the plugin's kernel: row `data[indices[i]]`
    goes to segment `segment_ids[i]`, read from `data` where it lies (no
    gathered copy); each segment holds the sum of its rows over the square
    root of their count, in TensorFlow's order. A segment with no rows holds
    0. Takes the floating dtypes (bfloat16, float16, float32, float64).

    Args:
        data: The table whose rows are reduced.
        indices: The rows of `data` to reduce, a vector: int16, int32 or
            int64.
        segment_ids: A sorted vector of non-negative ids, one per index:
            int16, int32 or int64.
        num_segments: The number of output rows, an int32 or int64 scalar;
            None gives `segment_ids[-1] + 1`.
        name: A name scope for the ops (graphs only).
        sparse_gradient: Whether the gradient with respect to `data` is a
            `tf.IndexedSlices` of the rows read (else a dense tensor).
        bad_indices_policy: For an index not in `data`'s rows and an id out
            of range (negative, or `>= num_segments` where given): "",
            "DEFAULT" or "ERROR" raise InvalidArgumentError naming the
            first; "IGNORE" and "FILL" drop those rows (they count for no
            segment); "CLIP" clamps an index into `data`'s rows, a negative
            id to 0 and an id to `num_segments - 1`.

    Returns:
        A tensor of `data`'s dtype and shape
        `[num_segments] + data.shape[1:]`.

    Raises:
        InvalidArgumentError: A bad index or id under the default policy, ids
            that are not sorted, a negative `num_segments` (eagerly), shapes
            that do not fit together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `indices`,
            `segment_ids` or `num_segments`), a negative `num_segments` known
            when a graph is built, or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.sparse_segment_sqrt_n([1.0, 3.0, 5.0], [0, 2, 1, 1], [0, 0, 0, 0]).numpy().tolist()
        [6.0]
    """
    return _sparse("sparse_segment_sqrt_n", data, indices, segment_ids, num_segments, name,
                   sparse_gradient, bad_indices_policy)
