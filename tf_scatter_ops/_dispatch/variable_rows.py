"""Rows of variables: the variable behind a Keras, distributed or sharded
one, and rows read straight from its buffer (backends.read_rows).

Tables in pieces: a `ShardedVariable` (what ParameterServerStrategy's
`variable_partitioner` makes of a large table) read and updated shard by
shard, each shard touching only its own rows, on the device it lives on.

    tso.gather_nd(table, ids[:, None])             # also tso.gather, tso.nn.embedding_lookup
    tso.scatter_nd_sub(table, ids[:, None], rows)  # and the other in-place scatters

A shard holds a contiguous block of the table's rows, the shards in order.
Each index row goes to the shard that holds its first coordinate, made local
to that shard; the shard then runs the plugin's variable op on its rows
alone. Rows keep their index order within a shard and no two shards share a
row, so the results are those of the same op on one unsharded variable.
Under the default policy every row is checked against the whole table's
shape first: a bad one raises InvalidArgumentError naming it before any
shard is read or written. Under "IGNORE" bad rows are dropped (reads give
zeros for them). tso.nn's lookups split the ids among a list of tables the
same way (Rows with the list's "mod" or "div" routing).
"""

import tensorflow as tf

from tf_scatter_ops._base.tf_private import ShardedVariable, resource_variable_ops
from tf_scatter_ops._dispatch import backends, context, convert


def is_sharded(value):
    return isinstance(value, ShardedVariable)


def unwrap(value):
    """The tf.Variable (or ShardedVariable) behind a Keras 3 variable;
    anything else unchanged."""
    inner = getattr(value, "_value", None)
    if (isinstance(inner, (tf.Variable, ShardedVariable))
            and not isinstance(value, (tf.Variable, ShardedVariable))):
        return inner
    return value


def is_distributed(value):
    return isinstance(value, tf.distribute.DistributedValues)


def is_resource_variable(value):
    """True for what our resource ops can take a handle of."""
    value = unwrap(value)
    return (isinstance(value, tf.Variable) and not is_distributed(value)
            and not value.dtype._is_ref_dtype
            and getattr(getattr(value, "handle", None), "dtype", None) == tf.resource)


def local_variable(value):
    """The variable a read of `value` uses: the Keras variable's tf.Variable,
    a distributed variable's copy on this device (as TensorFlow's
    `variable.gather_nd` does), else `value`."""
    value = unwrap(value)
    if is_distributed(value):
        value = value._get_on_device_or_primary()  # private: TF's own delegation
    return value


def ours_reads(params):
    """True when our gather_nd can read `params`' rows: a tensor, a resource
    variable (also behind a Keras or distributed variable), a sharded
    variable, or what converts to a tensor, of a dtype our gather_nd takes;
    not a (TensorFlow 1.x) partitioned variable, nor a composite tensor."""
    variable = local_variable(params)
    if (convert.foreign(params) and not is_resource_variable(variable)
            and not is_sharded(variable)):
        return False
    if type(variable).__name__ == "PartitionedVariable":
        return False
    dtype = getattr(params, "dtype", None)
    return dtype is None or tf.as_dtype(dtype).base_dtype in convert.DTYPE_SETS["gather_nd"]


def gather_rows(variable, indices, policy):
    """The rows of a resource variable at `indices`, read from its buffer.
    The read is recorded on the gradient tape, as TensorFlow's gather_nd
    method does."""
    if variable.trainable:
        resource_variable_ops.variable_accessed(variable)
    return backends.read_rows(variable.handle, variable.dtype, indices, policy, variable.value)


def _check(flat, shape):
    """An op that raises InvalidArgumentError naming the first row of `flat`
    ([N, depth]) outside `shape`'s first depth dimensions (in eager
    mode it raises at once and returns None)."""
    limits = tf.constant(shape[:flat.shape[-1]], flat.dtype)
    bad = tf.reduce_any((flat < 0) | (flat >= limits), axis=1)
    ok = tf.logical_not(tf.reduce_any(bad))

    def message():  # made only when a row is bad
        row = tf.argmax(tf.cast(bad, tf.int32), output_type=flat.dtype)
        coords = tf.strings.reduce_join(tf.strings.as_string(tf.gather(flat, row)), separator=",")
        return tf.strings.join(["indices[", tf.strings.as_string(row), "] = [", coords,
                                "] does not index into shape [" + ",".join(map(str, shape)) + "]"])

    if tf.executing_eagerly():
        if not bool(ok):
            raise tf.errors.InvalidArgumentError(None, None, message().numpy().decode())
        return None

    def fail():
        with tf.control_dependencies([tf.debugging.Assert(ok, [message()])]):
            return tf.identity(ok)
    return tf.cond(ok, lambda: ok, fail)


class Rows:
    """The index rows of one call on a table in pieces, split among them:
    `local[s]` are piece s's rows (first coordinate made local to it, in
    index order), `partition(updates)` splits the update rows alike, and
    `stitch(parts)` puts per-piece results back in index order (zeros for
    rows dropped under IGNORE).

    `shards` are the pieces (each with a static first dimension), `shape`
    the whole table's. `route(first)` gives the piece and the local
    coordinate of valid first coordinates; by default the pieces are
    consecutive blocks, in order (a ShardedVariable's layout)."""

    def __init__(self, shards, shape, indices, policy, op, route=None):
        if context.in_xla_context():
            raise ValueError(
                f"{op}: a table in shards cannot be read or written in a function compiled "
                "with XLA (jit_compile=True): splitting the rows among the shards has "
                "data-dependent shapes. Leave the lookup and the update outside the compiled part.")
        shape = tf.TensorShape(shape)
        depth = indices.shape[-1] if indices.shape.rank is not None else None
        if depth is None:
            raise ValueError(f"{op} on a table in shards needs indices whose last dimension "
                             f"(the depth) is known when the op is built, got {indices.shape}")
        if not 1 <= depth <= shape.rank:
            raise ValueError(
                f"{op} on a table in shards takes indices of depth 1 to {shape.rank} "
                f"(the shards split the first axis), got depth {depth}")
        self.shards, self.depth, self.indices = list(shards), depth, indices
        self.row_shape = shape[depth:]
        n = len(self.shards)
        # int32 unless the indices or the table need int64 (int16 widened)
        dtype = tf.int64 if indices.dtype == tf.int64 or shape[0] >= 2**31 else tf.int32
        flat = tf.reshape(tf.cast(indices, dtype), [-1, depth])
        check = None if policy == "IGNORE" else _check(flat, shape.as_list())
        with tf.control_dependencies([check] if check is not None else []):
            first = flat[:, 0]
            bad = (first < 0) | (first >= shape[0])
            shard, first = (route or self._blocks)(tf.where(bad, tf.zeros_like(first), first))
            self.shard = tf.where(bad, n, tf.cast(shard, tf.int32))  # n: dropped (IGNORE)
        self.count = tf.shape(flat)[0]
        # 1-D partitions (TensorFlow's DynamicPartition is slow on rows)
        self.positions = tf.dynamic_partition(tf.range(self.count), self.shard, n + 1)
        if depth == 1:
            self.local = [p[:, None] for p in tf.dynamic_partition(first, self.shard, n + 1)[:n]]
        else:
            local = tf.concat([first[:, None], flat[:, 1:]], axis=1)
            self.local = [tf.gather(local, p) for p in self.positions[:n]]

    def _blocks(self, first):
        starts = [0]
        for shard in self.shards[:-1]:
            starts.append(starts[-1] + shard.shape[0])
        shard = tf.searchsorted(tf.constant(starts[1:], first.dtype), first, side="right")
        return shard, first - tf.gather(tf.constant(starts, first.dtype), shard)

    def partition(self, updates):
        """`updates` (the indices' outer shape + the row shape) per shard."""
        expected = self.indices.shape[:-1].concatenate(self.row_shape)
        if not updates.shape.is_compatible_with(expected):
            raise ValueError(
                f"updates must have shape indices.shape[:-1] + the table's shape[{self.depth}:] "
                f"= {expected}, got {updates.shape}")
        rows = tf.reshape(updates, tf.concat([[-1], tf.shape(updates)[self.indices.shape.rank - 1:]], 0))
        return tf.dynamic_partition(rows, self.shard, len(self.shards) + 1)[:len(self.shards)]

    def stitch(self, parts, dtype):
        """The shards' results (`parts`, [rows of shard s] + row shape) in
        index order, shaped as the indices' outer dimensions + row shape."""
        positions = self.positions
        row_shape = self.row_shape.as_list()
        if None in row_shape:
            row_shape = tf.shape(parts[0])[1:]
        dropped = tf.zeros(tf.concat([tf.shape(positions[-1]), row_shape], 0), dtype)
        out = tf.dynamic_stitch(positions, list(parts) + [dropped])
        outer = tf.shape(self.indices)[:-1]
        out = tf.reshape(out, tf.concat([outer, row_shape], 0))
        out.set_shape(self.indices.shape[:-1].concatenate(self.row_shape))
        return out
