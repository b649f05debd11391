"""Under tf.function(jit_compile=True) the wrappers lower to TensorFlow's own
XLA-compilable ops: same results as eager for valid input; bad indices follow
XLA (scatter rows dropped, gather indices clamped), as the README says."""

import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops import ops
import reference as ref


def test_xla_context_helper():
    seen = {}

    def probe(key):
        seen[key] = ops.in_xla_context()
        return tf.constant(0)

    probe("eager")
    tf.function(lambda: probe("function"))()
    tf.function(lambda: probe("xla"), jit_compile=True)()
    assert seen == {"eager": False, "function": False, "xla": True}


def test_jit_compile_matches_eager(rng):
    t = tf.constant(rng.standard_normal((6, 3)), tf.float32)
    ti = tf.constant(rng.integers(-50, 50, (6, 3)), tf.int32)
    idx = tf.constant([[1], [4], [1], [0]], tf.int32)
    upd = tf.constant(rng.standard_normal((4, 3)), tf.float32)
    ui = tf.constant(rng.integers(-50, 50, (4, 3)), tf.int32)
    for op in ("tensor_scatter_nd_update", "tensor_scatter_nd_min", "tensor_scatter_nd_max",
               "tensor_scatter_nd_add", "tensor_scatter_nd_sub"):
        f = getattr(tso, op)
        ref.assert_same(tf.function(f, jit_compile=True)(ti, idx, ui), f(ti, idx, ui))
        np.testing.assert_allclose(tf.function(f, jit_compile=True)(t, idx, upd), f(t, idx, upd), rtol=1e-6)
    ref.assert_same(tf.function(lambda i, u: tso.scatter_nd(i, u, [6, 3]), jit_compile=True)(idx, ui),
                    tso.scatter_nd(idx, ui, [6, 3]))
    ref.assert_same(tf.function(tso.gather_nd, jit_compile=True)(t, idx), tso.gather_nd(t, idx))
    ref.assert_same(tf.function(lambda p, i: tso.gather_nd(p, i, batch_dims=1), jit_compile=True)(
        t, tf.constant([[0], [2], [1], [0], [0], [1]])),
        tso.gather_nd(t, tf.constant([[0], [2], [1], [0], [0], [1]]), batch_dims=1))


def test_jit_compile_lowers_ops_on_captured_eager_tensors(rng):
    """Eager tensors captured by a jit-compiled function still lower to
    TensorFlow's ops (our ops have no XLA kernels)."""
    t = tf.constant(rng.standard_normal((6, 3)), tf.float32)
    idx = tf.constant([[1], [4], [1], [0]], tf.int32)
    upd = tf.constant(rng.standard_normal((4, 3)), tf.float32)
    for op in ("tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_max"):
        f = getattr(tso, op)
        np.testing.assert_allclose(tf.function(lambda: f(t, idx, upd), jit_compile=True)(),
                                   f(t, idx, upd), rtol=1e-6)


def test_jit_compile_gradients_flow():
    x = tf.constant([1., 2., 3.])

    @tf.function(jit_compile=True)
    def grad(v):
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = tf.reduce_sum(tso.scatter_nd([[1], [1], [3]], v * v, [4]) * [1., 10., 100., 1000.])
        return tape.gradient(y, v)

    np.testing.assert_allclose(grad(x), [20., 40., 6000.])


def test_documented_xla_bad_index_behaviour():
    t = tf.constant([1., 2., 3., 4.])
    update = tf.function(lambda: tso.tensor_scatter_nd_update(t, [[4], [0]], [9., 7.]), jit_compile=True)
    ref.assert_same(update(), np.array([7., 2., 3., 4.], np.float32))  # bad row dropped, no error
    gather = tf.function(lambda: tso.gather_nd(t, [[4], [-1], [0]]), jit_compile=True)
    ref.assert_same(gather(), np.array([4., 1., 1.], np.float32))  # clamped
    ignore = tf.function(lambda: tso.gather_nd(t, [[4], [-1], [0]], bad_indices_policy="IGNORE"),
                         jit_compile=True)
    # TensorFlow 2.21's XLA gives zeros for IGNORE; older ones (2.17) clamp
    got = ignore().numpy()
    zeros, clamped = np.array([0., 0., 1.], np.float32), np.array([4., 1., 1.], np.float32)
    if tuple(int(v) for v in tf.__version__.split(".")[:2]) >= (2, 21):
        ref.assert_same(got, zeros)
    else:
        assert np.array_equal(got, zeros) or np.array_equal(got, clamped), got


def test_lowering_under_xla_warns_once_when_a_gpu_is_present(monkeypatch):
    """Keras 3 turns XLA on by default with a GPU; then our kernels are not
    used, and the user is told so, once."""
    import warnings
    monkeypatch.setattr(ops, "_warned_xla_on_gpu", False)
    monkeypatch.setattr(ops, "_has_gpu", lambda: False)
    t = tf.zeros([4])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tf.function(lambda x: tso.tensor_scatter_nd_add(x, [[1]], [1.]), jit_compile=True)(t)
    assert not [w for w in caught if "tf_scatter_ops" in str(w.message)]  # CPU only: no warning
    monkeypatch.setattr(ops, "_has_gpu", lambda: True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tf.function(lambda x: tso.tensor_scatter_nd_add(x, [[1]], [1.]), jit_compile=True)(t)
        tf.function(lambda x: tso.gather_nd(x, [[1]]), jit_compile=True)(t)
        tso.tensor_scatter_nd_add(t, [[1]], [1.])  # eager: ours, no warning
    ours = [w for w in caught if "tf_scatter_ops" in str(w.message)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    assert "jit_compile=False" in str(ours[0].message)
