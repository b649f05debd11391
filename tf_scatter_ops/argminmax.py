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

import tensorflow as tf

from tf_scatter_ops._dispatch import backends, bounds, convert
from tf_scatter_ops._dispatch.segment_ids import inputs, ungrid

MaxWithArgmax = collections.namedtuple("MaxWithArgmax", ["output", "argmax"])
MinWithArgmin = collections.namedtuple("MinWithArgmin", ["output", "argmin"])

def _is_max(op):
    return "_max_" in op


def _result(op, output, positions):
    return (MaxWithArgmax if _is_max(op) else MinWithArgmin)(output, positions)


def _segments(op, data, segment_ids, num_segments, bad_indices_policy, name):
    policy = convert.check_policy(bad_indices_policy)
    with convert.scope(name or op):
        data, segment_ids, num_segments, policy, grid = inputs(
            op, data, segment_ids, num_segments, policy)
        out = backends.run(op, policy, data=data, segment_ids=segment_ids,
                           num_segments=num_segments)
        return _result(op, *(ungrid(x, grid) for x in out))


def _scatter(op, tensor, indices, updates, bad_indices_policy, name):
    policy = convert.check_policy(bad_indices_policy)
    with convert.scope(name or op):
        tensor = convert.tensor(tensor, name="tensor")
        convert.check_dtype(op, tensor.dtype)
        indices = convert.indices(indices)
        updates = convert.tensor(updates, dtype=tensor.dtype, name="updates")
        indices, policy = bounds.nd(policy, indices, like=tensor)
        return _result(op, *backends.run(op, policy, tensor=tensor, indices=indices,
                                         updates=updates))


def _segment_functions(op, what):
    def both(data, segment_ids, num_segments, name=None, bad_indices_policy=""):
        return _segments(op, data, segment_ids, num_segments, bad_indices_policy, name)

    def positions(data, segment_ids, num_segments, name=None, bad_indices_policy=""):
        return _segments(op, data, segment_ids, num_segments, bad_indices_policy, name)[1]
    arg = op.rsplit("_", 1)[1]  # argmax, argmin
    both.__name__ = both.__qualname__ = op
    both.__doc__ = (f"({what} of `data`'s rows per segment id, the position of the row that "
                    f"holds it): a {type(_result(op, 0, 0)).__name__}. Ties: the first row; "
                    "an empty segment: position -1.")
    positions.__name__ = positions.__qualname__ = "unsorted_segment_" + arg
    positions.__doc__ = (f"The position of the row that holds the {what} of `data`'s rows "
                         "per segment id (the first of ties; -1 for an empty segment), int64.")
    return convert.public(both), convert.public(positions)


def _scatter_functions(op, what):
    def both(tensor, indices, updates, bad_indices_policy="", name=None):
        return _scatter(op, tensor, indices, updates, bad_indices_policy, name)

    def positions(tensor, indices, updates, bad_indices_policy="", name=None):
        return _scatter(op, tensor, indices, updates, bad_indices_policy, name)[1]
    arg = op.rsplit("_", 1)[1]
    both.__name__ = both.__qualname__ = op
    both.__doc__ = (f"(tensor_scatter_nd_{what}, the position of the update row that holds "
                    f"each element): a {type(_result(op, 0, 0)).__name__}. Ties: the first "
                    "row; -1 where the tensor's value stays.")
    positions.__name__ = positions.__qualname__ = "tensor_scatter_nd_" + arg
    positions.__doc__ = (f"The position of the update row that holds each element of "
                         f"tensor_scatter_nd_{what}(tensor, indices, updates) (the first of "
                         "ties; -1 where the tensor's value stays), int64.")
    return convert.public(both), convert.public(positions)


unsorted_segment_max_with_argmax, unsorted_segment_argmax = _segment_functions(
    "unsorted_segment_max_with_argmax", "max")
unsorted_segment_min_with_argmin, unsorted_segment_argmin = _segment_functions(
    "unsorted_segment_min_with_argmin", "min")
tensor_scatter_nd_max_with_argmax, tensor_scatter_nd_argmax = _scatter_functions(
    "tensor_scatter_nd_max_with_argmax", "max")
tensor_scatter_nd_min_with_argmin, tensor_scatter_nd_argmin = _scatter_functions(
    "tensor_scatter_nd_min_with_argmin", "min")
