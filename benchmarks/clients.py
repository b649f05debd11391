"""Client libraries' training steps, stock vs patched vs XLA, in one run.

    build/clients-venv/bin/python -m benchmarks.clients [--quick] [--only NAMES] [--out DIR]

(tools/client_venv.sh makes that venv; `make bench` runs this.) Each row is a
training step a user of the library writes: a model of the library's layers,
a loss, the gradients, a tf-keras optimizer's update. It is timed four ways
(benchmarks/four_ways.py): a plain tf.function and jit_compile=True, stock and
under tf_scatter_ops.patch_tensorflow(), after its gradients are compared.

Rows: TF-GNN's GCNConv and GATv2Conv on one graph; Spektral's GCNConv and
GATConv on a batch of graphs (disjoint mode); a TensorFlow Recommenders
two-tower retrieval model with 1M-row tables; tf-keras's Embedding with
Adagrad (a recommender's step) at 250k, 1M and 4M rows.
"""

import argparse
import os
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402

from benchmarks.four_ways import render, time_four_ways, write  # noqa: E402
from benchmarks.harness import expect_retracing, machine  # noqa: E402

RNG = np.random.default_rng(11)


def _graph_edges(nodes, edges):
    return (RNG.integers(0, nodes, edges).astype(np.int32),
            RNG.integers(0, nodes, edges).astype(np.int32))


def tfgnn_conv(kind, quick):
    import tensorflow_gnn as tfgnn
    from tensorflow_gnn.models import gat_v2, gcn

    nodes, edges, dim = (25_000, 250_000, 64) if not quick else (3_000, 30_000, 32)
    src, dst = _graph_edges(nodes, edges)
    graph = tfgnn.GraphTensor.from_pieces(
        node_sets={"nodes": tfgnn.NodeSet.from_fields(
            sizes=[nodes], features={tfgnn.HIDDEN_STATE: RNG.normal(size=(nodes, dim)).astype(np.float32)})},
        edge_sets={"edges": tfgnn.EdgeSet.from_fields(
            sizes=[edges], adjacency=tfgnn.Adjacency.from_indices(("nodes", src), ("nodes", dst)))})
    if kind == "gcn":
        layer = gcn.GCNConv(dim)
    else:
        layer = gat_v2.GATv2Conv(num_heads=4, per_head_channels=dim // 4,
                                 receiver_tag=tfgnn.TARGET)
    layer(graph, edge_set_name="edges")
    return layer, lambda: layer(graph, edge_set_name="edges")


def spektral_conv(kind, quick):
    import spektral.layers as sl

    graphs, per, degree, dim = (256, 100, 10, 64) if not quick else (32, 50, 8, 32)
    n = graphs * per
    rows, cols = [], []
    for g in range(graphs):
        s = RNG.integers(0, per, per * degree) + g * per
        d = RNG.integers(0, per, per * degree) + g * per
        rows.append(d)
        cols.append(s)
    pairs = np.unique(np.stack([np.concatenate(rows), np.concatenate(cols)], 1), axis=0)
    a = tf.sparse.reorder(tf.SparseTensor(pairs.astype(np.int64), np.ones(len(pairs), np.float32),
                                          [n, n]))
    x = tf.constant(RNG.normal(size=(n, dim)).astype(np.float32))
    layer = sl.GCNConv(dim) if kind == "gcn" else sl.GATConv(dim // 4, attn_heads=4)
    layer([x, a])
    return layer, lambda: layer([x, a])


def tfrs_retrieval(quick):
    import tensorflow_recommenders as tfrs

    rows, dim, batch = (1_000_000, 32, 4096) if not quick else (100_000, 16, 1024)
    users = tf_keras.layers.Embedding(rows, dim)
    items = tf_keras.layers.Embedding(rows, dim)
    task = tfrs.tasks.Retrieval()
    u = tf.constant(RNG.integers(0, rows, batch).astype(np.int32))
    i = tf.constant(RNG.integers(0, rows, batch).astype(np.int32))
    model = tf_keras.Sequential([users])  # one object that tracks both tables' variables
    model.items = items

    def loss():
        return task(users(u), items(i), compute_metrics=False)
    loss()
    return model, loss


def tf_keras_embedding(rows, quick):
    rows = rows if not quick else rows // 16
    dim, batch, bag = 32, 4096, 8
    table = tf_keras.layers.Embedding(rows, dim)
    head = tf_keras.layers.Dense(1)
    ids = tf.constant(RNG.integers(0, rows, (batch, bag)).astype(np.int32))
    labels = tf.constant(RNG.normal(size=(batch, 1)).astype(np.float32))
    model = tf_keras.Sequential([table, tf_keras.layers.GlobalAveragePooling1D(), head])
    model(ids)

    def loss():
        return tf.reduce_mean((model(ids) - labels) ** 2)
    return model, loss


def _optimizer():
    return tf_keras.optimizers.Adagrad(0.05)


PROGRAMS = {
    "tfgnn_gcn": lambda q: tfgnn_conv("gcn", q),
    "tfgnn_gatv2": lambda q: tfgnn_conv("gatv2", q),
    "spektral_gcn": lambda q: spektral_conv("gcn", q),
    "spektral_gat": lambda q: spektral_conv("gat", q),
    "tfrs_retrieval_1M": tfrs_retrieval,
    "tf_keras_embedding_250k": lambda q: tf_keras_embedding(250_000, q),
    "tf_keras_embedding_1M": lambda q: tf_keras_embedding(1_000_000, q),
    "tf_keras_embedding_4M": lambda q: tf_keras_embedding(4_000_000, q),
}


def run_program(name, quick, rounds):
    tf_keras.utils.set_random_seed(0)
    model, loss = PROGRAMS[name](quick)
    return dict(time_four_ways(loss, model.trainable_variables, _optimizer(), rounds),
                program=name)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller graphs and tables, fewer rounds")
    parser.add_argument("--only", default="", help=f"comma-separated, of {', '.join(PROGRAMS)}")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--out", default="build/bench/clients")
    args = parser.parse_args(argv)
    expect_retracing()
    names = [n for n in args.only.split(",") if n] or list(PROGRAMS)
    unknown = sorted(set(names) - set(PROGRAMS))
    if unknown:
        parser.error(f"unknown programs {unknown}")
    rounds = args.rounds or (3 if args.quick else 7)
    info = machine()
    rows = []
    for name in names:
        print(f"{name} ...", file=sys.stderr, flush=True)
        rows.append(run_program(name, args.quick, rounds))
    write(args.out, "clients", render("Client libraries' training steps", rows, info), info, rows)


if __name__ == "__main__":
    main()
