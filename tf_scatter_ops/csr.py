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


def _csr_function(op):
    def f(data, row_splits=None, name=None):
        data, row_splits = _splits(data, row_splits)
        with convert.scope(name or f.__name__):
            data = convert.tensor(data, name="data")
            convert.check_dtype(op, data.dtype, f.__name__)
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

    f.__name__ = f.__qualname__ = op + "_csr"
    f.__doc__ = (f"{op} of each CSR row data[row_splits[i]:row_splits[i + 1]] "
                 f"(len(row_splits) - 1 rows; data may be a RaggedTensor instead).")
    return convert.public(f)


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


segment_sum_csr = _csr_function("segment_sum")
segment_prod_csr = _csr_function("segment_prod")
segment_min_csr = _csr_function("segment_min")
segment_max_csr = _csr_function("segment_max")
segment_mean_csr = _csr_function("segment_mean")
