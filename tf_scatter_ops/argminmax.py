"""The maximum or minimum of a scatter or of segments, with the position of
the update row that holds it (PyTorch Scatter's scatter_max / scatter_min):

    out, argmax = tso.unsorted_segment_max_with_argmax(data, segment_ids, num_segments)
    argmax = tso.unsorted_segment_argmax(data, segment_ids, num_segments)
    out, argmax = tso.tensor_scatter_nd_max_with_argmax(tensor, indices, updates)
    argmax = tso.tensor_scatter_nd_argmax(tensor, indices, updates)
    # and _min_with_argmin, _argmin

One pass computes both. The positions (int64, shaped like the output) count
the update rows: data's rows as segment_ids' elements in row-major order, or
indices' outer dims in row-major order. Per output element:

- ties: the first row in index order holds it, and the value is that row's
  own (the sign of a zero, a NaN's bits);
- NaN is greater (smaller) than every number, as in NumPy's argmax: the
  first NaN wins (unsorted_segment_max's value follows TensorFlow's segment
  kernels instead: a later number replaces a NaN, -inf alone gives the
  dtype's lowest value);
- an empty segment: the dtype's lowest (highest) value, position -1;
- tensor_scatter_nd_*: the tensor's own value stays, with position -1,
  unless an update is strictly greater (smaller) or a NaN.

The inputs and bad-index rules are unsorted_segment_*'s and
tensor_scatter_nd_*'s. The gradient of the value goes to the winning row
alone (TensorFlow's segment max splits it between ties), or to the tensor
where it stayed; the positions have none. The kernels (CPU and GPU) give the
same bits; under XLA and inside stock_ops() the functions are TensorFlow's
scatters and segment max/min with gathers and element-wise ops (same results,
same gradient).
"""

import collections

from tf_scatter_ops._dispatch import backends, bounds, convert
from tf_scatter_ops._dispatch.segment_ids import inputs, ungrid

MaxWithArgmax = collections.namedtuple("MaxWithArgmax", ["output", "argmax"])
MinWithArgmin = collections.namedtuple("MinWithArgmin", ["output", "argmin"])

def _is_max(op):
    return "_max_" in op


def _result(op, output, positions):
    return (MaxWithArgmax if _is_max(op) else MinWithArgmin)(output, positions)


def _segments(op, data, segment_ids, num_segments, bad_indices_policy, name):
    """The body of the segment functions: the value and the positions."""
    policy = convert.check_policy(bad_indices_policy)
    with convert.scope(name or op):
        data, segment_ids, num_segments, policy, grid = inputs(
            op, data, segment_ids, num_segments, policy)
        out = backends.run(op, policy, data=data, segment_ids=segment_ids,
                           num_segments=num_segments)
        return _result(op, *(ungrid(x, grid) for x in out))


def _scatter(op, tensor, indices, updates, bad_indices_policy, name):
    """The body of the scatter functions: the value and the positions."""
    policy = convert.check_policy(bad_indices_policy)
    with convert.scope(name or op):
        tensor = convert.tensor(tensor, name="tensor")
        convert.check_dtype(op, tensor.dtype)
        indices = convert.indices(indices)
        updates = convert.tensor(updates, dtype=tensor.dtype, name="updates")
        indices, policy = bounds.nd(policy, indices, like=tensor)
        return _result(op, *backends.run(op, policy, tensor=tensor, indices=indices,
                                         updates=updates))


@convert.public
def unsorted_segment_max_with_argmax(data, segment_ids, num_segments, name=None,
                                     bad_indices_policy=""):
    """The maximum of `data`'s rows per segment id, with the row that holds it.

    PyTorch Scatter's scatter_max; TensorFlow has no such function. One pass
    computes both. Per output element: of ties, the first row in index order
    holds the maximum (its own value: the sign of a zero, a NaN's bits); NaN
    is greater than every number, the first NaN wins (NumPy's argmax); an
    empty segment holds the dtype's lowest value with position -1. The
    positions count `data`'s rows as `segment_ids`' elements in row-major
    order. The value's gradient goes to the winning row alone. Takes the
    real numeric dtypes (floats, signed and unsigned integers).

    Args:
        data: The rows to reduce.
        segment_ids: int16, int32 or int64, of a shape that is a prefix of
            `data`'s; any order. Negative ids drop their rows.
        num_segments: The number of segments, an int32 or int64 scalar; a
            vector is the shape of a grid, `segment_ids` then being index
            rows `[..., depth]` into it (its shape replaces
            `[num_segments]` in the output's).
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids `>= num_segments` (negative ids are
            dropped whatever the policy): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first; "IGNORE" and "FILL" drop
            their rows; "CLIP" counts them for the last segment.

    Returns:
        A `MaxWithArgmax(output, argmax)` namedtuple: `output` of `data`'s
        dtype and shape `[num_segments] + data.shape[segment_ids.rank:]`,
        `argmax` int64 of the same shape.

    Raises:
        InvalidArgumentError: An id `>= num_segments` under the default
            policy, a negative `num_segments`, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `segment_ids`
            or `num_segments`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> out, argmax = tso.unsorted_segment_max_with_argmax([3, 5, 5, 1], [0, 0, 0, 1], 3)
        >>> out.numpy().tolist(), argmax.numpy().tolist()
        ([5, 1, -2147483648], [1, 3, -1])
    """
    return _segments("unsorted_segment_max_with_argmax", data, segment_ids, num_segments,
                     bad_indices_policy, name)


@convert.public
def unsorted_segment_argmax(data, segment_ids, num_segments, name=None, bad_indices_policy=""):
    """The position of the row that holds the maximum of each segment.

    The positions of unsorted_segment_max_with_argmax: per output element,
    the first row in index order that holds the maximum of its segment (NaN
    is greater than every number, the first NaN wins), -1 for an empty
    segment. The positions count `data`'s rows as `segment_ids`' elements in
    row-major order. Takes the real numeric dtypes (floats, signed and
    unsigned integers).

    Args:
        data: The rows to compare.
        segment_ids: int16, int32 or int64, of a shape that is a prefix of
            `data`'s; any order. Negative ids drop their rows.
        num_segments: The number of segments, an int32 or int64 scalar; a
            vector is the shape of a grid, `segment_ids` then being index
            rows `[..., depth]` into it (its shape replaces
            `[num_segments]` in the output's).
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids `>= num_segments` (negative ids are
            dropped whatever the policy): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first; "IGNORE" and "FILL" drop
            their rows; "CLIP" counts them for the last segment.

    Returns:
        An int64 tensor of shape `[num_segments] + data.shape[segment_ids.rank:]`.

    Raises:
        InvalidArgumentError: An id `>= num_segments` under the default
            policy, a negative `num_segments`, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `segment_ids`
            or `num_segments`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.unsorted_segment_argmax([3, 5, 5, 1], [0, 0, 0, 1], 3).numpy().tolist()
        [1, 3, -1]
    """
    return _segments("unsorted_segment_max_with_argmax", data, segment_ids, num_segments,
                     bad_indices_policy, name)[1]


@convert.public
def unsorted_segment_min_with_argmin(data, segment_ids, num_segments, name=None,
                                     bad_indices_policy=""):
    """The minimum of `data`'s rows per segment id, with the row that holds it.

    PyTorch Scatter's scatter_min; TensorFlow has no such function. One pass
    computes both. Per output element: of ties, the first row in index order
    holds the minimum (its own value: the sign of a zero, a NaN's bits); NaN
    is smaller than every number, the first NaN wins (NumPy's argmin); an
    empty segment holds the dtype's highest value with position -1. The
    positions count `data`'s rows as `segment_ids`' elements in row-major
    order. The value's gradient goes to the winning row alone. Takes the
    real numeric dtypes (floats, signed and unsigned integers).

    Args:
        data: The rows to reduce.
        segment_ids: int16, int32 or int64, of a shape that is a prefix of
            `data`'s; any order. Negative ids drop their rows.
        num_segments: The number of segments, an int32 or int64 scalar; a
            vector is the shape of a grid, `segment_ids` then being index
            rows `[..., depth]` into it (its shape replaces
            `[num_segments]` in the output's).
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids `>= num_segments` (negative ids are
            dropped whatever the policy): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first; "IGNORE" and "FILL" drop
            their rows; "CLIP" counts them for the last segment.

    Returns:
        A `MinWithArgmin(output, argmin)` namedtuple: `output` of `data`'s
        dtype and shape `[num_segments] + data.shape[segment_ids.rank:]`,
        `argmin` int64 of the same shape.

    Raises:
        InvalidArgumentError: An id `>= num_segments` under the default
            policy, a negative `num_segments`, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `segment_ids`
            or `num_segments`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> out, argmin = tso.unsorted_segment_min_with_argmin([3, 1, 1, 4], [0, 0, 0, 1], 3)
        >>> out.numpy().tolist(), argmin.numpy().tolist()
        ([1, 4, 2147483647], [1, 3, -1])
    """
    return _segments("unsorted_segment_min_with_argmin", data, segment_ids, num_segments,
                     bad_indices_policy, name)


@convert.public
def unsorted_segment_argmin(data, segment_ids, num_segments, name=None, bad_indices_policy=""):
    """The position of the row that holds the minimum of each segment.

    The positions of unsorted_segment_min_with_argmin: per output element,
    the first row in index order that holds the minimum of its segment (NaN
    is smaller than every number, the first NaN wins), -1 for an empty
    segment. The positions count `data`'s rows as `segment_ids`' elements in
    row-major order. Takes the real numeric dtypes (floats, signed and
    unsigned integers).

    Args:
        data: The rows to compare.
        segment_ids: int16, int32 or int64, of a shape that is a prefix of
            `data`'s; any order. Negative ids drop their rows.
        num_segments: The number of segments, an int32 or int64 scalar; a
            vector is the shape of a grid, `segment_ids` then being index
            rows `[..., depth]` into it (its shape replaces
            `[num_segments]` in the output's).
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids `>= num_segments` (negative ids are
            dropped whatever the policy): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first; "IGNORE" and "FILL" drop
            their rows; "CLIP" counts them for the last segment.

    Returns:
        An int64 tensor of shape `[num_segments] + data.shape[segment_ids.rank:]`.

    Raises:
        InvalidArgumentError: An id `>= num_segments` under the default
            policy, a negative `num_segments`, shapes that do not fit
            together, or an unknown `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `data`, `segment_ids`
            or `num_segments`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.unsorted_segment_argmin([3, 1, 1, 4], [0, 0, 0, 1], 3).numpy().tolist()
        [1, 3, -1]
    """
    return _segments("unsorted_segment_min_with_argmin", data, segment_ids, num_segments,
                     bad_indices_policy, name)[1]


@convert.public
def tensor_scatter_nd_max_with_argmax(tensor, indices, updates, bad_indices_policy="", name=None):
    """tensor_scatter_nd_max, with the update row that holds each element.

    PyTorch Scatter's scatter_max with an initial tensor; TensorFlow has no
    such function. One pass computes both. Each index row
    `indices[..., :depth]` addresses a slice of `tensor`'s first `depth`
    dimensions; `updates` has the shape
    `indices.shape[:-1] + tensor.shape[depth:]`. Per element: `tensor`'s own
    value stays, with position -1, unless an update is strictly greater or a
    NaN; of tied updates the first in index order holds it. The positions
    count the update rows (`indices`' outer dims) in row-major order. The
    value's gradient goes to the winning row, or to `tensor` where its value
    stayed. Takes the real numeric dtypes (floats, signed and unsigned
    integers).

    Args:
        tensor: The initial values.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The values, `indices.shape[:-1] + tensor.shape[depth:]`,
            converted to `tensor`'s dtype.
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row; "IGNORE" and
            "FILL" drop bad rows; "CLIP" clamps each coordinate into
            `[0, dim - 1]`.
        name: A name scope for the ops (graphs only).

    Returns:
        A `MaxWithArgmax(output, argmax)` namedtuple: `output` shaped and
        typed like `tensor`, `argmax` int64 of `tensor`'s shape.

    Raises:
        InvalidArgumentError: A bad index row under the default policy,
            shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `tensor`, `updates` or
            `indices`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> out, argmax = tso.tensor_scatter_nd_max_with_argmax(
        ...     [4, 4, 4], [[0], [0], [2], [1]], [5, 6, 3, 4])
        >>> out.numpy().tolist(), argmax.numpy().tolist()
        ([6, 4, 4], [1, -1, -1])
    """
    return _scatter("tensor_scatter_nd_max_with_argmax", tensor, indices, updates,
                    bad_indices_policy, name)


@convert.public
def tensor_scatter_nd_argmax(tensor, indices, updates, bad_indices_policy="", name=None):
    """The update row that holds each element of tensor_scatter_nd_max.

    The positions of tensor_scatter_nd_max_with_argmax: per element of
    `tensor`, -1 where its own value stays (no update strictly greater, nor
    a NaN), else the first update row in index order that holds the
    maximum. The positions count the update rows (`indices`' outer dims) in
    row-major order. Takes the real numeric dtypes (floats, signed and
    unsigned integers).

    Args:
        tensor: The initial values.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The values, `indices.shape[:-1] + tensor.shape[depth:]`,
            converted to `tensor`'s dtype.
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row; "IGNORE" and
            "FILL" drop bad rows; "CLIP" clamps each coordinate into
            `[0, dim - 1]`.
        name: A name scope for the ops (graphs only).

    Returns:
        An int64 tensor of `tensor`'s shape.

    Raises:
        InvalidArgumentError: A bad index row under the default policy,
            shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `tensor`, `updates` or
            `indices`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.tensor_scatter_nd_argmax([4, 4, 4], [[0], [0], [2], [1]],
        ...                              [5, 6, 3, 4]).numpy().tolist()
        [1, -1, -1]
    """
    return _scatter("tensor_scatter_nd_max_with_argmax", tensor, indices, updates,
                    bad_indices_policy, name)[1]


@convert.public
def tensor_scatter_nd_min_with_argmin(tensor, indices, updates, bad_indices_policy="", name=None):
    """tensor_scatter_nd_min, with the update row that holds each element.

    PyTorch Scatter's scatter_min with an initial tensor; TensorFlow has no
    such function. One pass computes both. Each index row
    `indices[..., :depth]` addresses a slice of `tensor`'s first `depth`
    dimensions; `updates` has the shape
    `indices.shape[:-1] + tensor.shape[depth:]`. Per element: `tensor`'s own
    value stays, with position -1, unless an update is strictly smaller or a
    NaN; of tied updates the first in index order holds it. The positions
    count the update rows (`indices`' outer dims) in row-major order. The
    value's gradient goes to the winning row, or to `tensor` where its value
    stayed. Takes the real numeric dtypes (floats, signed and unsigned
    integers).

    Args:
        tensor: The initial values.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The values, `indices.shape[:-1] + tensor.shape[depth:]`,
            converted to `tensor`'s dtype.
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row; "IGNORE" and
            "FILL" drop bad rows; "CLIP" clamps each coordinate into
            `[0, dim - 1]`.
        name: A name scope for the ops (graphs only).

    Returns:
        A `MinWithArgmin(output, argmin)` namedtuple: `output` shaped and
        typed like `tensor`, `argmin` int64 of `tensor`'s shape.

    Raises:
        InvalidArgumentError: A bad index row under the default policy,
            shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `tensor`, `updates` or
            `indices`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> out, argmin = tso.tensor_scatter_nd_min_with_argmin(
        ...     [4, 4, 4], [[0], [0], [2], [1]], [3, 2, 5, 4])
        >>> out.numpy().tolist(), argmin.numpy().tolist()
        ([2, 4, 4], [1, -1, -1])
    """
    return _scatter("tensor_scatter_nd_min_with_argmin", tensor, indices, updates,
                    bad_indices_policy, name)


@convert.public
def tensor_scatter_nd_argmin(tensor, indices, updates, bad_indices_policy="", name=None):
    """The update row that holds each element of tensor_scatter_nd_min.

    The positions of tensor_scatter_nd_min_with_argmin: per element of
    `tensor`, -1 where its own value stays (no update strictly smaller, nor
    a NaN), else the first update row in index order that holds the
    minimum. The positions count the update rows (`indices`' outer dims) in
    row-major order. Takes the real numeric dtypes (floats, signed and
    unsigned integers).

    Args:
        tensor: The initial values.
        indices: Index rows `[..., depth]`, int16, int32 or int64.
        updates: The values, `indices.shape[:-1] + tensor.shape[depth:]`,
            converted to `tensor`'s dtype.
        bad_indices_policy: For index rows out of range (negative, or not
            below their dimension): "", "DEFAULT" or "ERROR" raise
            InvalidArgumentError naming the first bad row; "IGNORE" and
            "FILL" drop bad rows; "CLIP" clamps each coordinate into
            `[0, dim - 1]`.
        name: A name scope for the ops (graphs only).

    Returns:
        An int64 tensor of `tensor`'s shape.

    Raises:
        InvalidArgumentError: A bad index row under the default policy,
            shapes that do not fit together, or an unknown
            `bad_indices_policy`.
        ValueError: A dtype the op does not take (of `tensor`, `updates` or
            `indices`), or a RaggedTensor or SparseTensor input.

    Example:
        >>> tso.tensor_scatter_nd_argmin([4, 4, 4], [[0], [0], [2], [1]],
        ...                              [3, 2, 5, 4]).numpy().tolist()
        [1, -1, -1]
    """
    return _scatter("tensor_scatter_nd_min_with_argmin", tensor, indices, updates,
                    bad_indices_policy, name)[1]
