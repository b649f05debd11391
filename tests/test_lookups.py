"""Row lookups as TensorFlow's API names them: tso.gather, tso.nn's
embedding lookups and the variables' IndexedSlices methods, against
TensorFlow's (values bitwise, gradient types and values), the patched names,
and what goes back to TensorFlow (another axis, a partitioned variable)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from ecosystem_util import traced_op_types


def _table(rows=10, dim=3, seed=0):
    return np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)


def _grad(lookup, params, as_variable):
    p = tf.Variable(params) if as_variable else tf.constant(params)
    with tf.GradientTape() as tape:
        if not as_variable:
            tape.watch(p)
        y = lookup(p)
        loss = tf.reduce_sum(y * tf.reshape(tf.range(1.0, tf.cast(tf.size(y), tf.float32) + 1),
                                            tf.shape(y)))
    return y, tape.gradient(loss, p)


def _same_slices(got, want):
    assert isinstance(got, tf.IndexedSlices) and isinstance(want, tf.IndexedSlices)
    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
    np.testing.assert_array_equal(tf.convert_to_tensor(got).numpy(),
                                  tf.convert_to_tensor(want).numpy())


# -- tso.gather -------------------------------------------------------------

@pytest.mark.parametrize("as_variable", [False, True], ids=["tensor", "variable"])
@pytest.mark.parametrize("ids", [3, [4, 1, 4], [[0, 9], [2, 2], [7, 1]]],
                         ids=["scalar", "vector", "bags"])
@pytest.mark.parametrize("index_dtype", [tf.int16, tf.int32, tf.int64], ids=lambda d: d.name)
def test_gather_rows_and_gradient_equal_tf_gather(as_variable, ids, index_dtype):
    params = _table()
    ids_tf = tf.constant(ids, index_dtype)
    want_ids = tf.cast(ids_tf, tf.int32) if index_dtype == tf.int16 else ids_tf
    got, got_grad = _grad(lambda p: tso.gather(p, ids_tf), params, as_variable)
    want, want_grad = _grad(lambda p: tf.gather(p, want_ids), params, as_variable)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    _same_slices(got_grad, want_grad)


# (params shape, ids shape, axis, batch_dims): slices of 8 elements and more
# are ours (axis_gather.MIN_SLICE), narrower ones TensorFlow's
AXIS_CASES = [((4, 7, 8), (5,), 1, 0), ((5, 9, 8), (2, 3), -2, 0), ((3, 4, 6, 8), (3, 2, 5), 2, 1),
              ((3, 6, 2, 4), (3, 5), 1, 1), ((3, 6, 2, 4), (3, 5), None, 1),
              ((2, 3, 4, 16), (2, 3, 5), -2, 2), ((3, 5, 8), (3,), 1, 1),
              ((0, 5, 8), (0, 3), 1, 1), ((3, 5, 8), (4, 0), 1, 0), ((2, 3, 4), (2, 2), 1, 0),
              ((2, 3, 4), (2, 2), -1, 0), ((2, 3, 4), (2, 2), 1, 1)]


def _ops(function):
    return traced_op_types(tf.function(function))


@pytest.mark.parametrize("case", AXIS_CASES, ids=str)
@pytest.mark.parametrize("index_dtype", [tf.int32, tf.int64], ids=lambda d: d.name)
def test_gather_along_other_axes_and_batch_dims_equals_tf_gather(case, index_dtype):
    shape, id_shape, axis, batch_dims = case
    rng = np.random.default_rng(1)
    params = tf.constant(rng.standard_normal(shape).astype(np.float32))
    rows = shape[batch_dims if axis is None else axis]
    ids = tf.constant(rng.integers(0, max(rows, 1), id_shape), index_dtype)
    weights = None
    results = []
    for gather in (tf.gather, tso.gather):
        for run in (lambda f: f(), lambda f: tf.function(f)()):
            with tf.GradientTape() as tape:
                tape.watch(params)
                out = run(lambda: gather(params, ids, axis=axis, batch_dims=batch_dims))
                if weights is None:
                    weights = tf.constant(rng.standard_normal(out.shape).astype(np.float32))
                loss = tf.reduce_sum(out * weights)
            results.append((out, tape.gradient(loss, params)))
    (want, want_grad), got = results[0], results[1:]
    for out, grad in got:  # values and gradient bitwise (sums over repeated ids in id order)
        assert out.shape == want.shape
        np.testing.assert_array_equal(out.numpy(), want.numpy())
        np.testing.assert_array_equal(tf.convert_to_tensor(grad).numpy(),
                                      tf.convert_to_tensor(want_grad).numpy())
    inner = int(np.prod(shape[(batch_dims if axis is None else axis) % len(shape) + 1:]))
    ops = _ops(lambda: tso.gather(params, ids, axis=axis, batch_dims=batch_dims))
    assert ("TfScatter>GatherNd" in ops) == (inner >= 8), ops
    assert ("GatherV2" in ops) == (inner < 8), ops


def test_gather_along_another_axis_is_tensorflows_under_xla_and_stock_ops():
    params = tf.random.normal([4, 6, 8])
    ids = tf.constant([[5, 0], [1, 1]])
    along = lambda: tso.gather(params, ids, axis=1)  # noqa: E731
    assert "TfScatter>GatherNd" in _ops(along)
    assert "TfScatter>GatherNd" not in _ops(tf.function(along, jit_compile=True))
    with tso.stock_ops():
        assert "TfScatter>GatherNd" not in _ops(along)
    np.testing.assert_array_equal(tf.function(along, jit_compile=True)().numpy(),
                                  tf.gather(params, ids, axis=1).numpy())


@pytest.mark.parametrize("run", ["eager", "function"])
def test_gather_along_another_axis_takes_every_policy(run):
    params = tf.reshape(tf.range(2 * 5 * 3, dtype=tf.float32), [2, 5, 3])  # slices of 3: ours
    ids = tf.constant([[1, 7], [-1, 4]])                                    # only with a policy

    def gather(**kw):
        call = lambda: tso.gather(params, ids, axis=1, batch_dims=1, **kw)  # noqa: E731
        return (call() if run == "eager" else tf.function(call)()).numpy()

    rows = params.numpy()
    zeros, nan = np.zeros(3, np.float32), np.full(3, np.nan, np.float32)
    np.testing.assert_array_equal(gather(bad_indices_policy="IGNORE"),
                                  [[rows[0, 1], zeros], [zeros, rows[1, 4]]])
    np.testing.assert_array_equal(gather(bad_indices_policy="CLIP"),
                                  [[rows[0, 1], rows[0, 4]], [rows[1, 0], rows[1, 4]]])
    np.testing.assert_array_equal(gather(bad_indices_policy="FILL"),
                                  [[rows[0, 1], nan], [nan, rows[1, 4]]])
    np.testing.assert_array_equal(gather(bad_indices_policy="FILL", fill_value=[-1.0, -2.0, -3.0]),
                                  [[rows[0, 1], [-1, -2, -3]], [[-1, -2, -3], rows[1, 4]]])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices\[0,1\] = \[7\] does not index into shape \[5\]"):
        gather(bad_indices_policy="ERROR")
    with pytest.raises(ValueError, match="fill_value is given for bad_indices_policy='FILL'"):
        gather(bad_indices_policy="IGNORE", fill_value=0.0)


def test_gather_along_another_axis_checks_ids_and_batch_dimensions():
    params = tf.random.normal([2, 5, 8])
    for run in (lambda f: f(), lambda f: tf.function(f)()):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices\[1,0\] = \[5\] does not index into shape \[5\]"):
            run(lambda: tso.gather(params, tf.constant([[0, 4], [5, 1]]), axis=1, batch_dims=1))
    with pytest.raises(ValueError, match=r"params.shape\[:batch_dims\] must equal indices"):
        tso.gather(params, tf.zeros([3, 2], tf.int32), axis=1, batch_dims=1)
    unknown = tf.function(lambda i: tso.gather(params, i, axis=1, batch_dims=1),
                          input_signature=[tf.TensorSpec([None, 2], tf.int32)])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"params.shape\[:batch_dims\] must equal indices"):
        unknown(tf.zeros([3, 2], tf.int32))
    np.testing.assert_array_equal(unknown(tf.constant([[4, 0], [1, 2]])).numpy(),
                                  tf.gather(params, [[4, 0], [1, 2]], axis=1, batch_dims=1).numpy())


def test_gather_goes_to_tensorflow_where_ours_cannot_serve_it():
    params = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    ids = tf.constant([[2, 0], [1, 1]])
    with pytest.raises(ValueError, match="bad_indices_policy and fill_value apply to the gathers"):
        tso.gather(params.tolist(), ids, axis=1, bad_indices_policy="IGNORE")  # rank unknown
    ragged = tf.ragged.constant([[1, 0], [1]])
    assert tso.gather(params, ragged).to_list() == tf.gather(params, ragged).to_list()
    assert (tso.gather(params, ragged, axis=1).to_list()
            == tf.gather(params, ragged, axis=1).to_list())
    assert (tso.nn.embedding_lookup(params, ragged).to_list()
            == tf.nn.embedding_lookup(params, ragged).to_list())
    strings = tf.constant(["a", "b", "c"])
    assert tso.gather(strings, [2, 0]).numpy().tolist() == [b"c", b"a"]


def test_gather_names_the_first_bad_id_and_ignore_gives_zeros():
    params = _table(5, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = \[7\]"):
        tso.gather(params, [1, 7, 9])
    got = tso.gather(params, [[1, 7]], bad_indices_policy="IGNORE").numpy()
    np.testing.assert_array_equal(got, [[params[1], [0, 0]]])


# -- embedding lookups ------------------------------------------------------

@pytest.mark.parametrize("strategy", ["mod", "div"])
@pytest.mark.parametrize("shards", [1, 3])
def test_embedding_lookup_equals_tensorflows(strategy, shards):
    table = _table(11, 4)
    if shards == 1:
        params = [tf.Variable(table)]
    else:  # TensorFlow's layouts of 11 rows in 3 tables
        if strategy == "mod":
            params = [tf.Variable(table[s::3]) for s in range(3)]
        else:
            params = [tf.Variable(table[a:b]) for a, b in ((0, 4), (4, 8), (8, 11))]
    ids = tf.constant([[10, 0, 3], [5, 5, 7]])
    for max_norm in (None, 1.0):
        def ours(_):
            return tso.nn.embedding_lookup_v1(params, ids, strategy, max_norm=max_norm)

        def theirs(_):
            return tf.compat.v1.nn.embedding_lookup(params, ids, strategy, max_norm=max_norm)
        with tf.GradientTape(persistent=True) as tape:
            got, want = ours(None), theirs(None)
            lg, lw = tf.reduce_sum(got * got), tf.reduce_sum(want * want)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        for g, w in zip(tape.gradient(lg, params), tape.gradient(lw, params)):
            _same_slices(g, w)
    np.testing.assert_array_equal(tso.nn.embedding_lookup(params, ids).numpy(),
                                  tf.nn.embedding_lookup(params, ids).numpy())


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ragged", [False, True])
def test_embedding_lookup_sparse_equals_tensorflows(combiner, weighted, ragged):
    table = tf.Variable(_table(20, 5))
    ids = tf.ragged.constant([[3, 1, 3], [7], [0, 19, 4, 4]], tf.int64)
    weights = tf.ragged.constant([[0.5, 2.0, -1.0], [3.0], [1.0, 1.0, 0.25, 4.0]])
    sp_ids = ids if ragged else ids.to_sparse()
    sp_weights = (weights if ragged else weights.to_sparse()) if weighted else None
    with tf.GradientTape(persistent=True) as tape:
        got = tso.nn.embedding_lookup_sparse(table, sp_ids, sp_weights, combiner=combiner)
        want = tf.nn.embedding_lookup_sparse(table, sp_ids, sp_weights, combiner=combiner)
        lg, lw = tf.reduce_sum(got * got), tf.reduce_sum(want * want)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    g, w = tape.gradient(lg, table), tape.gradient(lw, table)
    assert isinstance(g, tf.IndexedSlices)
    np.testing.assert_allclose(tf.convert_to_tensor(g).numpy(), tf.convert_to_tensor(w).numpy(),
                               rtol=1e-6, atol=1e-6)


def test_embedding_lookup_sparse_bad_id_and_combiner():
    table = tf.Variable(_table(4, 2))
    sp = tf.ragged.constant([[1, 9]], tf.int64).to_sparse()
    with pytest.raises(tf.errors.InvalidArgumentError, match="9"):
        tso.nn.embedding_lookup_sparse(table, sp, None)
    with pytest.raises(ValueError, match="combiner"):
        tso.nn.embedding_lookup_sparse(table, sp, None, combiner="max")


# -- the variables' IndexedSlices methods ------------------------------------

@pytest.mark.parametrize("method", ["scatter_add", "scatter_sub", "scatter_min", "scatter_max",
                                    "scatter_update"])
def test_variable_methods_under_the_patch_equal_tensorflows(method):
    table = _table(6, 2)
    delta = tf.IndexedSlices(tf.constant(_table(4, 2, seed=1)), tf.constant([4, 0, 4, 2]))
    theirs = tf.Variable(table)
    getattr(theirs, method)(delta)
    ours = tf.Variable(table)
    with tso.patched():
        assert "TfScatter" in str(tf.function(lambda: getattr(ours, method)(delta))
                                  .get_concrete_function().graph.as_graph_def())
        out = getattr(ours, method)(delta)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    np.testing.assert_array_equal(out.numpy(), theirs.numpy())
    with tso.patched(), pytest.raises(TypeError, match="IndexedSlices"):
        getattr(ours, method)(tf.constant([1.0]))


def test_sparse_read_and_other_dtypes_under_the_patch():
    table = tf.Variable(_table(6, 2))
    flags = tf.Variable([True, False, True])
    with tso.patched():
        rows, grad = _grad(lambda p: p.sparse_read([[5, 1], [1, 1]]), table.numpy(), True)
        np.testing.assert_array_equal(table.sparse_read([3]).numpy(), table.numpy()[[3]])
        assert flags.sparse_read([2, 1]).numpy().tolist() == [True, False]  # TensorFlow's
    want_rows, want_grad = _grad(lambda p: p.sparse_read([[5, 1], [1, 1]]), table.numpy(), True)
    np.testing.assert_array_equal(rows.numpy(), want_rows.numpy())
    _same_slices(grad, want_grad)


def test_patched_names_route_and_unpatch_restores():
    from tf_scatter_ops import patch
    names = patch.patched_names()
    for name in ("tf.gather", "tf.compat.v1.gather", "tf.nn.embedding_lookup",
                 "tf.compat.v1.nn.embedding_lookup", "tf.nn.embedding_lookup_sparse",
                 "tf.Variable.scatter_add", "tf.Variable.sparse_read"):
        assert name in names
    original = tf.gather
    table = tf.constant(_table())
    with tso.patched():
        graph = tf.function(lambda: (tf.gather(table, [1, 2]),
                                     tf.compat.v1.gather(table, [1], None, "g"),
                                     tf.nn.embedding_lookup(table, [[3]]))).get_concrete_function()
        types = {op.type for op in graph.graph.get_operations()}
        assert "TfScatter>GatherNd" in types and "GatherV2" not in types
    assert tf.gather is original


def test_keras_embedding_model_trains_through_the_patch_like_stock():
    """keras.layers.Embedding (which reads with tf.gather... through Keras'
    take) and Keras SGD (which applies the IndexedSlices gradient with
    scatter_sub) under the patch: the same weights as stock, bitwise."""
    def train():
        keras.utils.set_random_seed(1)
        model = keras.Sequential([keras.Input((4,), dtype="int32"), keras.layers.Embedding(50, 8),
                                  keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
        x = np.random.default_rng(0).integers(0, 50, (64, 4))
        y = np.random.default_rng(1).standard_normal((64, 1)).astype(np.float32)
        model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
        step = tf.function(model.train_step).get_concrete_function(
            (tf.TensorSpec([16, 4], tf.int32), tf.TensorSpec([16, 1], tf.float32)))
        graph = str(step.graph.as_graph_def())
        routed = (("TfScatter>ResourceGatherNd" in graph or "TfScatter>GatherNd" in graph)
                  and "TfScatter>ResourceScatterNdSub" in graph)
        return [w.numpy() for w in model.weights], routed
    stock, routed = train()
    assert not routed
    with tso.patched():
        ours, routed = train()
    assert routed  # the lookup (from the variable) and the SGD update ran our kernels
    for a, b in zip(ours, stock):
        np.testing.assert_array_equal(a, b)
