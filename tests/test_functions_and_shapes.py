"""Eager vs tf.function (incl. input_signature with unknown shapes), static
shape inference, empty and zero-size inputs."""

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
import reference as ref


def test_eager_and_function_agree(rng):
    t = tf.constant(rng.standard_normal((5, 3)), tf.float32)
    idx = tf.constant([[1], [4], [1]])
    upd = tf.constant(rng.standard_normal((3, 3)), tf.float32)
    for op in ("tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
               "tensor_scatter_nd_min", "tensor_scatter_nd_max"):
        f = getattr(tso, op)
        ref.assert_same(tf.function(f)(t, idx, upd), f(t, idx, upd))
    ref.assert_same(tf.function(tso.scatter_nd)(idx, upd, [5, 3]), tso.scatter_nd(idx, upd, [5, 3]))
    ref.assert_same(tf.function(tso.gather_nd)(t, idx), tso.gather_nd(t, idx))


def test_input_signature_with_unknown_shapes(rng):
    spec = [tf.TensorSpec(None, tf.float32), tf.TensorSpec(None, tf.int64),
            tf.TensorSpec(None, tf.float32)]
    add = tf.function(tso.tensor_scatter_nd_add, input_signature=spec)
    gather = tf.function(tso.gather_nd, input_signature=spec[:2])
    scatter = tf.function(lambda i, u, s: tso.scatter_nd(i, u, s),
                          input_signature=[tf.TensorSpec([None, None], tf.int64),
                                           tf.TensorSpec(None, tf.float32),
                                           tf.TensorSpec([None], tf.int64)])
    for shape, depth in [((6,), 1), ((3, 4, 2), 2), ((3, 4), 0)]:
        t = rng.standard_normal(shape).astype(np.float32)
        idx = ref.random_indices(rng, shape, depth, (5,), tf.int64)
        upd = rng.standard_normal((5,) + shape[depth:]).astype(np.float32)
        ref.assert_same(add(t, idx, upd), ref.scatter("add", t, idx, upd, tf.float32))
        ref.assert_same(gather(t, idx), ref.gather(t, idx, tf.float32))
        ref.assert_same(scatter(idx, upd, np.array(shape)),
                        ref.scatter("scatter_nd", np.zeros(shape, np.float32), idx, upd, tf.float32))


def static_shape(f, *specs):
    return tf.function(f).get_concrete_function(*specs).structured_outputs.shape


def test_static_shapes():
    S = tf.TensorSpec
    # scatter_nd: from a constant shape; a placeholder of known length gives the rank.
    assert static_shape(lambda i, u: tso.scatter_nd(i, u, [7, 5]),
                        S([None, 1], tf.int32), S([None, 5])).as_list() == [7, 5]
    assert static_shape(lambda i, u, s: tso.scatter_nd(i, u, s),
                        S([None, 1], tf.int32), S(None), S([2], tf.int32)).as_list() == [None, None]
    assert static_shape(lambda i, u, s: tso.scatter_nd(i, u, s),
                        S([None, 1], tf.int32), S(None), S([None], tf.int32)).rank is None
    assert static_shape(lambda i, u, x: tso.scatter_nd(i, u, tf.shape(x)),
                        S([None, 1], tf.int32), S(None), S([None, 5])).as_list() == [None, 5]
    # int16 indices (so an int16 shape), which TensorFlow's shape helpers do not read
    assert static_shape(lambda i, u: tso.scatter_nd(i, u, [7, 5]),
                        S([None, 1], tf.int16), S([None, 5])).as_list() == [7, 5]
    assert static_shape(lambda i, u, s: tso.scatter_nd(i, u, s),
                        S([None, 1], tf.int16), S(None), S([2], tf.int16)).as_list() == [None, None]
    assert static_shape(lambda i, u, s: tso.scatter_nd(i, u, s),
                        S([None, 1], tf.int16), S(None), S([None], tf.int16)).rank is None
    # tensor_scatter_*: the tensor's shape, even with unknown indices.
    assert static_shape(tso.tensor_scatter_nd_update, S([None, 5]), S(None, tf.int32),
                        S(None)).as_list() == [None, 5]
    assert static_shape(tso.tensor_scatter_nd_max, S([3, 5]), S(None, tf.int32),
                        S(None)).as_list() == [3, 5]
    # gather_nd: indices.shape[:-1] + params.shape[depth:]
    assert static_shape(tso.gather_nd, S([None, 5, 6]), S([None, 7, 1], tf.int32)).as_list() \
        == [None, 7, 5, 6]
    assert static_shape(tso.gather_nd, S([None, 5, 6]), S([4, 0], tf.int32)).as_list() \
        == [4, None, 5, 6]
    assert static_shape(tso.gather_nd, S([None, 5, 6]), S([4, None], tf.int32)).rank is None


def test_empty_updates_return_tensor_unchanged(rng):
    t = tf.constant(rng.standard_normal((4, 3)), tf.float32)
    for op in ("tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
               "tensor_scatter_nd_min", "tensor_scatter_nd_max"):
        ref.assert_same(getattr(tso, op)(t, tf.zeros([0, 1], tf.int32), tf.zeros([0, 3])), t)
        ref.assert_same(getattr(tso, op)(t, tf.zeros([0, 2], tf.int32), tf.zeros([0])), t)
    ref.assert_same(tso.scatter_nd(tf.zeros([0, 1], tf.int32), tf.zeros([0]), [4]), np.zeros(4, np.float32))
    ref.assert_same(tso.scatter_nd(tf.zeros([0, 2], tf.int32), tf.zeros([0]), [2, 3]), np.zeros((2, 3), np.float32))
    ref.assert_same(tso.gather_nd(t, tf.zeros([0, 1], tf.int32)), np.zeros((0, 3), np.float32))


def test_zero_size_tensors():
    ref.assert_same(tso.scatter_nd(tf.zeros([0, 1], tf.int32), tf.zeros([0]), [0]), np.zeros(0, np.float32))
    ref.assert_same(tso.tensor_scatter_nd_update(tf.zeros([0, 3]), tf.zeros([0, 1], tf.int32),
                                                 tf.zeros([0, 3])), np.zeros((0, 3), np.float32))
    # index rows into an empty output are an error, as in TensorFlow
    with pytest.raises(tf.errors.InvalidArgumentError, match="empty output shape"):
        tso.tensor_scatter_nd_add(tf.zeros([4, 0]), [[1], [3]], tf.zeros([2, 0]))
    ref.assert_same(tso.gather_nd(tf.zeros([4, 0]), [[1], [3]]), np.zeros((2, 0), np.float32))
    ref.assert_same(tso.gather_nd(tf.zeros([0, 3]), tf.zeros([2, 0], tf.int32)), np.zeros((2, 0, 3), np.float32))


def test_depth_zero_means_whole_tensor_slices():
    t = tf.constant([1., 2., 3., 4.])
    idx = tf.zeros([2, 0], tf.int32)
    upd = tf.constant([[10., 20., 30., 40.], [1., 1., 1., 1.]])
    ref.assert_same(tso.tensor_scatter_nd_update(t, idx, upd), np.array([1., 1., 1., 1.], np.float32))
    ref.assert_same(tso.tensor_scatter_nd_add(t, idx, upd), np.array([12., 23., 34., 45.], np.float32))
    ref.assert_same(tso.scatter_nd(idx, upd, [4]), np.array([11., 21., 31., 41.], np.float32))
    ref.assert_same(tso.gather_nd(t, idx), np.array([[1., 2., 3., 4.]] * 2, np.float32))
    # a scalar tensor: depth 0 is the only depth
    ref.assert_same(tso.tensor_scatter_nd_max(tf.constant(1.), tf.zeros([3, 0], tf.int32), [0., 5., 2.]),
                    np.float32(5.))


def test_depth_beyond_seven():
    shape = [2] * 9
    idx = [[1] * 9, [0] * 9]
    got = tso.tensor_scatter_nd_update(tf.zeros(shape), idx, [5., 6.])
    expected = np.zeros(shape, np.float32)
    expected[(1,) * 9], expected[(0,) * 9] = 5., 6.
    ref.assert_same(got, expected)
    ref.assert_same(tso.gather_nd(got, idx), np.array([5., 6.], np.float32))


def test_inputs_accept_lists_and_numpy():
    ref.assert_same(tso.tensor_scatter_nd_add(np.ones(3, np.float64), np.array([[0]]), [2.]),
                    np.array([3., 1., 1.]))
    ref.assert_same(tso.scatter_nd(np.array([[1]], np.int64), np.array([2], np.int32), [3]),
                    np.array([0, 2, 0], np.int32))


def test_shape_dtype_is_widened_to_the_indices():
    got = tso.scatter_nd(tf.constant([[1]], tf.int16), [5.], tf.constant([3], tf.int64))
    ref.assert_same(got, np.array([0., 5., 0.], np.float32))


@pytest.mark.parametrize("op", ["scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
                                "tensor_scatter_nd_sub", "tensor_scatter_nd_min",
                                "tensor_scatter_nd_max", "gather_nd"])
def test_positional_parameters_are_tensorflows(op):
    """Code written for tf.<op> passes the same arguments positionally to ours;
    our extra bad_indices_policy (where TF has none) comes last."""
    import inspect
    theirs = list(inspect.signature(getattr(tf, op)).parameters)
    ours = list(inspect.signature(getattr(tso, op)).parameters)
    assert ours[:len(theirs)] == theirs, (ours, theirs)
    assert "bad_indices_policy" in ours
