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
shard updates its own rows on its server; _dispatch/variable_rows.py). The semantics are those of the
tensor ops (duplicates, policies, depth 0..rank), written into the variable's
buffer: copy-on-write as TensorFlow's sparse variable ops do, so a tensor read
before the update keeps its values. With the ERROR policy a call with a bad
row writes nothing. `use_locking=True` takes the variable's lock exclusively;
False shares it with other non-locking updates, whose rows may interleave.
"""

import sys
import types

import tensorflow as tf

from tf_scatter_ops._base import table
from tf_scatter_ops._base.tf_private import dist_values, values_util
from tf_scatter_ops._dispatch import backends, bounds, context, convert, variable_rows
from tf_scatter_ops._dispatch.variable_rows import unwrap

# Python name -> the tensor op with the same semantics and dtypes, from the
# op table.
TENSOR_OPS = {name: row.py for name, row in table.VARIABLE_SCATTERS.items()}


def _is_distributed(value):
    return variable_rows.is_distributed(value)


def _not_a_variable(op, ref):
    tensor_op = TENSOR_OPS[op]
    return ValueError(
        f"{op} updates a tf.Variable in place, but got {type(ref).__name__}. "
        f"For a tensor use tso.{tensor_op}(tensor, indices, updates), which "
        "returns a new tensor.")


def _scatter_variable(op, ref, indices, updates, use_locking, name, policy):
    """One resource or ref variable (not distributed)."""
    tensor_op = TENSOR_OPS[op]
    ref = unwrap(ref)
    # a ref variable, or the ref tensor an earlier update of one returned
    is_ref = getattr(getattr(ref, "dtype", None), "_is_ref_dtype", False)
    if not isinstance(ref, tf.Variable) and not is_ref:
        raise _not_a_variable(op, ref)
    dtype = ref.dtype.base_dtype
    convert.check_dtype(tensor_op, dtype)
    with convert.scope(name or op):
        indices = convert.indices(indices)
        updates = convert.tensor(updates, dtype=dtype, name="updates")
        if is_ref:
            return backends.scatter_ref(op, ref, indices, updates, use_locking, policy)
        parent = getattr(ref, "_parent_op", None)  # an unread value of an earlier update
        with tf.control_dependencies([parent] if parent is not None and not tf.executing_eagerly() else []):
            update = backends.scatter_variable(op, ref, indices, updates, use_locking, policy)
        return ref._lazy_read(update)  # TensorFlow's return: the value after the update


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
    convert.check_dtype(TENSOR_OPS[op], var.dtype)
    rows = tf.IndexedSlices(convert.tensor(updates, dtype=var.dtype, name="updates"), convert.indices(indices))

    def update_fn(component, value, **unused):
        return _scatter_variable(op, component, value.indices, value.values, use_locking, name, policy)

    return var._update(update_fn=update_fn, value=rows)  # private


def _scatter_sharded(op, whole, indices, updates, use_locking, name, policy):
    """Each shard of a ShardedVariable updated in place with its own rows
    (_dispatch/variable_rows.py); returns the ShardedVariable, as its scatter methods do."""
    convert.check_dtype(TENSOR_OPS[op], whole.dtype)
    with convert.scope(name or op):
        rows = variable_rows.Rows(whole.variables, whole.shape, convert.indices(indices), policy, op)
        parts = rows.partition(convert.tensor(updates, dtype=whole.dtype, name="updates"))
        for shard, local, part in zip(rows.shards, rows.local, parts):
            _scatter_variable(op, shard, local, part, use_locking, None, policy)
    return whole


def _scatter(op, ref, indices, updates, use_locking, name, bad_indices_policy):
    """The body of the scatter_nd_* functions: any kind of variable."""
    policy = convert.check_policy(bad_indices_policy)
    ref = unwrap(ref)
    if policy in convert.WRAPPER_POLICIES:  # CLIP's indices clamped into the variable's shape
        indices, policy = bounds.nd(policy, convert.indices(indices), like=ref)
    if _is_distributed(ref):
        return _scatter_distributed(op, ref, indices, updates, use_locking, name, policy)
    if variable_rows.is_sharded(ref):
        return _scatter_sharded(op, ref, indices, updates, use_locking, name, policy)
    return _scatter_variable(op, ref, indices, updates, use_locking, name, policy)


@convert.public
def scatter_nd_update(ref, indices, updates, use_locking=True, name=None, bad_indices_policy=""):
    """Writes `updates` into the variable `ref` at `indices`, in place.

    `tf.compat.v1.scatter_nd_update` for every kind of variable: a resource
    variable (what tf.Variable makes), a TensorFlow 1.x ref variable, a
    Keras variable, a MirroredVariable under tf.distribute (TensorFlow's
    replica and cross-replica rules), a variable on a parameter server, or a
    ShardedVariable (each shard updates its own rows). The semantics are
    tensor_scatter_nd_update's, written into the variable's buffer
    copy-on-write: a tensor read before keeps its values. Each index row
    `indices[..., :depth]` addresses a slice of the variable's first `depth`
    dimensions; `updates` has the shape `indices.shape[:-1] +
    ref.shape[depth:]`. Of duplicate rows the last in index order wins.
    Takes every numeric dtype (complex too), bool and string.

    Args:
        ref: The variable to update.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The values, `indices.shape[:-1] + ref.shape[depth:]`,
            converted to the variable's dtype.
        use_locking: True takes the variable's lock exclusively; False
            shares it with other non-locking updates, whose rows may
            interleave.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row and write nothing;
            "IGNORE" and "FILL" drop bad rows; "CLIP" clamps each coordinate
            into `[0, dim - 1]`.

    Returns:
        The variable's value after the update, as TensorFlow returns it (a
        tensor; for a ShardedVariable, the variable itself).

    Raises:
        InvalidArgumentError: A bad index row under the default policy,
            shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: `ref` is not a variable (for a tensor use
            tso.tensor_scatter_nd_update), a dtype the op does not
            take, or a RaggedTensor or SparseTensor input.
        NotImplementedError: A SyncOnRead variable, or a distributed one
            whose aggregation is not NONE or ONLY_FIRST_REPLICA.

    Example:
        >>> v = tf.Variable([1.0, 1.0, 1.0, 1.0])
        >>> tso.scatter_nd_update(v, [[1], [3], [1]], [2.0, 4.0, 3.0]).numpy().tolist()
        [1.0, 3.0, 1.0, 4.0]
        >>> v.numpy().tolist()
        [1.0, 3.0, 1.0, 4.0]
    """
    return _scatter("scatter_nd_update", ref, indices, updates, use_locking, name,
                    bad_indices_policy)


@convert.public
def scatter_nd_add(ref, indices, updates, use_locking=True, name=None, bad_indices_policy=""):
    """Adds `updates` into the variable `ref` at `indices`, in place.

    `tf.compat.v1.scatter_nd_add` for every kind of variable: a resource
    variable (what tf.Variable makes), a TensorFlow 1.x ref variable, a
    Keras variable, a MirroredVariable under tf.distribute (TensorFlow's
    replica and cross-replica rules), a variable on a parameter server, or a
    ShardedVariable (each shard updates its own rows). The semantics are
    tensor_scatter_nd_add's, written into the variable's buffer
    copy-on-write: a tensor read before keeps its values. Each index row
    `indices[..., :depth]` addresses a slice of the variable's first `depth`
    dimensions; `updates` has the shape `indices.shape[:-1] +
    ref.shape[depth:]`. Duplicate rows add up in index order (the same bits
    as tensor_scatter_nd_add). Takes every numeric dtype, complex included.

    Args:
        ref: The variable to update.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The values, `indices.shape[:-1] + ref.shape[depth:]`,
            converted to the variable's dtype.
        use_locking: True takes the variable's lock exclusively; False
            shares it with other non-locking updates, whose rows may
            interleave.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row and write nothing;
            "IGNORE" and "FILL" drop bad rows; "CLIP" clamps each coordinate
            into `[0, dim - 1]`.

    Returns:
        The variable's value after the update, as TensorFlow returns it (a
        tensor; for a ShardedVariable, the variable itself).

    Raises:
        InvalidArgumentError: A bad index row under the default policy,
            shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: `ref` is not a variable (for a tensor use
            tso.tensor_scatter_nd_add), a dtype the op does not
            take, or a RaggedTensor or SparseTensor input.
        NotImplementedError: A SyncOnRead variable.

    Example:
        >>> v = tf.Variable([1.0, 1.0, 1.0, 1.0])
        >>> tso.scatter_nd_add(v, [[0], [0], [2]], [1.0, 2.0, 3.0]).numpy().tolist()
        [4.0, 1.0, 4.0, 1.0]
        >>> v.numpy().tolist()
        [4.0, 1.0, 4.0, 1.0]
    """
    return _scatter("scatter_nd_add", ref, indices, updates, use_locking, name, bad_indices_policy)


@convert.public
def scatter_nd_sub(ref, indices, updates, use_locking=True, name=None, bad_indices_policy=""):
    """Subtracts `updates` from the variable `ref` at `indices`, in place.

    `tf.compat.v1.scatter_nd_sub` for every kind of variable: a resource
    variable (what tf.Variable makes), a TensorFlow 1.x ref variable, a
    Keras variable, a MirroredVariable under tf.distribute (TensorFlow's
    replica and cross-replica rules), a variable on a parameter server, or a
    ShardedVariable (each shard updates its own rows). The semantics are
    tensor_scatter_nd_sub's, written into the variable's buffer
    copy-on-write: a tensor read before keeps its values. Each index row
    `indices[..., :depth]` addresses a slice of the variable's first `depth`
    dimensions; `updates` has the shape `indices.shape[:-1] +
    ref.shape[depth:]`. Duplicate rows are subtracted in index order. Takes
    every numeric dtype, complex included.

    Args:
        ref: The variable to update.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The values, `indices.shape[:-1] + ref.shape[depth:]`,
            converted to the variable's dtype.
        use_locking: True takes the variable's lock exclusively; False
            shares it with other non-locking updates, whose rows may
            interleave.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row and write nothing;
            "IGNORE" and "FILL" drop bad rows; "CLIP" clamps each coordinate
            into `[0, dim - 1]`.

    Returns:
        The variable's value after the update, as TensorFlow returns it (a
        tensor; for a ShardedVariable, the variable itself).

    Raises:
        InvalidArgumentError: A bad index row under the default policy,
            shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: `ref` is not a variable (for a tensor use
            tso.tensor_scatter_nd_sub), a dtype the op does not
            take, or a RaggedTensor or SparseTensor input.
        NotImplementedError: A SyncOnRead variable.

    Example:
        >>> v = tf.Variable([1.0, 1.0, 1.0, 1.0])
        >>> tso.scatter_nd_sub(v, [[0], [0], [2]], [1.0, 2.0, 3.0]).numpy().tolist()
        [-2.0, 1.0, -2.0, 1.0]
        >>> v.numpy().tolist()
        [-2.0, 1.0, -2.0, 1.0]
    """
    return _scatter("scatter_nd_sub", ref, indices, updates, use_locking, name, bad_indices_policy)


@convert.public
def scatter_nd_min(ref, indices, updates, use_locking=True, name=None, bad_indices_policy=""):
    """Sets the variable `ref` to its minimum with `updates` at `indices`, in place.

    TensorFlow 1.x's scatter_nd_* updates, as a minimum, for every kind of
    variable: a resource variable (what tf.Variable makes), a TensorFlow 1.x
    ref variable, a Keras variable, a MirroredVariable under tf.distribute
    (TensorFlow's replica and cross-replica rules), a variable on a
    parameter server, or a ShardedVariable (each shard updates its own
    rows). The semantics are tensor_scatter_nd_min's, written into the
    variable's buffer copy-on-write: a tensor read before keeps its values.
    Each index row `indices[..., :depth]` addresses a slice of the
    variable's first `depth` dimensions; `updates` has the shape
    `indices.shape[:-1] + ref.shape[depth:]`. Each element reached becomes
    the minimum of its value and its updates. Takes the real numeric dtypes
    (floats, signed and unsigned integers).

    Args:
        ref: The variable to update.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The values, `indices.shape[:-1] + ref.shape[depth:]`,
            converted to the variable's dtype.
        use_locking: True takes the variable's lock exclusively; False
            shares it with other non-locking updates, whose rows may
            interleave.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row and write nothing;
            "IGNORE" and "FILL" drop bad rows; "CLIP" clamps each coordinate
            into `[0, dim - 1]`.

    Returns:
        The variable's value after the update, as TensorFlow returns it (a
        tensor; for a ShardedVariable, the variable itself).

    Raises:
        InvalidArgumentError: A bad index row under the default policy,
            shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: `ref` is not a variable (for a tensor use
            tso.tensor_scatter_nd_min), a dtype the op does not
            take, or a RaggedTensor or SparseTensor input.
        NotImplementedError: A SyncOnRead variable, or a distributed one
            whose aggregation is not NONE or ONLY_FIRST_REPLICA.

    Example:
        >>> v = tf.Variable([1.0, 1.0, 1.0, 1.0])
        >>> tso.scatter_nd_min(v, [[0], [0], [2]], [0.5, 3.0, 2.0]).numpy().tolist()
        [0.5, 1.0, 1.0, 1.0]
        >>> v.numpy().tolist()
        [0.5, 1.0, 1.0, 1.0]
    """
    return _scatter("scatter_nd_min", ref, indices, updates, use_locking, name, bad_indices_policy)


@convert.public
def scatter_nd_max(ref, indices, updates, use_locking=True, name=None, bad_indices_policy=""):
    """Sets the variable `ref` to its maximum with `updates` at `indices`, in place.

    TensorFlow 1.x's scatter_nd_* updates, as a maximum, for every kind of
    variable: a resource variable (what tf.Variable makes), a TensorFlow 1.x
    ref variable, a Keras variable, a MirroredVariable under tf.distribute
    (TensorFlow's replica and cross-replica rules), a variable on a
    parameter server, or a ShardedVariable (each shard updates its own
    rows). The semantics are tensor_scatter_nd_max's, written into the
    variable's buffer copy-on-write: a tensor read before keeps its values.
    Each index row `indices[..., :depth]` addresses a slice of the
    variable's first `depth` dimensions; `updates` has the shape
    `indices.shape[:-1] + ref.shape[depth:]`. Each element reached becomes
    the maximum of its value and its updates. Takes the real numeric dtypes
    (floats, signed and unsigned integers).

    Args:
        ref: The variable to update.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The values, `indices.shape[:-1] + ref.shape[depth:]`,
            converted to the variable's dtype.
        use_locking: True takes the variable's lock exclusively; False
            shares it with other non-locking updates, whose rows may
            interleave.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row and write nothing;
            "IGNORE" and "FILL" drop bad rows; "CLIP" clamps each coordinate
            into `[0, dim - 1]`.

    Returns:
        The variable's value after the update, as TensorFlow returns it (a
        tensor; for a ShardedVariable, the variable itself).

    Raises:
        InvalidArgumentError: A bad index row under the default policy,
            shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: `ref` is not a variable (for a tensor use
            tso.tensor_scatter_nd_max), a dtype the op does not
            take, or a RaggedTensor or SparseTensor input.
        NotImplementedError: A SyncOnRead variable, or a distributed one
            whose aggregation is not NONE or ONLY_FIRST_REPLICA.

    Example:
        >>> v = tf.Variable([1.0, 1.0, 1.0, 1.0])
        >>> tso.scatter_nd_max(v, [[0], [0], [2]], [0.5, 3.0, 2.0]).numpy().tolist()
        [3.0, 1.0, 2.0, 1.0]
        >>> v.numpy().tolist()
        [3.0, 1.0, 2.0, 1.0]
    """
    return _scatter("scatter_nd_max", ref, indices, updates, use_locking, name, bad_indices_policy)


# The tf.Variable methods that take an IndexedSlices (TensorFlow's
# ResourceScatter* and ResourceGather), on our kernels: what Keras's and v1's
# optimizers call to apply a sparse gradient. Indices of any rank address
# rows (the depth-1 indices of scatter_nd_*); TensorFlow's methods take the
# variable's lock whatever use_locking says, and so do these.
SPARSE_DELTA_METHODS = {"scatter_add": scatter_nd_add, "scatter_sub": scatter_nd_sub,
                     "scatter_min": scatter_nd_min, "scatter_max": scatter_nd_max,
                     "scatter_update": scatter_nd_update}


def sparse_delta_method(method, tensorflows):
    """variable.<method>(sparse_delta, use_locking=False, name=None) on our
    in-place scatter; `tensorflows` (the method it replaces) takes what ours
    does not: a dtype our ops do not take."""
    ours = SPARSE_DELTA_METHODS[method]
    tensor_op = TENSOR_OPS[ours.__name__]

    def f(self, sparse_delta, use_locking=False, name=None):
        if not isinstance(sparse_delta, tf.IndexedSlices):
            raise TypeError(f"Argument `sparse_delta` must be a `tf.IndexedSlices`. "
                            f"Received arg: {sparse_delta}")
        if self.dtype.base_dtype not in convert.DTYPE_SETS[tensor_op]:
            return tensorflows(self, sparse_delta, use_locking, name)
        rows = tf.expand_dims(convert.indices(sparse_delta.indices), -1)
        return ours(self, rows, sparse_delta.values, True, name or method)
    f.__name__ = f.__qualname__ = method
    f.__doc__ = f"tf.Variable.{method} on the plugin's {ours.__name__} (in place)."
    return convert.public(f)


def sparse_read_method(tensorflows):
    """variable.sparse_read(indices, name=None): the rows at `indices` (any
    rank), read straight from the variable's buffer (ResourceGatherNd, an
    IndexedSlices gradient); other dtypes: TensorFlow's method."""
    def sparse_read(self, indices, name=None):
        if self.dtype.base_dtype not in convert.DTYPE_SETS["gather_nd"]:
            return tensorflows(self, indices, name)
        with convert.scope(name or "Gather"):
            return variable_rows.gather_rows(self, tf.expand_dims(convert.indices(indices), -1), "")
    sparse_read.__doc__ = "tf.Variable.sparse_read on the plugin's row read."
    return convert.public(sparse_read)


# tf.raw_ops.ResourceScatter<Op>(resource, indices, updates): what tf-keras's
# legacy optimizers (Adam, Nadam, Adamax, RMSprop without its fused kernel,
# SGD) update a slot's or a table's rows with: one per variable op of the
# table (ScatterNdAdd -> ResourceScatterAdd; interned, as the patch looks
# names up in tf.compat.v1's module wrapper by their str object).
RAW_RESOURCE_SCATTERS = {sys.intern("Resource" + row.variable.replace("ScatterNd", "Scatter")): name
                         for name, row in table.VARIABLE_SCATTERS.items()}


def raw_resource_scatter(raw, tensorflows):
    """tf.raw_ops.<raw>(resource, indices, updates, name=None) on our
    in-place scatter of the variable behind the handle `resource` (the rows
    at `indices`, of any shape, as TensorFlow's op takes them; TensorFlow's
    lock). `tensorflows` (the raw op it replaces) runs what ours does not:
    another dtype, XLA (which compiles TensorFlow's op), stock_ops()."""
    op = RAW_RESOURCE_SCATTERS[raw]
    tensor_op = TENSOR_OPS[op]

    def f(resource, indices, updates, name=None):
        updates = convert.tensor(updates, name="updates")
        if (updates.dtype.base_dtype not in convert.DTYPE_SETS[tensor_op]
                or context.emitting_stock() or context.in_xla_context()):
            return tensorflows(resource=resource, indices=indices, updates=updates, name=name)
        with convert.scope(name or raw):
            rows = tf.expand_dims(convert.indices(indices), -1)
            return backends.scatter_variable(op, types.SimpleNamespace(handle=resource), rows,
                                             updates, True, "")  # (all it reads: the handle)
    f.__name__ = f.__qualname__ = raw
    f.__doc__ = f"tf.raw_ops.{raw} on the plugin's {op} (in place)."
    return convert.public(f)
