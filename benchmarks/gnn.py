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
Last, the aggregation alone (GCN's: the weighted sum of the source rows into
each destination, forward and forward plus the gradient with respect to the
node states): tso.gather_reduce, the composed form stock and under XLA, and
PyTorch's CPU index_add_ and torch.sparse.mm on the same graph
(benchmarks/torch_aggregation.py, run in build/torch-venv when
tools/torch_venv.sh could install PyTorch there), their results compared.
Sizes: 20k nodes / 200k edges and 200k nodes / 2M edges (--quick: 2k / 20k).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import tf_scatter_ops as tso  # noqa: E402

from benchmarks.four_ways import (compare, gradients_of, graph_facts, ratio, render,  # noqa: E402
                                  time_four_ways, training_step, write)
from benchmarks.harness import (expect_retracing, forward_backward, interleaved_ms,  # noqa: E402
                                machine)

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


TORCH_PYTHON = "build/torch-venv/bin/python"
AGGREGATION_WAYS = ("gather_reduce", "stock", "stock xla", "torch index_add", "torch sparse.mm")


def time_aggregation(size, quick, rounds, torch_python):
    """GCN's aggregation alone, forward and forward+backward (the gradient
    with respect to the node states): ms per way (AGGREGATION_WAYS; PyTorch's
    where torch_python runs), and PyTorch's largest difference from ours."""
    nodes, edges = (2_000, 20_000) if quick else SIZES[size]
    graph = Graph(nodes, edges)

    def ours(x):
        return tso.gather_reduce(x, graph.src, graph.dst, nodes, weights=graph.norm)

    def composed(x):  # stock TensorFlow's functions (nothing is patched here)
        return tf.math.unsorted_segment_sum(tf.gather(x, graph.src) * graph.norm[:, None],
                                            graph.dst, nodes)
    def with_gradient(f):  # the output too: else the forward is pruned (linear in x)
        return forward_backward(f, with_output=True)
    fns = {}
    for step, wrap in (("forward", lambda f: f), ("forward+backward", with_gradient)):
        fns[("gather_reduce", step)] = tf.function(wrap(ours))
        fns[("stock", step)] = tf.function(wrap(composed))
        fns[("stock xla", step)] = tf.function(wrap(composed), jit_compile=True)
    # (a CPU function call returns when its outputs are computed: no copy)
    ms = interleaved_ms(fns, args=(graph.x,), rounds=rounds, calls=3)
    row = {"program": f"{nodes} nodes, {edges} edges", "ms": {f"{k} {s}": v for (k, s), v in ms.items()}}
    if not (torch_python and os.path.exists(torch_python)):
        row["torch"] = f"not run: no {torch_python} (tools/torch_venv.sh)"
        return row
    want = fns[("gather_reduce", "forward")](graph.x).numpy()
    with tempfile.TemporaryDirectory() as folder:
        for name, t in (("src", graph.src), ("dst", graph.dst), ("x", graph.x), ("w", graph.norm)):
            np.save(os.path.join(folder, f"{name}.npy"), t.numpy())
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_aggregation.py")
        done = subprocess.run([torch_python, script, folder, str(rounds)], capture_output=True,
                              text=True)
        if done.returncode:
            row["torch"] = f"failed: {done.stderr.strip().splitlines()[-1:]}"
            return row
        with open(os.path.join(folder, "torch.json")) as f:
            result = json.load(f)
        diffs = {way: float(np.max(np.abs(np.load(os.path.join(folder, f"{way}.npy")) - want)))
                 for way in ("index_add", "sparse.mm")}
    row["ms"].update({f"torch {k}": v for k, v in result["ms"].items() if v is not None})
    row["torch"] = (f"PyTorch {result['torch']}, {result['threads']} threads; largest difference "
                    f"from gather_reduce's forward: " +
                    ", ".join(f"{w} {d:.1e}" for w, d in diffs.items()) +
                    "".join(f"; {w}: {e}" for w, e in result.get("errors", {}).items()))
    return row


def render_aggregation(rows):
    lines = ["", "The aggregation alone (GCN's weighted sum of source rows, 64 float32 features), "
             "ms per call; the last column is the fastest other way's time over gather_reduce's:"]
    for step in ("forward", "forward+backward"):
        lines += ["", f"| graph, {step} | " + " | ".join(AGGREGATION_WAYS) + " | best other / ours |",
                  "|---" * (len(AGGREGATION_WAYS) + 2) + "|"]
        for r in rows:
            cells = [r["ms"].get(f"{w} {step}") for w in AGGREGATION_WAYS]
            others = [c for c in cells[1:] if c is not None]
            lines.append(f"| {r['program']} | " +
                         " | ".join("-" if c is None else f"{c:.2f}" for c in cells) +
                         f" | {ratio(min(others), cells[0]) if others else '-'} |")
    lines += [""] + [f"- {r['program']}: {r['torch']}" for r in rows]
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small graph, fewer rounds")
    parser.add_argument("--only", default="",
                        help=f"comma-separated, of {', '.join(LAYERS)}, aggregation")
    parser.add_argument("--sizes", default="20k,200k", help=f"comma-separated, of {', '.join(SIZES)}")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--torch-python", default=TORCH_PYTHON,
                        help="an interpreter with PyTorch for the aggregation's PyTorch rows")
    parser.add_argument("--out", default="build/bench/gnn")
    args = parser.parse_args(argv)
    expect_retracing()
    kinds = [n for n in args.only.split(",") if n] or list(LAYERS) + ["aggregation"]
    sizes = ["quick"] if args.quick else [s for s in args.sizes.split(",") if s]
    unknown = (sorted(set(kinds) - set(LAYERS) - {"aggregation"})
               + sorted(set(sizes) - set(SIZES) - {"quick"}))
    if unknown:
        parser.error(f"unknown layers or sizes {unknown}")
    rounds = args.rounds or (3 if args.quick else 5)
    info = machine()
    rows, aggregation = [], []
    for size in sizes:
        for kind in kinds:
            print(f"{kind} {size} ...", file=sys.stderr, flush=True)
            if kind == "aggregation":
                aggregation.append(time_aggregation(size, args.quick, rounds, args.torch_python))
            else:
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
    if not rows:
        largest, fused = [], []
    if aggregation:
        fused += render_aggregation(aggregation)
    write(args.out, "gnn", table + "\n" + "\n".join(largest + fused), info, rows + aggregation)


if __name__ == "__main__":
    main()
