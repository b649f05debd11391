"""Segment reductions over CSR rows: sorted segments given as offsets
(`row_splits`, the form a tf.RaggedTensor holds; pytorch_scatter's
segment_csr):

    tso.segment_sum_csr(data, row_splits)   # also _prod, _min, _max, _mean
    tso.segment_sum_csr(ragged)             # a RaggedTensor's rows

Row i of the output reduces data[row_splits[i]:row_splits[i + 1]] in index
order; the output has len(row_splits) - 1 rows, and an empty row holds
segment_*'s value for a gap: 0 (1 for the product). `row_splits` is int32 or
int64, 1-D, starts at 0, never decreases and ends at data's row count
(else InvalidArgumentError saying which; XLA does not check). The rows run
segment_*'s sorted kernel (one pass, no sort) on the ids the offsets give;
under XLA and in stock_ops(), TensorFlow's unsorted segment op with
len(row_splits) - 1 segments. Gradients are those of the ops used.
"""

import tensorflow as tf

from tf_scatter_ops import segments
from tf_scatter_ops._dispatch import backends, context, convert

_OPS = ("segment_sum", "segment_prod", "segment_min", "segment_max", "segment_mean")


def _splits(data, row_splits):
    if isinstance(data, tf.RaggedTensor):
        if row_splits is not None:
            raise ValueError("give row_splits or a RaggedTensor, not both")
        if data.ragged_rank != 1:
            raise ValueError(f"a RaggedTensor of ragged_rank 1 is needed, got {data.ragged_rank}")
        return data.values, data.row_splits
    if row_splits is None:
        raise ValueError("row_splits is needed unless data is a RaggedTensor")
    return data, row_splits


def _checked(splits, rows):
    """`splits` after the checks that make it CSR offsets of `rows` rows."""
    if splits.dtype not in (tf.int32, tf.int64):
        raise ValueError(f"row_splits must be int32 or int64, got {splits.dtype.name}")
    if splits.shape.rank is not None and splits.shape.rank != 1:
        raise ValueError(f"row_splits must be 1-D, got shape {splits.shape}")
    if context.in_xla_context():
        return splits
    checks = [tf.debugging.assert_positive(tf.size(splits), message="row_splits is empty")]
    with tf.control_dependencies(checks):
        checks.append(tf.debugging.assert_equal(
            splits[0], tf.zeros([], splits.dtype), message="row_splits must start at 0"))
        # compared, not subtracted: a difference can overflow (2**62 after -2**62)
        checks.append(tf.debugging.assert_equal(
            tf.reduce_all(splits[1:] >= splits[:-1]), True, message="row_splits must not decrease"))
        checks.append(tf.debugging.assert_equal(
            splits[-1], tf.cast(rows, splits.dtype),
            message="row_splits must end at data's row count"))
    with tf.control_dependencies(checks):
        return tf.identity(splits)


def _csr(op, data, row_splits, name):
    """The body of the segment_*_csr functions: `op` is segment_* on the ids
    the offsets give (TensorFlow's unsorted op where ours does not run)."""
    public_name = op + "_csr"
    data, row_splits = _splits(data, row_splits)
    with convert.scope(name or public_name):
        data = convert.tensor(data, name="data")
        convert.check_dtype(op, data.dtype, public_name)
        rows = tf.shape(data, out_type=tf.int64)[0]
        splits = _checked(tf.convert_to_tensor(row_splits, name="row_splits"), rows)
        ids = tf.searchsorted(splits, tf.range(rows, dtype=splits.dtype), side="right",
                             out_type=splits.dtype) - 1
        n = tf.size(splits, out_type=splits.dtype) - 1
        if backends.route(op) != backends.OURS:  # TensorFlow's unsorted op: n rows
            if op == "segment_mean":  # segment_mean's: in data's dtype (integers truncate)
                return _mean(data, ids, n)
            unsorted = getattr(segments, "unsorted_" + op)
            out = unsorted(data, ids, n)
            if op in ("segment_min", "segment_max"):  # empty rows: 0, not the extreme
                lengths = splits[1:] - splits[:-1]
                full = tf.reshape(lengths > 0, tf.concat(
                    [[-1], tf.ones([tf.rank(out) - 1], tf.int32)], 0))
                out = tf.where(full, out, tf.zeros_like(out))
            return out
        out = getattr(segments, op)(data, ids)  # last id + 1 rows
        missing = tf.cast(n, tf.int32) - tf.shape(out)[0]
        gap = tf.ones if op == "segment_prod" else tf.zeros
        return tf.concat([out, gap(tf.concat([[missing], tf.shape(out)[1:]], 0),
                                   out.dtype)], 0)


def _mean(data, ids, n):
    """segment_mean's result from TensorFlow's unsorted ops: the sum over
    the row count in data's dtype, integers divided as C++ divides them
    (toward zero), an empty row 0."""
    total = segments.unsorted_segment_sum(data, ids, n)
    count = segments.unsorted_segment_sum(tf.ones(tf.shape(ids), data.dtype), ids, n)
    count = tf.reshape(tf.maximum(tf.math.real(count), 1) if data.dtype.is_complex
                       else tf.maximum(count, tf.ones([], data.dtype)),
                       tf.concat([[-1], tf.ones([tf.rank(data) - 1], tf.int32)], 0))
    if data.dtype.is_complex:
        return total / tf.cast(count, data.dtype)
    if not data.dtype.is_integer:
        return total / count
    floor = total // count  # toward zero: floor + 1 where a negative sum is not a multiple
    return floor + tf.cast((total < 0) & (floor * count != total), data.dtype)


@convert.public
def segment_sum_csr(data, row_splits=None, name=None):
    """Sums the rows of each CSR segment, in index order.

    pytorch_scatter's segment_csr: sorted segments given as offsets. Row `i`
    of the output holds the rows `data[row_splits[i]:row_splits[i + 1]]`
    summed in index order (the same bits as segment_sum); an empty row holds
    0. The rows run segment_sum's sorted kernel (one pass, no sort); under
    XLA and in stock_ops(), TensorFlow's unsorted segment op. Takes every
    numeric dtype, complex included.

    Args:
        data: The rows to reduce, or a tf.RaggedTensor of ragged_rank 1
            whose rows are the segments (then no `row_splits`).
        row_splits: The offsets, int32 or int64, 1-D: starting at 0, never
            decreasing, ending at `data`'s row count. None for a
            RaggedTensor.
        name: A name scope for the ops (graphs only).

    Returns:
        A tensor of `data`'s dtype and shape
        `[len(row_splits) - 1] + data.shape[1:]`.

    Raises:
        InvalidArgumentError: `row_splits` that is empty, does not start at
            0, decreases or does not end at `data`'s row count (checked when
            it runs; not under XLA).
        ValueError: Both `row_splits` and a RaggedTensor, or neither; a
            RaggedTensor of another ragged_rank; `row_splits` that is not
            int32 or int64 or not 1-D; or a dtype the op does not take.

    Example:
        >>> data = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])
        >>> tso.segment_sum_csr(data, [0, 2, 2, 5]).numpy().tolist()
        [3.0, 0.0, 12.0]
        >>> rows = tf.RaggedTensor.from_row_splits(data, [0, 2, 2, 5])
        >>> tso.segment_sum_csr(rows).numpy().tolist()
        [3.0, 0.0, 12.0]
    """
    return _csr("segment_sum", data, row_splits, name)


@convert.public
def segment_prod_csr(data, row_splits=None, name=None):
    """Multiplies the rows of each CSR segment, in index order.

    pytorch_scatter's segment_csr: sorted segments given as offsets. Row `i`
    of the output holds the rows `data[row_splits[i]:row_splits[i + 1]]`
    multiplied in index order; an empty row holds 1. The rows run
    segment_prod's sorted kernel (one pass, no sort); under XLA and in
    stock_ops(), TensorFlow's unsorted segment op. Takes every numeric
    dtype, complex included.

    Args:
        data: The rows to reduce, or a tf.RaggedTensor of ragged_rank 1
            whose rows are the segments (then no `row_splits`).
        row_splits: The offsets, int32 or int64, 1-D: starting at 0, never
            decreasing, ending at `data`'s row count. None for a
            RaggedTensor.
        name: A name scope for the ops (graphs only).

    Returns:
        A tensor of `data`'s dtype and shape
        `[len(row_splits) - 1] + data.shape[1:]`.

    Raises:
        InvalidArgumentError: `row_splits` that is empty, does not start at
            0, decreases or does not end at `data`'s row count (checked when
            it runs; not under XLA).
        ValueError: Both `row_splits` and a RaggedTensor, or neither; a
            RaggedTensor of another ragged_rank; `row_splits` that is not
            int32 or int64 or not 1-D; or a dtype the op does not take.

    Example:
        >>> data = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])
        >>> tso.segment_prod_csr(data, [0, 2, 2, 5]).numpy().tolist()
        [2.0, 1.0, 60.0]
        >>> rows = tf.RaggedTensor.from_row_splits(data, [0, 2, 2, 5])
        >>> tso.segment_prod_csr(rows).numpy().tolist()
        [2.0, 1.0, 60.0]
    """
    return _csr("segment_prod", data, row_splits, name)


@convert.public
def segment_min_csr(data, row_splits=None, name=None):
    """The minimum of the rows of each CSR segment.

    pytorch_scatter's segment_csr: sorted segments given as offsets. Row `i`
    of the output holds the rows `data[row_splits[i]:row_splits[i + 1]]`
    reduced to their minimum; an empty row holds 0 (segment_min's value for
    a gap). The rows run segment_min's sorted kernel (one pass, no sort);
    under XLA and in stock_ops(), TensorFlow's unsorted segment op. Takes
    the real numeric dtypes (floats, signed and unsigned integers).

    Args:
        data: The rows to reduce, or a tf.RaggedTensor of ragged_rank 1
            whose rows are the segments (then no `row_splits`).
        row_splits: The offsets, int32 or int64, 1-D: starting at 0, never
            decreasing, ending at `data`'s row count. None for a
            RaggedTensor.
        name: A name scope for the ops (graphs only).

    Returns:
        A tensor of `data`'s dtype and shape
        `[len(row_splits) - 1] + data.shape[1:]`.

    Raises:
        InvalidArgumentError: `row_splits` that is empty, does not start at
            0, decreases or does not end at `data`'s row count (checked when
            it runs; not under XLA).
        ValueError: Both `row_splits` and a RaggedTensor, or neither; a
            RaggedTensor of another ragged_rank; `row_splits` that is not
            int32 or int64 or not 1-D; or a dtype the op does not take.

    Example:
        >>> data = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])
        >>> tso.segment_min_csr(data, [0, 2, 2, 5]).numpy().tolist()
        [1.0, 0.0, 3.0]
        >>> rows = tf.RaggedTensor.from_row_splits(data, [0, 2, 2, 5])
        >>> tso.segment_min_csr(rows).numpy().tolist()
        [1.0, 0.0, 3.0]
    """
    return _csr("segment_min", data, row_splits, name)


@convert.public
def segment_max_csr(data, row_splits=None, name=None):
    """The maximum of the rows of each CSR segment.

    pytorch_scatter's segment_csr: sorted segments given as offsets. Row `i`
    of the output holds the rows `data[row_splits[i]:row_splits[i + 1]]`
    reduced to their maximum; an empty row holds 0 (segment_max's value for
    a gap). The rows run segment_max's sorted kernel (one pass, no sort);
    under XLA and in stock_ops(), TensorFlow's unsorted segment op. Takes
    the real numeric dtypes (floats, signed and unsigned integers).

    Args:
        data: The rows to reduce, or a tf.RaggedTensor of ragged_rank 1
            whose rows are the segments (then no `row_splits`).
        row_splits: The offsets, int32 or int64, 1-D: starting at 0, never
            decreasing, ending at `data`'s row count. None for a
            RaggedTensor.
        name: A name scope for the ops (graphs only).

    Returns:
        A tensor of `data`'s dtype and shape
        `[len(row_splits) - 1] + data.shape[1:]`.

    Raises:
        InvalidArgumentError: `row_splits` that is empty, does not start at
            0, decreases or does not end at `data`'s row count (checked when
            it runs; not under XLA).
        ValueError: Both `row_splits` and a RaggedTensor, or neither; a
            RaggedTensor of another ragged_rank; `row_splits` that is not
            int32 or int64 or not 1-D; or a dtype the op does not take.

    Example:
        >>> data = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])
        >>> tso.segment_max_csr(data, [0, 2, 2, 5]).numpy().tolist()
        [2.0, 0.0, 5.0]
        >>> rows = tf.RaggedTensor.from_row_splits(data, [0, 2, 2, 5])
        >>> tso.segment_max_csr(rows).numpy().tolist()
        [2.0, 0.0, 5.0]
    """
    return _csr("segment_max", data, row_splits, name)


@convert.public
def segment_mean_csr(data, row_splits=None, name=None):
    """The mean of the rows of each CSR segment.

    pytorch_scatter's segment_csr: sorted segments given as offsets. Row `i`
    of the output holds the rows `data[row_splits[i]:row_splits[i + 1]]`
    summed in index order over their count, in `data`'s dtype (integers
    divide with truncation); an empty row holds 0. The rows run
    segment_mean's sorted kernel (one pass, no sort); under XLA and in
    stock_ops(), TensorFlow's unsorted segment op. Takes every numeric
    dtype, complex included.

    Args:
        data: The rows to reduce, or a tf.RaggedTensor of ragged_rank 1
            whose rows are the segments (then no `row_splits`).
        row_splits: The offsets, int32 or int64, 1-D: starting at 0, never
            decreasing, ending at `data`'s row count. None for a
            RaggedTensor.
        name: A name scope for the ops (graphs only).

    Returns:
        A tensor of `data`'s dtype and shape
        `[len(row_splits) - 1] + data.shape[1:]`.

    Raises:
        InvalidArgumentError: `row_splits` that is empty, does not start at
            0, decreases or does not end at `data`'s row count (checked when
            it runs; not under XLA).
        ValueError: Both `row_splits` and a RaggedTensor, or neither; a
            RaggedTensor of another ragged_rank; `row_splits` that is not
            int32 or int64 or not 1-D; or a dtype the op does not take.

    Example:
        >>> data = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])
        >>> tso.segment_mean_csr(data, [0, 2, 2, 5]).numpy().tolist()
        [1.5, 0.0, 4.0]
        >>> rows = tf.RaggedTensor.from_row_splits(data, [0, 2, 2, 5])
        >>> tso.segment_mean_csr(rows).numpy().tolist()
        [1.5, 0.0, 4.0]
    """
    return _csr("segment_mean", data, row_splits, name)
