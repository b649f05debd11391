"""The stateful half of the family: in-place scatters into `tf.Variable`s
and row reads straight from a variable's buffer.

    tso.scatter_nd_add(table, [[3], [7]], rows)      # in place, returns the new value
    tso.gather_nd(table, ids[:, None])                # reads the rows, not the table

`scatter_nd_update/add/sub/min/max(ref, indices, updates, use_locking=True,
name=None, bad_indices_policy="")` take any variable: a resource variable
(what `tf.Variable` makes in TensorFlow 2), a TensorFlow 1.x ref variable, a
Keras variable, a `MirroredVariable` under `tf.distribute` (TensorFlow's
replica / cross-replica rules for scatters), a variable on a parameter
server (the op runs on the variable's device), or a `ShardedVariable` (each
shard updates its own rows on its server; sharded.py). The semantics are those of the
tensor ops (duplicates, policies, depth 0..rank), written into the variable's
buffer: copy-on-write as TensorFlow's sparse variable ops do, so a tensor read
before the update keeps its values. With the ERROR policy a call with a bad
row writes nothing. `use_locking=True` takes the variable's lock exclusively;
False shares it with other non-locking updates, whose rows may interleave.
"""

import tensorflow as tf

from tf_scatter_ops import _bounds, _calls, _convert, _stock_forms, _table, sharded
from tf_scatter_ops._tf_private import dist_values, resource_variable_ops, values_util

# Python name -> (the tensor op with the same semantics and dtypes, the
# resource op (ours, or TensorFlow's of the same name under XLA), our ref
# op), from the op table.
_OPS = {name: (row.py, "Resource" + row.variable, row.variable)
        for name, row in _table.VARIABLE_SCATTERS.items()}


def unwrap(value):
    """The tf.Variable (or ShardedVariable) behind a Keras 3 variable;
    anything else unchanged."""
    inner = getattr(value, "_value", None)
    if (isinstance(inner, (tf.Variable, sharded.ShardedVariable))
            and not isinstance(value, (tf.Variable, sharded.ShardedVariable))):
        return inner
    return value


def _is_distributed(value):
    return isinstance(value, tf.distribute.DistributedValues)


def is_resource_variable(value):
    """True for what our resource ops can take a handle of."""
    value = unwrap(value)
    return (isinstance(value, tf.Variable) and not _is_distributed(value)
            and not value.dtype._is_ref_dtype
            and getattr(getattr(value, "handle", None), "dtype", None) == tf.resource)


def local_variable(value):
    """The variable a read of `value` uses: the Keras variable's tf.Variable,
    a distributed variable's copy on this device (as TensorFlow's
    `variable.gather_nd` does), else `value`."""
    value = unwrap(value)
    if _is_distributed(value):
        value = value._get_on_device_or_primary()  # private: TF's own delegation
    return value


def _not_a_variable(op, ref):
    tensor_op = _OPS[op][0]
    return ValueError(
        f"{op} updates a tf.Variable in place, but got {type(ref).__name__}. "
        f"For a tensor use tso.{tensor_op}(tensor, indices, updates), which "
        "returns a new tensor.")


def _scatter_variable(op, ref, indices, updates, use_locking, name, policy):
    """One resource or ref variable (not distributed)."""
    tensor_op, resource_op, ref_op = _OPS[op]
    ref = unwrap(ref)
    # a ref variable, or the ref tensor an earlier update of one returned
    is_ref = getattr(getattr(ref, "dtype", None), "_is_ref_dtype", False)
    if not isinstance(ref, tf.Variable) and not is_ref:
        raise _not_a_variable(op, ref)
    dtype = ref.dtype.base_dtype
    _convert.check_dtype(tensor_op, dtype)
    with _convert.scope(name or op):
        indices = _convert.indices(indices)
        updates = _convert.tensor(updates, dtype=dtype, name="updates")
        if is_ref:
            return _calls.library_op(ref_op)(ref, indices, updates, use_locking=bool(use_locking),
                                       bad_indices_policy=policy)
        parent = getattr(ref, "_parent_op", None)  # an unread value of an earlier update
        with tf.control_dependencies([parent] if parent is not None and not tf.executing_eagerly() else []):
            if _calls.emitting_stock():
                update = _stock_scatter(op, ref, indices, updates, use_locking, policy)
            elif _calls.lowering_to_xla():
                update = _xla_scatter(op, ref, indices, updates, use_locking)
            else:
                update = _calls.library_op(resource_op)(ref.handle, indices, updates,
                                                  use_locking=bool(use_locking),
                                                  bad_indices_policy=policy)
        return ref._lazy_read(update)  # TensorFlow's return: the value after the update


def _xla_scatter(op, ref, indices, updates, use_locking):
    """Under XLA: TensorFlow's resource op where XLA compiles it (update, add,
    sub), else an assign of the tensor op's result (min, max), which XLA
    does in place. XLA drops out-of-bound rows whatever the policy."""
    tensor_op, resource_op, _ = _OPS[op]
    indices = _stock_forms.wide(indices)  # TensorFlow's ops take no int16 indices
    if op in ("scatter_nd_min", "scatter_nd_max"):
        raw = getattr(tf.raw_ops, _table.BY_PY[tensor_op].tf)
        return ref.assign(raw(tensor=ref.read_value(), indices=indices, updates=updates),
                          use_locking=bool(use_locking), read_value=False)
    return getattr(tf.raw_ops, resource_op)(
        ref=ref.handle, indices=indices, updates=updates, use_locking=bool(use_locking))


def _stock_scatter(op, ref, indices, updates, use_locking, policy):
    """Inside stock_ops(): TensorFlow's resource op of the same name, which
    takes the same policies (int32 or int64 indices of depth 1 to 7)."""
    depth = indices.shape[-1] if indices.shape.rank is not None else None
    if depth is None or not 1 <= depth <= 7:
        raise ValueError(
            f"stock_ops: {op} on a variable has TensorFlow's resource op only for index "
            f"depths 1 to 7 known when the function is traced; got indices of shape "
            f"{indices.shape}. Use depth 1 to 7, or leave this function out of stock_ops().")
    indices = _stock_forms.wide(indices)
    return getattr(tf.raw_ops, _OPS[op][1])(ref=ref.handle, indices=indices, updates=updates,
                                            use_locking=bool(use_locking),
                                            bad_indices_policy=policy)


def _scatter_distributed(op, var, indices, updates, use_locking, name, policy):
    """TensorFlow's rules for sparse updates of distributed variables (those
    of `MirroredVariable.scatter_*`): update, min and max need NONE or
    ONLY_FIRST_REPLICA aggregation, add and sub take any (the replicas'
    updates are aggregated like TensorFlow's IndexedSlices); in cross-replica
    context every copy gets the update. The variable's own _update applies
    these rules; the rows travel through it as one IndexedSlices, as
    TensorFlow's scatter methods pass them."""
    if isinstance(var, dist_values.SyncOnReadVariable):
        raise NotImplementedError(f"{op} is not supported for SyncOnRead variables")
    if op not in ("scatter_nd_add", "scatter_nd_sub") and var.aggregation not in (
            tf.VariableAggregation.NONE, tf.VariableAggregation.ONLY_FIRST_REPLICA):
        raise NotImplementedError(values_util.scatter_error_msg.format(op_name=op, aggregation=var.aggregation))
    _convert.check_dtype(_OPS[op][0], var.dtype)
    rows = tf.IndexedSlices(_convert.tensor(updates, dtype=var.dtype, name="updates"), _convert.indices(indices))

    def update_fn(component, value, **unused):
        return _scatter_variable(op, component, value.indices, value.values, use_locking, name, policy)

    return var._update(update_fn=update_fn, value=rows)  # private


def _scatter_sharded(op, table, indices, updates, use_locking, name, policy):
    """Each shard of a ShardedVariable updated in place with its own rows
    (sharded.py); returns the ShardedVariable, as its scatter methods do."""
    _convert.check_dtype(_OPS[op][0], table.dtype)
    with _convert.scope(name or op):
        rows = sharded.Rows(table.variables, table.shape, _convert.indices(indices), policy, op)
        parts = rows.partition(_convert.tensor(updates, dtype=table.dtype, name="updates"))
        for shard, local, part in zip(rows.shards, rows.local, parts):
            _scatter_variable(op, shard, local, part, use_locking, None, policy)
    return table


def _variable_scatter_function(op, doc):
    def f(ref, indices, updates, use_locking=True, name=None, bad_indices_policy=""):
        policy = _convert.check_policy(bad_indices_policy)
        ref = unwrap(ref)
        if policy in _bounds.MODES:  # CLIP's indices clamped into the variable's shape
            indices, policy = _bounds.nd(policy, _convert.indices(indices), like=ref)
        if _is_distributed(ref):
            return _scatter_distributed(op, ref, indices, updates, use_locking, name, policy)
        if sharded.is_sharded(ref):
            return _scatter_sharded(op, ref, indices, updates, use_locking, name, policy)
        return _scatter_variable(op, ref, indices, updates, use_locking, name, policy)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return _convert.public(f)


scatter_nd_update = _variable_scatter_function(
    "scatter_nd_update",
    """Writes `updates` into the variable `ref` at `indices`, in place; the last
    duplicate in index order wins. Returns the variable's new value.""")
scatter_nd_add = _variable_scatter_function(
    "scatter_nd_add", "Adds `updates` into the variable `ref` at `indices`, in place, in index order.")
scatter_nd_sub = _variable_scatter_function(
    "scatter_nd_sub", "Subtracts `updates` from the variable `ref` at `indices`, in place, in index order.")
scatter_nd_min = _variable_scatter_function(
    "scatter_nd_min", "The variable `ref` becomes its elementwise minimum with the updates at `indices`.")
scatter_nd_max = _variable_scatter_function(
    "scatter_nd_max", "The variable `ref` becomes its elementwise maximum with the updates at `indices`.")


def gather_rows(var, indices, policy):
    """TfScatter>ResourceGatherNd: rows read straight from the variable's
    buffer (under XLA, TensorFlow's GatherNd of the variable's value).
    The read is recorded on the gradient tape, as TensorFlow's gather_nd
    method does."""
    if var.trainable:
        resource_variable_ops.variable_accessed(var)
    if _calls.emitting_stock():
        return _stock_forms.gather_rows(var.handle, var.dtype, indices, policy)
    if _calls.lowering_to_xla():  # XLA compiles no ResourceGatherNd; it reads variables in place
        return _calls.raw_op("gather_nd")(params=var.value(), indices=indices,
                                          bad_indices_policy=policy)
    return _calls.library_op("ResourceGatherNd")(var.handle, indices, dtype=var.dtype,
                                           bad_indices_policy=policy)


# The tf.Variable methods that take an IndexedSlices (TensorFlow's
# ResourceScatter* and ResourceGather), on our kernels: what Keras's and v1's
# optimizers call to apply a sparse gradient. Indices of any rank address
# rows (the depth-1 indices of scatter_nd_*); TensorFlow's methods take the
# variable's lock whatever use_locking says, and so do these.
_SPARSE_DELTA_OPS = {"scatter_add": scatter_nd_add, "scatter_sub": scatter_nd_sub,
                     "scatter_min": scatter_nd_min, "scatter_max": scatter_nd_max,
                     "scatter_update": scatter_nd_update}


def sparse_delta_method(method, tensorflows):
    """variable.<method>(sparse_delta, use_locking=False, name=None) on our
    in-place scatter; `tensorflows` (the method it replaces) takes what ours
    does not: a dtype our ops do not take."""
    ours = _SPARSE_DELTA_OPS[method]
    tensor_op = _OPS[ours.__name__][0]

    def f(self, sparse_delta, use_locking=False, name=None):
        if not isinstance(sparse_delta, tf.IndexedSlices):
            raise TypeError(f"Argument `sparse_delta` must be a `tf.IndexedSlices`. "
                            f"Received arg: {sparse_delta}")
        if self.dtype.base_dtype not in _convert.DTYPE_SETS[tensor_op]:
            return tensorflows(self, sparse_delta, use_locking, name)
        rows = tf.expand_dims(_convert.indices(sparse_delta.indices), -1)
        return ours(self, rows, sparse_delta.values, True, name or method)
    f.__name__ = f.__qualname__ = method
    f.__doc__ = f"tf.Variable.{method} on the plugin's {ours.__name__} (in place)."
    return _convert.public(f)


def sparse_read_method(tensorflows):
    """variable.sparse_read(indices, name=None): the rows at `indices` (any
    rank), read straight from the variable's buffer (ResourceGatherNd, an
    IndexedSlices gradient); other dtypes: TensorFlow's method."""
    def sparse_read(self, indices, name=None):
        if self.dtype.base_dtype not in _convert.DTYPE_SETS["gather_nd"]:
            return tensorflows(self, indices, name)
        with _convert.scope(name or "Gather"):
            return gather_rows(self, tf.expand_dims(_convert.indices(indices), -1), "")
    sparse_read.__doc__ = "tf.Variable.sparse_read on the plugin's row read."
    return _convert.public(sparse_read)
