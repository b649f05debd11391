"""TensorFlow's unsorted segment reductions with TensorFlow's names and
signatures, on the plugin's scatter cores:

    tso.unsorted_segment_sum(data, segment_ids, num_segments)   # also _prod, _min, _max,
    tso.unsorted_segment_mean(data, segment_ids, num_segments)  # _mean and _sqrt_n

`segment_ids` (int16, int32 or int64) may have any shape that is a prefix of
`data`'s; the output is `[num_segments] + data.shape[segment_ids.rank:]`.
Rows are reduced in index order (sums bitwise equal to TensorFlow's CPU
kernel, the same for any thread count). Empty segments hold TensorFlow's
values: 0 (sum, mean, sqrt_n), 1 (prod), the dtype's lowest (max) or highest
(min) value. Negative ids are dropped, as TensorFlow drops them. An id
`>= num_segments` is TensorFlow's `InvalidArgumentError` naming the first
one, unless `bad_indices_policy="IGNORE"`, which drops it. Under XLA the
functions build TensorFlow's ops.
"""

import tensorflow as tf

from tf_scatter_ops import _calls, _convert


def _segment(op, data, segment_ids, num_segments, bad_indices_policy, name):
    policy = _convert.check_policy(bad_indices_policy)
    with _convert.scope(name or op):
        data = _convert.tensor(data, name="data")
        _convert.check_dtype(op, data.dtype)
        segment_ids = _convert.indices(segment_ids)
        num_segments = _convert.int_tensor(num_segments, tf.int32, "num_segments")
        if num_segments.dtype not in (tf.int32, tf.int64):
            raise ValueError(
                f"num_segments must be int32 or int64, got {num_segments.dtype.name}")
        return _calls.raw_op(op, xla_ours=False)(
            data=data, segment_ids=segment_ids, num_segments=num_segments,
            bad_indices_policy=policy)


def _segment_function(op, doc):
    def f(data, segment_ids, num_segments, name=None, bad_indices_policy=""):
        return _segment(op, data, segment_ids, num_segments, bad_indices_policy, name)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return _convert.public(f)


unsorted_segment_sum = _segment_function(
    "unsorted_segment_sum",
    "The sum of `data`'s rows per segment id, in index order (0 for an empty segment).")
unsorted_segment_prod = _segment_function(
    "unsorted_segment_prod",
    "The product of `data`'s rows per segment id, in index order (1 for an empty segment).")
unsorted_segment_min = _segment_function(
    "unsorted_segment_min",
    "The minimum of `data`'s rows per segment id (the dtype's highest value for an empty "
    "segment).")
unsorted_segment_max = _segment_function(
    "unsorted_segment_max",
    "The maximum of `data`'s rows per segment id (the dtype's lowest value for an empty "
    "segment).")


def _counts(data, segment_ids, num_segments, policy):
    """How many rows each segment has, at least 1, shaped to divide the sums
    (TensorFlow's formula: a segment sum of ones)."""
    num_segments = _convert.int_tensor(num_segments, tf.int32, "num_segments")
    ones = tf.ones(tf.shape(segment_ids), dtype=data.dtype)
    n = unsorted_segment_sum(ones, segment_ids, num_segments, bad_indices_policy=policy)
    shape = tf.concat([num_segments[tf.newaxis],
                       tf.ones([tf.rank(data) - tf.rank(segment_ids)], dtype=num_segments.dtype)],
                      axis=0)
    return tf.maximum(tf.reshape(n, shape), 1)


def _normalized_function(op, of_count, doc):
    """unsorted_segment_mean / _sqrt_n: the segment sum over of_count(count)."""
    def f(data, segment_ids, num_segments, name=None, bad_indices_policy=""):
        policy = _convert.check_policy(bad_indices_policy)
        with _convert.scope(name or op):
            data = _convert.tensor(data, name="data")
            segment_ids = _convert.indices(segment_ids)
            n = _counts(data, segment_ids, num_segments, policy)
            return unsorted_segment_sum(data, segment_ids, num_segments,
                                        bad_indices_policy=policy) / of_count(n)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return _convert.public(f)


unsorted_segment_mean = _normalized_function(
    "unsorted_segment_mean", lambda n: n,
    """The mean of `data`'s rows per segment id (0 for an empty segment):
    TensorFlow's formula, the segment sum over the segment's row count.""")
unsorted_segment_sqrt_n = _normalized_function(
    "unsorted_segment_sqrt_n", tf.sqrt,
    """The sum of `data`'s rows per segment id over the square root of the
    segment's row count (0 for an empty segment), as TensorFlow computes it.""")
