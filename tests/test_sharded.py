"""Tables in shards (tf_scatter_ops/_dispatch/variable_rows.py): a ShardedVariable, as
ParameterServerStrategy's variable_partitioner makes it, read and updated
through tso.gather_nd / gather / nn.embedding_lookup and the in-place
scatters, shard by shard, against the same op on one unsharded variable
(bitwise); bad rows named before any shard is touched; lists of tables
with bad ids. The same on a real cluster: tests/test_parameter_server.py."""

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops._base.tf_private import ShardedVariable

LAYOUTS = {"div": [4, 3], "uneven": [2, 4, 1], "one": [7]}
SCATTERS = ("scatter_nd_update", "scatter_nd_add", "scatter_nd_sub", "scatter_nd_min",
            "scatter_nd_max")


def _full(rows=7, dim=3, seed=0):
    return np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)


def _sharded(full, sizes):
    starts = np.cumsum([0] + sizes)
    return ShardedVariable([tf.Variable(full[a:b]) for a, b in zip(starts[:-1], starts[1:])])


def _value(table):
    return np.concatenate([v.numpy() for v in table.variables])


def _modes(f):
    """f, eager and traced (a traced call returns nothing: a ShardedVariable,
    what the scatters return, is not a function's output)."""
    def traced():
        f()
    return {"eager": f, "function": tf.function(traced)}


def _op_outputs(concrete):
    """(op type, static output shape) of every op in a traced function (an
    op without outputs once, with None)."""
    return [(op.type, None if t is None or t.shape.rank is None else tuple(t.shape.as_list()))
            for op in concrete.graph.get_operations() for t in op.outputs or [None]]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("mode", ["eager", "function"])
@pytest.mark.parametrize("ids", [3, [6, 0, 6, 2, 3], [[0, 6], [4, 4], [5, 1]]],
                         ids=["scalar", "vector", "bags"])
def test_row_reads_equal_the_unsharded_table(layout, mode, ids):
    full = _full()
    table = _sharded(full, LAYOUTS[layout])
    for index_dtype in (tf.int16, tf.int32, tf.int64):
        ids_tf = tf.constant(ids, index_dtype)
        reads = {
            "gather": lambda: tso.gather(table, ids_tf),
            "gather_nd": lambda: tso.gather_nd(table, tf.expand_dims(ids_tf, -1)),
            "embedding_lookup": lambda: tso.nn.embedding_lookup(table, ids_tf),
        }
        for name, read in reads.items():
            got = read() if mode == "eager" else tf.function(read)()
            np.testing.assert_array_equal(got.numpy(), full[np.array(ids)], err_msg=name)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_deeper_indices_and_batch_dims(layout):
    full = np.arange(7 * 3 * 2, dtype=np.float32).reshape(7, 3, 2)
    table = _sharded(full, LAYOUTS[layout])
    idx = np.array([[6, 2], [0, 1], [3, 0], [6, 2]])
    np.testing.assert_array_equal(tso.gather_nd(table, idx).numpy(), full[idx[:, 0], idx[:, 1]])
    idx3 = np.array([[6, 2, 1], [4, 0, 0]])
    np.testing.assert_array_equal(tso.gather_nd(table, idx3).numpy(), full[idx3[:, 0], idx3[:, 1], idx3[:, 2]])
    batched = np.array([[[1], [0]], [[2], [2]]])  # batch_dims=1: row b of the table, then [k]
    want = tf.gather_nd(tf.constant(full[:2]), batched, batch_dims=1)
    got = tso.gather_nd(_sharded(full[:2], [1, 1]), batched, batch_dims=1)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("layout", LAYOUTS)
def test_gradients_arrive_per_shard_as_indexed_slices(layout):
    full, sizes = _full(), LAYOUTS[layout]
    ids = tf.constant([[6, 0, 6], [2, 3, 0]])
    weights = tf.reshape(tf.range(1.0, 19.0), [2, 3, 3])
    plain = tf.Variable(full)
    with tf.GradientTape() as tape:
        want = tf.reduce_sum(tf.gather(plain, ids) * weights)
    dense = tf.convert_to_tensor(tape.gradient(want, plain)).numpy()
    table = _sharded(full, sizes)
    for read in (tso.gather, tso.nn.embedding_lookup,
                 lambda t, i: tso.gather_nd(t, i[..., None])):
        with tf.GradientTape() as tape:
            got = tf.reduce_sum(read(table, ids) * weights)
        grads = tape.gradient(got, table.variables)
        assert all(isinstance(g, tf.IndexedSlices) for g in grads), grads
        # each shard's gradient has only its touched rows, in index order
        starts = np.cumsum([0] + sizes)
        for g, a, b in zip(grads, starts[:-1], starts[1:]):
            flat = ids.numpy().ravel()
            np.testing.assert_array_equal(g.indices.numpy(), flat[(flat >= a) & (flat < b)] - a)
        np.testing.assert_array_equal(
            np.concatenate([tf.convert_to_tensor(g).numpy() for g in grads]), dense)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("mode", ["eager", "function"])
@pytest.mark.parametrize("op", SCATTERS)
def test_in_place_scatters_equal_the_unsharded_variable(layout, mode, op, rng):
    full = _full()
    ids = np.array([6, 0, 6, 2, 3, 0, 5, 6])[:, None]
    updates = rng.standard_normal((8, 3)).astype(np.float32)
    plain = tf.Variable(full)
    getattr(tso, op)(plain, ids, updates)
    table = _sharded(full, LAYOUTS[layout])
    out = _modes(lambda: getattr(tso, op)(table, ids, updates))[mode]()
    assert out is table or mode == "function"  # as ShardedVariable.scatter_* return
    np.testing.assert_array_equal(_value(table), plain.numpy())
    # depth 2: single elements of the rows
    deep = np.array([[6, 2], [0, 0], [6, 2], [3, 1]])
    values = rng.standard_normal(4).astype(np.float32)
    getattr(tso, op)(plain, deep, values)
    _modes(lambda: getattr(tso, op)(table, deep, values))[mode]()
    np.testing.assert_array_equal(_value(table), plain.numpy())


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_a_bad_row_raises_before_any_shard_is_touched(mode):
    full = _full()
    table = _sharded(full, [4, 3])
    # rows for both shards first, then the bad one (which would route to shard 0)
    for bad, name in (([[1], [5], [7]], "indices\\[2\\] = \\[7\\]"),
                      ([[1], [5], [-1]], "indices\\[2\\] = \\[-1\\]"),
                      ([[1, 0], [5, 1], [6, 3]], "indices\\[2\\] = \\[6,3\\]")):
        rows = np.ones((3,) if len(bad[0]) == 2 else (3, 3), np.float32)
        for op in SCATTERS:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=name + " does not index into shape \\[7,3\\]"):
                _modes(lambda: getattr(tso, op)(table, bad, rows))[mode]()
            np.testing.assert_array_equal(_value(table), full)
        with pytest.raises(tf.errors.InvalidArgumentError, match=name):
            _modes(lambda: tso.gather_nd(table, bad))[mode]()


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_ignore_drops_bad_rows_as_on_one_variable(mode):
    full = _full()
    ids = [[1, 0], [7, 0], [5, 2], [-3, 1], [6, 3], [0, 1]]
    updates = np.arange(1.0, 7.0, dtype=np.float32)
    plain = tf.Variable(full)
    tso.scatter_nd_add(plain, ids, updates, bad_indices_policy="IGNORE")
    table = _sharded(full, [4, 3])
    _modes(lambda: tso.scatter_nd_add(table, ids, updates, bad_indices_policy="IGNORE"))[mode]()
    np.testing.assert_array_equal(_value(table), plain.numpy())
    call = (lambda f: f()) if mode == "eager" else (lambda f: tf.function(f)())
    got = call(lambda: tso.gather_nd(table, ids, bad_indices_policy="IGNORE"))
    np.testing.assert_array_equal(got.numpy(),
                                  tso.gather_nd(plain, ids, bad_indices_policy="IGNORE").numpy())
    got = call(lambda: tso.gather(table, [9, 2, -1], bad_indices_policy="IGNORE"))
    np.testing.assert_array_equal(got.numpy(), np.stack([0 * full[0], _value(table)[2], 0 * full[0]]))


def test_what_the_sharded_path_refuses():
    table = _sharded(_full(), [4, 3])
    with pytest.raises(ValueError, match="depth 1 to 2"):
        tso.scatter_nd_add(table, np.zeros((2, 0), np.int32), np.ones((2, 7, 3), np.float32))
    with pytest.raises(ValueError, match="updates must have shape"):
        tso.scatter_nd_add(table, [[1], [2]], np.ones((2, 4), np.float32))
    with pytest.raises(ValueError, match="does not support dtype"):
        tso.scatter_nd_min(_sharded(np.ones((4, 2), np.complex64), [2, 2]), [[1]], [[1j, 1j]])

    @tf.function(jit_compile=True)
    def compiled(ids):
        return tso.gather(table, ids)
    with pytest.raises(ValueError, match="compiled with XLA"):
        compiled(tf.constant([1]))


def test_a_step_reads_and_writes_only_the_touched_rows():
    """No op of a traced lookup + update step outputs the table's or a
    shard's shape: nothing reads a shard whole or concatenates them."""
    table = _sharded(_full(4000, 8), [2000, 2000])

    @tf.function
    def step(ids):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tso.nn.embedding_lookup(table, ids) ** 2)
        for shard, grad in zip(table.variables, tape.gradient(loss, table.variables)):
            tso.scatter_nd_sub(shard, grad.indices[:, None], 0.1 * grad.values)
        tso.scatter_nd_add(table, ids[:, None], tf.ones([tf.size(ids), 8]))
        return loss

    step(tf.constant([5, 3999, 5]))
    outputs = _op_outputs(step.get_concrete_function(tf.TensorSpec([None], tf.int32)))
    big = {(4000, 8), (2000, 8)}
    assert not [o for o in outputs if o[1] in big], [o for o in outputs if o[1] in big]
    types = {t for t, _ in outputs}
    assert {"TfScatter>ResourceGatherNd", "TfScatter>ResourceScatterNdAdd",
            "TfScatter>ResourceScatterNdSub"} <= types
    assert "ReadVariableOp" not in types, types


def test_v1_mod_and_sparse_lookups_equal_tensorflows():
    """With "mod" (tf.compat.v1's default) TensorFlow's graph takes a
    ShardedVariable as the list of its shards; so do we, in both modes."""
    full = _full()
    ids = tf.constant([6, 0, 2, 1, 5])
    table = _sharded(full, [4, 3])
    want = tf.function(lambda: tf.compat.v1.nn.embedding_lookup(table, ids))()
    np.testing.assert_array_equal(tso.nn.embedding_lookup_v1(table, ids).numpy(), want.numpy())
    sp = tf.sparse.from_dense(tf.constant([[1, 6, 0], [3, 0, 0], [5, 5, 2]]))
    weights = tf.sparse.SparseTensor(sp.indices, tf.constant([1.0, 2.0, 0.5, 1.0, 3.0, 0.25]),
                                     sp.dense_shape)
    for combiner in ("sum", "mean", "sqrtn"):
        for w in (None, weights):
            want = tf.function(lambda: tf.nn.embedding_lookup_sparse(table, sp, w, combiner))()
            got = tso.nn.embedding_lookup_sparse(table, sp, w, combiner=combiner)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_lists_of_tables_name_a_bad_id_or_drop_it(strategy):
    full = _full()
    tables = [tf.constant(full[:4]), tf.constant(full[4:])]
    want = tf.compat.v1.nn.embedding_lookup(tables, [6, 1], partition_strategy=strategy)
    got = tso.nn.embedding_lookup_v1(tables, [6, 1], partition_strategy=strategy)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    for mode, f in _modes(lambda: tso.nn.embedding_lookup_v1(
            tables, [6, 7, 1], partition_strategy=strategy)).items():
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="indices\\[1\\] = \\[7\\] does not index into shape \\[7,3\\]"):
            f()
    got = tso.nn.embedding_lookup_v1(tables, [6, 7, -1, 1], partition_strategy=strategy,
                                     bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(got.numpy()[[1, 2]], 0 * full[:2])
    np.testing.assert_array_equal(got.numpy()[[0, 3]], want.numpy())


def test_patched_names_read_shards_with_our_ops():
    table = _sharded(_full(), [4, 3])
    with tso.patched():
        for read in (tf.gather, tf.nn.embedding_lookup):  # the patched names
            f = tf.function(lambda ids, read=read: read(table, ids))
            np.testing.assert_array_equal(f(tf.constant([6, 1])).numpy(), _full()[[6, 1]])
            outputs = _op_outputs(f.get_concrete_function(tf.TensorSpec([None], tf.int32)))
            assert "TfScatter>ResourceGatherNd" in {t for t, _ in outputs}, outputs
            assert not [o for o in outputs if o[1] in {(7, 3), (4, 3), (3, 3)}], outputs


def test_patched_sharded_methods():
    """ShardedVariable.sparse_read returns the rows in index order (stock
    TensorFlow returns them grouped by shard, and so does its tf.gather of
    a ShardedVariable); its scatter_* (IndexedSlices) check every row
    before any shard is written."""
    full = _full()
    table = _sharded(full, [4, 3])
    with tso.patched():
        np.testing.assert_array_equal(table.sparse_read([6, 1, 5]).numpy(), full[[6, 1, 5]])
        np.testing.assert_array_equal(tf.gather(table, [6, 1]).numpy(), full[[6, 1]])
        delta = tf.IndexedSlices(tf.ones([3, 3]), tf.constant([6, 1, 6]))
        assert table.scatter_add(delta) is table
        want = full.copy()
        want[[6, 1]] += [[2], [1]]
        np.testing.assert_array_equal(_value(table), want)
        with pytest.raises(tf.errors.InvalidArgumentError, match="indices\\[1\\] = \\[7\\]"):
            table.scatter_sub(tf.IndexedSlices(tf.ones([2, 3]), tf.constant([1, 7])))
        np.testing.assert_array_equal(_value(table), want)


def test_a_list_of_keras_variables():
    """Keras 3 variables (whose shape is a tuple) as a list of tables."""
    import keras
    full = _full()
    tables = [keras.Variable(full[:4]), keras.Variable(full[4:])]
    got = tso.nn.embedding_lookup(tables, [6, 1, 4])
    np.testing.assert_array_equal(got.numpy(), full[[6, 1, 4]])
