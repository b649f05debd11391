"""GPU kernels, on a GPU: each test pins the device and checks where the
result lives, so it cannot silently pass on the CPU. (Which GPU kernels are
registered, and when, is test_gpu_gate.py's.)"""

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops._table import SCATTER_GATHER
from tf_scatter_ops.ops import DTYPES
import reference as ref

GPU_DTYPES = {op: [d for d in ds if d != tf.string] for op, ds in DTYPES.items()}


@pytest.fixture(autouse=True)
def no_soft_placement():
    """A GPU op without a GPU kernel must fail, not quietly run on the CPU."""
    before = tf.config.get_soft_device_placement()
    tf.config.set_soft_device_placement(False)
    yield
    tf.config.set_soft_device_placement(before)


def on(device, fn, *args, **kw):
    with tf.device(device):
        args = [tf.identity(a) for a in args]
        out = fn(*args, **kw)
    return out


GEOMETRIES = [((7,), (40,), 1), ((5, 4, 3), (6, 2), 2), ((300, 8), (5000,), 1),
              ((4, 3), (9,), 0)]


@pytest.mark.gpu
@pytest.mark.parametrize("op,dtype", [(op, d) for op in sorted(r.py for r in SCATTER_GATHER)
                                      for d in GPU_DTYPES[op]],
                         ids=lambda v: getattr(v, "name", v))
def test_gpu_equals_cpu_bitwise(op, dtype, rng):
    fn = getattr(tso, op)
    for shape, outer, depth in GEOMETRIES:
        idx = tf.constant(ref.random_indices(rng, shape, depth, outer, tf.int32))
        if op == "gather_nd":
            args = (tf.constant(ref.random_values(rng, dtype, shape), dtype), idx)
        elif op == "scatter_nd":
            upd = tf.constant(ref.random_values(rng, dtype, outer + shape[depth:]), dtype)
            args = (idx, upd, tf.constant(shape, tf.int64))
        else:
            upd = tf.constant(ref.random_values(rng, dtype, outer + shape[depth:]), dtype)
            args = (tf.constant(ref.random_values(rng, dtype, shape), dtype), idx, upd)
        gpu = on("/GPU:0", fn, *args)
        cpu = on("/CPU:0", fn, *args)
        assert gpu.device.endswith("GPU:0"), gpu.device
        assert cpu.device.endswith("CPU:0"), cpu.device
        # Serial per destination in row order on both: the same bits, float
        # sums included.
        ref.assert_same(gpu, cpu.numpy())


@pytest.mark.gpu
@pytest.mark.parametrize("op", ["tensor_scatter_nd_add", "tensor_scatter_nd_update", "gather_nd"])
def test_gpu_bad_index_error_names_the_first_bad_row(op):
    tensor = tf.zeros([4, 2])
    idx = tf.constant([[1], [5], [-1]])
    with tf.device("/GPU:0"):
        target = "param shape" if op == "gather_nd" else "shape"
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=rf"indices\[1\] = \[5\] does not index into {target} \[4,2\]"):
            if op == "gather_nd":
                tso.gather_nd(tensor, idx)
            else:
                getattr(tso, op)(tensor, idx, tf.ones([3, 2]))


@pytest.mark.gpu
def test_gpu_ignore_drops_bad_rows_and_gather_gives_zeros():
    with tf.device("/GPU:0"):
        out = tso.tensor_scatter_nd_add(tf.zeros([4]), [[1], [9], [1]], [1.0, 5.0, 2.0],
                                        bad_indices_policy="IGNORE")
        got = tso.gather_nd(tf.constant([1.0, 2.0]), [[1], [-3]], bad_indices_policy="IGNORE")
    assert out.device.endswith("GPU:0") and got.device.endswith("GPU:0")
    np.testing.assert_array_equal(out.numpy(), [0, 3, 0, 0])
    np.testing.assert_array_equal(got.numpy(), [2, 0])


@pytest.mark.gpu
def test_gpu_runs_are_identical_and_update_keeps_the_last_row(rng):
    idx = tf.constant(rng.integers(0, 50, size=(200000, 1)), tf.int64)
    upd = tf.constant(rng.standard_normal(200000), tf.float32)
    with tf.device("/GPU:0"):
        runs = [tso.tensor_scatter_nd_add(tf.zeros([50]), idx, upd).numpy() for _ in range(3)]
        last = tso.tensor_scatter_nd_update(tf.zeros([50]), idx, upd).numpy()
    for r in runs[1:]:
        ref.assert_same(r, runs[0])
    expect = np.zeros(50, np.float32)
    expect[idx.numpy()[:, 0]] = upd.numpy()  # numpy: last write wins
    np.testing.assert_array_equal(last, expect)


@pytest.mark.gpu
def test_gpu_gradients_match_cpu(rng):
    tensor = tf.constant(rng.standard_normal((6, 3)), tf.float32)
    idx = tf.constant([[1], [4], [1]])
    upd = tf.constant(rng.standard_normal((3, 3)), tf.float32)

    def grads(device):
        with tf.device(device):
            t, u = tf.identity(tensor), tf.identity(upd)
            with tf.GradientTape() as tape:
                tape.watch([t, u])
                loss = tf.reduce_sum(tso.tensor_scatter_nd_max(t, idx, u) ** 2)
            return [g.numpy() for g in tape.gradient(loss, [t, u])]

    for g, c in zip(grads("/GPU:0"), grads("/CPU:0")):
        np.testing.assert_allclose(g, c, rtol=1e-6)
