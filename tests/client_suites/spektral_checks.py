"""Spektral's layers under the patch (its wheel ships no tests, so these are
ours, run by tools/client_suites.py in build/clients-venv with tf-keras).

Each case builds a Spektral layer (or pool) in disjoint mode (node features,
a sparse adjacency, the graph of each node) on a batch of three small graphs,
and runs one training step in a tf.function: the forward pass, the loss's
gradients for the weights and the node features. The same step runs on stock
TensorFlow and under tf_scatter_ops.patch_tensorflow(), from the same seed:
the patched step must reach the plugin's ops and give bitwise the same
outputs and gradients. A case that fails on stock TensorFlow is skipped with
stock's error (Spektral 1.3.1 predates TensorFlow 2.21).
"""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import spektral.layers as sl  # noqa: E402
import tensorflow as tf  # noqa: E402

import tf_scatter_ops as tso  # noqa: E402

RNG = np.random.default_rng(3)
SIZES = (5, 7, 4)  # nodes of each graph
N = sum(SIZES)
F = 6


def _graph():
    """x [N, F], a (SparseTensor, normalised or not), e [edges, 3], i [N]."""
    senders, receivers = [], []
    start = 0
    for n in SIZES:
        for _ in range(3 * n):
            s, r = RNG.integers(0, n, 2)
            senders.append(start + s)
            receivers.append(start + r)
        start += n
    pairs = sorted(set(zip(receivers, senders)))
    indices = np.array(pairs, np.int64)
    values = RNG.uniform(0.1, 1.0, len(pairs)).astype(np.float32)
    x = RNG.normal(size=(N, F)).astype(np.float32)
    e = RNG.normal(size=(len(pairs), 3)).astype(np.float32)
    i = np.repeat(np.arange(len(SIZES)), SIZES).astype(np.int64)
    return x, indices, values, e, i


X, A_INDICES, A_VALUES, E, I = _graph()


def _a():
    return tf.SparseTensor(A_INDICES, A_VALUES, [N, N])


# (name, layer factory, inputs: which of x, a, e, i the layer takes). The
# layers that only multiply by the sparse adjacency call no patched name:
# their steps must be stock's, with none of the plugin's ops.
SPARSE_MATMUL_ONLY = {"GCNConv", "GCSConv", "ChebConv", "ARMAConv", "APPNPConv"}
# In a tf.function, Grappler's arithmetic optimizer rewrites the sums around
# TensorFlow's UnsortedSegmentSum (AGNNConv's gradient densifies gathered
# rows' sparse gradients with it), and not around ours, so stock's
# tf.function differs in the last bit from the program as written (stock
# eager). These cases compare the eager steps (bitwise), and check that
# stock's own tf.function still differs from its eager step.
GRAPPLER_REORDERS = {"AGNNConv"}
CONV = [
    ("GCNConv", lambda: sl.GCNConv(4), "xa"),
    ("GATConv", lambda: sl.GATConv(4, attn_heads=2), "xa"),
    ("GATConv_mean", lambda: sl.GATConv(4, attn_heads=2, concat_heads=False), "xa"),
    ("GCSConv", lambda: sl.GCSConv(4), "xa"),
    ("ChebConv", lambda: sl.ChebConv(4, K=2), "xa"),
    ("ARMAConv", lambda: sl.ARMAConv(4, order=2, iterations=2), "xa"),
    ("APPNPConv", lambda: sl.APPNPConv(4, propagations=2), "xa"),
    ("TAGConv", lambda: sl.TAGConv(4, K=2), "xa"),
    ("DiffusionConv", lambda: sl.DiffusionConv(4, K=2), "xa"),
    ("GINConv", lambda: sl.GINConv(4, mlp_hidden=[8]), "xa"),
    ("GINConvBatchNorm", lambda: sl.GINConv(4, mlp_hidden=[8], mlp_batchnorm=False), "xa"),
    ("EdgeConv", lambda: sl.EdgeConv(4, mlp_hidden=[8]), "xa"),
    ("AGNNConv", lambda: sl.AGNNConv(), "xa"),
    ("GatedGraphConv", lambda: sl.GatedGraphConv(F, n_layers=2), "xa"),
    ("GeneralConv", lambda: sl.GeneralConv(4, dropout=0.0), "xa"),
    ("GeneralConv_max", lambda: sl.GeneralConv(4, dropout=0.0, aggregate="max"), "xa"),
    ("GTVConv", lambda: sl.GTVConv(4), "xa"),
    ("CrystalConv", lambda: sl.CrystalConv(), "xae"),
    ("ECCConv", lambda: sl.ECCConv(4), "xae"),
    ("XENetConv", lambda: sl.XENetConv([8], 4, 3), "xae"),
] + [(f"GraphSageConv_{agg}", lambda agg=agg: sl.GraphSageConv(4, aggregate=agg), "xa")
     for agg in ("sum", "mean", "max", "min", "prod")]

POOL = [
    ("GlobalSumPool", lambda: sl.GlobalSumPool(), "xi"),
    ("GlobalAvgPool", lambda: sl.GlobalAvgPool(), "xi"),
    ("GlobalMaxPool", lambda: sl.GlobalMaxPool(), "xi"),
    ("GlobalAttentionPool", lambda: sl.GlobalAttentionPool(4), "xi"),
    ("GlobalAttnSumPool", lambda: sl.GlobalAttnSumPool(), "xi"),
    ("TopKPool", lambda: sl.TopKPool(0.5), "xai"),
    ("SAGPool", lambda: sl.SAGPool(0.5), "xai"),
    ("LaPool", lambda: sl.LaPool(), "xai"),
]


def _step(make, takes, eager=False):
    """(outputs, gradients, our op types) of one training step (in a
    tf.function, or eagerly: the program as written)."""
    tf.keras.utils.set_random_seed(0)
    layer = make()
    x = tf.Variable(X)
    inputs = {"x": x, "a": _a(), "e": tf.constant(E), "i": tf.constant(I)}
    args = [inputs[k] for k in takes]

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            out = layer(args if len(args) > 1 else args[0], training=True)
            outs = [o for o in tf.nest.flatten(out, expand_composites=True) if o.dtype.is_floating]
            loss = tf.add_n([tf.reduce_sum(tf.sin(o)) for o in outs])
        grads = tape.gradient(loss, layer.trainable_variables + [x])
        return outs, [tf.convert_to_tensor(g) for g in grads if g is not None]

    outs, grads = step.python_function() if eager else step()
    graph = step.get_concrete_function().graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    ours = {n.op for n in nodes if n.op.startswith("TfScatter>")}
    return [o.numpy() for o in outs], [g.numpy() for g in grads], ours


@pytest.mark.parametrize("name,make,takes", CONV + POOL, ids=[c[0] for c in CONV + POOL])
def test_layer_step_is_stocks_bitwise_under_the_patch(name, make, takes):
    eager = name in GRAPPLER_REORDERS
    try:
        stock = _step(make, takes, eager)
    except Exception as e:  # noqa: BLE001  (what stock TensorFlow 2.21 does with it)
        last = [line for line in str(e).strip().splitlines() if line.strip()][-1:]
        pytest.skip(f"fails on stock TensorFlow: {type(e).__name__}: {''.join(last)[:300]}")
    assert not stock[2], "stock's step built the plugin's ops"
    with tso.patched():
        patched = _step(make, takes, eager)
    if eager:
        graph = _step(make, takes)
        assert any((a != b).any() for a, b in zip(stock[0] + stock[1], graph[0] + graph[1])), \
            "stock's tf.function gives its eager step now: drop the case from GRAPPLER_REORDERS"
    if name in SPARSE_MATMUL_ONLY:
        assert not patched[2], f"the step built {patched[2]}: update SPARSE_MATMUL_ONLY"
    else:
        assert patched[2], "the patched step reached none of the plugin's ops"
    for kind, want, got in (("output", stock[0], patched[0]), ("gradient", stock[1], patched[1])):
        assert len(want) == len(got), kind
        for k, (w, g) in enumerate(zip(want, got)):
            np.testing.assert_array_equal(g, w, err_msg=f"{name}: {kind} {k}")


