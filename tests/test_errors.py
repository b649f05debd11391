"""Every class of bad input gives InvalidArgumentError (run time) or
ValueError (trace time, static shapes) with a message naming the problem."""

import numpy as np
import pytest
import tensorflow as tf

from table_rows import TENSOR_SCATTERS
import tf_scatter_ops as tso
from tf_scatter_ops._base import library as _loader

IAE = tf.errors.InvalidArgumentError
T4 = tf.constant([1., 2., 3., 4.])
SCATTERS = [row.py for row in TENSOR_SCATTERS]  # the op table's


def all_ops(indices, updates, tensor=T4, policy=""):
    """(name, thunk) for every op with these indices (updates for scatters)."""
    calls = [(op, lambda op=op: getattr(tso, op)(tensor, indices, updates, bad_indices_policy=policy))
             for op in SCATTERS]
    calls.append(("scatter_nd", lambda: tso.scatter_nd(indices, updates, tf.shape(tensor), policy)))
    calls.append(("gather_nd", lambda: tso.gather_nd(tensor, indices, bad_indices_policy=policy)))
    return calls


def oob(name, row, index, shape):
    """TensorFlow's message: gathers say "param shape"."""
    target = "param shape" if name == "gather_nd" else "shape"
    return rf"indices\[{row}\] = \[{index}\] does not index into {target} \[{shape}\]"


@pytest.mark.parametrize("policy", ["", "DEFAULT", "ERROR"])
def test_out_of_bounds_names_first_bad_row(policy):
    for name, call in all_ops([[0], [5], [4]], [1., 2., 3.], policy=policy):
        with pytest.raises(IAE, match=oob(name, 1, 5, 4)):
            call()


def test_negative_indices_are_out_of_bounds():
    for name, call in all_ops([[2], [-1]], [1., 2.]):
        with pytest.raises(IAE, match=oob(name, 1, -1, 4)):
            call()


def test_out_of_bounds_deeper_index_names_row_and_shape():
    with pytest.raises(IAE, match=r"indices\[0\] = \[0, 5\] does not index into shape \[2,3\](\s|$)"):
        tso.scatter_nd([[0, 5]], [9.], [2, 3])
    # scatters name the row by its flat number, gathers by its position in
    # indices' outer dimensions, as TensorFlow does
    with pytest.raises(IAE, match=r"indices\[3\] = \[1, 7\] does not index into shape \[2,3\](\s|$)"):
        tso.scatter_nd(tf.constant([[[0, 0], [1, 1]], [[1, 2], [1, 7]]]), tf.ones([2, 2]), [2, 3])
    with pytest.raises(IAE, match=r"indices\[1,1\] = \[1, 0, 7\] does not index into param shape \[2,3,4\](\s|$)"):
        tso.gather_nd(tf.zeros([2, 3, 4]), tf.constant([[[0, 0, 0], [1, 1, 1]], [[1, 2, 3], [1, 0, 7]]]))
    with pytest.raises(IAE, match=r"indices\[\] = \[5\] does not index into param shape \[4\](\s|$)"):
        tso.gather_nd(T4, [5])


def test_int64_index_beyond_int32():
    with pytest.raises(IAE, match=r"indices\[0\] = \[8589934592\] does not index"):
        tso.tensor_scatter_nd_update(T4, tf.constant([[2**33]], tf.int64), [1.])


@pytest.mark.parametrize("policy", ["ignore", "FOO", "Ignore", "default"])
def test_unknown_policy(policy):
    for name, call in all_ops([[0]], [1.], policy=policy):
        with pytest.raises(IAE, match=f"Unknown bad_indices_policy '{policy}'"):
            call()


def test_unknown_policy_through_the_raw_op():
    lib = _loader.load()
    with pytest.raises(IAE, match="Unknown bad_indices_policy 'nope'"):
        lib.tf_scatter_tensor_scatter_update(tensor=T4, indices=[[0]], updates=[1.],
                                             bad_indices_policy="nope")

    @tf.function
    def graph():
        return lib.tf_scatter_gather_nd(params=T4, indices=[[0]], bad_indices_policy="nope")

    with pytest.raises(IAE, match="Unknown bad_indices_policy 'nope'"):
        graph()


SHAPE_ERRORS = [
    # (op, tensor/shape, indices, updates, message)
    ("tensor_scatter_nd_update", [4], [[0], [1]], [1., 2., 3.],
     r"Outer dimensions of indices and update must match. Indices shape: \[2,1\], updates shape:\[3\]"),
    ("tensor_scatter_nd_add", [4], [[0], [1]], [[1., 2.], [3., 4.]],
     r"Inner dimensions of output shape must match inner dimensions of updates shape. "
     r"Output: \[4\] updates: \[2,2\]"),
    ("tensor_scatter_nd_max", [3, 4], [[0], [1]], [[1., 2., 3.], [1., 2., 3.]],
     r"The inner 1 dimensions of output.shape=\[3,4\] must match the inner 1 dimensions of "
     r"updates.shape=\[2,3\]"),
    ("tensor_scatter_nd_update", [3, 4], [[0, 1, 2]], [1.],
     r"index depth indices.shape\[-1\] = 3 exceeds the rank 2 of the output shape \[3,4\]"),
    ("scatter_nd", [3, 4], [[0, 1, 2]], [1.],
     r"index depth indices.shape\[-1\] = 3 exceeds the rank 2"),
    ("scatter_nd", [4], [[0], [1]], [1., 2., 3.],
     r"Dimensions \[0,1\) of indices\[shape=\[2,1\]\] must match dimensions \[0,1\) of updates\[shape=\[3\]\]"),
    ("tensor_scatter_nd_update", [4], [1], 9.,
     r"updates must have rank at least 1, got updates shape \[\]"),
    ("tensor_scatter_nd_update", [4], 1, [9.],
     r"indices must have rank at least 1.*got indices shape \[\]"),
    ("tensor_scatter_nd_sub", [4], [[1], [2]], 5.,
     r"updates must have rank at least 1"),
    ("tensor_scatter_nd_update", [0, 3], [[0]], [[1., 2., 3.]],
     r"Indices and updates specified for empty output shape \[0,3\]"),
    ("scatter_nd", [0], [[0]], [1.],
     r"Indices and updates specified for empty output shape \[0\]"),
]


def _call(op, shape, indices, updates):
    if op == "scatter_nd":
        return tso.scatter_nd(indices, updates, shape)
    return getattr(tso, op)(tf.zeros(shape), indices, updates)


@pytest.mark.parametrize("op,shape,indices,updates,message", SHAPE_ERRORS)
def test_shape_errors_eager(op, shape, indices, updates, message):
    with pytest.raises(IAE, match=message):
        _call(op, shape, indices, updates)


# An empty output is only checked at run time (as in TensorFlow).
@pytest.mark.parametrize("op,shape,indices,updates,message",
                         [c for c in SHAPE_ERRORS if "empty output" not in c[-1]])
def test_shape_errors_static_at_trace_time(op, shape, indices, updates, message):
    """Inside tf.function the shape function raises the same problem as a
    ValueError while tracing, when the shapes are static."""
    with pytest.raises(ValueError, match=message):
        tf.function(lambda: _call(op, shape, indices, updates)).get_concrete_function()


@pytest.mark.parametrize("op,shape,indices,updates,message", SHAPE_ERRORS)
def test_shape_errors_at_run_time_with_unknown_shapes(op, shape, indices, updates, message):
    """With unknown static shapes the same checks fire in the kernel."""
    indices = tf.constant(indices, tf.int32)
    updates = tf.constant(updates, tf.float32)
    spec = [tf.TensorSpec(None, tf.int32), tf.TensorSpec(None, tf.float32)]
    f = tf.function(lambda i, u: _call(op, shape, i, u), input_signature=spec)
    with pytest.raises(IAE, match=message):
        f(indices, updates)


def test_gather_depth_exceeds_rank():
    with pytest.raises(IAE, match=r"index depth indices.shape\[-1\] = 3 exceeds the rank 2 of the params shape \[3,4\]"):
        tso.gather_nd(tf.zeros([3, 4]), [[0, 1, 2]])
    with pytest.raises(ValueError, match=r"exceeds the rank 2 of the params shape"):
        tf.function(lambda: tso.gather_nd(tf.zeros([3, 4]), [[0, 1, 2]])).get_concrete_function()


def test_gather_from_empty_params():
    with pytest.raises(IAE, match=r"Requested more than 0 entries, but params is empty.  Params shape: \[0\](\s|$)"):
        tso.gather_nd(tf.zeros([0]), [[0]])
    with pytest.raises(IAE, match=r"Requested more than 0 entries, but params is empty.  Params shape: \[0,3\](\s|$)"):
        tso.gather_nd(tf.zeros([0, 3]), [[1], [0]])
    # IGNORE: zeros, as for any bad row
    np.testing.assert_array_equal(tso.gather_nd(tf.zeros([0, 3]), [[0]], bad_indices_policy="IGNORE"),
                                  np.zeros([1, 3], np.float32))


@pytest.mark.parametrize("shape,message", [
    ([[4]], r"shape must be a vector \(1-D\), got a tensor of shape \[1,1\]"),
    ([-4], r"shape \[-4\] has a negative dimension -4"),
    ([2**40, 2**40], r"overflows int64"),
])
def test_bad_scatter_nd_shape(shape, message):
    shape = tf.constant(shape, tf.int64)
    f = tf.function(lambda s: tso.scatter_nd(tf.zeros([0, 1], tf.int64), tf.zeros([0]), s),
                    input_signature=[tf.TensorSpec(None, tf.int64)])
    with pytest.raises(IAE, match=message):
        f(shape)
    if "vector" in message:
        static = tf.function(lambda: tso.scatter_nd(tf.zeros([0, 1], tf.int64), tf.zeros([0]), shape))
        with pytest.raises(ValueError, match=message):
            static.get_concrete_function()


def test_unsupported_dtypes_name_the_dtype():
    with pytest.raises(ValueError, match="tensor_scatter_nd_add does not support dtype string"):
        tso.tensor_scatter_nd_add(["a"], [[0]], ["b"])
    with pytest.raises(ValueError, match="tensor_scatter_nd_max does not support dtype complex64"):
        tso.tensor_scatter_nd_max(tf.zeros([2], tf.complex64), [[0]], tf.ones([1], tf.complex64))
    with pytest.raises(ValueError, match="tensor_scatter_nd_min does not support dtype bool"):
        tso.tensor_scatter_nd_min([True], [[0]], [False])
    with pytest.raises(ValueError, match="indices must be int16, int32 or int64, got float32"):
        tso.gather_nd(T4, [[0.5]])
    with pytest.raises(ValueError, match="indices must be int16, int32 or int64, got uint8"):
        tso.gather_nd(T4, tf.constant([[1]], tf.uint8))


def test_mismatched_update_dtype():
    with pytest.raises((ValueError, TypeError), match="float64|double"):
        tso.tensor_scatter_nd_update(T4, [[0]], tf.constant([1.], tf.float64))


def test_bad_batch_dims():
    with pytest.raises(ValueError, match="batch_dims must be a non-negative"):
        tso.gather_nd(tf.zeros([2, 3]), [[0]], batch_dims=-1)
    with pytest.raises(ValueError, match="must be less than the rank of indices"):
        tso.gather_nd(tf.zeros([2, 3]), [0, 1], batch_dims=1)
    # what was passed is named, not what it was read as
    with pytest.raises(ValueError, match=r"got a tensor of dtype int32 and shape \(1,\) = \[1\]"):
        tso.gather_nd(tf.zeros([2, 3]), [[0]], batch_dims=tf.constant([1]))
    with pytest.raises(ValueError, match=r"got 1.5"):
        tso.gather_nd(tf.zeros([2, 3]), [[0]], batch_dims=1.5)
    with pytest.raises(ValueError, match=r"got a tensor of dtype int32 and shape \(\)$"):
        tf.function(lambda b: tso.gather_nd(tf.zeros([2, 3]), [[0]], batch_dims=b))(tf.constant(1))
