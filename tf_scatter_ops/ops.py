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
from tf_scatter_ops._dispatch import axis_gather, backends, bounds, convert, variable_rows
from tf_scatter_ops._dispatch.context import xla_uses_our_kernels  # noqa: F401  (API)
from tf_scatter_ops._dispatch.convert import DTYPES, INDEX_DTYPES, POLICIES, public  # noqa: F401


def _tensor_scatter(op, tensor, indices, updates, bad_indices_policy, name, include_self=True,
                    indices_are_sorted=False, unique_indices=False):
    """The body of the tensor_scatter_nd_* functions: `op` is the one called."""
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

    `tf.scatter_nd` on the plugin's kernel. Each index row
    `indices[..., :depth]` addresses a slice of the output's first `depth`
    dimensions (depth 0 to the rank); `updates` has the shape
    `indices.shape[:-1] + shape[depth:]`. Duplicates accumulate in index
    order, so float sums are bitwise TensorFlow's CPU result; strings
    concatenate and bools OR. Takes every numeric dtype (complex too), bool
    and string; indices int16, int32 or int64, and `shape` is cast to the
    wider of its and the indices' dtype instead of failing on a mismatch.

    Args:
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The values, `indices.shape[:-1] + shape[depth:]`.
        shape: The output's shape, a 1-D integer tensor or list.
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row; "IGNORE" and
            "FILL" drop bad rows; "CLIP" clamps each coordinate into
            `[0, dim - 1]`.
        name: A name scope for the ops (graphs only).
        indices_are_sorted: Promises that the rows' destinations never
            decrease (row-major). The CPU kernel then skips its grouping
            passes (same result) and checks the promise: a false one is an
            InvalidArgumentError naming the first row that breaks it, or
            under "IGNORE" the rows are applied as without it. Neither used
            nor checked under XLA or by the GPU kernel.
        unique_indices: Promises that no two rows share a destination (with
            `indices_are_sorted`: strictly increasing). Alone it changes
            nothing on the CPU and is not checked.

    Returns:
        A tensor of `shape` and `updates`' dtype: zero (empty string, False)
        where no row reaches.

    Raises:
        InvalidArgumentError: A bad index row under the default policy, a
            broken `indices_are_sorted` promise, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `updates`, `indices` or
            `shape`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.scatter_nd([[1], [3], [1]], [1.0, 2.0, 3.0], [4]).numpy().tolist()
        [0.0, 4.0, 0.0, 2.0]
        >>> tso.scatter_nd([[1], [9]], [1.0, 2.0], [4], bad_indices_policy="CLIP").numpy().tolist()
        [0.0, 1.0, 0.0, 2.0]
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


# The public tensor_scatter_nd_* functions below have TensorFlow's signature,
# (tensor, indices, updates, bad_indices_policy="", name=None), except
# tf.tensor_scatter_nd_update, whose 4th parameter is `name` (there
# bad_indices_policy comes after it, as in gather_nd). Then include_self (the
# reductions PyTorch's scatter_reduce has: add, mul, min, max) and JAX's
# promises about the index rows, indices_are_sorted and unique_indices.


@public
def tensor_scatter_nd_update(tensor, indices, updates, name=None, bad_indices_policy="",
                             indices_are_sorted=False, unique_indices=False):
    """Returns a copy of `tensor` with `updates` written at `indices`.

    `tf.tensor_scatter_nd_update` on the plugin's kernel. Each index row
    `indices[..., :depth]` addresses a slice of `tensor`'s first `depth`
    dimensions (depth 0 to the rank); `updates` has the shape
    `indices.shape[:-1] + tensor.shape[depth:]`. Of duplicate rows the last
    in index order wins, on every device. The gradient goes to the winning
    update alone (TensorFlow gives it to every duplicate). Takes every
    numeric dtype (complex too), bool and string.

    Args:
        tensor: The tensor to copy.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The new values, `indices.shape[:-1] + tensor.shape[depth:]`,
            converted to `tensor`'s dtype.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row; "IGNORE" and
            "FILL" drop bad rows; "CLIP" clamps each coordinate into
            `[0, dim - 1]`.
        indices_are_sorted: Promises that the rows' destinations never
            decrease (row-major). The CPU kernel then skips its grouping
            passes (same result) and checks the promise: a false one is an
            InvalidArgumentError naming the first row that breaks it, or
            under "IGNORE" the rows are applied as without it. Neither used
            nor checked under XLA or by the GPU kernel.
        unique_indices: Promises that no two rows share a destination (with
            `indices_are_sorted`: strictly increasing). Alone it changes
            nothing on the CPU and is not checked.

    Returns:
        A tensor shaped and typed like `tensor`.

    Raises:
        InvalidArgumentError: A bad index row under the default policy, a
            broken `indices_are_sorted` promise, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `tensor`, `updates` or
            `indices`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> t = tf.zeros([4])
        >>> tso.tensor_scatter_nd_update(t, [[1], [3], [1]], [5.0, 6.0, 7.0]).numpy().tolist()
        [0.0, 7.0, 0.0, 6.0]
    """
    return _tensor_scatter("tensor_scatter_nd_update", tensor, indices, updates,
                           bad_indices_policy, name, True, indices_are_sorted, unique_indices)


@public
def tensor_scatter_nd_add(tensor, indices, updates, bad_indices_policy="", name=None,
                          include_self=True, indices_are_sorted=False, unique_indices=False):
    """Returns a copy of `tensor` with `updates` added at `indices`.

    `tf.tensor_scatter_nd_add` on the plugin's kernel. Each index row
    `indices[..., :depth]` addresses a slice of `tensor`'s first `depth`
    dimensions (depth 0 to the rank); `updates` has the shape
    `indices.shape[:-1] + tensor.shape[depth:]`. Duplicate rows add up in
    index order, so float sums are bitwise TensorFlow's CPU result, the same
    for any thread count. Takes every numeric dtype, complex included.

    Args:
        tensor: The tensor to add to.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The values to add, `indices.shape[:-1] + tensor.shape[depth:]`,
            converted to `tensor`'s dtype.
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row; "IGNORE" and
            "FILL" drop bad rows; "CLIP" clamps each coordinate into
            `[0, dim - 1]`.
        name: A name scope for the ops (graphs only).
        include_self: A Python bool. False (PyTorch's scatter_reduce) leaves
            `tensor`'s value out where the updates reach: there the result is
            the sum of the updates alone.
        indices_are_sorted: Promises that the rows' destinations never
            decrease (row-major). The CPU kernel then skips its grouping
            passes (same result) and checks the promise: a false one is an
            InvalidArgumentError naming the first row that breaks it, or
            under "IGNORE" the rows are applied as without it. Neither used
            nor checked under XLA or by the GPU kernel.
        unique_indices: Promises that no two rows share a destination (with
            `indices_are_sorted`: strictly increasing). Alone it changes
            nothing on the CPU and is not checked.

    Returns:
        A tensor shaped and typed like `tensor`.

    Raises:
        InvalidArgumentError: A bad index row under the default policy, a
            broken `indices_are_sorted` promise, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `tensor`, `updates` or
            `indices`), a RaggedTensor or SparseTensor input, or an
            `include_self` that is not a bool.

    Example:
        >>> t = tf.ones([4])
        >>> tso.tensor_scatter_nd_add(t, [[0], [0], [2]], [1.0, 2.0, 3.0]).numpy().tolist()
        [4.0, 1.0, 4.0, 1.0]
        >>> tso.tensor_scatter_nd_add(t, [[0], [0], [2]], [1.0, 2.0, 3.0],
        ...                           include_self=False).numpy().tolist()
        [3.0, 1.0, 3.0, 1.0]
        >>> tso.tensor_scatter_nd_add(t, [[0], [7]], [1.0, 2.0],
        ...                           bad_indices_policy="IGNORE").numpy().tolist()
        [2.0, 1.0, 1.0, 1.0]
    """
    return _tensor_scatter("tensor_scatter_nd_add", tensor, indices, updates, bad_indices_policy,
                           name, include_self, indices_are_sorted, unique_indices)


@public
def tensor_scatter_nd_sub(tensor, indices, updates, bad_indices_policy="", name=None,
                          indices_are_sorted=False, unique_indices=False):
    """Returns a copy of `tensor` with `updates` subtracted at `indices`.

    `tf.tensor_scatter_nd_sub` on the plugin's kernel. Each index row
    `indices[..., :depth]` addresses a slice of `tensor`'s first `depth`
    dimensions (depth 0 to the rank); `updates` has the shape
    `indices.shape[:-1] + tensor.shape[depth:]`. Duplicate rows are
    subtracted in index order, the same bits for any thread count. Takes
    every numeric dtype, complex included.

    Args:
        tensor: The tensor to subtract from.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The values to subtract, `indices.shape[:-1] +
            tensor.shape[depth:]`, converted to `tensor`'s dtype.
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row; "IGNORE" and
            "FILL" drop bad rows; "CLIP" clamps each coordinate into
            `[0, dim - 1]`.
        name: A name scope for the ops (graphs only).
        indices_are_sorted: Promises that the rows' destinations never
            decrease (row-major). The CPU kernel then skips its grouping
            passes (same result) and checks the promise: a false one is an
            InvalidArgumentError naming the first row that breaks it, or
            under "IGNORE" the rows are applied as without it. Neither used
            nor checked under XLA or by the GPU kernel.
        unique_indices: Promises that no two rows share a destination (with
            `indices_are_sorted`: strictly increasing). Alone it changes
            nothing on the CPU and is not checked.

    Returns:
        A tensor shaped and typed like `tensor`.

    Raises:
        InvalidArgumentError: A bad index row under the default policy, a
            broken `indices_are_sorted` promise, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `tensor`, `updates` or
            `indices`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> t = tf.ones([4])
        >>> tso.tensor_scatter_nd_sub(t, [[0], [0], [2]], [1.0, 2.0, 3.0]).numpy().tolist()
        [-2.0, 1.0, -2.0, 1.0]
    """
    return _tensor_scatter("tensor_scatter_nd_sub", tensor, indices, updates, bad_indices_policy,
                           name, True, indices_are_sorted, unique_indices)


@public
def tensor_scatter_nd_min(tensor, indices, updates, bad_indices_policy="", name=None,
                          include_self=True, indices_are_sorted=False, unique_indices=False):
    """Returns a copy of `tensor` with its minimum with `updates` at `indices`.

    `tf.tensor_scatter_nd_min` on the plugin's kernel. Each index row
    `indices[..., :depth]` addresses a slice of `tensor`'s first `depth`
    dimensions (depth 0 to the rank); `updates` has the shape
    `indices.shape[:-1] + tensor.shape[depth:]`. Each element reached becomes
    the minimum of its own value and those of all its updates. Takes the
    real numeric dtypes (floats, signed and unsigned integers).

    Args:
        tensor: The tensor to take the minimum with.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The values, `indices.shape[:-1] + tensor.shape[depth:]`,
            converted to `tensor`'s dtype.
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row; "IGNORE" and
            "FILL" drop bad rows; "CLIP" clamps each coordinate into
            `[0, dim - 1]`.
        name: A name scope for the ops (graphs only).
        include_self: A Python bool. False (PyTorch's scatter_reduce) leaves
            `tensor`'s value out where the updates reach: there the result is
            the minimum of the updates alone.
        indices_are_sorted: Promises that the rows' destinations never
            decrease (row-major). The CPU kernel then skips its grouping
            passes (same result) and checks the promise: a false one is an
            InvalidArgumentError naming the first row that breaks it, or
            under "IGNORE" the rows are applied as without it. Neither used
            nor checked under XLA or by the GPU kernel.
        unique_indices: Promises that no two rows share a destination (with
            `indices_are_sorted`: strictly increasing). Alone it changes
            nothing on the CPU and is not checked.

    Returns:
        A tensor shaped and typed like `tensor`.

    Raises:
        InvalidArgumentError: A bad index row under the default policy, a
            broken `indices_are_sorted` promise, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `tensor`, `updates` or
            `indices`), a RaggedTensor or SparseTensor input, or an
            `include_self` that is not a bool.

    Example:
        >>> t = tf.constant([5.0, 5.0, 5.0])
        >>> tso.tensor_scatter_nd_min(t, [[0], [0], [2]], [3.0, 1.0, 7.0]).numpy().tolist()
        [1.0, 5.0, 5.0]
        >>> tso.tensor_scatter_nd_min(t, [[0], [0], [2]], [3.0, 1.0, 7.0],
        ...                           include_self=False).numpy().tolist()
        [1.0, 5.0, 7.0]
    """
    return _tensor_scatter("tensor_scatter_nd_min", tensor, indices, updates, bad_indices_policy,
                           name, include_self, indices_are_sorted, unique_indices)


@public
def tensor_scatter_nd_max(tensor, indices, updates, bad_indices_policy="", name=None,
                          include_self=True, indices_are_sorted=False, unique_indices=False):
    """Returns a copy of `tensor` with its maximum with `updates` at `indices`.

    `tf.tensor_scatter_nd_max` on the plugin's kernel. Each index row
    `indices[..., :depth]` addresses a slice of `tensor`'s first `depth`
    dimensions (depth 0 to the rank); `updates` has the shape
    `indices.shape[:-1] + tensor.shape[depth:]`. Each element reached becomes
    the maximum of its own value and those of all its updates. Takes the
    real numeric dtypes (floats, signed and unsigned integers).

    Args:
        tensor: The tensor to take the maximum with.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The values, `indices.shape[:-1] + tensor.shape[depth:]`,
            converted to `tensor`'s dtype.
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row; "IGNORE" and
            "FILL" drop bad rows; "CLIP" clamps each coordinate into
            `[0, dim - 1]`.
        name: A name scope for the ops (graphs only).
        include_self: A Python bool. False (PyTorch's scatter_reduce) leaves
            `tensor`'s value out where the updates reach: there the result is
            the maximum of the updates alone.
        indices_are_sorted: Promises that the rows' destinations never
            decrease (row-major). The CPU kernel then skips its grouping
            passes (same result) and checks the promise: a false one is an
            InvalidArgumentError naming the first row that breaks it, or
            under "IGNORE" the rows are applied as without it. Neither used
            nor checked under XLA or by the GPU kernel.
        unique_indices: Promises that no two rows share a destination (with
            `indices_are_sorted`: strictly increasing). Alone it changes
            nothing on the CPU and is not checked.

    Returns:
        A tensor shaped and typed like `tensor`.

    Raises:
        InvalidArgumentError: A bad index row under the default policy, a
            broken `indices_are_sorted` promise, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `tensor`, `updates` or
            `indices`), a RaggedTensor or SparseTensor input, or an
            `include_self` that is not a bool.

    Example:
        >>> t = tf.constant([5.0, 5.0, 5.0])
        >>> tso.tensor_scatter_nd_max(t, [[0], [0], [2]], [3.0, 1.0, 7.0]).numpy().tolist()
        [5.0, 5.0, 7.0]
        >>> tso.tensor_scatter_nd_max(t, [[0], [0], [2]], [3.0, 1.0, 7.0],
        ...                           include_self=False).numpy().tolist()
        [3.0, 5.0, 7.0]
    """
    return _tensor_scatter("tensor_scatter_nd_max", tensor, indices, updates, bad_indices_policy,
                           name, include_self, indices_are_sorted, unique_indices)


@public
def tensor_scatter_nd_mul(tensor, indices, updates, bad_indices_policy="", name=None,
                          include_self=True, indices_are_sorted=False, unique_indices=False):
    """Returns a copy of `tensor` multiplied by `updates` at `indices`.

    TensorFlow has no such op (JAX: `.at[].multiply`). Each index row
    `indices[..., :depth]` addresses a slice of `tensor`'s first `depth`
    dimensions (depth 0 to the rank); `updates` has the shape
    `indices.shape[:-1] + tensor.shape[depth:]`. Duplicate rows multiply in
    index order; integers wrap. The gradient is exact where updates are
    zero. Takes the real numeric dtypes (floats, signed and unsigned
    integers).

    Args:
        tensor: The tensor to multiply.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The factors, `indices.shape[:-1] + tensor.shape[depth:]`,
            converted to `tensor`'s dtype.
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row; "IGNORE" and
            "FILL" drop bad rows; "CLIP" clamps each coordinate into
            `[0, dim - 1]`.
        name: A name scope for the ops (graphs only).
        include_self: A Python bool. False (PyTorch's scatter_reduce) leaves
            `tensor`'s value out where the updates reach: there the result is
            the product of the updates alone.
        indices_are_sorted: Promises that the rows' destinations never
            decrease (row-major). The CPU kernel then skips its grouping
            passes (same result) and checks the promise: a false one is an
            InvalidArgumentError naming the first row that breaks it, or
            under "IGNORE" the rows are applied as without it. Neither used
            nor checked under XLA or by the GPU kernel.
        unique_indices: Promises that no two rows share a destination (with
            `indices_are_sorted`: strictly increasing). Alone it changes
            nothing on the CPU and is not checked.

    Returns:
        A tensor shaped and typed like `tensor`.

    Raises:
        InvalidArgumentError: A bad index row under the default policy, a
            broken `indices_are_sorted` promise, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `tensor`, `updates` or
            `indices`), a RaggedTensor or SparseTensor input, or an
            `include_self` that is not a bool.

    Example:
        >>> t = tf.constant([2, 2, 2])
        >>> tso.tensor_scatter_nd_mul(t, [[0], [0], [1]], [3, 4, 5]).numpy().tolist()
        [24, 10, 2]
        >>> tso.tensor_scatter_nd_mul(t, [[0], [0], [1]], [3, 4, 5],
        ...                           include_self=False).numpy().tolist()
        [12, 5, 2]
    """
    return _tensor_scatter("tensor_scatter_nd_mul", tensor, indices, updates, bad_indices_policy,
                           name, include_self, indices_are_sorted, unique_indices)


@public
def tensor_scatter_nd_div(tensor, indices, updates, bad_indices_policy="", name=None,
                          indices_are_sorted=False, unique_indices=False):
    """Returns a copy of `tensor` divided by `updates` at `indices`.

    TensorFlow has no such op (JAX: `.at[].divide`). Each index row
    `indices[..., :depth]` addresses a slice of `tensor`'s first `depth`
    dimensions (depth 0 to the rank); `updates` has the shape
    `indices.shape[:-1] + tensor.shape[depth:]`. Each element reached is
    divided by each of its updates in index order. Takes the floating dtypes
    (bfloat16, float16, float32, float64): TensorFlow's `/` makes floats of
    integers too, so cast integers first.

    Args:
        tensor: The tensor to divide.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The divisors, `indices.shape[:-1] + tensor.shape[depth:]`,
            converted to `tensor`'s dtype.
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row; "IGNORE" and
            "FILL" drop bad rows; "CLIP" clamps each coordinate into
            `[0, dim - 1]`.
        name: A name scope for the ops (graphs only).
        indices_are_sorted: Promises that the rows' destinations never
            decrease (row-major). The CPU kernel then skips its grouping
            passes (same result) and checks the promise: a false one is an
            InvalidArgumentError naming the first row that breaks it, or
            under "IGNORE" the rows are applied as without it. Neither used
            nor checked under XLA or by the GPU kernel.
        unique_indices: Promises that no two rows share a destination (with
            `indices_are_sorted`: strictly increasing). Alone it changes
            nothing on the CPU and is not checked.

    Returns:
        A tensor shaped and typed like `tensor`.

    Raises:
        InvalidArgumentError: A bad index row under the default policy, a
            broken `indices_are_sorted` promise, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (integers: cast them first),
            or a RaggedTensor or SparseTensor input.

    Example:
        >>> t = tf.constant([8.0, 8.0, 8.0])
        >>> tso.tensor_scatter_nd_div(t, [[0], [0], [1]], [2.0, 2.0, 4.0]).numpy().tolist()
        [2.0, 2.0, 8.0]
    """
    return _tensor_scatter("tensor_scatter_nd_div", tensor, indices, updates, bad_indices_policy,
                           name, True, indices_are_sorted, unique_indices)


@public
def tensor_scatter_nd_mean(tensor, indices, updates, bad_indices_policy="", name=None,
                           include_self=True, indices_are_sorted=False, unique_indices=False):
    """Returns a copy of `tensor` holding the mean of the updates at `indices`.

    TensorFlow has no such op (PyTorch: scatter_reduce's "mean"). Each index
    row `indices[..., :depth]` addresses a slice of `tensor`'s first `depth`
    dimensions (depth 0 to the rank); `updates` has the shape
    `indices.shape[:-1] + tensor.shape[depth:]`. Each element reached holds
    the mean of its updates and, with `include_self`, its own value; other
    elements keep theirs. Integers divide with truncation (as segment_mean).
    Computed as the plugin's tensor_scatter_nd_add, a scatter_nd of the
    counts and a division. Takes every numeric dtype, complex included.

    Args:
        tensor: The tensor whose reached elements are averaged.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The values, `indices.shape[:-1] + tensor.shape[depth:]`,
            converted to `tensor`'s dtype.
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row; "IGNORE" and
            "FILL" drop bad rows (they count for no mean); "CLIP" clamps
            each coordinate into `[0, dim - 1]`.
        name: A name scope for the ops (graphs only).
        include_self: A Python bool. False leaves `tensor`'s value out where
            the updates reach: there the result is the mean of the updates
            alone.
        indices_are_sorted: Promises that the rows' destinations never
            decrease (row-major), as for tensor_scatter_nd_add: checked by
            the CPU kernel (a false one is an InvalidArgumentError naming
            the first row that breaks it, unless "IGNORE"), not under XLA or
            on a GPU.
        unique_indices: Promises that no two rows share a destination (with
            `indices_are_sorted`: strictly increasing). Alone it changes
            nothing on the CPU and is not checked.

    Returns:
        A tensor shaped and typed like `tensor`.

    Raises:
        InvalidArgumentError: A bad index row under the default policy, a
            broken `indices_are_sorted` promise, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `tensor`, `updates` or
            `indices`), a RaggedTensor or SparseTensor input, or an
            `include_self` that is not a bool.

    Example:
        >>> t = tf.constant([1.0, 1.0, 1.0])
        >>> tso.tensor_scatter_nd_mean(t, [[0], [0], [2]], [2.0, 3.0, 5.0]).numpy().tolist()
        [2.0, 1.0, 3.0]
        >>> tso.tensor_scatter_nd_mean(t, [[0], [0], [2]], [2.0, 3.0, 5.0],
        ...                            include_self=False).numpy().tolist()
        [2.5, 1.0, 5.0]
    """
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
    """Gathers the slices of `params` at `indices` (the inverse of scatter_nd).

    `tf.gather_nd` on the plugin's kernel, `batch_dims` included. Each index
    row `indices[..., :depth]` picks the slice `params[row]`; the output has
    the shape `indices.shape[:-1] + params.shape[batch_dims + depth:]`. From
    a variable (resource, Keras, distributed or sharded) the rows are read
    straight from its buffer, with no copy of the variable. For rank-2
    indices of depth 1 (row lookups) the gradient is a `tf.IndexedSlices`,
    as in TensorFlow. Takes every numeric dtype (complex too), bool and
    string.

    Args:
        params: The tensor or variable to read.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        batch_dims: The number of leading batch dimensions `params` and
            `indices` share, a non-negative int known when the op is built.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row; "IGNORE" gives
            zeros for it; "FILL" gives `fill_value`; "CLIP" clamps each
            coordinate into `[0, dim - 1]` and gives that slice.
        fill_value: With "FILL" only: a scalar or one slice for the bad rows,
            in the output's dtype. By default NaN (floats, complex), a signed
            integer dtype's lowest value, an unsigned one's highest, True,
            or an empty string.

    Returns:
        A tensor of `params`' dtype and shape
        `indices.shape[:-1] + params.shape[batch_dims + depth:]`.

    Raises:
        InvalidArgumentError: A bad index row under the default policy,
            shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: A dtype the op does not take, a RaggedTensor or
            SparseTensor input, a bad `batch_dims`, or a `fill_value`
            without "FILL", of another shape, or that does not fit the dtype.

    Example:
        >>> table = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> tso.gather_nd(table, [[2], [0]]).numpy().tolist()
        [[5.0, 6.0], [1.0, 2.0]]
        >>> tso.gather_nd(table, [[1, 1]]).numpy().tolist()
        [4.0]
        >>> tso.gather_nd(table, [[1], [7]], bad_indices_policy="FILL",
        ...               fill_value=-1.0).numpy().tolist()
        [[3.0, 4.0], [-1.0, -1.0]]
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
    """Gathers the slices of `params` along `axis` at `indices` (`tf.gather`).

    Along axis 0 without batch dimensions (row lookups) this is the plugin's
    gather_nd of `indices[..., None]`: rows read straight from a variable
    (from a ShardedVariable each shard reads only its own rows), the first
    bad index named (or gather_nd's "IGNORE", "FILL" or "CLIP"), and a
    `tf.IndexedSlices` gradient of the flattened ids, as tf.gather's.
    Along another axis or with `batch_dims`, `params` is read as rows of
    the slice after `axis` and the ids are made flat (each checked against
    its axis first): one gather_nd, where the slice has at least 8 elements
    or a policy is given (narrower slices, XLA and stock_ops() keep
    TensorFlow's GatherV2), with a dense gradient, as TensorFlow's. A rank,
    axis or batch_dims unknown when the graph is built, a TensorFlow 1.x
    partitioned variable, a dtype the plugin's ops do not take, or ragged
    indices go to TensorFlow's tf.gather, which then takes no
    `bad_indices_policy`.

    Args:
        params: The tensor or variable to read, of rank at least `axis + 1`.
        indices: The ids to read, of any shape: int16, int32 or int64.
        validate_indices: Ignored, as in TensorFlow (deprecated there).
        axis: The axis of `params` the ids index; None means `batch_dims`.
        batch_dims: The number of leading batch dimensions `params` and
            `indices` share; negative counts from the rank of `indices`.
        name: A name scope for the ops (graphs only).
        bad_indices_policy: Ids out of range (negative, or not below the
            size of `axis`): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad id; "IGNORE" gives
            zeros for it; "FILL" gives `fill_value`; "CLIP" clamps it into
            that range.
        fill_value: With "FILL" only: a scalar or one row for the bad ids,
            in the output's dtype; by default gather_nd's (NaN for floats).

    Returns:
        A tensor of `params`' dtype and shape `params.shape[:axis] +
        indices.shape[batch_dims:] + params.shape[axis + 1:]`.

    Raises:
        InvalidArgumentError: A bad id under the default policy, or an
            unknown `bad_indices_policy`.
        ValueError: A `bad_indices_policy` or `fill_value` for a gather that
            TensorFlow runs (ranks or axis unknown), or a `fill_value`
            without "FILL" or of another shape.

    Example:
        >>> table = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> tso.gather(table, [2, 0]).numpy().tolist()
        [[5.0, 6.0], [1.0, 2.0]]
        >>> tso.gather(table, [1, 9], bad_indices_policy="FILL",
        ...            fill_value=[-1.0, 0.0]).numpy().tolist()
        [[3.0, 4.0], [-1.0, 0.0]]
        >>> tso.gather(table, [1], axis=1).numpy().tolist()
        [[2.0], [4.0], [6.0]]
    """
    del validate_indices  # deprecated and ignored by TensorFlow too
    axis_value = 0 if axis is None else convert.static_int(axis)
    if (axis_value == 0 and convert.static_int(batch_dims) == 0 and variable_rows.ours_reads(params)
            and not convert.foreign(indices)):
        with convert.scope(name or "gather"):
            indices = convert.indices(indices)
            return gather_nd(params, tf.expand_dims(indices, -1),
                             bad_indices_policy=bad_indices_policy, fill_value=fill_value)
    policy = convert.check_policy(bad_indices_policy)
    along = (None if convert.foreign(indices) or not variable_rows.ours_reads(params)
             else axis_gather.normalized(params, indices, axis, batch_dims))
    if along is not None and (policy or fill_value is not None
                              or axis_gather.ours_by_default(params, along[0])):
        bounds.check_fill(policy, fill_value)
        with convert.scope(name or "gather"):
            return axis_gather.gather(params, indices, *along, policy, fill_value)
    if policy or fill_value is not None:
        raise ValueError(
            "bad_indices_policy and fill_value apply to the gathers of the dtypes gather_nd "
            f"takes, with axis and batch_dims known; this gather (axis={axis!r}, "
            f"batch_dims={batch_dims!r}) is TensorFlow's")
    return _array_ops.gather(params, indices, name=name, axis=axis, batch_dims=batch_dims)


# TensorFlow 1.x names.
tensor_scatter_update = tensor_scatter_nd_update
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub
