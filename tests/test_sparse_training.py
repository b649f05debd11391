"""Sparse training through the plugin: gather_nd's IndexedSlices gradient
(tensors and variables; rows dropped by IGNORE never reach an optimizer), a
Keras 3 embedding trained with SGD that touches only the looked-up rows and
never builds a dense [ROWS, DIM] gradient or read of its table, and the
in-place scatters into MirroredVariables under MirroredStrategy (two logical
CPUs, in a child process with a time limit that is always killed; see
tests/helpers/sparse_training_worker.py)."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.framework.function_def_to_graph import function_def_to_graph

import sparse_training_worker as worker
import tf_scatter_ops as tso
from tf_scatter_ops.ops import INDEX_DTYPES
from ecosystem_util import kill, python_env


# ---------------------------------------------------------------------------
# 1. gather_nd's gradient: type and values
# ---------------------------------------------------------------------------

def _params(shape=(7, 3)):
    return (np.arange(np.prod(shape), dtype=np.float32).reshape(shape) % 11 - 5) / 4


def _weights(shape, seed=0):
    return np.random.default_rng(seed).integers(-4, 5, shape).astype(np.float32) / 4


def _grad(gather, params, indices, w, as_variable, **kw):
    """Gradient of sum(w * gather(params, indices)) w.r.t. params."""
    p = tf.Variable(params) if as_variable else tf.constant(params)
    with tf.GradientTape() as tape:
        if not as_variable:
            tape.watch(p)
        loss = tf.reduce_sum(w * gather(p, indices, **kw))
    return tape.gradient(loss, p)


def _dense(g):
    return tf.convert_to_tensor(g).numpy()


@pytest.mark.parametrize("as_variable", [False, True], ids=["tensor", "variable"])
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=lambda d: d.name)
def test_row_lookup_gradient_is_indexed_slices_equal_to_tf(as_variable, index_dtype):
    params = _params()
    ids = np.array([[1], [4], [1], [6], [0], [4], [4]])  # duplicates accumulate
    w = _weights((7, 3))
    got = _grad(tso.gather_nd, params, tf.constant(ids, index_dtype), w, as_variable)
    want = _grad(tf.gather_nd, params, tf.constant(ids, tf.int32), w, as_variable)
    assert isinstance(got, tf.IndexedSlices), type(got)
    assert got.indices.dtype in (tf.int32, tf.int64)
    np.testing.assert_array_equal(got.indices.numpy(), ids[:, 0])
    np.testing.assert_array_equal(got.values.numpy(), w)  # one gradient row per lookup
    np.testing.assert_array_equal(got.dense_shape.numpy(), params.shape)
    np.testing.assert_array_equal(_dense(got), _dense(want))
    assert np.count_nonzero(_dense(got)[[2, 3, 5]]) == 0  # rows never looked up


@pytest.mark.parametrize("params_shape", [(9,), (6, 2, 3)], ids=["rank1", "rank3"])
@pytest.mark.parametrize("as_variable", [False, True], ids=["tensor", "variable"])
def test_row_lookup_gradient_other_params_ranks(params_shape, as_variable):
    params = _params(params_shape)
    ids = np.array([[2], [0], [2], [5]])
    w = _weights((4,) + params_shape[1:], seed=1)
    got = _grad(tso.gather_nd, params, ids, w, as_variable)
    want = _grad(tf.gather_nd, params, ids, w, as_variable)
    assert isinstance(got, tf.IndexedSlices), type(got)
    np.testing.assert_array_equal(got.values.numpy(), w)
    np.testing.assert_array_equal(_dense(got), _dense(want))


@pytest.mark.parametrize("as_variable", [False, True], ids=["tensor", "variable"])
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=lambda d: d.name)
def test_depth_two_gradient_is_dense_and_equal_to_tf(as_variable, index_dtype):
    params = _params()
    idx = np.array([[1, 2], [4, 0], [1, 2], [6, 1]])
    w = _weights((4,), seed=2)
    got = _grad(tso.gather_nd, params, tf.constant(idx, index_dtype), w, as_variable)
    want = _grad(tf.gather_nd, params, tf.constant(idx, tf.int32), w, as_variable)
    assert isinstance(got, tf.Tensor) and not isinstance(got, tf.IndexedSlices), type(got)
    np.testing.assert_array_equal(got.numpy(), _dense(want))
    assert got.numpy()[1, 2] == w[0] + w[2]


@pytest.mark.parametrize("as_variable", [False, True], ids=["tensor", "variable"])
def test_bag_lookup_gradient_is_indexed_slices(as_variable):
    """Depth-1 indices of rank 3 (bags of ids, [B, L, 1]): an IndexedSlices
    of the flattened ids and one gradient row per id, as tf.gather gives;
    under IGNORE the dropped ids are left out of it."""
    params = _params()
    idx = np.array([[[1], [3]], [[3], [0]], [[6], [1]]])
    w = _weights((3, 2, 3), seed=3)
    got = _grad(tso.gather_nd, params, idx, w, as_variable)
    want = _grad(tf.gather, params, idx[..., 0], w, as_variable)
    assert isinstance(got, tf.IndexedSlices) and isinstance(want, tf.IndexedSlices)
    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
    np.testing.assert_array_equal(_dense(got), _dense(want))
    bad = idx.copy()
    bad[1, 0, 0] = 99
    got = _grad(tso.gather_nd, params, bad, w, as_variable, bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(got.indices.numpy(), [1, 3, 0, 6, 1])
    np.testing.assert_array_equal(got.values.numpy(), np.delete(w.reshape(6, 3), 2, axis=0))


def _graph_op_types(fn, *args):
    return [op.type for op in tf.function(fn).get_concrete_function(*args).graph.get_operations()]


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=lambda d: d.name)
def test_gradients_inside_tf_function(index_dtype):
    params = _params()
    var = tf.Variable(params)
    ids = tf.constant([[5], [2], [5]], index_dtype)
    deep = tf.constant([[5, 1], [2, 2]], index_dtype)
    w = tf.constant(_weights((3, 3), seed=4))

    def sparse_grads(ids):
        with tf.GradientTape(persistent=True) as tape:
            x = tf.identity(tf.constant(params))
            tape.watch(x)
            a = tf.reduce_sum(w * tso.gather_nd(x, ids))
            b = tf.reduce_sum(w * tso.gather_nd(var, ids))
        return tape.gradient(a, x), tape.gradient(b, var)

    def grads(ids, deep):
        with tf.GradientTape() as tape:
            c = tf.reduce_sum(tso.gather_nd(var, deep) * [2.0, 3.0])
        return sparse_grads(ids) + (tape.gradient(c, var),)

    g_tensor, g_var, g_deep = tf.function(grads)(ids, deep)
    assert isinstance(g_tensor, tf.IndexedSlices) and isinstance(g_var, tf.IndexedSlices)
    assert not isinstance(g_deep, tf.IndexedSlices)
    expected = np.zeros_like(params)
    np.add.at(expected, [5, 2, 5], w.numpy())
    np.testing.assert_array_equal(_dense(g_tensor), expected)
    np.testing.assert_array_equal(_dense(g_var), expected)
    expected_deep = np.zeros_like(params)
    expected_deep[5, 1], expected_deep[2, 2] = 2.0, 3.0
    np.testing.assert_array_equal(g_deep.numpy(), expected_deep)

    # The graph: rows read from the variable (no ReadVariableOp of it), and a
    # dense TfScatter>ScatterNd only for the depth-2 gradient.
    types = _graph_op_types(grads, ids, deep)
    assert "TfScatter>ResourceGatherNd" in types and "ReadVariableOp" not in types, types
    assert types.count("TfScatter>ScatterNd") == 1, types
    sparse_only = _graph_op_types(sparse_grads, ids)
    assert "TfScatter>ScatterNd" not in sparse_only, sparse_only


def test_unknown_index_shape_in_tf_function_still_gives_tf_values():
    params = _params()
    var = tf.Variable(params)
    w = tf.constant(_weights((3, 3), seed=5))

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
    def grad(idx):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * tso.gather_nd(var, idx))
        return tf.convert_to_tensor(tape.gradient(loss, var))

    expected = np.zeros_like(params)
    np.add.at(expected, [0, 6, 0], w.numpy())
    np.testing.assert_array_equal(grad(tf.constant([[0], [6], [0]])).numpy(), expected)


BAD_IDS = np.array([[3], [7], [-1], [0], [100], [3], [-7]])
GOOD = np.array([True, False, False, True, False, True, False])


@pytest.mark.parametrize("in_function", [False, True], ids=["eager", "tf_function"])
@pytest.mark.parametrize("as_variable", [False, True], ids=["tensor", "variable"])
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=lambda d: d.name)
def test_ignore_drops_out_of_bound_rows_from_indexed_slices(index_dtype, as_variable, in_function):
    params = _params()
    w = _weights((7, 3), seed=6)
    ids = tf.constant(BAD_IDS, index_dtype)
    p = tf.Variable(params) if as_variable else tf.constant(params)

    def run(ids):
        with tf.GradientTape() as tape:
            if not as_variable:
                tape.watch(p)
            out = tso.gather_nd(p, ids, bad_indices_policy="IGNORE")
            loss = tf.reduce_sum(w * out)
        return out, tape.gradient(loss, p)

    out, g = (tf.function(run) if in_function else run)(ids)
    expected_out = np.where(GOOD[:, None], params[np.where(GOOD, BAD_IDS[:, 0], 0)], 0)
    np.testing.assert_array_equal(out.numpy(), expected_out)
    assert isinstance(g, tf.IndexedSlices), type(g)
    indices = g.indices.numpy()
    assert ((indices >= 0) & (indices < params.shape[0])).all(), indices
    np.testing.assert_array_equal(indices, BAD_IDS[GOOD, 0])
    np.testing.assert_array_equal(g.values.numpy(), w[GOOD])
    reference = _grad(tf.gather_nd, params, BAD_IDS[GOOD], w[GOOD], as_variable)
    np.testing.assert_array_equal(_dense(g), _dense(reference))


def test_ignore_all_rows_out_of_bound_gives_empty_indexed_slices():
    var = tf.Variable(_params())
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tso.gather_nd(var, [[7], [-2]], bad_indices_policy="IGNORE"))
    g = tape.gradient(loss, var)
    assert isinstance(g, tf.IndexedSlices)
    assert g.indices.shape[0] == 0 and g.values.shape == (0, 3)
    assert np.count_nonzero(_dense(g)) == 0


@pytest.mark.parametrize("make_opt", [
    lambda: keras.optimizers.SGD(0.5),
    lambda: keras.optimizers.Adam(0.5),
    lambda: tf.compat.v1.train.GradientDescentOptimizer(0.5),
], ids=["keras_sgd", "keras_adam", "v1_sgd"])
def test_ignore_gradient_is_safe_for_optimizers(make_opt):
    """Bad rows are dropped before the optimizer's scatter, which would
    raise on them; only the good rows move."""
    params = _params()
    var = tf.Variable(params)
    w = tf.constant(_weights((7, 3), seed=7))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(w * tso.gather_nd(var, tf.constant(BAD_IDS), bad_indices_policy="IGNORE"))
    opt = make_opt()
    opt.apply_gradients([(tape.gradient(loss, var), var)])
    moved = (var.numpy() != params).any(axis=1)
    np.testing.assert_array_equal(np.flatnonzero(moved), [0, 3])


@pytest.mark.parametrize("as_variable", [False, True], ids=["tensor", "variable"])
def test_second_order_gradient_through_indexed_slices(as_variable):
    params = _params()
    idx = [[1], [4], [1]]

    def second(gather):
        p = tf.Variable(params) if as_variable else tf.constant(params)
        with tf.GradientTape() as outer:
            outer.watch(p)
            with tf.GradientTape() as inner:
                inner.watch(p)
                loss = tf.reduce_sum(gather(p, idx) ** 3)
            g = inner.gradient(loss, p)
            assert isinstance(g, tf.IndexedSlices)
            z = tf.reduce_sum(g.values ** 2)
        return g, outer.gradient(z, p)

    g, gg = second(tso.gather_nd)
    rg, rgg = second(tf.gather_nd)
    np.testing.assert_allclose(_dense(g), _dense(rg), rtol=1e-6)
    assert gg is not None
    np.testing.assert_allclose(_dense(gg), _dense(rgg), rtol=1e-6)
    # d/dp sum((3 p_i^2)^2) over the lookups = 36 p^3 per lookup
    expected = np.zeros_like(params)
    np.add.at(expected, [1, 4, 1], 36 * params[[1, 4, 1]] ** 3)
    np.testing.assert_allclose(_dense(gg), expected, rtol=1e-6)


# ---------------------------------------------------------------------------
# 2. A Keras 3 embedding trained with SGD: sparse updates, no dense gradient
# ---------------------------------------------------------------------------

ROWS, DIM, N = 50_000, 16, 64


class RowLookup(keras.layers.Layer):
    """An embedding table; the lookup is tso.gather_nd (or stock tf.gather)."""

    def __init__(self, stock=False, **kwargs):
        super().__init__(**kwargs)
        self.stock = stock

    def build(self, input_shape):
        self.table = self.add_weight(shape=(ROWS, DIM), name="table",
                                     initializer=keras.initializers.RandomNormal(seed=3))

    def call(self, ids):
        if self.stock:
            return tf.gather(self.table, ids)
        return tso.gather_nd(self.table, ids[:, None])


def _model(stock=False):
    keras.utils.set_random_seed(1)
    ids = keras.Input((), dtype="int32", name="ids")
    rows = RowLookup(stock, name="lookup")(ids)
    out = keras.layers.Dense(1, name="head",
                             kernel_initializer=keras.initializers.GlorotUniform(seed=4))(rows)
    return keras.Model(ids, out)


def _data():
    rng = np.random.default_rng(11)
    ids = rng.integers(0, ROWS, N).astype(np.int32)
    ids[5] = ids[2]  # a duplicate in one batch
    y = rng.standard_normal((N, 1)).astype(np.float32)
    return ids, y


def _table(model):
    return model.get_layer("lookup").table.numpy()


def _walk_ops(graph, seen=None):
    """Every op of `graph` and of every function it calls (nested
    tf.functions, while/cond bodies), recursively. A function's Python
    FuncGraph is used where it has one (it keeps the static shapes, also of
    variable reads); anything else in the function library is rebuilt from
    its FunctionDef."""
    seen = set() if seen is None else seen
    yield from graph.get_operations()
    for name, function in getattr(graph, "_functions", {}).items():
        inner = getattr(function, "graph", None)
        if inner is not None and name not in seen:
            seen.add(name)
            yield from _walk_ops(inner, seen)
    for fdef in graph.as_graph_def().library.function:
        if fdef.signature.name not in seen:
            seen.add(fdef.signature.name)
            yield from _walk_ops(function_def_to_graph(fdef), seen)


def _table_sized(graph):
    """(op type, name) of every op with a [ROWS, DIM] output."""
    return [(op.type, op.name) for op in _walk_ops(graph) for out in op.outputs
            if out.shape.rank == 2 and out.shape.as_list() == [ROWS, DIM]]


def _dense_reads(graph):
    return [(t, n) for t, n in _table_sized(graph) if t == "ReadVariableOp"]


def test_graph_walker_sees_dense_tensors_in_nested_functions():
    """The checker below can fail: a nested tf.function with a dense
    gradient of a [ROWS, DIM] table is found."""
    table = tf.Variable(tf.zeros([ROWS, DIM]))

    @tf.function
    def inner(ids):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(table.read_value(), ids) ** 2)
        return tf.convert_to_tensor(tape.gradient(loss, table))

    @tf.function
    def outer(ids):
        return tf.reduce_sum(inner(ids))

    graph = outer.get_concrete_function(tf.TensorSpec([None], tf.int32)).graph
    assert not [op for op in graph.get_operations() if op.type == "ReadVariableOp"]
    assert _dense_reads(graph)
    assert len(_table_sized(graph)) > len(_dense_reads(graph))  # the dense gradient too


def _fit(stock):
    model = _model(stock)
    model.compile(optimizer=keras.optimizers.SGD(0.5), loss="mse")
    before = _table(model).copy()
    ids, y = _data()
    history = model.fit(ids, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    return model, before, history.history["loss"]


def _custom_train(stock, optimizer):
    """A custom tf.function train step: keras SGD's apply_gradients, or a
    tf.compat.v1 GradientDescentOptimizer on the underlying tf.Variables."""
    model = _model(stock)
    before = _table(model).copy()
    if optimizer == "keras":
        opt = keras.optimizers.SGD(0.25)
        variables = model.trainable_variables
    else:
        opt = tf.compat.v1.train.GradientDescentOptimizer(0.25)
        variables = [v.value for v in model.trainable_variables]  # the tf.Variables

    @tf.function
    def step(ids, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(ids, training=True) - y) ** 2)
        grads = tape.gradient(loss, variables)
        opt.apply_gradients(zip(grads, variables))
        return loss, grads[0]

    ids, y = _data()
    losses, grad_types = [], set()
    for lo in range(0, N, 16):
        loss, g = step(ids[lo:lo + 16], y[lo:lo + 16])
        losses.append(float(loss))
        grad_types.add(type(g).__name__)
    graph = step.get_concrete_function(tf.TensorSpec([None], tf.int32),
                                       tf.TensorSpec([None, 1], tf.float32)).graph
    return model, before, losses, grad_types, graph


def _assert_only_looked_up_rows_changed(before, after, ids):
    touched = np.unique(ids)
    changed = np.flatnonzero((after != before).any(axis=1))
    np.testing.assert_array_equal(changed, touched)
    untouched = np.setdiff1d(np.arange(ROWS), touched)
    np.testing.assert_array_equal(after[untouched].view(np.uint32), before[untouched].view(np.uint32))


def test_keras_fit_updates_only_looked_up_rows_and_matches_tf_gather():
    model, before, losses = _fit(stock=False)
    ref, ref_before, ref_losses = _fit(stock=True)
    np.testing.assert_array_equal(before, ref_before)
    after = _table(model)
    _assert_only_looked_up_rows_changed(before, after, _data()[0])
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-6)
    assert losses[1] < losses[0]
    np.testing.assert_allclose(after, _table(ref), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(model.get_layer("head").kernel.numpy(),
                               ref.get_layer("head").kernel.numpy(), rtol=1e-6, atol=1e-7)


def test_keras_train_step_graph_has_no_dense_table_gradient_or_read():
    model, _, _ = _fit(stock=False)
    ref, _, _ = _fit(stock=True)
    specs = (tf.TensorSpec([None], tf.int32), tf.TensorSpec([None, 1], tf.float32))
    graph = tf.function(model.train_step).get_concrete_function(specs).graph  # what fit runs
    types = {op.type for op in _walk_ops(graph)}
    assert "TfScatter>ResourceGatherNd" in types, types
    assert "TfScatter>ScatterNd" not in types, types
    assert _table_sized(graph) == []
    assert _dense_reads(graph) == []
    # The same check on the stock model does see its dense read of the table.
    ref_graph = tf.function(ref.train_step).get_concrete_function(specs).graph
    assert _dense_reads(ref_graph)


@pytest.mark.parametrize("optimizer", ["keras", "v1"])
def test_custom_train_step_updates_only_looked_up_rows(optimizer):
    model, before, losses, grad_types, graph = _custom_train(False, optimizer)
    ref, ref_before, ref_losses, ref_grad_types, _ = _custom_train(True, optimizer)
    assert grad_types == {"IndexedSlices"} == ref_grad_types
    after = _table(model)
    _assert_only_looked_up_rows_changed(before, after, _data()[0])
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-6)
    np.testing.assert_allclose(after, _table(ref), rtol=1e-6, atol=1e-7)
    assert _table_sized(graph) == []
    assert _dense_reads(graph) == []


# ---------------------------------------------------------------------------
# 3. MirroredStrategy over two logical CPUs (child process)
# ---------------------------------------------------------------------------

WORKER = os.path.abspath(worker.__file__)
TIMEOUT = 150


@pytest.fixture(scope="module")
def mirrored(tmp_path_factory):
    out = tmp_path_factory.mktemp("mirrored") / "result.json"
    proc = subprocess.Popen([sys.executable, WORKER, str(out)], env=python_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        log = proc.communicate(timeout=TIMEOUT)[0]
    except subprocess.TimeoutExpired:
        log = None
    finally:
        kill(proc)
    assert proc.returncode == 0 and out.exists(), \
        f"rc={proc.returncode}\n{(log or f'timed out after {TIMEOUT} s')[-3000:]}"
    result = json.loads(out.read_text())
    assert result["replicas"] == 2
    return result


def _value(result, name):
    entry = result[name]
    assert "error" not in entry, f"{name}: {entry['error']}: {entry['message']}\n{entry['traceback']}"
    return entry["value"]


INIT = ((np.arange(10, dtype=np.float32).reshape(worker.SHAPE) - 4) / 2)


def test_cross_replica_scatter_add_updates_every_copy(mirrored):
    got = _value(mirrored, "cross_add")
    expected = INIT.copy()
    expected[1] += [1 + 5, 2 + 6]
    expected[3] += [3, 4]
    assert len(got["ours"]) == 2
    for copy in got["ours"] + got["returned"]:
        np.testing.assert_array_equal(copy, expected)
    assert got["ours"] == got["tf"]  # TF's var.scatter_add(IndexedSlices)


def test_cross_replica_scatter_update_updates_every_copy(mirrored):
    got = _value(mirrored, "cross_update")
    expected = INIT.copy()
    expected[1], expected[3] = [5, 6], [3, 4]  # the last duplicate wins
    for copy in got["ours"] + got["returned"]:
        np.testing.assert_array_equal(copy, expected)
    assert got["ours"] == got["tf"]


def test_cross_replica_scatters_in_tf_function(mirrored):
    got = _value(mirrored, "cross_in_function")
    expected = INIT.copy()
    expected[1] -= [6, 8]
    expected[3] -= [3, 4]
    expected[0] = np.maximum(expected[0], [100, -100])
    for copy in got["ours"]:
        np.testing.assert_array_equal(copy, expected)
    assert got["ours"] == got["tf"]


def test_cross_replica_scatter_into_keras_variable(mirrored):
    got = _value(mirrored, "cross_keras_variable")
    assert got["inner"] == "MirroredVariable"
    assert got["ours"] == _value(mirrored, "cross_add")["ours"]


def test_cross_replica_policies(mirrored):
    got = _value(mirrored, "cross_policies")
    expected = INIT.copy()
    expected[4] += 1
    expected[0] += 4
    assert got["after_ignore"] == [expected.tolist()] * 2
    assert got["error"] and "indices[1] = [5]" in got["error"]
    assert got["after_error"] == [expected.tolist()] * 2  # nothing written on either copy


@pytest.mark.parametrize("name,op", [("replica_none_add", "add"),
                                     ("replica_none_update_function", "update")])
def test_replica_context_none_updates_each_replicas_own_copy(mirrored, name, op):
    got = _value(mirrored, name)
    for r, copy in enumerate(got["ours"]):
        expected = INIT.copy()
        for row in (r, 4):
            expected[row] = expected[row] + (r + 1) if op == "add" else r + 1
        np.testing.assert_array_equal(copy, expected)
    assert got["ours"][0] != got["ours"][1]
    assert got["ours"] == got["tf"]


@pytest.mark.parametrize("name,op", [("replica_first_add", "add"),
                                     ("replica_first_update_function", "update")])
def test_replica_context_only_first_replica_applies_replica_0_to_all(mirrored, name, op):
    got = _value(mirrored, name)
    expected = INIT.copy()
    for row in (0, 4):  # replica 0 writes 1 into rows 0 and 4
        expected[row] = expected[row] + 1 if op == "add" else 1
    assert got["ours"] == [expected.tolist()] * 2
    assert got["ours"] == got["tf"]


@pytest.mark.parametrize("name,op,scale", [("replica_sum_add", "add", 1.0),
                                           ("replica_mean_sub_function", "sub", 0.5)])
def test_add_and_sub_aggregate_the_replicas_updates_as_tensorflow_does(mirrored, name, op, scale):
    """As TensorFlow's scatter_add/sub: SUM (MEAN: halved) of both replicas'
    rows, applied to every copy."""
    got = _value(mirrored, name)
    expected = INIT.copy()
    for r in range(2):  # replica r adds r + 1 to rows r and 4
        for row in (r, 4):
            expected[row] += (r + 1) * scale * (1 if op == "add" else -1)
    assert got["ours"] == [expected.tolist()] * 2
    assert got["ours"] == got["tf"]


@pytest.mark.parametrize("name,aggregation", [("sum_not_implemented", "SUM"),
                                              ("mean_not_implemented", "MEAN")])
def test_other_aggregations_raise_tf_not_implemented_error(mirrored, name, aggregation):
    got = _value(mirrored, name)
    expected = got["expected"]
    assert "with NONE or `ONLY_FIRST_REPLICA` aggregation" in expected["scatter_nd_update"]
    assert aggregation in expected["scatter_nd_update"]
    assert got["tf_scatter_update"] == expected["scatter_update"]  # TF's own message
    for op in ("scatter_nd_update", "scatter_nd_min", "scatter_nd_max"):
        for context in ("cross", "replica"):
            entry = got[f"{op}/{context}"]
            assert entry["raised"] == "NotImplementedError", (op, context, entry)
            assert entry["message"] == expected[op], (op, context)
        assert got[f"{op}/unchanged"], op


def test_gather_nd_reads_each_replicas_own_copy(mirrored):
    got = _value(mirrored, "gather_per_replica")
    assert [c[2] for c in got["copies"]] == [[10, 10], [20, 20]]
    for r, copy in enumerate(got["copies"]):
        expected = np.asarray(copy)[[2, 0, 2]].tolist()
        assert got["eager"][r] == expected
        assert got["traced"][r] == expected
        assert got["tf"][r] == expected
    assert got["cross"] == got["eager"][0]  # cross-replica: the primary copy


@pytest.fixture(scope="module")
def single_training():
    return {mode: worker.train_embedding(None, mode) for mode in ("keras", "scatter")}


@pytest.mark.parametrize("mode", ["keras", "scatter"])
def test_mirrored_embedding_training_matches_single_device(mirrored, single_training, mode):
    got = _value(mirrored, f"train_{mode}")
    single = single_training[mode]
    assert got["grad_types"] == ["IndexedSlices"] == single["grad_types"]
    np.testing.assert_allclose(got["losses"], single["losses"], rtol=1e-5)
    assert len(got["copies"]) == 2
    for copy in got["copies"]:
        np.testing.assert_allclose(copy, single["copies"][0], rtol=1e-5, atol=1e-6)
    # Training moved exactly the looked-up rows.
    table0 = worker.initial_table()
    looked_up = np.unique(np.concatenate([ids for ids, _ in worker.batches()]))
    moved = np.flatnonzero((np.asarray(single["copies"][0]) != table0).any(axis=1))
    np.testing.assert_array_equal(moved, looked_up)
    assert len(looked_up) < worker.ROWS
