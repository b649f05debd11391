"""Outputs of more than 2^31 elements: 64-bit offsets throughout."""

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso

N = 2**31 + 16


@pytest.mark.slow
def test_int8_tensor_over_2_31_elements():
    idx = tf.constant([[N - 1], [2**31], [5], [2**31 + 7]], tf.int64)
    upd = tf.constant([1, 2, 3, 4], tf.int8)

    out = tso.scatter_nd(idx, upd, tf.constant([N], tf.int64))
    assert out.shape == (N,)
    np.testing.assert_array_equal(tso.gather_nd(out, idx).numpy(), [1, 2, 3, 4])
    np.testing.assert_array_equal(out[N - 16:].numpy(), [2, 0, 0, 0, 0, 0, 0, 4] + [0] * 7 + [1])
    assert np.count_nonzero(out.numpy()) == 4
    del out

    t = tf.fill([N], tf.constant(7, tf.int8))
    out = tso.tensor_scatter_nd_add(t, idx, upd)
    np.testing.assert_array_equal(tso.gather_nd(out, idx).numpy(), [8, 9, 10, 11])
    assert np.count_nonzero(out.numpy() != 7) == 4
    del out, t

    # depth 2: the slot offset row * cols + col exceeds 2^31
    cols = 2**30 + 8
    idx2 = tf.constant([[1, cols - 1], [1, 3], [0, 0]], tf.int64)
    out = tso.tensor_scatter_nd_update(tf.zeros([2, cols], tf.uint8), idx2,
                                       tf.constant([5, 6, 7], tf.uint8))
    np.testing.assert_array_equal(tso.gather_nd(out, idx2).numpy(), [5, 6, 7])
    np.testing.assert_array_equal(out[1, cols - 2:].numpy(), [0, 5])
    assert np.count_nonzero(out.numpy()) == 3
