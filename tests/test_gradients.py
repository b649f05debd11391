"""Gradients: numerics (tf.test.compute_gradient, float64), TensorFlow's
formulas, the winner-only rule for update, ties, IGNORE, second order."""

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso

W = tf.constant([1., 10., 100., 1000.], tf.float64)  # dL/dy
IDX = [[1], [1], [3]]


def grads(f, *args):
    args = [tf.constant(a, tf.float64) for a in args]
    with tf.GradientTape() as tape:
        tape.watch(args)
        loss = tf.reduce_sum(f(*args) * W)
    # row lookups' gradients are IndexedSlices: compare their dense form
    return [tf.convert_to_tensor(g).numpy() for g in tape.gradient(loss, args)]


def assert_numeric(f, *args):
    """Analytic Jacobian from our gradients == finite differences."""
    args = [tf.constant(a, tf.float64) for a in args]
    theoretical, numerical = tf.test.compute_gradient(f, args)
    for t, n in zip(theoretical, numerical):
        np.testing.assert_allclose(t, n, rtol=1e-6, atol=1e-6)


def test_numeric_gradients_all_ops(rng):
    # Values at least 0.5 apart, so no finite-difference step crosses a
    # min/max tie; duplicates in the indices.
    t = rng.permutation(12).reshape(4, 3) * 1.0
    u = rng.permutation(15).reshape(5, 3) + 0.5
    idx = [[0], [2], [0], [3], [2]]
    for op in ("tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
               "tensor_scatter_nd_min", "tensor_scatter_nd_max"):
        assert_numeric(lambda a, b, op=op: getattr(tso, op)(a, idx, b), t, u)
    assert_numeric(lambda b: tso.scatter_nd(idx, b, [4, 3]), u)
    assert_numeric(lambda a: tso.gather_nd(a, [[1, 2], [1, 2], [3, 0]]), t)
    assert_numeric(lambda a: tso.gather_nd(a, [[[1], [0]], [[1], [2]]]), t)
    p = rng.standard_normal((2, 3, 4))
    assert_numeric(lambda a: tso.gather_nd(a, [[[1], [2]], [[0], [0]]], batch_dims=1), p)


def test_gradients_match_tensorflow_where_tensorflow_is_right():
    t, u = [1., 2., 3., 4.], [5., 6., 7.]
    for op in ("tensor_scatter_nd_add", "tensor_scatter_nd_sub"):
        ours = grads(lambda a, b, op=op: getattr(tso, op)(a, IDX, b), t, u)
        theirs = grads(lambda a, b, op=op: getattr(tf, op)(a, IDX, b), t, u)
        for o, e in zip(ours, theirs):
            np.testing.assert_array_equal(o, e)
    np.testing.assert_array_equal(grads(lambda b: tso.scatter_nd(IDX, b, [4]), u),
                                  grads(lambda b: tf.scatter_nd(IDX, b, [4]), u))
    gidx = [[1, 1], [0, 1], [1, 1], [0, 0]]
    np.testing.assert_array_equal(grads(lambda a: tso.gather_nd(tf.reshape(a, [2, 2]), gidx), t),
                                  grads(lambda a: tf.gather_nd(tf.reshape(a, [2, 2]), gidx), t))


def test_update_gradient_goes_to_the_winner_only():
    d_t, d_u = grads(lambda a, b: tso.tensor_scatter_nd_update(a, IDX, b),
                     [1., 2., 3., 4.], [5., 6., 7.])
    np.testing.assert_array_equal(d_t, [1., 0., 100., 0.])
    np.testing.assert_array_equal(d_u, [0., 10., 1000.])  # TensorFlow gives [10, 10, 1000]


def test_update_winner_only_with_slices_and_outer_dims():
    idx = [[[2], [0]], [[2], [2]]]  # row 3 wins slot 2
    d_t, d_u = grads(lambda a, b: tso.tensor_scatter_nd_update(tf.reshape(a, [4, 1]), idx, b)[:, 0],
                     [1., 2., 3., 4.], np.arange(4.).reshape(2, 2, 1))
    np.testing.assert_array_equal(d_t, [0., 10., 0., 1000.])
    np.testing.assert_array_equal(d_u.reshape(-1), [0., 1., 0., 100.])


def test_min_max_ties_split_like_tensorflow():
    d_t, d_u = grads(lambda a, b: tso.tensor_scatter_nd_max(a, IDX, b), [1., 2., 3., 4.], [5., 5., 4.])
    np.testing.assert_array_equal(d_t, [1., 0., 100., 500.])
    np.testing.assert_array_equal(d_u, [5., 5., 500.])
    d_t, d_u = grads(lambda a, b: tso.tensor_scatter_nd_min(a, IDX, b), [1., 2., 3., 4.], [2., 2., 0.])
    np.testing.assert_allclose(d_t, [1., 10 / 3, 100., 0.])
    np.testing.assert_allclose(d_u, [10 / 3, 10 / 3, 1000.])
    for op in ("tensor_scatter_nd_min", "tensor_scatter_nd_max"):
        ours = grads(lambda a, b, op=op: getattr(tso, op)(a, IDX, b), [1., 2., 3., 4.], [2., 2., 4.])
        theirs = grads(lambda a, b, op=op: getattr(tf, op)(a, IDX, b), [1., 2., 3., 4.], [2., 2., 4.])
        for o, e in zip(ours, theirs):
            np.testing.assert_allclose(o, e)


def test_ignored_rows_get_zero_gradient():
    idx = [[9], [1], [-1]]
    u = [5., 6., 7.]
    t = [1., 2., 3., 4.]
    for op in ("tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_max",
               "tensor_scatter_nd_min"):
        _, d_u = grads(lambda a, b, op=op: getattr(tso, op)(a, idx, b, bad_indices_policy="IGNORE"), t, [0., 6., 0.])
        assert d_u[0] == 0 and d_u[2] == 0, (op, d_u)
    _, d_u = grads(lambda a, b: tso.tensor_scatter_nd_sub(a, idx, b, "IGNORE"), t, u)
    np.testing.assert_array_equal(d_u, [0., -10., 0.])
    (d_u,) = grads(lambda b: tso.scatter_nd(idx, b, [4], "IGNORE"), u)
    np.testing.assert_array_equal(d_u, [0., 10., 0.])
    (d_p,) = grads(lambda p: tso.gather_nd(p, [[9], [1], [1], [0], [-3], [1]], bad_indices_policy="IGNORE")[:4], t)
    np.testing.assert_array_equal(d_p, [1000., 110., 0., 0.])


def second_order(f, x):
    x = tf.constant(x, tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(f(x) * W)
        g = inner.gradient(y, x)
        z = tf.reduce_sum(g * g)
    return g.numpy(), outer.gradient(z, x).numpy()


def test_second_order():
    x = [1., 2., 3.]
    pairs = [
        (lambda v: tso.scatter_nd(IDX, v**3, [4]), lambda v: tf.scatter_nd(IDX, v**3, [4])),
        (lambda v: tso.tensor_scatter_nd_add(tf.ones([4], tf.float64), IDX, v**3),
         lambda v: tf.tensor_scatter_nd_add(tf.ones([4], tf.float64), IDX, v**3)),
        (lambda v: tso.tensor_scatter_nd_max(tf.zeros([4], tf.float64), IDX, v**3),
         lambda v: tf.tensor_scatter_nd_max(tf.zeros([4], tf.float64), IDX, v**3)),
        (lambda v: tso.gather_nd(v**3, [[1], [1], [0], [2]]),
         lambda v: tf.gather_nd(v**3, [[1], [1], [0], [2]])),
    ]
    for ours, theirs in pairs:
        for o, e in zip(second_order(ours, x), second_order(theirs, x)):
            np.testing.assert_allclose(o, e)
    # update: only the winner (x[1] at slot 1, x[2] at slot 3) has a derivative
    g, gg = second_order(lambda v: tso.tensor_scatter_nd_update(tf.zeros([4], tf.float64), IDX, v**3), x)
    np.testing.assert_allclose(g, [0., 10 * 3 * 4, 1000 * 3 * 9])
    np.testing.assert_allclose(gg, [0., 2 * g[1] * 10 * 6 * 2, 2 * g[2] * 1000 * 6 * 3])


def test_integer_inputs_have_no_gradient():
    x = tf.constant([1, 2, 3])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tso.scatter_nd(IDX, x, [4])
    assert tape.gradient(y, x) is None


def _op_types(function, *args):
    return [op.type for op in function.get_concrete_function(*args).graph.get_operations()]


def test_gather_of_computed_params_gets_its_dense_gradient_from_our_segment_sum():
    """In a tf.function, a row gather of a computed tensor that nothing else
    reads gets a dense gradient from our segment sum (TensorFlow's producer
    gradient would densify the IndexedSlices with its own serial kernel);
    the same bits as stock TensorFlow's gradient. A variable's rows, and
    params two gathers read (whose sparse gradients TensorFlow concatenates
    before it sums them), keep the IndexedSlices."""
    rng = np.random.default_rng(5)
    x = tf.constant(rng.standard_normal((30, 4)), tf.float32)
    w = tf.Variable(rng.standard_normal((4, 4)).astype(np.float32))
    table = tf.Variable(rng.standard_normal((30, 4)).astype(np.float32))
    src = tf.constant(rng.integers(0, 30, 200), tf.int32)
    dst = tf.constant(rng.integers(0, 30, 200), tf.int32)

    def step(gather, segment_sum, twice):
        def run(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                h = tf.matmul(x, w)
                m = gather(h, src) * 1.5
                if twice:
                    m = m * gather(h, dst)
                out = segment_sum(m, dst, 30) + gather(table, src)[:30]
                loss = tf.reduce_sum(out * out)
            return tape.gradient(loss, [x, w, table])
        return tf.function(run)

    for twice in (False, True):
        ours = step(tso.gather, tso.unsorted_segment_sum, twice)
        stock = step(tf.gather, tf.math.unsorted_segment_sum, twice)
        got, want = ours(x), stock(x)
        for g, s in zip(got, want):
            np.testing.assert_array_equal(tf.convert_to_tensor(g), tf.convert_to_tensor(s))
        assert isinstance(got[2], tf.IndexedSlices)  # the variable's rows
        types = _op_types(ours, x)
        assert "UnsortedSegmentSum" not in types if not twice else "UnsortedSegmentSum" in types
        assert types.count("TfScatter>UnsortedSegmentSum") == (2 if not twice else 1)
