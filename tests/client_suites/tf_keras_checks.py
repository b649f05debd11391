"""tf-keras (Keras 2) under the patch: its Embedding layer and its
optimizers' sparse steps (tf-keras's wheel ships no tests, so these are
ours, run by tools/client_suites.py in build/clients-venv).

Each case trains tf_keras.layers.Embedding (ids with duplicates, so that
the sparse gradient has repeated rows) with one optimizer for three steps in
a tf.function, on stock TensorFlow and under
tf_scatter_ops.patch_tensorflow(), from the same seed: the table and the
optimizer's slots must be bitwise stock's. The step's ops say what reached
the plugin: the forward row read, the gradient's densification or
deduplication, and the optimizer's row update.
"""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402

import tf_scatter_ops as tso  # noqa: E402

ROWS, DIM = 300, 8
IDS = np.random.default_rng(5).integers(0, 40, size=(16, 6)).astype(np.int32)

OPTIMIZERS = {
    "SGD": lambda o: o.SGD(0.1),
    "SGD_momentum": lambda o: o.SGD(0.1, momentum=0.9),
    "SGD_nesterov": lambda o: o.SGD(0.1, momentum=0.9, nesterov=True),
    "Adam": lambda o: o.Adam(0.01),
    "Adam_amsgrad": lambda o: o.Adam(0.01, amsgrad=True),
    "Adagrad": lambda o: o.Adagrad(0.1),
    "RMSprop": lambda o: o.RMSprop(0.01),
    "RMSprop_centered": lambda o: o.RMSprop(0.01, momentum=0.5, centered=True),
    "Adadelta": lambda o: o.Adadelta(1.0),
    "Adamax": lambda o: o.Adamax(0.01),
    "Nadam": lambda o: o.Nadam(0.01),
    "Ftrl": lambda o: o.Ftrl(0.1),
}
NEW_ONLY = {"AdamW": lambda o: o.AdamW(0.01), "Lion": lambda o: o.Lion(0.01),
            "Adafactor": lambda o: o.Adafactor(0.1)}
CASES = ([(n, "optimizers", f) for n, f in {**OPTIMIZERS, **NEW_ONLY}.items()]
         + [(n, "optimizers.legacy", f) for n, f in OPTIMIZERS.items()])

# What the step reaches of the plugin: the forward row read (a gather of
# the table) always; the row updates (the variable's scatter_* methods, or
# tf.raw_ops.ResourceScatter<Op>) but for the optimizers below, which update
# rows with TensorFlow's fused ResourceSparseApply* kernels (legacy) or
# densely (the new Ftrl and Adafactor).
FORWARD = {"TfScatter>ResourceGatherNd"}
NO_ROW_UPDATES = {("optimizers", "Ftrl"), ("optimizers", "Adafactor")} | {
    ("optimizers.legacy", n) for n in ("SGD_momentum", "SGD_nesterov", "Adagrad",
                                        "RMSprop_centered", "Adadelta", "Ftrl")}
# The new RMSprop's sparse step, lr * g * rsqrt(tf.gather(denominator, ids)):
# in a tf.function Grappler's arithmetic optimizer reorders stock's
# multiplications around TensorFlow's gather, and not around ours, so stock's
# tf.function differs in the last bit from the program as written (stock
# eager). These cases compare the eager steps (bitwise), and check that
# stock's own tf.function still differs from its eager steps.
GRAPPLER_REORDERS = {("optimizers", "RMSprop"), ("optimizers", "RMSprop_centered")}


def _train(family, make, eager=False):
    tf_keras.utils.set_random_seed(0)
    optimizers = tf_keras.optimizers.legacy if family == "optimizers.legacy" else tf_keras.optimizers
    layer = tf_keras.layers.Embedding(ROWS, DIM)
    layer.build((None, IDS.shape[1]))
    optimizer = make(optimizers)
    ids = tf.constant(IDS)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.sin(layer(ids)) * tf.range(DIM, dtype=tf.float32))
        grads = tape.gradient(loss, layer.trainable_variables)
        assert isinstance(grads[0], tf.IndexedSlices)
        optimizer.apply_gradients(zip(grads, layer.trainable_variables))
        return loss

    for _ in range(3):
        step() if not eager else step.python_function()
    graph = step.get_concrete_function().graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    ours = {n.op for n in nodes if n.op.startswith("TfScatter>")}
    state = [v.numpy() for v in layer.trainable_variables]
    state += [v.numpy() for v in optimizer.variables() if len(v.shape) == 2]
    return state, ours


@pytest.mark.parametrize("name,family,make", CASES, ids=[f"{c[1]}.{c[0]}" for c in CASES])
def test_embedding_training_is_stocks_bitwise_under_the_patch(name, family, make):
    eager = (family, name) in GRAPPLER_REORDERS
    stock, stock_ours = _train(family, make, eager)
    assert not stock_ours
    with tso.patched():
        patched, ours = _train(family, make, eager)
    assert FORWARD <= ours, ours
    updates = {o for o in ours if o.startswith("TfScatter>ResourceScatterNd")}
    assert bool(updates) != ((family, name) in NO_ROW_UPDATES), ours
    if eager:
        graph, _ = _train(family, make)
        assert any((a != b).any() for a, b in zip(stock, graph)), \
            "stock's tf.function gives its eager steps now: drop the case from GRAPPLER_REORDERS"
    assert len(stock) == len(patched) >= 1
    for k, (want, got) in enumerate(zip(stock, patched)):
        np.testing.assert_array_equal(got, want, err_msg=f"{family}.{name}: variable {k}")
