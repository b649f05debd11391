"""The segment family the way clients use it, each against stock TensorFlow
on the same inputs: a SavedModel (saved, loaded and differentiated in this
process), a tf.data map, a MirroredStrategy step over two logical CPUs, and
a Keras model trained with model.fit under the patch. Sums of
unsorted_segment_* and sparse_segment_* are compared bit for bit (the docs
say bitwise), the rest with a tolerance; each test also checks that our ops
are the ones that ran."""

import json
import os
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

import tf_scatter_ops as tso
import reference as ref
from ecosystem_util import run_python

TESTS = os.path.dirname(os.path.abspath(__file__))


def _types_in(graph_def):
    """Every op type of a GraphDef, its function library included."""
    return ({node.op for node in graph_def.node}
            | {node.op for fn in graph_def.library.function for node in fn.node_def})


def _graph_types(fn, *specs):
    return _types_in(tf.function(fn).get_concrete_function(*specs).graph.as_graph_def())


# -- SavedModel ---------------------------------------------------------------

D = tf.TensorSpec([None, 3], tf.float32)
IDS = tf.TensorSpec([None], tf.int32)
N = tf.TensorSpec([], tf.int32)


class Aggregations(tf.Module):
    """What a client module does: a segment reduction behind a signature
    with dynamic shapes."""

    def __init__(self, unsorted_sum, sorted_max, sparse_mean):
        super().__init__()
        self.scale = tf.Variable([1.0, -2.0, 0.5])
        self._fns = unsorted_sum, sorted_max, sparse_mean

    @tf.function(input_signature=[D, IDS, N])
    def unsorted_sum(self, data, ids, num_segments):
        return self._fns[0](data * self.scale, ids, num_segments)

    @tf.function(input_signature=[D, IDS])
    def sorted_max(self, data, ids):
        return self._fns[1](data * self.scale, ids)

    @tf.function(input_signature=[D, IDS, IDS])
    def sparse_mean(self, data, indices, ids):
        return self._fns[2](data * self.scale, indices, ids)


def _saved_model_inputs(rng):
    data = rng.standard_normal((40, 3)).astype(np.float32)
    unsorted_ids = rng.integers(-1, 9, 40).astype(np.int32)  # -1: dropped
    sorted_ids = np.sort(rng.integers(0, 12, 40)).astype(np.int32)
    twin = np.flatnonzero(sorted_ids[1:] == sorted_ids[:-1])[0]
    data[twin + 1] = data[twin]  # a tie for the maximum's gradient to share
    indices = rng.integers(0, 40, 60).astype(np.int32)
    bag_ids = np.sort(rng.integers(0, 15, 60)).astype(np.int32)
    return data, unsorted_ids, sorted_ids, indices, bag_ids


def _calls(module, data, unsorted_ids, sorted_ids, indices, bag_ids):
    """name -> a function of the data tensor, for outputs and gradients."""
    return {"unsorted_sum": lambda d: module.unsorted_sum(d, unsorted_ids, 9),
            "sorted_max": lambda d: module.sorted_max(d, sorted_ids),
            "sparse_mean": lambda d: module.sparse_mean(d, indices, bag_ids)}


def _outputs_and_gradients(module, inputs):
    data = tf.constant(inputs[0])
    out = {}
    for name, call in _calls(module, *inputs).items():
        with tf.GradientTape() as tape:
            tape.watch(data)
            y = call(data)
            loss = tf.reduce_sum(y * y)
        out[name] = y.numpy(), tape.gradient(loss, data).numpy()
    return out


def test_saved_model_saved_loaded_and_differentiated_in_process(tmp_path, rng):
    inputs = _saved_model_inputs(rng)
    path = str(tmp_path / "aggregations")
    tf.saved_model.save(Aggregations(tso.unsorted_segment_sum, tso.segment_max,
                                     tso.sparse_segment_mean), path)
    proto = saved_model_pb2.SavedModel()
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        proto.ParseFromString(f.read())
    saved_types = set().union(*(_types_in(mg.graph_def) for mg in proto.meta_graphs))
    assert {"TfScatter>UnsortedSegmentSum", "TfScatter>SegmentMax",
            "TfScatter>SparseSegmentMean"} <= saved_types, saved_types
    assert not {"UnsortedSegmentSum", "SegmentMax", "SparseSegmentMean"} & saved_types

    loaded = tf.saved_model.load(path)
    got = _outputs_and_gradients(loaded, inputs)
    stock = _outputs_and_gradients(
        Aggregations(tf.math.unsorted_segment_sum, tf.math.segment_max,
                     tf.sparse.segment_mean), inputs)
    ref.assert_same(got["unsorted_sum"][0], stock["unsorted_sum"][0])  # bitwise
    ref.assert_same(got["unsorted_sum"][1], stock["unsorted_sum"][1])  # a gather of it
    for name in ("sorted_max", "sparse_mean"):
        np.testing.assert_allclose(got[name][0], stock[name][0], rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(got[name][1], stock[name][1], rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    assert np.count_nonzero(got["sorted_max"][1]) > 0  # the gradient reached the data


# -- tf.data --------------------------------------------------------------------

def _elements():
    """Graphs of varying sizes: (features, sorted ids), one per element."""
    rng = np.random.default_rng(11)
    for n in (1, 5, 17, 40, 3, 64):
        ids = np.sort(rng.integers(0, max(1, n // 3), n)).astype(np.int32)
        yield rng.standard_normal((n, 8)).astype(np.float32), ids


SEGMENTS = 24  # more than any element's ids


def _dataset(segment_sum, unsorted_segment_max, elements=_elements):
    spec = (tf.TensorSpec([None, 8], tf.float32), tf.TensorSpec([None], tf.int32))
    ds = tf.data.Dataset.from_generator(elements, output_signature=spec)
    return ds.map(lambda x, ids: (segment_sum(x, ids), unsorted_segment_max(x, ids, SEGMENTS)),
                  num_parallel_calls=2, deterministic=True)


def test_tf_data_map_per_element_equals_stock():
    got = list(_dataset(tso.segment_sum, tso.unsorted_segment_max).as_numpy_iterator())
    stock = list(_dataset(tf.math.segment_sum, tf.math.unsorted_segment_max).as_numpy_iterator())
    assert len(got) == len(stock) == 6
    for (s, m), (ts, tm) in zip(got, stock):
        assert s.shape == ts.shape and m.shape == (SEGMENTS, 8)
        np.testing.assert_allclose(s, ts, rtol=1e-6, atol=1e-6)
        ref.assert_same(m, tm)  # maxima: no arithmetic, the same values
    # the map ran our op: ids out of order are our error, naming the position
    bad = lambda: iter([(np.ones((3, 8), np.float32), np.array([0, 2, 1], np.int32))])  # noqa: E731
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids\[2\] = 1 follows"):
        list(_dataset(tso.segment_sum, tso.unsorted_segment_max, bad))


# -- tf.distribute ----------------------------------------------------------------

NODES, FEATURES, EDGES = 12, 4, 40


def gnn_step_results():
    """A message-passing step under MirroredStrategy over /cpu:0 and /cpu:1
    (configured already): each replica aggregates its own edges with a
    segment sum and differentiates a loss through it; the aggregation, loss
    and weight gradient are summed across replicas. Once with tso's
    unsorted_segment_sum, once with TensorFlow's; JSON-ready."""
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    rng = np.random.default_rng(5)
    x = tf.constant(rng.standard_normal((NODES, FEATURES)).astype(np.float32))
    senders = rng.integers(0, NODES, (2, EDGES)).astype(np.int32)
    receivers = rng.integers(-1, NODES, (2, EDGES)).astype(np.int32)  # -1: dropped
    edges = tf.constant(np.stack([senders, receivers]))  # [2 (senders, receivers), replica, edge]
    with strategy.scope():
        w = tf.Variable(rng.standard_normal((FEATURES, FEATURES)).astype(np.float32))

    def run(segment_sum):
        def replica_step():
            r = tf.distribute.get_replica_context().replica_id_in_sync_group
            s, t = tf.gather(edges[0], r), tf.gather(edges[1], r)
            with tf.GradientTape() as tape:
                messages = tf.gather(tf.matmul(x, w), s)
                agg = segment_sum(messages, t, NODES)
                loss = tf.reduce_sum(tf.tanh(agg) * agg)
            return agg, loss, tape.gradient(loss, w)

        @tf.function
        def step():
            agg, loss, grad = strategy.run(replica_step)
            total = [strategy.reduce(tf.distribute.ReduceOp.SUM, v, axis=None)
                     for v in (agg, loss, grad)]
            return total, strategy.experimental_local_results(agg)

        graph = step.get_concrete_function().graph
        # (the sum of gathered rows of computed values is fused: gather_reduce)
        devices = sorted({op.device for op in graph.get_operations()
                          if op.type in ("TfScatter>UnsortedSegmentSum",
                                         "TfScatter>GatherReduce")})
        (agg, loss, grad), local = step()
        return {"agg": agg.numpy().tolist(), "loss": float(loss), "grad": grad.numpy().tolist(),
                "local": [a.numpy().tolist() for a in local], "our_op_devices": devices,
                "replicas": strategy.num_replicas_in_sync}

    return {"ours": run(tso.unsorted_segment_sum), "stock": run(tf.math.unsorted_segment_sum)}


def _configure_two_cpus():
    """True if this process has (or could still be given) two logical CPUs;
    False once TensorFlow is initialised with one."""
    cpu = tf.config.list_physical_devices("CPU")[0]
    try:
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    except RuntimeError:  # "cannot be modified after being initialized"
        configured = tf.config.get_logical_device_configuration(cpu)
        return configured is not None and len(configured) >= 2
    return True


CHILD = """
    import json, sys
    sys.path[:0] = [{tests!r}, {helpers!r}]
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import test_segment_clients
    print(json.dumps(test_segment_clients.gnn_step_results()))
"""


def test_mirrored_strategy_gnn_step_equals_stock():
    if _configure_two_cpus():
        results = json.loads(json.dumps(gnn_step_results()))
    else:  # TensorFlow already started here with one CPU: a fresh process
        code, out, err = run_python(CHILD.format(tests=TESTS, helpers=os.path.join(TESTS, "helpers")),
                                    timeout=240)
        assert code == 0, err[-3000:]
        results = json.loads(out.strip().splitlines()[-1])
    ours, stock = results["ours"], results["stock"]
    assert ours["replicas"] == 2
    # our op ran on both replicas' devices, TensorFlow's run had none of it
    assert [d.lower()[-5:] for d in ours["our_op_devices"]] == ["cpu:0", "cpu:1"], ours
    assert stock["our_op_devices"] == []
    # the replicas had different edges, so the reduction summed different parts
    assert ours["local"][0] != ours["local"][1]
    for key in ("agg", "grad", "local"):
        ref.assert_same(np.array(ours[key], np.float32), np.array(stock[key], np.float32))
    assert ours["loss"] == stock["loss"]
    assert np.count_nonzero(ours["grad"]) > 0


# -- Keras ----------------------------------------------------------------------

BATCH, INPUTS, HIDDEN, GROUPS = 8, 5, 4, 3


class PooledRegressor(keras.Model):
    """Rows pooled by group (a sum and a maximum with keras.ops), the pools
    handed back to their rows."""

    def __init__(self):
        super().__init__()
        self.encode = keras.layers.Dense(HIDDEN, activation="tanh")
        self.head = keras.layers.Dense(1)

    def call(self, x):
        groups = keras.ops.arange(keras.ops.shape(x)[0]) % GROUPS
        h = self.encode(x)
        pools = keras.ops.concatenate(
            [keras.ops.segment_sum(h, groups, num_segments=GROUPS),
             keras.ops.segment_max(h, groups, num_segments=GROUPS)], axis=-1)
        return self.head(keras.ops.take(pools, groups, axis=0))


def _compiled(weights=None):
    keras.utils.set_random_seed(3)
    model = PooledRegressor()
    model(np.zeros((BATCH, INPUTS), np.float32))
    if weights is not None:
        model.set_weights(weights)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse", jit_compile=False)
    return model


def _train_step_types(model):
    specs = (tf.TensorSpec([BATCH, INPUTS]), tf.TensorSpec([BATCH, 1]))
    return _graph_types(lambda x, y: model.train_step((x, y)), *specs)


def test_keras_model_fit_under_the_patch_trains_bitwise_as_stock():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3 * BATCH, INPUTS)).astype(np.float32)
    y = rng.standard_normal((3 * BATCH, 1)).astype(np.float32)
    initial = _compiled().get_weights()

    stock = _compiled(initial)
    stock_history = stock.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    ours = _compiled(initial)
    with tso.patched():
        history = ours.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
        patched_types = _train_step_types(ours)
    stock_types = _train_step_types(stock)

    # the step model.fit runs (forward, gradients, update) had our ops under the patch
    assert {"TfScatter>UnsortedSegmentSum", "TfScatter>UnsortedSegmentMax"} <= patched_types, \
        patched_types
    assert not {"UnsortedSegmentSum", "UnsortedSegmentMax"} & patched_types
    assert not any(t.startswith("TfScatter>") for t in stock_types), stock_types
    assert history.history["loss"] == stock_history.history["loss"]
    assert ours.optimizer.iterations.numpy() == stock.optimizer.iterations.numpy() == 3
    trained = ours.get_weights()
    assert any(not np.array_equal(a, b) for a, b in zip(trained, initial))  # it trained
    for got, expected in zip(trained, stock.get_weights()):
        ref.assert_same(got, expected)
