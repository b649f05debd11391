"""tf.nn's embedding lookups on the plugin's row reads and segment ops.

    tso.nn.embedding_lookup(table, ids)                      # tf.nn.embedding_lookup
    tso.nn.embedding_lookup([shard0, shard1], ids)           # "div" partitioning
    tso.nn.embedding_lookup_sparse(table, sp_ids, None, combiner="mean")

TensorFlow's names, signatures and results: the rows are read with
tso.gather (straight from a variable's buffer, first bad id named, an
`IndexedSlices` gradient), a list of tables is partitioned as TensorFlow's
`partition_strategy` says ("mod": id i in table i % n at row i // n; "div":
contiguous blocks, the first tables one row longer), and `max_norm` clips
each looked-up row to that l2 norm. The bags of `embedding_lookup_sparse`
are reduced by the plugin's sparse_segment_* (no weights) or segment_sum
(weights), in TensorFlow's order. A ShardedVariable is read shard by shard,
each shard its own rows (_dispatch/variable_rows.py); with "mod" it is taken as the list of
its shards, as TensorFlow does. A TensorFlow 1.x PartitionedVariable, a
dtype the plugin's gather does not take or (embedding_lookup) ragged ids go
to TensorFlow's function.
"""

import tensorflow as tf

from tf_scatter_ops import ops, segments
from tf_scatter_ops._base.tf_private import embedding_ops as _embedding_ops
from tf_scatter_ops._dispatch import bounds, convert, variable_rows

_COMBINERS = ("sum", "mean", "sqrtn")
# TensorFlow's v1 lookups, taken at import: what we hand a partitioned
# variable to (the patch routes the module's embedding_lookup_sparse, which
# tf.nn.safe_embedding_lookup_sparse calls, to ours)
_TENSORFLOWS_LOOKUP = _embedding_ops.embedding_lookup
_TENSORFLOWS_LOOKUP_SPARSE = _embedding_ops.embedding_lookup_sparse


def _clip(rows, ids, max_norm):
    """Each looked-up row (the axes after ids') clipped to l2 norm max_norm."""
    if max_norm is None:
        return rows
    ids_rank, rows_rank = ids.shape.rank, rows.shape.rank
    if ids_rank is None or rows_rank is None:
        axes = tf.range(tf.rank(ids), tf.rank(rows))
    else:
        axes = list(range(ids_rank, rows_rank))
    return tf.clip_by_norm(rows, max_norm, axes=axes)


def _tensorflows(params):
    """True when TensorFlow's own lookup must read `params`: a table we do
    not read, or a list of tables of unknown lengths."""
    shards = params if isinstance(params, (list, tuple)) else [params]
    return (not shards or not all(variable_rows.ours_reads(p) for p in shards)
            or (len(shards) > 1 and any(tf.TensorShape(p.shape).rank is None
                                        or tf.TensorShape(p.shape)[0] is None for p in shards)))


def _tables(params, partition_strategy):
    """The list of tables a lookup reads. A ShardedVariable (alone or as the
    first of a list, as TensorFlow's dispatch takes it) is one table read
    shard by shard, unless the strategy is "mod": then, as in TensorFlow,
    its shards are the list."""
    tables = list(params) if isinstance(params, (list, tuple)) else [params]
    table = variable_rows.local_variable(tables[0]) if tables else None
    if variable_rows.is_sharded(table):
        return list(table.variables) if partition_strategy == "mod" else [table]
    return tables


def _partition(first, params, partition_strategy, total):
    """(table of each valid id, its row in that table), as TensorFlow's
    lookup partitions ids among the tables of a list."""
    n = len(params)
    if partition_strategy == "mod":
        return first % n, first // n
    if partition_strategy != "div":
        raise ValueError(
            f"Unrecognized partition strategy: {partition_strategy!r}; must be 'mod' or 'div'")
    per_table, extras = total // n, total % n
    table = tf.maximum(first // (per_table + 1), (first - extras) // per_table)
    row = tf.where(table < extras, first % (per_table + 1), (first - extras) % per_table)
    return table, row


def _lookup(params, ids, partition_strategy, max_norm, bad_indices_policy):
    params = _tables(params, partition_strategy)
    ids = convert.indices(ids)
    if len(params) == 1:
        return _clip(ops.gather(params[0], ids, bad_indices_policy=bad_indices_policy), ids,
                     max_norm)
    shapes = [tf.TensorShape(p.shape) for p in params]  # (a Keras variable's is a tuple)
    row_shape = shapes[0][1:]
    for shape in shapes[1:]:
        row_shape = row_shape.merge_with(shape[1:])
    total = _rows_in(params)  # static: _tensorflows takes lists of unknown lengths
    given = convert.check_policy(bad_indices_policy)
    clamped, policy = bounds.ids(given, ids, total)  # CLIP: into the whole table
    rows = variable_rows.Rows(params, [total] + row_shape.as_list(), clamped[..., None], policy,
                        "embedding_lookup",
                        lambda first: _partition(first, params, partition_strategy, total))
    parts = [ops.gather_nd(p, local, bad_indices_policy=policy)
             for p, local in zip(params, rows.local)]
    found = bounds.fill(given, rows.stitch(parts, parts[0].dtype), ids[..., None], None,
                         shape=[total])
    return _clip(found, ids, max_norm)


@convert.public
def embedding_lookup(params, ids, max_norm=None, name=None, bad_indices_policy=""):
    """tf.nn.embedding_lookup: the rows of `params` (a table, or a list of
    tables partitioned "div", as TensorFlow 2's) at `ids`, of any shape; see
    the module."""
    return embedding_lookup_v1(params, ids, "div", name, None, max_norm, bad_indices_policy)


@convert.public
def embedding_lookup_v1(params, ids, partition_strategy="mod", name=None,
                        validate_indices=True, max_norm=None, bad_indices_policy=""):
    """tf.compat.v1.nn.embedding_lookup (partition_strategy "mod" or "div")."""
    del validate_indices  # ignored by TensorFlow too
    if params is None or (isinstance(params, (list, tuple)) and not params):
        raise ValueError("params must be a table or a non-empty list of tables")
    if _tensorflows(params) or convert.foreign(ids):  # e.g. a RaggedTensor of ids
        if convert.check_policy(bad_indices_policy):
            raise ValueError("bad_indices_policy applies where the plugin reads the rows; "
                             "this lookup (a partitioned variable, another dtype or ragged ids) "
                             "is TensorFlow's")
        return _TENSORFLOWS_LOOKUP(params, ids, partition_strategy, name, max_norm=max_norm)
    with convert.scope(name or "embedding_lookup"):
        return tf.identity(_lookup(params, ids, partition_strategy, max_norm, bad_indices_policy))


def _bags(sp_ids, sp_weights):
    """(segment ids, ids, weights or None) of a 2-D SparseTensor or
    RaggedTensor of ids, as TensorFlow's embedding_lookup_sparse reads them."""
    if isinstance(sp_ids, tf.RaggedTensor):
        if sp_weights is not None and not isinstance(sp_weights, tf.RaggedTensor):
            raise TypeError("sp_ids is a RaggedTensor, so sp_weights must be one too")
        segment_ids = sp_ids.value_rowids()
        weights = None if sp_weights is None else sp_weights.values
        return segment_ids, sp_ids.values, weights
    if not isinstance(sp_ids, tf.SparseTensor):
        raise TypeError(f"sp_ids must be a SparseTensor or a RaggedTensor, got {type(sp_ids).__name__}")
    if sp_weights is not None and not isinstance(sp_weights, tf.SparseTensor):
        raise TypeError("sp_ids is a SparseTensor, so sp_weights must be one too")
    weights = None if sp_weights is None else sp_weights.values
    return sp_ids.indices[:, 0], sp_ids.values, weights


@convert.public
def embedding_lookup_sparse(params, sp_ids, sp_weights, combiner=None, max_norm=None, name=None,
                            allow_fast_lookup=False, bad_indices_policy=""):
    """tf.nn.embedding_lookup_sparse: one row per bag (a row of `sp_ids`), the
    "sum", "mean" (default) or "sqrtn" of its ids' rows, weighted by
    `sp_weights` when given. Without weights, one table and no max_norm,
    the plugin's sparse_segment_* reads the bags' rows from the table
    directly (no gathered copy) and its gradient is an IndexedSlices. A
    list of tables is partitioned "div", as TensorFlow 2's."""
    return embedding_lookup_sparse_v1(params, sp_ids, sp_weights, "div", name, combiner,
                                      max_norm, allow_fast_lookup, bad_indices_policy)


@convert.public
def embedding_lookup_sparse_v1(params, sp_ids, sp_weights, partition_strategy="mod", name=None,
                               combiner=None, max_norm=None, allow_fast_lookup=False,
                               bad_indices_policy=""):
    """tf.compat.v1.nn.embedding_lookup_sparse (partition_strategy "mod" or "div")."""
    combiner = "mean" if combiner is None else combiner
    if combiner not in _COMBINERS:
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner!r}")
    policy = convert.check_policy(bad_indices_policy)
    if _tensorflows(params):
        if policy:
            raise ValueError("bad_indices_policy applies where the plugin reads the rows; "
                             "this lookup (a partitioned variable, another dtype or tables of "
                             "unknown lengths) is TensorFlow's")
        return _TENSORFLOWS_LOOKUP_SPARSE(
            params, sp_ids, sp_weights, partition_strategy, name, combiner, max_norm,
            allow_fast_lookup)
    tables = _tables(params, partition_strategy)
    if policy == "FILL":
        bad_indices_policy = "IGNORE"  # a bag leaves a bad id out, as segments do under FILL
    with convert.scope(name or "embedding_lookup_sparse"):
        segment_ids, ids, weights = _bags(sp_ids, sp_weights)
        table = variable_rows.local_variable(tables[0])
        if (len(tables) == 1 and max_norm is None and weights is None
                and not variable_rows.is_sharded(table)):
            # the rows are read by the segment op itself, from the variable's
            # buffer without a copy of it (as TensorFlow's lookup does)
            if variable_rows.is_resource_variable(table):
                table = table.read_value_no_copy()
            return _reduce_bags(table, ids, segment_ids, combiner, bad_indices_policy)
        if bad_indices_policy == "IGNORE":
            # a bad id weighs 0, so that it counts for no mean either (its
            # looked-up row is zeros), as the segment op leaves it out above
            kept = (ids >= 0) & (ids < tf.cast(_rows_in(tables), ids.dtype))
            weights = (tf.cast(kept, tf.float32) if weights is None
                       else weights * tf.cast(kept, weights.dtype))
        unique, idx = tf.unique(ids)
        rows = _lookup(tables, unique, partition_strategy, max_norm, bad_indices_policy)
        if weights is None:
            return _reduce_bags(rows, idx, segment_ids, combiner, "")
        return _weighted_bags(rows, idx, segment_ids, weights, combiner)


def _rows_in(tables):
    """The rows of a list of tables, all together."""
    shapes = [tf.TensorShape(t.shape) for t in tables]
    if all(s.rank is not None and s[0] is not None for s in shapes):
        return sum(s[0] for s in shapes)
    return tf.add_n([tf.shape(t, out_type=tf.int64)[0] for t in tables])


def _reduce_bags(table, ids, segment_ids, combiner, policy):
    op = {"sum": segments.sparse_segment_sum, "mean": segments.sparse_segment_mean,
          "sqrtn": segments.sparse_segment_sqrt_n}[combiner]
    return op(table, ids, segment_ids, sparse_gradient=True, bad_indices_policy=policy)


def _weighted_bags(rows, idx, segment_ids, weights, combiner):
    """TensorFlow's weighted bags: the rows times their weights, summed per
    bag in order, then over the bag's weight sum ("mean") or the root of its
    squared weights' sum ("sqrtn"), 0 for a bag whose weights sum to 0."""
    rows = ops.gather(rows, idx)
    dtype = rows.dtype
    if dtype in (tf.float16, tf.bfloat16):
        rows = tf.cast(rows, tf.float32)
    weights = tf.cast(weights, rows.dtype)
    ones = tf.ones(tf.expand_dims(tf.rank(rows) - 1, 0), tf.int32)
    shaped = tf.reshape(weights, tf.concat([tf.shape(weights), ones], 0))
    if rows.shape.rank is not None:
        shaped.set_shape(weights.shape.concatenate([1] * (rows.shape.rank - 1)))
    segment_ids = tf.cast(segment_ids, tf.int32)
    summed = segments.segment_sum(rows * shaped, segment_ids)
    if combiner == "mean":
        summed = tf.math.divide_no_nan(summed, segments.segment_sum(shaped, segment_ids))
    elif combiner == "sqrtn":
        summed = tf.math.divide_no_nan(
            summed, tf.sqrt(segments.segment_sum(tf.pow(shaped, 2), segment_ids)))
    return tf.cast(summed, dtype)
