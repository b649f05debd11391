"""The wrappers inside tf.function: retracing with new shapes, input_signature
with unknown dimensions, nested in tf.while_loop / tf.cond, and one function
called from several Python threads at once."""

import concurrent.futures

import numpy as np
import tensorflow as tf

from table_rows import TENSOR_SCATTERS
import tf_scatter_ops as tso
import reference as ref

OPS = [row.py.rsplit("_", 1)[1] for row in TENSOR_SCATTERS]  # the op table's


def _case(rng, shape, depth, n):
    t = rng.standard_normal(shape).astype(np.float32)
    idx = ref.random_indices(rng, shape, depth, (n,), tf.int32)
    upd = rng.standard_normal((n,) + tuple(shape[depth:])).astype(np.float32)
    return t, idx, upd


def test_retracing_with_new_shapes(rng):
    traced = []

    @tf.function
    def f(t, i, u):
        traced.append(1)
        return (tso.tensor_scatter_nd_add(t, i, u), tso.tensor_scatter_nd_max(t, i, u),
                tso.gather_nd(t, i), tso.scatter_nd(i, u, tf.shape(t)))

    cases = [((8,), 1, 5), ((6, 3), 1, 4), ((6, 3), 2, 7), ((2, 3, 4), 1, 3), ((2, 3, 4), 3, 9)]
    for shape, depth, n in cases:
        t, i, u = _case(rng, shape, depth, n)
        add, mx, g, s = f(t, i, u)
        ref.assert_same(add, ref.scatter("add", t, i, u, tf.float32))
        ref.assert_same(mx, ref.scatter("max", t, i, u, tf.float32))
        ref.assert_same(g, ref.gather(t, i, tf.float32))
        ref.assert_same(s, ref.scatter("scatter_nd", np.zeros_like(t), i, u, tf.float32))
    assert f.experimental_get_tracing_count() == len(traced) >= 2
    for shape, depth, n in cases:  # the same shapes again: no new traces
        f(*_case(rng, shape, depth, n))
    assert f.experimental_get_tracing_count() == len(traced)


def test_input_signature_with_unknown_dims(rng):
    spec = [tf.TensorSpec([None, None], tf.float32), tf.TensorSpec([None, 1], tf.int64),
            tf.TensorSpec([None, None], tf.float32)]
    fns = {op: tf.function(getattr(tso, "tensor_scatter_nd_" + op), input_signature=spec)
           for op in OPS}
    scatter = tf.function(lambda i, u, s: tso.scatter_nd(i, u, s), input_signature=[
        tf.TensorSpec([None, 1], tf.int64), tf.TensorSpec([None, None], tf.float32),
        tf.TensorSpec([2], tf.int64)])
    gather = tf.function(tso.gather_nd, input_signature=[
        tf.TensorSpec(None, tf.float32), tf.TensorSpec(None, tf.int64)])
    for op, fn in fns.items():
        out = fn.get_concrete_function().structured_outputs
        assert out.shape.as_list() == [None, None], (op, out.shape)
    for rows, cols, n in [(5, 3, 4), (9, 1, 12), (1, 7, 1), (4, 2, 0)]:
        t, i, u = _case(rng, (rows, cols), 1, n)
        i = i.astype(np.int64)
        for op, fn in fns.items():
            ref.assert_same(fn(t, i, u), ref.scatter(op, t, i, u, tf.float32))
        ref.assert_same(scatter(i, u, [rows, cols]),
                        ref.scatter("scatter_nd", np.zeros_like(t), i, u, tf.float32))
        ref.assert_same(gather(t, i), ref.gather(t, i, tf.float32))
    for fn in list(fns.values()) + [scatter, gather]:
        assert fn.experimental_get_tracing_count() == 1


def test_nested_in_while_loop_and_cond():
    @tf.function
    def histogram(values, bins):
        counts = tf.zeros([bins], tf.int32)

        def body(k, counts):
            counts = tso.tensor_scatter_nd_add(counts, [[values[k] % bins]], [1])
            return k + 1, counts

        _, counts = tf.while_loop(lambda k, c: k < tf.size(values), body, [0, counts])
        return counts

    values = tf.constant([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5])
    ref.assert_same(histogram(values, 4), np.bincount(values.numpy() % 4, minlength=4).astype(np.int32))

    @tf.function
    def pick(flag, t, i, u):
        a = tf.cond(flag, lambda: tso.tensor_scatter_nd_min(t, i, u),
                    lambda: tso.tensor_scatter_nd_max(t, i, u))
        if flag:  # AutoGraph turns this into tf.cond as well
            b = tso.gather_nd(a, i)
        else:
            b = -tso.gather_nd(a, i)
        return a, b

    t = tf.constant([5., 5., 5.])
    i = tf.constant([[0], [2]])
    u = tf.constant([1., 9.])
    a, b = pick(tf.constant(True), t, i, u)
    ref.assert_same(a, np.array([1., 5., 5.], np.float32))
    ref.assert_same(b, np.array([1., 5.], np.float32))
    a, b = pick(tf.constant(False), t, i, u)
    ref.assert_same(a, np.array([5., 5., 9.], np.float32))
    ref.assert_same(b, np.array([-5., -9.], np.float32))
    assert pick.experimental_get_tracing_count() == 1


def test_gradient_through_while_loop():
    @tf.function
    def grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)

            def body(k, acc):
                return k + 1, tso.tensor_scatter_nd_add(acc, [[k % 3]], [x[k] * x[k]])

            _, acc = tf.while_loop(lambda k, a: k < 5, body, [0, tf.zeros([3])])
            y = tf.reduce_sum(acc * [1., 10., 100.])
        return tape.gradient(y, x)

    x = tf.constant([1., 2., 3., 4., 5.])
    np.testing.assert_allclose(grad(x), 2 * x.numpy() * np.array([1., 10., 100., 1., 10.]))


def test_called_from_several_threads(rng):
    f = tf.function(lambda t, i, u: (tso.tensor_scatter_nd_update(t, i, u),
                                     tso.tensor_scatter_nd_add(t, i, u)))
    cases = [_case(rng, (64, 4), 1, 50) for _ in range(32)]
    expected = [(ref.scatter("update", *c, tf.float32), ref.scatter("add", *c, tf.float32))
                for c in cases]

    def work(k):  # the first calls trace concurrently, later ones share the trace
        t, i, u = cases[k]
        outs = [f(t, i, u) for _ in range(3)]
        eager = tso.tensor_scatter_nd_update(tf.constant(t), tf.constant(i), tf.constant(u))
        return outs, eager

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(len(cases))))
    for (outs, eager), (upd, add) in zip(results, expected):
        for got_upd, got_add in outs:
            ref.assert_same(got_upd, upd)
            ref.assert_same(got_add, add)
        ref.assert_same(eager, upd)
