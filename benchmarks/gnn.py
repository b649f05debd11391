"""Graph networks' training steps as users write them, stock vs patched vs XLA.

    python -m benchmarks.gnn [--quick] [--only NAMES] [--rounds N] [--out DIR]

Each row is a two-layer Keras 3 model of one kind of layer, written with
TensorFlow's functions as GNN code writes them (tf.gather of node states onto
edges, tf.math.unsorted_segment_* back onto nodes), 64 features, a mean
squared loss and an Adam update, on a random graph: GCN (symmetric degree
normalisation, a weight per edge), GraphSAGE-mean and a 4-head GAT (the
softmax over each node's edges written with unsorted_segment_max / _sum). The
step is timed four ways (benchmarks/four_ways.py): a plain tf.function and
jit_compile=True, stock and under tf_scatter_ops.patch_tensorflow(). The
table also gives the largest tensor the stock and the patched step make
(static shapes): with 64 features an edge tensor [E, 64] is E * 256 bytes.
Then the same models written on the fused ops (tso.gather_reduce,
tso.edge_combine: FUSED), timed plain and under XLA against the stock XLA step
above, with their gradients compared to the stock model's.
Sizes: 20k nodes / 200k edges and 200k nodes / 2M edges (--quick: 2k / 20k).
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import tf_scatter_ops as tso  # noqa: E402

from benchmarks.four_ways import (compare, gradients_of, graph_facts, ratio, render,  # noqa: E402
                                  time_four_ways, training_step, write)
from benchmarks.harness import expect_retracing, interleaved_ms, machine  # noqa: E402

FEATURES, HEADS = 64, 4


class Graph:
    """A random graph: edges src -> dst, node features, a target per node."""

    def __init__(self, nodes, edges, seed=0):
        rng = np.random.default_rng(seed)
        self.nodes = nodes
        self.src = tf.constant(rng.integers(0, nodes, edges), tf.int32)
        self.dst = tf.constant(rng.integers(0, nodes, edges), tf.int32)
        self.x = tf.constant(rng.standard_normal((nodes, FEATURES)), tf.float32)
        self.y = tf.constant(rng.standard_normal((nodes, FEATURES)), tf.float32)
        ones = tf.ones_like(self.src, tf.float32)
        out_deg = tf.math.unsorted_segment_sum(ones, self.src, nodes)
        in_deg = tf.math.unsorted_segment_sum(ones, self.dst, nodes)
        self.norm = tf.math.rsqrt(tf.maximum(tf.gather(out_deg, self.src), 1.0)
                                  * tf.maximum(tf.gather(in_deg, self.dst), 1.0))


class GCNLayer(keras.layers.Layer):
    def build(self, shape):
        self.w = self.add_weight(shape=(shape[-1], FEATURES), initializer="glorot_uniform")

    def call(self, h, graph):
        messages = tf.gather(tf.matmul(h, self.w), graph.src) * graph.norm[:, None]
        return tf.nn.relu(tf.math.unsorted_segment_sum(messages, graph.dst, graph.nodes))


class SAGELayer(keras.layers.Layer):
    def build(self, shape):
        self.w_self = self.add_weight(shape=(shape[-1], FEATURES), initializer="glorot_uniform")
        self.w_neigh = self.add_weight(shape=(shape[-1], FEATURES), initializer="glorot_uniform")

    def call(self, h, graph):
        mean = tf.math.unsorted_segment_mean(tf.gather(h, graph.src), graph.dst, graph.nodes)
        return tf.nn.relu(tf.matmul(h, self.w_self) + tf.matmul(mean, self.w_neigh))


class GATLayer(keras.layers.Layer):
    def build(self, shape):
        per_head = FEATURES // HEADS
        self.w = self.add_weight(shape=(shape[-1], FEATURES), initializer="glorot_uniform")
        self.a_src = self.add_weight(shape=(HEADS, per_head), initializer="glorot_uniform")
        self.a_dst = self.add_weight(shape=(HEADS, per_head), initializer="glorot_uniform")

    def call(self, h, graph):
        z = tf.reshape(tf.matmul(h, self.w), [-1, HEADS, FEATURES // HEADS])
        z_src = tf.gather(z, graph.src)
        score = tf.nn.leaky_relu(tf.reduce_sum(z_src * self.a_src, -1)
                                 + tf.gather(tf.reduce_sum(z * self.a_dst, -1), graph.dst), 0.2)
        top = tf.math.unsorted_segment_max(score, graph.dst, graph.nodes)
        e = tf.exp(score - tf.gather(top, graph.dst))
        alpha = e / tf.gather(tf.math.unsorted_segment_sum(e, graph.dst, graph.nodes), graph.dst)
        out = tf.math.unsorted_segment_sum(z_src * alpha[..., None], graph.dst, graph.nodes)
        return tf.nn.elu(tf.reshape(out, [-1, FEATURES]))


# The same layers on the fused ops (tso.gather_reduce, tso.edge_combine):
# no tensor of [edges, features] in the step, forward or backward.
class FusedGCNLayer(GCNLayer):
    def call(self, h, graph):
        return tf.nn.relu(tso.gather_reduce(tf.matmul(h, self.w), graph.src, graph.dst,
                                            graph.nodes, weights=graph.norm))


class FusedSAGELayer(SAGELayer):
    def call(self, h, graph):
        mean = tso.gather_reduce(h, graph.src, graph.dst, graph.nodes, reduce="mean")
        return tf.nn.relu(tf.matmul(h, self.w_self) + tf.matmul(mean, self.w_neigh))


class FusedGATLayer(GATLayer):
    def call(self, h, graph):
        z = tf.reshape(tf.matmul(h, self.w), [-1, HEADS, FEATURES // HEADS])
        score = tf.nn.leaky_relu(tso.edge_combine(tf.reduce_sum(z * self.a_src, -1),
                                                  tf.reduce_sum(z * self.a_dst, -1),
                                                  graph.src, graph.dst), 0.2)
        alpha = tso.segment_softmax(score, graph.dst, graph.nodes)
        out = tso.gather_reduce(z, graph.src, graph.dst, graph.nodes, weights=alpha)
        return tf.nn.elu(tf.reshape(out, [-1, FEATURES]))


LAYERS = {"gcn": GCNLayer, "sage_mean": SAGELayer, "gat4": GATLayer}
FUSED = {"gcn": FusedGCNLayer, "sage_mean": FusedSAGELayer, "gat4": FusedGATLayer}
SIZES = {"20k": (20_000, 200_000), "200k": (200_000, 2_000_000)}


def model(layer_class, graph):
    """(the loss of a two-layer model, its variables, an Adam built for them)."""
    keras.utils.set_random_seed(0)
    layers = [layer_class(), layer_class()]
    optimizer = keras.optimizers.Adam(1e-3)

    def loss():
        h = graph.x
        for layer in layers:
            h = layer(h, graph=graph)
        return tf.reduce_mean((h - graph.y) ** 2)

    loss()
    variables = [v for layer in layers for v in layer.trainable_variables]
    optimizer.build(variables)
    return loss, variables, optimizer


def run_program(kind, size, quick, rounds):
    nodes, edges = (2_000, 20_000) if quick else SIZES[size]
    graph = Graph(nodes, edges)
    row = time_four_ways(*model(LAYERS[kind], graph), rounds)
    row["program"] = f"{kind} {size if not quick else 'quick'} ({nodes} nodes, {edges} edges)"
    row["fused"] = time_fused(kind, graph, rounds)
    return row


def time_fused(kind, graph, rounds):
    """The model on the fused ops, plain and under XLA: ms, the largest
    tensor, and its gradients against the composed model's on stock
    TensorFlow (same weights)."""
    loss, variables, optimizer = model(FUSED[kind], graph)
    stock_loss, stock_variables, _ = model(LAYERS[kind], graph)
    agreement = compare(tf.function(gradients_of(stock_loss, stock_variables))(),
                        tf.function(gradients_of(loss, variables))())
    step = training_step(loss, variables, optimizer)
    fns = {"fused": tf.function(step), "fused xla": tf.function(step, jit_compile=True)}
    largest = graph_facts(fns["fused"])[1]
    for f in fns.values():
        f()
    ms = interleaved_ms({k: (lambda f=f: f().numpy()) for k, f in fns.items()}, rounds=rounds,
                        calls=3)
    return {"ms": ms, "largest": largest, "agreement": agreement}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small graph, fewer rounds")
    parser.add_argument("--only", default="", help=f"comma-separated, of {', '.join(LAYERS)}")
    parser.add_argument("--sizes", default="20k,200k", help=f"comma-separated, of {', '.join(SIZES)}")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--out", default="build/bench/gnn")
    args = parser.parse_args(argv)
    expect_retracing()
    kinds = [n for n in args.only.split(",") if n] or list(LAYERS)
    sizes = ["quick"] if args.quick else [s for s in args.sizes.split(",") if s]
    unknown = sorted(set(kinds) - set(LAYERS)) + sorted(set(sizes) - set(SIZES) - {"quick"})
    if unknown:
        parser.error(f"unknown layers or sizes {unknown}")
    rounds = args.rounds or (3 if args.quick else 5)
    info = machine()
    rows = []
    for size in sizes:
        for kind in kinds:
            print(f"{kind} {size} ...", file=sys.stderr, flush=True)
            rows.append(run_program(kind, size, args.quick, rounds))
    table = render("Graph networks' training steps", rows, info)
    largest = ["", "| step | largest tensor, stock (MB) | largest tensor, patched (MB) |",
               "|---|---|---|"]
    largest += [f"| {r['program']} | {r['largest']['stock'] / 1e6:.1f} | "
                f"{r['largest']['patched'] / 1e6:.1f} |" for r in rows]
    fused = ["", "The same models on tso.gather_reduce / tso.edge_combine (plain tf.function; "
             "XLA: the functions' composed form), against the models above on stock XLA:", "",
             "| step | fused ms | fused XLA ms | stock XLA / fused | largest tensor (MB) | "
             "gradients vs stock |", "|---|---|---|---|---|---|"]
    fused += [f"| {r['program']} | {r['fused']['ms']['fused']:.2f} | "
              f"{r['fused']['ms']['fused xla']:.2f} | "
              f"{ratio(r['ms'].get('stock xla'), r['fused']['ms']['fused'])} | "
              f"{r['fused']['largest'] / 1e6:.1f} | {r['fused']['agreement']} |" for r in rows]
    write(args.out, "gnn", table + "\n" + "\n".join(largest + fused), info, rows)


if __name__ == "__main__":
    main()
