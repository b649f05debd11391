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

from tf_scatter_ops._dispatch import backends, bounds, convert
from tf_scatter_ops._dispatch.segment_ids import (check_output_size, counts, inputs,
                                                  segment_ids_of, sparse_num_segments, ungrid)


def _segment(op, data, segment_ids, num_segments, bad_indices_policy, name,
             indices_are_sorted=False, unique_indices=False):
    policy = convert.check_policy(bad_indices_policy)
    hints = backends.hint_attrs(indices_are_sorted, unique_indices)
    with convert.scope(name or op):
        data, segment_ids, num_segments, policy, grid = inputs(
            op, data, segment_ids, num_segments, policy)
        return ungrid(backends.run(op, policy, hints, data=data, segment_ids=segment_ids,
                                   num_segments=num_segments), grid)


def _segment_function(op, doc):
    def f(data, segment_ids, num_segments, name=None, bad_indices_policy="",
          indices_are_sorted=False, unique_indices=False):
        return _segment(op, data, segment_ids, num_segments, bad_indices_policy, name,
                        indices_are_sorted, unique_indices)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return convert.public(f)


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


def _normalized_function(op, of_count, doc):
    """unsorted_segment_mean / _sqrt_n: the segment sum over of_count(count)."""
    def f(data, segment_ids, num_segments, name=None, bad_indices_policy="",
          indices_are_sorted=False, unique_indices=False):
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
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return convert.public(f)


unsorted_segment_mean = _normalized_function(
    "unsorted_segment_mean", lambda n: n,
    """The mean of `data`'s rows per segment id (0 for an empty segment):
    TensorFlow's formula, the segment sum over the segment's row count.""")
unsorted_segment_sqrt_n = _normalized_function(
    "unsorted_segment_sqrt_n", tf.sqrt,
    """The sum of `data`'s rows per segment id over the square root of the
    segment's row count (0 for an empty segment), as TensorFlow computes it.""")


def _sorted_function(op, doc):
    def f(data, segment_ids, name=None, bad_indices_policy=""):
        policy = convert.check_policy(bad_indices_policy)
        with convert.scope(name or op):
            data = convert.tensor(data, name="data")
            convert.check_dtype(op, data.dtype)
            segment_ids, policy = bounds.ids(policy, convert.indices(segment_ids))
            return backends.run(op, policy, data=data, segment_ids=segment_ids)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return convert.public(f)


segment_sum = _sorted_function(
    "segment_sum", "The sum of `data`'s rows per sorted segment id, in index order.")
segment_prod = _sorted_function(
    "segment_prod", "The product of `data`'s rows per sorted segment id, in index order.")
segment_min = _sorted_function(
    "segment_min", "The minimum of `data`'s rows per sorted segment id.")
segment_max = _sorted_function(
    "segment_max", "The maximum of `data`'s rows per sorted segment id.")
segment_mean = _sorted_function(
    "segment_mean", "The mean of `data`'s rows per sorted segment id: the index-order sum "
    "over the row count (integer division for integers).")


def _sparse_function(op, doc):
    def f(data, indices, segment_ids, num_segments=None, name=None, sparse_gradient=False,
          bad_indices_policy=""):
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
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return convert.public(f)


sparse_segment_sum = _sparse_function(
    "sparse_segment_sum",
    "The sum of `data[indices]`'s rows per sorted segment id, without gathering them, in "
    "TensorFlow's order.")
sparse_segment_mean = _sparse_function(
    "sparse_segment_mean",
    "The mean of `data[indices]`'s rows per sorted segment id (0 for an empty segment).")
sparse_segment_sqrt_n = _sparse_function(
    "sparse_segment_sqrt_n",
    "The sum of `data[indices]`'s rows per sorted segment id over the square root of the "
    "segment's row count (0 for an empty segment).")
