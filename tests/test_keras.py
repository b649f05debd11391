"""Keras 3 (TensorFlow backend): the example ScatterAccumulate layer trains with
model.fit (loss goes down, gradients reach its weights through our ops), and
model.save / keras.models.load_model round-trips after `import tf_scatter_ops`."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from examples.scatter_accumulate import ScatterAccumulate
from ecosystem_util import run_python

ROWS, UNITS, K = 20, 3, 5


def _data(n=256, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, ROWS, (n, K)).astype(np.int32)
    weights = rng.random((n, K)).astype(np.float32)
    true_table = rng.standard_normal((ROWS, UNITS)).astype(np.float32)
    y = np.einsum("nk,nku->nu", weights, true_table[ids]) + 0.5
    return ids, weights, y.astype(np.float32)


def _model(seed=1):
    keras.utils.set_random_seed(seed)
    ids = keras.Input((K,), dtype="int32", name="ids")
    weights = keras.Input((K,), name="weights")
    out = ScatterAccumulate(ROWS, UNITS, name="bag")([ids, weights])
    return keras.Model([ids, weights], out)


def _reference(layer, ids, weights):
    """The layer's function in plain TensorFlow ops (no plugin)."""
    rows = tf.gather(layer.table, ids)
    return layer.bias + tf.reduce_sum(rows * weights[..., None], axis=1)


def test_layer_matches_plain_tensorflow_and_gradients_flow_through_our_ops():
    ids, weights, y = _data(32)
    model = _model()
    layer = model.get_layer("bag")

    def grads(ids, weights, use_plugin):
        with tf.GradientTape() as tape:
            out = layer([ids, weights]) if use_plugin else _reference(layer, ids, weights)
            loss = tf.reduce_mean((out - y) ** 2)
        return tape.gradient(loss, [layer.table.value, layer.bias.value]), out

    (g_table, g_bias), out = tf.function(lambda a, b: grads(a, b, True))(ids, weights)
    (r_table, r_bias), r_out = grads(ids, weights, False)
    np.testing.assert_allclose(out, r_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tf.convert_to_tensor(g_table), tf.convert_to_tensor(r_table),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_bias, r_bias, rtol=1e-5, atol=1e-6)
    assert np.count_nonzero(tf.convert_to_tensor(g_table)) > 0

    graph = tf.function(lambda a, b: grads(a, b, True)).get_concrete_function(
        tf.TensorSpec([None, K], tf.int32), tf.TensorSpec([None, K])).graph
    types = {op.type for op in graph.get_operations()}
    # forward: gather_nd + tensor_scatter_nd_add; backward: gather_nd (of
    # tensor_scatter_nd_add); the table's gradient is an IndexedSlices of the
    # bags' rows (depth-1 indices of rank 3), no dense scatter.
    assert {"TfScatter>GatherNd", "TfScatter>TensorScatterAdd"} <= types
    assert isinstance(g_table, tf.IndexedSlices)
    assert not types & {"GatherNd", "ScatterNd", "TensorScatterAdd", "GatherV2"}


@pytest.mark.parametrize("jit_compile", [False, True])
def test_fit_lowers_the_loss_and_trains_the_layer_weights(jit_compile):
    ids, weights, y = _data()
    model = _model()
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse", jit_compile=jit_compile)
    before = [w.numpy().copy() for w in model.get_layer("bag").weights]
    history = model.fit([ids, weights], y, batch_size=32, epochs=6, verbose=0, shuffle=False)
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0], losses
    after = [w.numpy() for w in model.get_layer("bag").weights]
    for b, a in zip(before, after):
        assert not np.allclose(a, b)


def test_save_and_load_model_round_trip(tmp_path):
    ids, weights, y = _data(64)
    model = _model()
    model.compile(optimizer="adam", loss="mse", jit_compile=False)
    model.fit([ids, weights], y, batch_size=32, epochs=1, verbose=0)
    expected = model.predict([ids, weights], verbose=0)
    path = str(tmp_path / "bag.keras")
    model.save(path)

    loaded = keras.models.load_model(path)
    assert isinstance(loaded.get_layer("bag"), ScatterAccumulate)
    np.testing.assert_array_equal(loaded.predict([ids, weights], verbose=0), expected)

    np.save(tmp_path / "ids.npy", ids)
    np.save(tmp_path / "weights.npy", weights)
    rc, out, err = run_python(f"""
        import json, keras, numpy as np
        import tf_scatter_ops
        import examples.scatter_accumulate  # registers the example layer
        model = keras.models.load_model({path!r})
        ids, weights = np.load({str(tmp_path / 'ids.npy')!r}), np.load({str(tmp_path / 'weights.npy')!r})
        print(json.dumps(model.predict([ids, weights], verbose=0).tolist()))
        model.compile(optimizer="sgd", loss="mse")
        model.fit([ids, weights], np.zeros((len(ids), {UNITS}), np.float32), epochs=1, verbose=0)
    """, timeout=180)
    assert rc == 0, err[-3000:]
    np.testing.assert_array_equal(np.array(json.loads(out.strip().splitlines()[-1]), np.float32),
                                  expected)
