"""Outputs of more than 2^31 elements: 64-bit offsets throughout.

Each test runs in a fresh Python process: TensorFlow's CPU allocator keeps
freed multi-GB buffers for reuse, so in one process these tests would add up
to ~15 GB resident instead of each staying under ~9 GB. A crash in the child
fails that test like any other failure.
"""

import functools
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso

N = 2**31 + 16
_CHILD = "TFSO_HUGE_TEST_CHILD"


def in_subprocess(test):
    @functools.wraps(test)
    def run():
        if os.environ.get(_CHILD):
            return test()
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             f"{__file__}::{test.__name__}"],
            env={**os.environ, _CHILD: "1"}, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, (
            f"{test.__name__} failed in its process (exit {proc.returncode}):\n"
            f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return run


@pytest.mark.slow
@in_subprocess
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


# --- Gathers past 2^31, and the exact shapes of TensorFlow's crash reports
# (tensorflow#127164, tensorflow#126136).
# Memory: values are int8/uint8 (one byte per element). Peak resident memory
# per test stays under ~9 GiB: the [1, 46342, 46341] tests hold at most two
# 2.1 GB tensors (input and output of a tensor_scatter that cannot forward its
# input, since Python holds it) plus a NumPy view; the [2, 65536, 65535] test
# (8.6 GB) only ever holds one tensor of that size: scatter_nd allocates the
# output once and gather_nd reads from it (a tensor_scatter there would need
# input and output, 17 GB, unless the input buffer were forwarded).

TF_127164 = (1, 46342, 46341)   # 2,147,534,622 elements: int32 offsets overflow
TF_126136 = (2, 65536, 65535)   # 8,589,803,520 elements


@pytest.mark.slow
@in_subprocess
def test_gather_nd_offsets_past_2_31():
    cols = 2**30 + 8
    rows = tf.constant([[1, cols - 1], [1, 2**30], [0, 5], [1, 0]], tf.int64)
    params = tso.scatter_nd(rows, tf.constant([11, 12, 13, 14], tf.int8),
                            tf.constant([2, cols], tf.int64))
    np.testing.assert_array_equal(tso.gather_nd(params, rows).numpy(), [11, 12, 13, 14])
    # depth 1: a whole row that starts at offset 2^30 + 8 and ends past 2^31
    row = tso.gather_nd(params, tf.constant([[1]], tf.int64))
    assert row.shape == (1, cols)
    assert np.flatnonzero(row.numpy()[0]).tolist() == [0, 2**30, cols - 1]
    del row
    # IGNORE beyond the end gives zeros; the default names the row
    out = tso.gather_nd(params, tf.constant([[1, cols], [1, cols - 1]], tf.int64),
                        bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(out.numpy(), [0, 11])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"indices\[0\] = \[2, 0\] does not index into param shape \[2,{cols}\]"):
        tso.gather_nd(params, tf.constant([[2, 0]], tf.int64))


@pytest.mark.slow
@in_subprocess
def test_tensorflow_127164_shape_scatter_and_gather():
    """tensorflow#127164: SIGBUS from an int32 offset overflow on this shape."""
    d0, d1, d2 = TF_127164
    last = [d0 - 1, d1 - 1, d2 - 1]
    idx = tf.constant([last, [0, d1 - 1, 0], [0, 0, 0], [0, 46340, 46341 - 2]], tf.int64)
    upd = tf.constant([1, 2, 3, 4], tf.uint8)

    out = tso.scatter_nd(idx, upd, tf.constant(TF_127164, tf.int64))
    assert out.shape == TF_127164
    np.testing.assert_array_equal(tso.gather_nd(out, idx).numpy(), [1, 2, 3, 4])
    flat = out.numpy().reshape(-1)
    expected = sorted(np.ravel_multi_index(tuple(np.array(idx).T), TF_127164).tolist())
    assert np.flatnonzero(flat).tolist() == expected
    del flat

    # The same tensor as the input of every tensor_scatter op (depth 2: rows).
    rows = tf.constant([[0, d1 - 1], [0, d1 - 2]], tf.int32)
    row_upd = tf.fill([2, d2], tf.constant(5, tf.uint8))
    for op, want_last in [("tensor_scatter_nd_update", 5), ("tensor_scatter_nd_add", 6),
                          ("tensor_scatter_nd_sub", 252), ("tensor_scatter_nd_max", 5),
                          ("tensor_scatter_nd_min", 1)]:
        res = getattr(tso, op)(out, rows, row_upd)
        got = tso.gather_nd(res, tf.constant([last, [0, d1 - 1, 0], [0, 0, 0]], tf.int64)).numpy()
        first_col = {"tensor_scatter_nd_update": 5, "tensor_scatter_nd_add": 7,
                     "tensor_scatter_nd_sub": 253, "tensor_scatter_nd_max": 5,
                     "tensor_scatter_nd_min": 2}[op]
        np.testing.assert_array_equal(got, [want_last, first_col, 3], err_msg=op)
        del res
    # gather at depth 1 (one 2^31-element slice) and past-the-end rows
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = \[0, 46342, 0\]"):
        tso.gather_nd(out, tf.constant([[0, d1, 0]], tf.int64))


@pytest.mark.slow
@in_subprocess
def test_tensorflow_126136_shape_scatter_nd_and_gather():
    """tensorflow#126136: heap overflow via a [2, 65536, 65535] variable."""
    d0, d1, d2 = TF_126136
    idx = tf.constant([[1, d1 - 1, d2 - 1], [1, d1 - 1, 0], [0, 0, 0], [1, 0, 7],
                       [1, d1 - 1, d2 - 1]], tf.int64)  # a duplicate: int8 sums wrap
    upd = tf.constant([100, 2, 3, 4, 100], tf.int8)
    out = tso.scatter_nd(idx, upd, tf.constant(TF_126136, tf.int64))
    assert out.shape == TF_126136
    np.testing.assert_array_equal(tso.gather_nd(out, idx).numpy(), [-56, 2, 3, 4, -56])
    # whole last rows (offsets near 2^33): exactly the written elements
    last_rows = tso.gather_nd(out, tf.constant([[1, d1 - 1], [1, 0], [0, d1 - 1]], tf.int64)).numpy()
    assert np.flatnonzero(last_rows[0]).tolist() == [0, d2 - 1]
    assert np.flatnonzero(last_rows[1]).tolist() == [7]
    assert not last_rows[2].any()
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = \[2, 0, 0\]"):
        tso.gather_nd(out, tf.constant([[2, 0, 0]], tf.int64))
