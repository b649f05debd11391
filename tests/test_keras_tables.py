"""tso.keras: the Embedding layer (Keras's config and results, rows read
from the variable, IndexedSlices gradient, save and load) and the sparse
optimizers (NumPy references for the sparse step, Keras's own for dense
gradients, only the touched rows and slots change)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso


ROWS, DIM = 40, 3


def _table(seed=0):
    return np.random.default_rng(seed).standard_normal((ROWS, DIM)).astype(np.float32)


def _sparse(ids, seed=1):
    values = np.random.default_rng(seed).standard_normal((len(ids), DIM)).astype(np.float32)
    return tf.IndexedSlices(tf.constant(values), tf.constant(ids), tf.constant([ROWS, DIM])), values


def _summed(ids, values):
    """Distinct ids in order of first appearance, their rows summed in order."""
    distinct = list(dict.fromkeys(ids))
    sums = np.zeros((len(distinct), DIM), np.float32)
    for i, v in zip(ids, values):
        sums[distinct.index(i)] += v
    return np.array(distinct), sums


def _apply(optimizer, table, steps):
    var = keras.Variable(table)
    optimizer.build([var])
    for grad in steps:
        optimizer.apply_gradients([(grad, var)])
    return var.numpy(), optimizer


STEPS = [[3, 7, 3, 0], [7, 12], [0, 0, 39]]


def _adam_reference(table, steps, lazy, lr=0.01, b1=0.9, b2=0.999, eps=1e-7):
    var, m, v = table.copy(), np.zeros_like(table), np.zeros_like(table)
    for t, ids in enumerate(steps, 1):
        rows, g = _summed(ids, _sparse(ids, seed=t)[1])
        alpha = np.float32(lr * np.sqrt(1 - np.float32(b2) ** t) / (1 - np.float32(b1) ** t))
        touched = rows if lazy else np.arange(ROWS)
        dense = np.zeros_like(table)
        dense[rows] = g
        gg = dense[touched]
        m[touched] = m[touched] + (gg - m[touched]) * np.float32(1 - b1)
        v[touched] = v[touched] + (gg * gg - v[touched]) * np.float32(1 - b2)
        var[touched] -= m[touched] * alpha / (np.sqrt(v[touched]) + np.float32(eps))
    return var


def test_lazy_adam_updates_only_touched_rows_as_the_reference():
    table = _table()
    got, opt = _apply(tso.keras.optimizers.LazyAdam(0.01),
                      table, [_sparse(ids, seed=t)[0] for t, ids in enumerate(STEPS, 1)])
    np.testing.assert_allclose(got, _adam_reference(table, STEPS, lazy=True), rtol=2e-6, atol=1e-7)
    untouched = sorted(set(range(ROWS)) - {i for s in STEPS for i in s})
    np.testing.assert_array_equal(got[untouched], table[untouched])  # bitwise unchanged
    m = opt._momentums[0].numpy()
    assert not m[untouched].any()


def test_lazy_adam_first_step_equals_keras_adam_bitwise():
    """From zero moments one step of LazyAdam equals Keras's Adam on the
    densified gradient (untouched rows move by 0 in both)."""
    table = _table()
    grad, _ = _sparse(STEPS[0])
    ours, _ = _apply(tso.keras.optimizers.LazyAdam(0.01), table, [grad])
    theirs, _ = _apply(keras.optimizers.Adam(0.01), table, [tf.convert_to_tensor(grad)])
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("make", [lambda: (tso.keras.optimizers.LazyAdam(0.01, amsgrad=True),
                                           keras.optimizers.Adam(0.01, amsgrad=True)),
                                  lambda: (tso.keras.optimizers.Adagrad(0.1),
                                           keras.optimizers.Adagrad(0.1)),
                                  lambda: (tso.keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
                                           keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True))],
                         ids=["adam", "adagrad", "sgd"])
def test_dense_gradients_equal_keras_bitwise(make):
    ours, theirs = make()
    table = _table()
    steps = [tf.constant(_table(seed=s)) for s in (5, 6)]
    np.testing.assert_array_equal(_apply(ours, table, steps)[0], _apply(theirs, table, steps)[0])


def test_adagrad_sparse_step_is_sparse_apply_adagrad_v2():
    table = _table()
    lr, eps, init = 0.1, 1e-7, 0.1
    got, _ = _apply(tso.keras.optimizers.Adagrad(lr, initial_accumulator_value=init, epsilon=eps),
                    table, [_sparse(ids, seed=t)[0] for t, ids in enumerate(STEPS, 1)])
    var, acc = table.copy(), np.full_like(table, init)
    for t, ids in enumerate(STEPS, 1):
        rows, g = _summed(ids, _sparse(ids, seed=t)[1])
        acc[rows] += g * g
        var[rows] -= np.float32(lr) * g / (np.sqrt(acc[rows]) + np.float32(eps))
    np.testing.assert_allclose(got, var, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("momentum,nesterov", [(0.0, False), (0.9, False), (0.9, True)])
def test_sgd_sparse_step_touches_only_its_rows(momentum, nesterov):
    table = _table()
    lr = np.float32(0.1)
    got, _ = _apply(tso.keras.optimizers.SGD(0.1, momentum=momentum, nesterov=nesterov),
                    table, [_sparse(ids, seed=t)[0] for t, ids in enumerate(STEPS, 1)])
    var, m = table.copy(), np.zeros_like(table)
    for t, ids in enumerate(STEPS, 1):
        rows, g = _summed(ids, _sparse(ids, seed=t)[1])
        if momentum == 0:
            var[rows] -= g * lr
            continue
        m[rows] = m[rows] * np.float32(momentum) - g * lr
        var[rows] += m[rows] * np.float32(momentum) - g * lr if nesterov else m[rows]
    np.testing.assert_allclose(got, var, rtol=2e-6, atol=1e-7)


# -- the layer ----------------------------------------------------------------

def _model(layer_cls, **kw):
    keras.utils.set_random_seed(3)
    return keras.Sequential([keras.Input((4,), dtype="int32"), layer_cls(ROWS, DIM, **kw),
                             keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)])


def test_embedding_equals_keras_and_its_gradient_is_indexed_slices():
    ours, theirs = _model(tso.keras.Embedding), _model(keras.layers.Embedding)
    ids = np.array([[1, 2, 39, -1], [0, 0, 5, 7]])
    np.testing.assert_array_equal(ours(ids).numpy(), theirs(ids).numpy())
    layer = ours.layers[0]
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(ids))
    grad = tape.gradient(loss, layer.embeddings.value)
    assert isinstance(grad, tf.IndexedSlices)
    graph = tf.function(layer).get_concrete_function(tf.TensorSpec([None, 4], tf.int32)).graph
    assert "TfScatter>ResourceGatherNd" in {op.type for op in graph.get_operations()}
    with pytest.raises(tf.errors.InvalidArgumentError, match=str(ROWS)):
        layer(np.array([[ROWS]]))


def test_embedding_config_mask_and_save_load(tmp_path):
    model = _model(tso.keras.Embedding, mask_zero=True)
    layer = model.layers[0]
    assert layer.get_config() == dict(keras.layers.Embedding(ROWS, DIM, mask_zero=True,
                                                             name=layer.name).get_config())
    np.testing.assert_array_equal(layer.compute_mask(np.array([[0, 3]])).numpy(), [[False, True]])
    model.compile(optimizer=tso.keras.optimizers.LazyAdam(0.01), loss="mse")
    x = np.random.default_rng(0).integers(0, ROWS, (32, 4))
    y = np.random.default_rng(1).standard_normal((32, 1)).astype(np.float32)
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert type(loaded.layers[0]) is tso.keras.Embedding
    assert type(loaded.optimizer) is tso.keras.optimizers.LazyAdam
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_fit_with_lazy_adam_changes_only_the_looked_up_rows():
    model = _model(tso.keras.Embedding)
    model.compile(optimizer=tso.keras.optimizers.LazyAdam(0.01), loss="mse")
    before = model.layers[0].embeddings.numpy()
    x = np.random.default_rng(0).integers(0, 20, (32, 4))  # rows 20.. never looked up
    y = np.random.default_rng(1).standard_normal((32, 1)).astype(np.float32)
    model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    after = model.layers[0].embeddings.numpy()
    np.testing.assert_array_equal(after[20:], before[20:])
    assert (after[np.unique(x)] != before[np.unique(x)]).any(axis=1).all()


def _step_output_shapes(layer_cls, optimizer, rows):
    """The static output shapes of every op in a traced Keras training step
    (model.train_step) of a [rows, DIM] table. The step calls no nested
    function (asserted), so its graph's ops are all there is."""
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input((4,), dtype="int32"), layer_cls(rows, DIM),
                              keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)])
    model.compile(optimizer=optimizer, loss="mse")
    model.optimizer.build(model.trainable_variables)
    step = tf.function(lambda x, y: model.train_step((x, y)))
    graph = step.get_concrete_function(tf.TensorSpec([None, 4], tf.int32),
                                       tf.TensorSpec([None, 1], tf.float32)).graph
    assert not graph.as_graph_def().library.function
    return {tuple(t.shape.as_list()) for op in graph.get_operations() for t in op.outputs
            if t.shape.rank is not None and t.shape.is_fully_defined()}


@pytest.mark.parametrize("make", [lambda: tso.keras.optimizers.LazyAdam(0.01),
                                  lambda: tso.keras.optimizers.Adagrad(0.1),
                                  lambda: tso.keras.optimizers.SGD(0.1, momentum=0.9)],
                         ids=["LazyAdam", "Adagrad", "SGD-momentum"])
def test_no_op_of_a_training_step_has_the_tables_shape(make):
    """The step reads, updates and keeps the slots of the touched rows only:
    nothing in it is [rows, DIM] (Keras's own Embedding + Adam step is)."""
    rows = 5003
    assert (rows, DIM) in _step_output_shapes(keras.layers.Embedding,
                                              keras.optimizers.Adam(0.01), rows)
    assert (rows, DIM) not in _step_output_shapes(tso.keras.Embedding, make(), rows)
