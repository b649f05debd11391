"""Python wrappers with TensorFlow's names and positional order.

Semantics (all ops, every device we register):

* indices ``[..., depth]`` address the first ``depth`` dimensions of the
  output; ``depth`` may be anything from 0 (whole-tensor slices) to the rank.
* Duplicates: ``update`` keeps the last update in index order; ``add``,
  ``sub`` and ``scatter_nd`` accumulate in index order (so float results are
  bitwise equal to TensorFlow's CPU kernel); ``scatter_nd`` concatenates
  strings and ORs bools; ``min``/``max`` include the tensor's own values.
* ``bad_indices_policy``: ``""``, ``"DEFAULT"`` or ``"ERROR"`` raise
  ``InvalidArgumentError`` naming the first bad row (TensorFlow names the
  last one); ``"IGNORE"`` drops bad rows (``gather_nd``: zeros for them);
  ``"CLIP"`` clamps each coordinate into its dimension; ``"FILL"`` drops
  bad rows of scatters and gives ``fill_value`` for those of gathers.
  Negative indices are out of bounds. Anything else is an
  ``InvalidArgumentError``.
"""

import tensorflow as tf

from tf_scatter_ops._base import table
from tf_scatter_ops._base.tf_private import array_ops as _array_ops
from tf_scatter_ops._dispatch import backends, bounds, context, convert, variable_rows
from tf_scatter_ops._dispatch.context import xla_uses_our_kernels  # noqa: F401  (API)
from tf_scatter_ops._dispatch.convert import DTYPES, INDEX_DTYPES, POLICIES, public  # noqa: F401


def _tensor_scatter(op, tensor, indices, updates, bad_indices_policy, name, include_self=True,
                    indices_are_sorted=False, unique_indices=False):
    # Tiny eager calls are dominated by Python: go straight to the op when the
    # inputs are eager tensors of valid dtypes (the kernel checks the rest)
    # and we execute eagerly: a function being traced can capture eager
    # tensors, and there the op needs library_op's node name and traceback,
    # or XLA's lowering.
    if (bad_indices_policy == "" and include_self is True and indices_are_sorted is False
            and unique_indices is False and backends.eager_ours(tensor, indices, updates)):
        dtype = tensor._datatype_enum()
        if (dtype in convert.ENUM_SETS[op] and indices._datatype_enum() in convert.INDEX_ENUMS
                and updates._datatype_enum() == dtype):
            return backends.eager_op(op)(tensor, indices, updates)
    policy = convert.check_policy(bad_indices_policy)
    with convert.scope(name or op):
        tensor = convert.tensor(tensor, name="tensor")
        convert.check_dtype(op, tensor.dtype)
        indices = convert.indices(indices)
        updates = convert.tensor(updates, dtype=tensor.dtype, name="updates")
        indices, policy = bounds.nd(policy, indices, like=tensor)
        hints = backends.hint_attrs(indices_are_sorted, unique_indices)
        if not _check_include_self(include_self):
            tensor = _exclude_self(op, tensor, indices, updates, policy, hints)
        return backends.run(op, policy, hints, tensor=tensor, indices=indices, updates=updates)


def _check_include_self(include_self):
    if not isinstance(include_self, bool):
        raise ValueError(f"include_self must be a Python bool, got {include_self!r}")
    return include_self


def _exclude_self(op, tensor, indices, updates, policy, hints):
    """include_self=False (PyTorch's scatter_reduce): `tensor` with the
    reduction's identity at the slots the updates reach, so that only the
    updates reduce there; other slots keep their value."""
    fill = tf.fill(tf.shape(updates), table.identity(table.BY_PY[op].reducer, tensor.dtype))
    return backends.run("tensor_scatter_nd_update", policy, hints, tensor=tensor,
                        indices=indices, updates=fill)


@public
def scatter_nd(indices, updates, shape, bad_indices_policy="", name=None,
               indices_are_sorted=False, unique_indices=False):
    """Scatters `updates` into a new zero tensor of `shape` at `indices`.

    Like `tf.scatter_nd`: duplicates accumulate in index order (strings
    concatenate, bools OR). Index depth may be 0..rank; indices may be int16,
    int32 or int64, and `shape` is cast to the wider of its and the indices'
    dtype instead of failing on a mismatch. `indices_are_sorted` /
    `unique_indices` promise that the rows' destinations are sorted /
    distinct (see tensor_scatter_nd_add).
    """
    policy = convert.check_policy(bad_indices_policy)
    with convert.scope(name or "scatter_nd"):
        indices = convert.indices(indices)
        updates = convert.tensor(updates, name="updates")
        convert.check_dtype("scatter_nd", updates.dtype)
        shape = convert.int_tensor(shape, indices.dtype, "shape")
        if shape.dtype not in convert.INDEX_SET:
            raise ValueError(
                f"shape must be int16, int32 or int64, got {shape.dtype.name}")
        if shape.dtype != indices.dtype:
            wide = max(shape.dtype, indices.dtype, key=lambda d: d.size)
            shape, indices = tf.cast(shape, wide), tf.cast(indices, wide)
        indices, policy = bounds.nd(policy, indices, shape=shape)
        return backends.run("scatter_nd", policy,
                            backends.hint_attrs(indices_are_sorted, unique_indices),
                            indices=indices, updates=updates, shape=shape)


# The reductions that take include_self (PyTorch's scatter_reduce's): with
# include_self=False the tensor's value at a slot the updates reach is left
# out of the reduction there.
_REDUCES_SELF = ("add", "mul", "min", "max")


def _tensor_scatter_function(op, doc):
    """One public tensor_scatter_nd_* function with TensorFlow's signature:
    (tensor, indices, updates, bad_indices_policy="", name=None), except
    tf.tensor_scatter_nd_update, whose 4th parameter is `name`; there
    bad_indices_policy comes after it, as in our gather_nd. Then
    include_self (the reductions) and the promises about the index rows,
    indices_are_sorted and unique_indices (JAX's names): with
    indices_are_sorted (and unique_indices: strictly increasing) the CPU
    kernel skips its grouping passes and checks the promise as it reads the
    rows (an InvalidArgumentError naming the first row that breaks it; under
    bad_indices_policy="IGNORE" the rows are then applied as without it).
    unique_indices alone changes no work on the CPU and is not checked; under
    XLA neither promise is used or checked."""
    if op == "tensor_scatter_nd_update":
        def f(tensor, indices, updates, name=None, bad_indices_policy="",
              indices_are_sorted=False, unique_indices=False):
            return _tensor_scatter(op, tensor, indices, updates, bad_indices_policy, name,
                                   True, indices_are_sorted, unique_indices)
    elif op.rsplit("_", 1)[1] in _REDUCES_SELF:
        def f(tensor, indices, updates, bad_indices_policy="", name=None, include_self=True,
              indices_are_sorted=False, unique_indices=False):
            return _tensor_scatter(op, tensor, indices, updates, bad_indices_policy, name,
                                   include_self, indices_are_sorted, unique_indices)
    else:
        def f(tensor, indices, updates, bad_indices_policy="", name=None,
              indices_are_sorted=False, unique_indices=False):
            return _tensor_scatter(op, tensor, indices, updates, bad_indices_policy, name,
                                   True, indices_are_sorted, unique_indices)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return public(f)


tensor_scatter_nd_update = _tensor_scatter_function(
    "tensor_scatter_nd_update",
    """Copy of `tensor` with `updates` written at `indices`; the last duplicate
    in index order wins (on every device). The gradient goes to the winning
    update only (TensorFlow gives it to every duplicate).""")
tensor_scatter_nd_add = _tensor_scatter_function(
    "tensor_scatter_nd_add",
    "Copy of `tensor` with `updates` added at `indices`, in index order.")
tensor_scatter_nd_sub = _tensor_scatter_function(
    "tensor_scatter_nd_sub",
    "Copy of `tensor` with `updates` subtracted at `indices`, in index order.")
tensor_scatter_nd_min = _tensor_scatter_function(
    "tensor_scatter_nd_min",
    "Elementwise minimum of `tensor` and the updates at `indices`.")
tensor_scatter_nd_max = _tensor_scatter_function(
    "tensor_scatter_nd_max",
    "Elementwise maximum of `tensor` and the updates at `indices`.")
tensor_scatter_nd_mul = _tensor_scatter_function(
    "tensor_scatter_nd_mul",
    """Copy of `tensor` multiplied by the updates at `indices`, in index order
    (integers wrap). TensorFlow has no such op (JAX: `.at[].multiply`).
    The gradient is exact where updates are zero.""")
tensor_scatter_nd_div = _tensor_scatter_function(
    "tensor_scatter_nd_div",
    """Copy of `tensor` divided by each update at `indices`, in index order;
    floating dtypes (TensorFlow's `/` makes floats of integers too; cast
    first). TensorFlow has no such op (JAX: `.at[].divide`).""")


@public
def tensor_scatter_nd_mean(tensor, indices, updates, bad_indices_policy="", name=None,
                           include_self=True, indices_are_sorted=False, unique_indices=False):
    """Copy of `tensor` where each slot the updates reach holds the mean of
    its updates and, with include_self (PyTorch's scatter_reduce "mean"),
    its own value; other slots keep theirs. Integers divide with truncation
    (as segment_mean). A sum, a count and a division of the plugin's ops."""
    _check_include_self(include_self)
    policy = convert.check_policy(bad_indices_policy)
    with convert.scope(name or "tensor_scatter_nd_mean"):
        tensor = convert.tensor(tensor, name="tensor")
        convert.check_dtype("tensor_scatter_nd_add", tensor.dtype, "tensor_scatter_nd_mean")
        indices = convert.indices(indices)
        updates = convert.tensor(updates, dtype=tensor.dtype, name="updates")
        indices, policy = bounds.nd(policy, indices, like=tensor)
        hints = {"indices_are_sorted": indices_are_sorted, "unique_indices": unique_indices}
        sums = tensor_scatter_nd_add(tensor, indices, updates, bad_indices_policy=policy,
                                     include_self=include_self, **hints)
        depth = tf.shape(indices)[-1]
        rows = tf.ones(tf.shape(indices)[:-1], tf.int32)
        count = scatter_nd(indices, rows, tf.shape(tensor)[:depth], bad_indices_policy=policy,
                           **hints)
        count = tf.reshape(count + int(include_self), tf.concat(
            [tf.shape(count), tf.ones([tf.rank(tensor) - depth], tf.int32)], 0))
        count = tf.cast(tf.maximum(count, 1), tensor.dtype)  # untouched slots: x / 1
        return tf.truncatediv(sums, count) if tensor.dtype.is_integer else sums / count


def _batch_indices(params, indices, batch_dims):
    """Prepends each row's batch coordinates, as TensorFlow's batch_gather_nd
    does, so a batched gather becomes a plain one."""
    if indices.shape.rank is None:
        raise ValueError("gather_nd with batch_dims > 0 needs indices of known rank")
    if batch_dims >= indices.shape.rank:
        raise ValueError(
            f"batch_dims = {batch_dims} must be less than the rank of indices "
            f"(shape {indices.shape})")
    if params.shape.rank is not None and batch_dims > params.shape.rank:
        raise ValueError(
            f"batch_dims = {batch_dims} exceeds the rank of params "
            f"(shape {params.shape})")
    outer = tf.shape(indices, out_type=indices.dtype)[:-1]
    rank = indices.shape.rank - 1
    coords = []
    for d in range(batch_dims):
        axis = tf.range(outer[d], dtype=indices.dtype)
        axis = tf.reshape(axis, [-1 if k == d else 1 for k in range(rank)])
        coords.append(tf.broadcast_to(axis, outer))
    return tf.concat([tf.stack(coords, axis=-1), indices], axis=-1)


@public
def gather_nd(params, indices, batch_dims=0, name=None, bad_indices_policy="", fill_value=None):
    """Gathers slices of `params` at `indices` (the inverse of scatter_nd).

    Like `tf.gather_nd`, including `batch_dims`. Rows with bad indices raise
    InvalidArgumentError, or with "IGNORE" give zeros, with "FILL"
    `fill_value` (a scalar or a slice; by default NaN, a signed integer
    dtype's lowest value, an unsigned one's highest, True), with "CLIP" the
    slice at the clamped indices. From
    a variable, the rows are read straight from its buffer (no copy of the
    variable). For rank-2 indices of depth 1 (row lookups) the gradient is a
    `tf.IndexedSlices`, as in TensorFlow.
    """
    given = policy = convert.check_policy(bad_indices_policy)
    bounds.check_fill(policy, fill_value)
    with convert.scope(name or "gather_nd"):
        variable = variable_rows.local_variable(params)
        from_variable = (variable_rows.is_resource_variable(variable)
                         or variable_rows.is_sharded(variable))
        if from_variable:
            params = variable  # rows read from its buffer, not a copy of it
        else:
            params = convert.tensor(params, name="params")
        convert.check_dtype("gather_nd", params.dtype)
        indices = convert.indices(indices)
        given_dims, batch_dims = batch_dims, convert.static_int(batch_dims)
        if batch_dims is None or batch_dims < 0:
            raise ValueError(
                "batch_dims must be a non-negative integer known when the op is built, "
                f"got {convert.describe(given_dims)}")
        if batch_dims:
            indices = _batch_indices(params, indices, batch_dims)
        indices, policy = bounds.nd(policy, indices, like=params)
        if variable_rows.is_sharded(variable):  # each shard reads its own rows
            rows = variable_rows.Rows(variable.variables, variable.shape, indices, policy,
                                      "gather_nd")
            out = rows.stitch([variable_rows.gather_rows(shard, local, policy)
                               for shard, local in zip(rows.shards, rows.local)], variable.dtype)
        elif from_variable:
            out = variable_rows.gather_rows(variable, indices, policy)
        else:
            out = backends.run("gather_nd", policy, params=params, indices=indices)
        return bounds.fill(given, out, indices, fill_value, like=params)


@public
def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None,
           bad_indices_policy="", fill_value=None):
    """tf.gather: `params`' slices along `axis` at `indices`, of any rank.

    Along axis 0 without batch dimensions (row lookups) this is our
    gather_nd of `indices[..., None]`: rows read straight from a variable,
    the first bad index named (or gather_nd's IGNORE, FILL or CLIP), and a
    `tf.IndexedSlices` gradient of the flattened ids, as tf.gather's.
    From a ShardedVariable each shard reads only its own rows.
    Another axis or batch_dims, a TensorFlow 1.x partitioned variable, a
    dtype our ops do not take, or ragged indices, goes to TensorFlow's tf.gather (which then
    takes no bad_indices_policy). `validate_indices` is ignored, as in
    TensorFlow.
    """
    del validate_indices  # deprecated and ignored by TensorFlow too
    axis_value = 0 if axis is None else convert.static_int(axis)
    if (axis_value == 0 and convert.static_int(batch_dims) == 0 and variable_rows.ours_reads(params)
            and not convert.foreign(indices)):
        with convert.scope(name or "gather"):
            indices = convert.indices(indices)
            return gather_nd(params, tf.expand_dims(indices, -1),
                             bad_indices_policy=bad_indices_policy, fill_value=fill_value)
    if convert.check_policy(bad_indices_policy) or fill_value is not None:
        raise ValueError(
            "bad_indices_policy and fill_value apply to row lookups (axis 0, batch_dims 0) of the "
            f"dtypes gather_nd takes; this gather (axis={axis!r}, batch_dims={batch_dims!r}) "
            "is TensorFlow's")
    return _array_ops.gather(params, indices, name=name, axis=axis, batch_dims=batch_dims)


# TensorFlow 1.x names.
tensor_scatter_update = tensor_scatter_nd_update
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub
