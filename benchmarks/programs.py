"""Whole programs, ours against the same program on stock TensorFlow, in one run.

    python -m benchmarks.bench --only P1,P2    (part of every bench run)

Each program is written once against a library `L`, TensorFlow's functions
or the plugin's, and run four ways: a plain tf.function and
tf.function(jit_compile=True), each with `L = tf` and `L = tso`. What a
user feels is the whole step: under XLA our kernels choose per call site
between XLA's own scatter or gather (fusable, in place in loops, dynamic
shapes) and our custom call, and a choice that blocked a fusion or copied a
loop-carried buffer shows up here, not in the per-op table. Results are
checked against stock TensorFlow before anything is timed; the four are
timed interleaved, round by round.
"""

import contextlib
import dataclasses
import statistics
import time

import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso

M = 1 << 20


@dataclasses.dataclass
class Program:
    name: str
    title: str
    build: object    # (L, inputs) -> the step, a function of the inputs
    inputs: object   # (rng, quick) -> tuple of tensors
    per: int = 1     # report time per this many steps (a loop's iterations)


def _kv_inputs(rng, quick):
    rows = 1024 if quick else 4096
    return (tf.zeros([rows, 4096]),)


KV_STEPS = 64


def kv_cache(L, cache):
    """A decode loop's cache: one position written per step into a
    loop-carried cache."""
    width = cache.shape[1]

    def body(k, c):
        return k + 1, L.tensor_scatter_nd_update(c, [[k]], tf.fill([1, width], tf.cast(k, tf.float32)))
    return tf.while_loop(lambda k, c: k < KV_STEPS, body, [0, cache])[1]


def kv_decode(L, cache):
    """The same loop reading the cache each step before it writes (the
    advice of docs/variables.md for loops outside XLA: the write waits for the read)."""
    width = cache.shape[1]

    def body(k, c, acc):
        read = tf.reduce_sum(L.gather_nd(c, [[k // 2], [k // 3]]))
        with tf.control_dependencies([read]):
            c = L.tensor_scatter_nd_update(c, [[k]], tf.fill([1, width], tf.cast(k, tf.float32)))
        return k + 1, c, acc + read
    return tf.while_loop(lambda k, c, a: k < KV_STEPS, body, [0, cache, 0.0])[1:]


def _gather_inputs(rng, quick):
    rows = M // (16 if quick else 1)
    return (tf.constant(rng.standard_normal((rows, 16)), tf.float32),
            tf.constant(rng.integers(0, rows, (rows // 4, 1)), tf.int32))


def gather_elementwise(L, params, idx):
    """A gather followed by elementwise work, which XLA fuses into its gather."""
    return tf.nn.relu(L.gather_nd(params, idx) * 2.0 + 1.0)


def _graph_inputs(rng, quick):
    nodes, edges = (M // 16, M // 4) if quick else (M // 4, M)
    return (tf.constant(rng.standard_normal((nodes, 32)), tf.float32),
            tf.constant(rng.integers(0, nodes, (edges, 1)), tf.int32),
            tf.constant(rng.integers(0, nodes, (edges, 1)), tf.int32),
            tf.constant(rng.standard_normal((32, 32)) * 0.1, tf.float32))


def gnn_step(L, h, src, dst, w):
    """One message-passing layer and its gradient: messages gathered from the
    sources, weighted, summed into the destinations."""
    with tf.GradientTape() as tape:
        tape.watch([h, w])
        messages = L.gather_nd(h, src) * tf.sigmoid(L.gather_nd(h, dst))
        agg = L.tensor_scatter_nd_add(tf.zeros_like(h), dst, messages)
        loss = tf.reduce_sum(tf.nn.relu(agg @ w))
    return [tf.convert_to_tensor(g) for g in tape.gradient(loss, [h, w])]


def _segment_graph_inputs(rng, quick):
    nodes, edges = (20_000 // 16, 200_000 // 16) if quick else (20_000, 200_000)
    return (tf.constant(rng.standard_normal((nodes, 32)), tf.float32),
            tf.constant(rng.integers(0, nodes, edges), tf.int32),
            tf.constant(rng.integers(0, nodes, edges), tf.int32),
            tf.constant(rng.standard_normal((64, 32)) * 0.1, tf.float32))


def gnn_segment_step(L, h, src, dst, w):
    """A GraphSAGE-style layer written against TensorFlow's API, as GNN code
    is (tf.gather, tf.math.unsorted_segment_mean and _max), and its gradient;
    with L = tso it runs under patch_tensorflow(), unchanged: the segment
    reductions and the densified gradients of the gathers are ours."""
    with tso.patched() if L is tso else contextlib.nullcontext():
        with tf.GradientTape() as tape:
            tape.watch([h, w])
            messages = tf.gather(h, src)
            nodes = tf.shape(h)[0]
            agg = tf.concat([tf.math.unsorted_segment_mean(messages, dst, nodes),
                             tf.math.unsorted_segment_max(messages, dst, nodes)], axis=1)
            loss = tf.reduce_sum(tf.nn.relu(agg @ w))
        return [tf.convert_to_tensor(g) for g in tape.gradient(loss, [h, w])]


def _lookup_inputs(rng, quick):
    rows = M // (16 if quick else 1)
    return (tf.constant(rng.standard_normal((rows, 64)), tf.float32),
            tf.constant(rng.integers(0, rows, (4096, 8, 1)), tf.int32),
            tf.constant(rng.standard_normal((64, 1)), tf.float32))


def lookup_step(L, table, ids, w):
    """A recommender's step on a table passed in: bags of 8 ids looked up,
    averaged, scored; the table's gradient as a dense scatter-add of the rows'
    gradients, and the table updated with it."""
    with tf.GradientTape() as tape:
        tape.watch(table)
        bags = tf.reduce_mean(L.gather_nd(table, ids), axis=1)
        loss = tf.reduce_sum(tf.square(bags @ w - 1.0))
    grad = tf.convert_to_tensor(tape.gradient(loss, table))
    return L.tensor_scatter_nd_sub(table, tf.reshape(ids, [-1, 1]),
                                   0.1 * L.gather_nd(grad, tf.reshape(ids, [-1, 1])))


def _scatter_inputs(rng, quick):
    size = 16 * M // (16 if quick else 1)
    return (tf.zeros([size]), tf.constant(rng.integers(0, size, (size // 16, 1)), tf.int32),
            tf.ones([size // 16]))


def lone_scatter(L, t, idx, u):
    return L.tensor_scatter_nd_add(t, idx, u)


def _mask_inputs(rng, quick):
    return (tf.constant(rng.random(M // (16 if quick else 1)) * 1.2 - 0.1, tf.float32),)


def masked_histogram(L, x):
    """keras.ops.histogram's pattern: a boolean mask (a dynamic size under
    XLA), then a scatter-add of ones into the bins."""
    x = tf.boolean_mask(x, (x >= 0.0) & (x <= 1.0))
    bins = tf.clip_by_value(tf.cast(x * 100, tf.int32), 0, 99)
    return L.tensor_scatter_nd_add(tf.zeros([100]), bins[:, None], tf.ones_like(x))


PROGRAMS = [
    Program("P1", f"KV cache in a loop, {KV_STEPS} positions into [4096,4096], per position",
            kv_cache, _kv_inputs, per=KV_STEPS),
    Program("P2", "gather_nd of 256k rows of 16 from [1M,16], then elementwise", gather_elementwise,
            _gather_inputs),
    Program("P3", "GNN layer and gradient: 256k nodes x 32, 1M edges", gnn_step, _graph_inputs),
    Program("P4", "recommender step: 4096 bags of 8 ids from [1M,64], gradient, update", lookup_step,
            _lookup_inputs),
    Program("P5", "lone tensor_scatter_nd_add 16M <- 1M", lone_scatter, _scatter_inputs),
    Program("P6", "boolean mask, then a 100-bin histogram of 1M values", masked_histogram, _mask_inputs),
    Program("P8", "GNN training step, TensorFlow's segment API through the patch: 20k nodes x 32, "
            "200k edges", gnn_segment_step, _segment_graph_inputs),
    Program("P7", "decode loop: P1 reading two cache rows before each write, per position", kv_decode,
            _kv_inputs, per=KV_STEPS),
]

VARIANTS = ("tf fn", "ours fn", "tf xla", "ours xla")


def _functions(program):
    fns = {}
    for name in VARIANTS:
        lib = tso if name.startswith("ours") else tf
        fns[name] = tf.function(lambda *a, lib=lib: program.build(lib, *a),
                                jit_compile=name.endswith("xla"))
    return fns


def _check(program, fns, inputs):
    """Every variant against stock TensorFlow's plain function (sums of
    floats in another order allowed for)."""
    want = [np.asarray(t, np.float64) for t in tf.nest.flatten(fns["tf fn"](*inputs))]
    for name, f in fns.items():
        got = [np.asarray(t, np.float64) for t in tf.nest.flatten(f(*inputs))]
        for g, w in zip(got, want):
            if g.shape != w.shape or not np.allclose(g, w, rtol=1e-3, atol=1e-3):
                raise AssertionError(f"{program.name}: {name} differs from TensorFlow's result")


def run(names=None, quick=False, rounds=None, progress=None):
    """Checks and times the programs; returns their rows."""
    rng = np.random.default_rng(0)
    rounds = rounds or (3 if quick else 7)
    rows = []
    for p in PROGRAMS:
        if names and p.name not in names:
            continue
        inputs = p.inputs(rng, quick)
        fns = _functions(p)
        _check(p, fns, inputs)
        times = {k: [] for k in fns}
        order = list(fns)
        for r in range(rounds):
            for name in order[r % len(order):] + order[:r % len(order)]:
                for _ in range(3):
                    t0 = time.perf_counter()
                    fns[name](*inputs)
                    times[name].append((time.perf_counter() - t0) / p.per)
            if progress:
                progress(p.name)
        rows.append(dict(name=p.name, title=p.title + (" (at 1/16 size)" if quick else ""),
                         **{k: statistics.median(v) for k, v in times.items()}))
        del inputs, fns
    return rows


def render(rows):
    lines = [f"{'program':<8} {'TF fn ms':>9} {'ours fn':>9} {'vs TF':>6} {'TF XLA':>9} {'ours XLA':>9} "
             f"{'vs XLA':>6}  title", "-" * 120]
    for r in rows:
        lines.append(f"{r['name']:<8} {r['tf fn'] * 1e3:9.3f} {r['ours fn'] * 1e3:9.3f} "
                     f"{r['tf fn'] / r['ours fn']:5.2f}x {r['tf xla'] * 1e3:9.3f} "
                     f"{r['ours xla'] * 1e3:9.3f} {r['tf xla'] / r['ours xla']:5.2f}x  {r['title']}")
    lines += ["", "Whole programs written once against tf or tso: TF fn / ours fn in a plain "
              "tf.function, TF XLA / ours XLA with jit_compile=True (XLA's own scatters and gathers "
              "against ours, which pick XLA's or our kernel per call site); medians; vs: TF's time "
              "over ours (above 1: ours is faster)"]
    return "\n".join(lines)
