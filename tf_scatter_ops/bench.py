"""Benchmark: ours vs TensorFlow's kernel vs TensorFlow under XLA, in one run.

    python -m tf_scatter_ops.bench [--quick] [--out DIR] [--only W1,W3,T2]

Every workload is first checked: our result must equal TensorFlow's kernel
(bitwise) before anything is timed. The three are then timed interleaved,
round by round (a burst of 3 calls each, the order rotating), each inside a
tf.function (XLA: jit_compile=True). The table has the median of all calls,
the speedups, and the multiple of the memory floor: the time to move the
workload's bytes at the copy bandwidth measured just before that workload
(a machine's copy bandwidth drifts, on shared VMs especially, and one lucky
copy should not set every workload's floor). It also has the median of our
first call in each burst, which pays for waking a thread pool that went idle.
The T workloads are the training loop: tables in variables touched a few
rows per step (an SGD step on an embedding lookup, in-place adds into a
variable) and a tf.while_loop updating a loop variable row by row. They are
checked by running each implementation once on its own copy of the variable
and comparing the variables.
The P rows are whole programs (tf_scatter_ops/bench_programs.py), each
timed in a plain tf.function and under jit_compile=True against the same
program on stock TensorFlow.
Writes bench.json and bench.png to --out.
"""

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import tf_scatter_ops as tso  # noqa: E402
from tf_scatter_ops import bench_programs  # noqa: E402

M = 1 << 20


@dataclasses.dataclass
class Workload:
    name: str
    title: str
    op: str                  # function name in tf / tso
    shape: tuple
    n: int                   # index rows
    depth: int = 1
    unique: bool = False
    dtype: object = tf.float32
    index_dtype: object = tf.int32
    hot: bool = False        # 90% of rows go to 1% of the destinations
    eager_tiny: bool = False  # time per eager call instead
    kind: str = "tensor"     # or a training-loop kind: "sgd", "variable", "loop"
    rounds: int = 0          # fewer rounds than the default, for slow baselines


WORKLOADS = [
    Workload("W1", "tensor_scatter_nd_add 16M <- 1M random (dups)", "tensor_scatter_nd_add", (16 * M,), M),
    Workload("W2", "tensor_scatter_nd_update 16M <- 1M unique", "tensor_scatter_nd_update", (16 * M,), M, unique=True),
    Workload("W3", "row add [1M,64] <- 200k rows (dups)", "tensor_scatter_nd_add", (M, 64), 200_000),
    Workload("W4", "row update [1M,64] <- 200k unique rows", "tensor_scatter_nd_update", (M, 64), 200_000, unique=True),
    Workload("W5", "scatter_nd [4096,4096] <- 2M depth-2", "scatter_nd", (4096, 4096), 2 * M, depth=2),
    Workload("W6", "tensor_scatter_nd_max 16M <- 1M random", "tensor_scatter_nd_max", (16 * M,), M),
    Workload("W7", "gather_nd 1M rows from [1M,64]", "gather_nd", (M, 64), M),
    Workload("W8", "tiny update [1000] <- 10, eager, per call", "tensor_scatter_nd_update", (1000,), 10,
             unique=True, eager_tiny=True),
    Workload("W1-i64", "W1 with int64 indices", "tensor_scatter_nd_add", (16 * M,), M, index_dtype=tf.int64),
    Workload("W1-bf16", "W1 with bfloat16 values", "tensor_scatter_nd_add", (16 * M,), M, dtype=tf.bfloat16),
    Workload("W1-hot", "W1 with hot destinations (90% -> 1%)", "tensor_scatter_nd_add", (16 * M,), M, hot=True),
    # The training loop: tables in variables, touched a few rows per step.
    Workload("T1", "SGD step, gather_nd lookup of 4096 ids, table [256k,64]", "sgd", (M // 4, 64), 4096,
             kind="sgd"),
    Workload("T2", "SGD step, gather_nd lookup of 4096 ids, table [1M,64]", "sgd", (M, 64), 4096, kind="sgd"),
    Workload("T3", "SGD step, gather_nd lookup of 4096 ids, table [4M,64]", "sgd", (4 * M, 64), 4096,
             kind="sgd"),
    Workload("T4", "scatter_nd_add 4096 rows into a [1M,64] variable", "scatter_nd_add", (M, 64), 4096,
             kind="variable"),
    Workload("T5", "scatter_nd_add 1M elements into a 16M variable", "scatter_nd_add", (16 * M,), M,
             kind="variable"),
    Workload("T6", "while_loop: 500 one-row updates of a [4096,1024] loop variable", "tensor_scatter_nd_update",
             (4096, 1024), 500, unique=True, kind="loop", rounds=3),
]


def quick(w):
    """A 16x smaller version for `make demo`."""
    if w.kind == "loop":
        return dataclasses.replace(w, shape=(1024, 1024), n=max(w.n // 16, 10),
                                   title=f"{w.title} at 1/16 size")
    shape = (max(w.shape[0] // 16, 64),) + w.shape[1:] if not w.eager_tiny else w.shape
    if w.op == "scatter_nd" and w.depth == 2:
        shape = (1024, 1024)
    title = w.title if w.eager_tiny else f"{w.title} at 1/16 size"
    return dataclasses.replace(w, shape=shape, n=max(w.n // 16, 10) if not w.eager_tiny else w.n,
                               title=title)


def make_inputs(w, rng):
    dims = w.shape[:w.depth]
    slots = int(np.prod(dims))
    if w.unique:
        flat = rng.permutation(slots)[:w.n]
    elif w.hot:
        hot = rng.integers(0, slots, size=max(slots // 100, 1))
        flat = np.where(rng.random(w.n) < 0.9, rng.choice(hot, size=w.n), rng.integers(0, slots, size=w.n))
    else:
        flat = rng.integers(0, slots, size=w.n)
    idx = np.stack(np.unravel_index(flat, dims), axis=-1)
    indices = tf.constant(idx, w.index_dtype)
    upd_shape = (w.n,) + tuple(w.shape[w.depth:])
    updates = tf.cast(tf.constant(rng.standard_normal(upd_shape).astype(np.float32)), w.dtype)
    tensor = tf.cast(tf.constant(rng.standard_normal(w.shape).astype(np.float32)), w.dtype)
    if w.op == "scatter_nd":
        return (indices, updates, tf.constant(w.shape, w.index_dtype))
    if w.op == "gather_nd":
        return (tensor, indices)
    return (tensor, indices, updates)


LEARNING_RATE = 0.125


def _sgd_step(gather, scatter_sub, table):
    """One SGD step on an embedding table: a gather_nd row lookup, the loss's
    gradient (IndexedSlices: the looked-up rows only) applied in place."""
    def step(ids, target):
        with tf.GradientTape() as tape:
            rows = gather(table, ids[:, None])
            loss = tf.reduce_sum(tf.square(rows - target))
        grad = tape.gradient(loss, table)
        scatter_sub(table, grad.indices[:, None], LEARNING_RATE * grad.values)
    return step


def _variable_add(scatter_add, var):
    def add(indices, updates):
        scatter_add(var, indices, updates)  # returns nothing: no read of the variable
    return add


def _update_loop(scatter, n):
    """A tf.while_loop writing row i of `rows` at `indices[i]`, one per iteration."""
    def loop(tensor, indices, rows):
        def body(i, t):
            return i + 1, scatter(t, indices[i:i + 1], rows[i:i + 1])
        return tf.while_loop(lambda i, t: i < n, body, (tf.constant(0), tensor))[1]
    return loop


def training_setup(w, rng):
    """(implementations, args, check) of a training-loop workload. Each
    implementation that updates a variable gets its own, from the same start;
    the check runs each once and compares the variables (ours and
    TensorFlow's kernel bitwise, XLA within rounding)."""
    inputs = make_inputs(w, rng)
    if w.kind == "loop":
        impls = {"ours": tf.function(_update_loop(tso.tensor_scatter_nd_update, w.n)),
                 "tf": tf.function(_update_loop(tf.tensor_scatter_nd_update, w.n)),
                 "xla": tf.function(_update_loop(tf.tensor_scatter_nd_update, w.n), jit_compile=True)}
        return impls, inputs, lambda: check(w, impls, inputs)
    start, indices, updates = inputs
    if w.kind == "sgd":
        args = (indices[:, 0], updates)
        make = {"ours": lambda v: tf.function(_sgd_step(tso.gather_nd, tso.scatter_nd_sub, v)),
                "tf": lambda v: tf.function(_sgd_step(tf.gather_nd, tf.compat.v1.scatter_nd_sub, v)),
                "xla": lambda v: tf.function(_sgd_step(tso.gather_nd, tso.scatter_nd_sub, v), jit_compile=True)}
    else:
        args = (indices, updates)
        make = {"ours": lambda v: tf.function(_variable_add(tso.scatter_nd_add, v)),
                "tf": lambda v: tf.function(_variable_add(tf.compat.v1.scatter_nd_add, v)),
                "xla": lambda v: tf.function(_variable_add(tso.scatter_nd_add, v), jit_compile=True)}
    variables = {k: tf.Variable(start) for k in make}
    impls = {k: f(variables[k]) for k, f in make.items()}

    def check_variables():
        for f in impls.values():
            f(*args)
        ours, theirs = variables["ours"].numpy(), variables["tf"].numpy()
        if not np.array_equal(ours.view(np.uint8), theirs.view(np.uint8)):
            raise AssertionError(f"{w.name}: our variable differs from TensorFlow's kernel's")
        if not np.allclose(ours, variables["xla"].numpy(), rtol=1e-2, atol=1e-2):
            raise AssertionError(f"{w.name}: XLA's variable differs from ours beyond rounding")
    return impls, args, check_variables


def bytes_moved(w, args):
    """Out of place: read the inputs once, write the output once."""
    size = lambda t: t.shape.num_elements() * t.dtype.size  # noqa: E731
    row = tf.as_dtype(w.dtype).size * int(np.prod(w.shape[w.depth:]))
    if w.kind == "loop":
        return None  # a handful of rows: the loop's own overhead is the cost
    if w.kind == "variable":  # in place: read the updates, read and write their rows
        indices, updates = args
        return size(indices) + size(updates) + 2 * w.n * row
    if w.kind == "sgd":  # gather: read + write the rows; scatter: read the step, update the rows
        ids, target = args
        return 2 * size(ids) + size(target) + 2 * w.n * row + 3 * w.n * row
    if w.op == "gather_nd":
        params, indices = args
        return size(indices) + 2 * w.n * row
    if w.op == "scatter_nd":
        indices, updates, _ = args
        out = int(np.prod(w.shape)) * updates.dtype.size
        return size(indices) + size(updates) + out
    tensor, indices, updates = args
    return 2 * size(tensor) + size(indices) + size(updates)


def copy_bandwidth(nbytes=512 * M, threads=os.cpu_count() or 1, repeats=5):
    """Bytes/s (read + write) of a large parallel copy: the memory floor."""
    src = np.ones(nbytes // 8, np.float64)
    dst = np.empty_like(src)
    chunks = np.array_split(np.arange(src.size), threads)
    bounds = [(c[0], c[-1] + 1) for c in chunks]
    best = float("inf")
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(repeats):
            t0 = time.perf_counter()
            list(pool.map(lambda b: np.copyto(dst[b[0]:b[1]], src[b[0]:b[1]]), bounds))
            best = min(best, time.perf_counter() - t0)
    return 2 * nbytes / best


def machine():
    """What the numbers were measured on: CPU model, the ISA our loops use,
    TensorFlow's CPU allocator."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    bfc = os.environ.get("TF_CPU_ALLOCATOR_USE_BFC", "").lower() in ("1", "true")
    return dict(cpu=model, cpus=os.cpu_count(), isa=tso.active_isa(), cpu_isa=tso.cpu_isa(),
                allocator="bfc" if bfc else "default", tf=tf.__version__)


def first_touch_cost(nbytes=64 * M, repeats=3):
    """Seconds per 4 KiB page of writing a freshly allocated buffer beyond
    rewriting one already mapped: what a fresh output costs before any work
    (TensorFlow's default CPU allocator hands out fresh pages for large
    tensors on every call; its BFC allocator reuses them)."""
    pages = nbytes // 4096
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fresh = np.empty(nbytes, np.uint8)
        fresh.fill(1)
        t1 = time.perf_counter()
        fresh.fill(2)
        t2 = time.perf_counter()
        best = min(best, ((t1 - t0) - (t2 - t1)) / pages)
        del fresh
    return max(best, 0.0)


def output_bytes(w, args):
    """Bytes of the output the op allocates (a fresh tensor, when the input
    buffer is not forwarded); none for in-place variable updates."""
    if w.kind in ("variable", "sgd", "loop"):
        return 0
    if w.op == "gather_nd":
        params, _ = args
        return w.n * params.dtype.size * int(np.prod(w.shape[w.depth:]))
    return int(np.prod(w.shape)) * tf.as_dtype(w.dtype).size


def positional(op):
    """`op` called with its tensors only, as inside a model. tf.function of
    the public function itself would also bind its keyword defaults on every
    call, which costs tens of microseconds, the same for every op."""
    def call(*args):
        return op(*args)
    return call


def implementations(w):
    """Ours, TF's kernel and TF under XLA; and, where XLA compiles our ops to
    our kernels (tso.xla_uses_our_kernels()), ours under XLA ("ours xla")."""
    ours, theirs = getattr(tso, w.op), getattr(tf, w.op)
    if w.eager_tiny:
        return {"ours": ours, "tf": theirs}
    impls = {
        "ours": tf.function(positional(ours)),
        "tf": tf.function(positional(theirs)),
        "xla": tf.function(positional(theirs), jit_compile=True),
    }
    if tso.xla_uses_our_kernels():
        impls["ours xla"] = tf.function(positional(static_shape(w, ours)), jit_compile=True)
    return impls


def static_shape(w, op):
    """`op`, for scatter_nd with the workload's shape as a constant: XLA needs
    the shape when compiling, which TensorFlow's op gets by making its
    argument a constant of the compiled function, and ours from the graph
    (README, XLA)."""
    if w.op != "scatter_nd":
        return op
    shape = list(w.shape)
    return lambda indices, updates, _shape: op(indices, updates, shape)


def call_floor(args, rounds=5, calls=300):
    """Seconds per call of an empty tf.function taking `args`, without and
    with jit_compile: what any op in a function of its own costs at least,
    before its kernel runs (the runtime's dispatch; XLA's path is shorter)."""
    floors = {}
    for name, jit in (("fn", False), ("xla fn", True)):
        f = tf.function(lambda *a: a[0], jit_compile=jit)
        f(*args)
        best = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _ in range(calls):
                f(*args)
            best.append((time.perf_counter() - t0) / calls)
        floors[name] = statistics.median(best)
    return floors


def check(w, impls, args):
    ours, tf_out = impls["ours"](*args), impls["tf"](*args)
    a, b = ours.numpy(), tf_out.numpy()
    if a.shape != b.shape or a.dtype != b.dtype or a.tobytes() != b.tobytes():
        raise AssertionError(f"{w.name}: our result differs from TensorFlow's kernel")
    if "ours xla" in impls and impls["ours xla"](*args).numpy().tobytes() != a.tobytes():
        raise AssertionError(f"{w.name}: our result under XLA differs from our kernel's")
    if "xla" in impls:
        x = impls["xla"](*args).numpy().astype(np.float64)
        if not np.allclose(a.astype(np.float64), x, rtol=1e-2, atol=1e-2):
            raise AssertionError(f"{w.name}: XLA's result differs from ours beyond rounding")


def progress(done, total, label):
    width = 30
    filled = int(width * done / total)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label:<28}")
    sys.stderr.flush()


def time_workload(w, impls, args, rounds, tick, burst=3):
    """Each round runs every implementation `burst` times in a row, the order
    rotating from round to round. Returns, per implementation, the median of
    all its calls and the median of the first call of each burst (the call
    that follows another implementation, when the pool may have gone idle)."""
    times = {k: [] for k in impls}
    first = {k: [] for k in impls}
    for name, f in impls.items():  # warm up (trace, compile)
        f(*args)
    names = list(impls)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            f = impls[name]
            for b in range(burst):
                if w.eager_tiny:
                    calls = 2000
                    t0 = time.perf_counter()
                    for _ in range(calls):
                        f(*args)
                    t = (time.perf_counter() - t0) / calls
                else:
                    t0 = time.perf_counter()
                    f(*args)
                    t = time.perf_counter() - t0
                times[name].append(t)
                if b == 0:
                    first[name].append(t)
        tick()
    return ({k: statistics.median(v) for k, v in times.items()},
            {k: statistics.median(v) for k, v in first.items()})


def render(results, info):
    bws = [r["bandwidth"] / 1e9 for r in results if r["bandwidth"]]
    bandwidth = f"{min(bws):.1f}-{max(bws):.1f}" if bws else "-"
    lines = [f"{info['cpu']} ({info['cpus']} CPUs), our loops: {info['isa']} (CPU: {info['cpu_isa']}), "
             f"TensorFlow {info['tf']}, CPU allocator: {info['allocator']}",
             f"copy bandwidth (memory floor), measured before each workload: {bandwidth} GB/s; "
             f"first touch of a fresh page: {info['first_touch_us']:.2f} us; "
             f"intra-op threads: {tf.config.threading.get_intra_op_parallelism_threads() or os.cpu_count()}",
             "",
             f"{'workload':<9} {'ours ms':>9} {'TF ms':>9} {'XLA ms':>9} {'vs TF':>7} {'vs XLA':>7} "
             f"{'x floor':>8} {'1st ms':>9} {'1st x fl':>8} {'faults':>7} {'ours@XLA':>9} {'vs XLA':>7}  title",
             "-" * 146]
    for r in results:
        unit = 1e6 if r["per_call"] else 1e3
        fmt = (lambda v: f"{v * unit:8.2f}{'us' if r['per_call'] else ''}") if r["per_call"] else \
            (lambda v: f"{v * unit:9.2f}")
        xla = fmt(r["xla"]) if r["xla"] else f"{'-':>9}"
        vs_xla = f"{r['xla'] / r['ours']:6.1f}x" if r["xla"] else f"{'-':>7}"
        floor = f"{r['ours'] / r['floor']:7.2f}x" if r["floor"] else f"{'-':>8}"
        first = r["first"]["ours"]
        first_floor = f"{first / r['floor']:7.2f}x" if r["floor"] else f"{'-':>8}"
        faults = f"{100 * r['faults'] / r['ours']:6.0f}%" if r.get("faults") else f"{'-':>7}"
        ours_xla = r.get("ours xla")
        at_xla = (f"{fmt(ours_xla)} {r['xla'] / ours_xla:6.1f}x" if ours_xla and r["xla"]
                  else f"{'-':>9} {'-':>7}")
        lines.append(f"{r['name']:<9} {fmt(r['ours'])} {fmt(r['tf'])} {xla} "
                     f"{r['tf'] / r['ours']:6.1f}x {vs_xla} {floor} {fmt(first)} {first_floor} {faults} "
                     f"{at_xla}  {r['title']}")
    lines += ["", "ms: median of all calls; 1st: median of the first call of each burst, which follows "
              "another implementation (TensorFlow's serial kernel leaves the pool's threads idle); "
              "faults: the share of our time that first-touching a fresh output would take "
              "(its pages x the first-touch cost; none with the BFC allocator, which reuses them); "
              "ours@XLA: our op under jit_compile=True, where XLA runs our kernel, vs XLA's own"]
    return "\n".join(lines)


def plot(results, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart", file=sys.stderr)
        return
    names = [r["name"] for r in results if not r["per_call"]]
    fig, ax = plt.subplots(figsize=(11, 4.5))
    x = np.arange(len(names))
    for k, (key, label) in enumerate([("ours", "tf-scatter-ops"), ("tf", "TensorFlow kernel"),
                                      ("xla", "TensorFlow + XLA"), ("floor", "memory floor")]):
        vals = [(r[key] or 0) * 1e3 for r in results if not r["per_call"]]
        ax.bar(x + (k - 1.5) * 0.2, vals, 0.2, label=label)
    ax.set_xticks(x, names)
    ax.set_ylabel("ms (median, lower is better)")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title(f"scatter_nd family on {os.cpu_count()} CPU cores")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


SWEEP = ("W1", "W3", "W5", "W7")
# Per-op columns: chains of ops in one tf.function, up to outputs of
# CHAIN_MAX_BYTES (above it one call's cost is a small share of an op's).
# Small ops cost a few microseconds, a small share of a call's: their chains
# are longer, so that the difference of two medians is not noise.
CHAIN_MAX_BYTES = 16 * M
CHAIN_SMALL_MAX_BYTES = M
CHAIN, CHAIN_SMALL = 8, 32


def chain_length(out_bytes):
    return CHAIN_SMALL if out_bytes <= CHAIN_SMALL_MAX_BYTES else CHAIN
# Eager calls up to this output size are timed in runs (time_workload's eager_tiny).
EAGER_RUN_MAX_BYTES = 64 << 10


def chain_inputs(w, args, k=CHAIN):
    """(op, fixed, varying) for a chain of `w`'s op: op(*fixed, v) for each of
    k tensors v that differ in value, so that no compiler can merge two of
    the ops: the updates scaled for scatters, the indices rolled for
    gathers."""
    if w.op == "gather_nd":
        params, indices = args
        return (lambda op: op), (params,), [tf.roll(indices, j, 0) for j in range(k)]
    if w.op == "scatter_nd":
        indices, updates, shape = args
        return ((lambda op: lambda i, s, u: op(i, u, s)), (indices, shape),
                [updates * (1 + j) for j in range(k)])
    tensor, indices, updates = args
    return (lambda op: op), (tensor, indices), [updates * (1 + j) for j in range(k)]


def chained(op, k):
    """A function of k ops, each after the one before (a control dependency,
    as in a model's step), returning every output."""
    def call(*args):
        fixed, varying = args[:-k], args[-k:]
        outs = []
        for v in varying:
            with tf.control_dependencies(outs[-1:]):
                outs.append(op(*fixed, v))
        return outs
    return call


def chain_implementations(w, args, k):
    """Ours, TF's and XLA's chains of 1 and of k ops (and ours under XLA
    where it runs our kernels), as functions of `args` (for time_workload)
    that call the chain with its own inputs."""
    adapt, fixed, varying = chain_inputs(w, args, k)
    impls = {}
    kinds = [("ours", getattr(tso, w.op), False), ("tf", getattr(tf, w.op), False),
             ("xla", getattr(tf, w.op), True)]
    if tso.xla_uses_our_kernels():
        kinds.append(("ours xla", static_shape(w, getattr(tso, w.op)), True))
    for name, op, jit in kinds:
        for n in (1, k):
            f = tf.function(chained(adapt(op), n), jit_compile=jit)
            impls[f"{name} x{n}"] = lambda *_, f=f, a=fixed + tuple(varying[:n]): f(*a)
    # Traced here, quietly: TensorFlow warns of retracing when one Python
    # function is wrapped by many tf.functions, as these are.
    logger, level = tf.get_logger(), tf.get_logger().level
    logger.setLevel("ERROR")
    try:
        outs = {name: f() for name, f in impls.items()}
    finally:
        logger.setLevel(level)
    for a, b in zip(outs[f"ours x{k}"], outs[f"tf x{k}"]):
        if a.numpy().tobytes() != b.numpy().tobytes():
            raise AssertionError(f"{w.name}: our chain's result differs from TensorFlow's")
    for a, b in zip(outs[f"ours x{k}"], outs.get(f"ours xla x{k}", [])):
        if a.numpy().tobytes() != b.numpy().tobytes():
            raise AssertionError(f"{w.name}: our chain's result under XLA differs from our kernel's")
    return impls


def sized(w, out_bytes):
    """Workload `w` scaled so that its output has about `out_bytes`, with the
    same ratio of updates (rows) to output as at full size."""
    full = int(np.prod(w.shape)) * 4
    scale = out_bytes / full
    if w.depth == 2:
        side = max(int(round((out_bytes / 4) ** 0.5)), 8)
        shape = (side, side)
    else:
        shape = (max(int(w.shape[0] * scale), 16),) + w.shape[1:]
    return dataclasses.replace(w, shape=shape, n=max(int(w.n * scale), 16),
                               title=f"{w.name} at {out_bytes / M:g} MiB")


def sweep_main(args):
    """Time per update row of W1, W3, W5 and W7 at output sizes from 16 KiB
    up, ours vs TensorFlow's kernel vs XLA: one op in a tf.function, eagerly
    (XLA only in tf.function), and one op more inside a function (up to
    CHAIN_MAX_BYTES); checked first, as the main table is."""
    info = machine()
    sizes = [16 << 10 << (2 * k) for k in range(8)]  # 16 KiB .. 256 MiB
    if args.quick:
        sizes = sizes[:6]
    rounds = args.rounds or (3 if args.quick else 5)
    rng = np.random.default_rng(0)
    rows = []
    base = {w.name: w for w in WORKLOADS}
    floors = {nargs: call_floor(make_inputs(sized(base[name], sizes[0]), rng))
              for nargs, name in ((3, "W1"), (2, "W7"))}
    for name in SWEEP:
        for out_bytes in sizes:
            w = sized(base[name], out_bytes)
            inputs = make_inputs(w, rng)
            impls = implementations(w)
            check(w, impls, inputs)
            t, _ = time_workload(w, impls, inputs, rounds, lambda: None, burst=2)
            # Eager calls are timed among themselves: an eager op right after
            # a tf.function call costs about 10 us more (the runtime's state,
            # whichever op it is), which interleaving would charge to
            # whichever eager op follows the functions.
            # Calls of a few microseconds are timed as the mean of a run of
            # them (as W8), not one by one.
            eager = {"ours eager": getattr(tso, w.op), "tf eager": getattr(tf, w.op)}
            w_eager = dataclasses.replace(w, eager_tiny=out_bytes <= EAGER_RUN_MAX_BYTES)
            t.update(time_workload(w_eager, eager, inputs, rounds, lambda: None, burst=2)[0])
            # What one more op costs inside a function: a chain of
            # chain_length() ops less a chain of one, over the ops added; the call's own cost
            # drops out. Timed apart: the chains' outputs would change what
            # the allocator hands the single ops.
            length = chain_length(out_bytes)
            chains = chain_implementations(w, inputs, length) if out_bytes <= CHAIN_MAX_BYTES else {}
            # A difference of two medians: more rounds where the calls are short.
            chain_rounds = rounds * 4 if out_bytes <= M else rounds
            c = time_workload(w, chains, inputs, chain_rounds, lambda: None, burst=2)[0] if chains else {}
            for impl in ("ours", "tf", "xla", "ours xla"):
                t[f"{impl} per op"] = ((c[f"{impl} x{length}"] - c[f"{impl} x1"]) / (length - 1)
                                       if f"{impl} x1" in c else None)
            t.setdefault("ours xla", None)
            del chains
            rows.append(dict(workload=name, out_bytes=out_bytes, n=w.n,
                             **{k: None if v is None else v / w.n for k, v in t.items()}))
            sys.stderr.write(f"\r{name} {out_bytes / M:8.3f} MiB done ")
            del inputs, impls
    sys.stderr.write("\n")
    floor_line = "; ".join(f"{n} tensors: {f['fn'] * 1e6:.0f} us, {f['xla fn'] * 1e6:.0f} us with jit_compile"
                           for n, f in floors.items())

    def ns(v):
        return f"{v * 1e9:9.2f}" if v is not None else f"{'-':>9}"

    def ratio(a, b):
        return f"{a / b:5.1f}x" if a is not None and b else f"{'-':>6}"

    lines = [f"{info['cpu']}, our loops: {info['isa']}, allocator: {info['allocator']}; ns per update row",
             f"an empty tf.function of {floor_line} (each call of the first three columns pays it);",
             f"'/op': one more op inside a function ({CHAIN_SMALL} in a chain up to {CHAIN_SMALL_MAX_BYTES // M} MiB,"
             f" {CHAIN} above, less one alone), without that cost;"
             f" 'per op': XLA/op over ours/op; '@XLA': ours under jit_compile=True (XLA runs our kernel),"
             f" 'vs' XLA's own",
             f"{'workload':<8} {'output':>10} {'ours':>9} {'TF':>9} {'XLA':>9} {'ours@XLA':>9} {'ours eag':>9}"
             f" {'TF eag':>9} {'ours/op':>9} {'TF/op':>9} {'XLA/op':>9} {'@XLA/op':>9} {'vs TF':>6} {'vs XLA':>6}"
             f" {'per op':>6} {'@XLA vs':>7} {'/op vs':>6}"]
    for r in rows:
        lines.append(f"{r['workload']:<8} {r['out_bytes'] / M:9.3f}M {ns(r['ours'])} {ns(r['tf'])} {ns(r['xla'])} "
                     f"{ns(r['ours xla'])} {ns(r['ours eager'])} {ns(r['tf eager'])} {ns(r['ours per op'])} "
                     f"{ns(r['tf per op'])} {ns(r['xla per op'])} {ns(r['ours xla per op'])} "
                     f"{ratio(r['tf'], r['ours'])} {ratio(r['xla'], r['ours'])} "
                     f"{ratio(r['xla per op'], r['ours per op'])} {ratio(r['xla'], r['ours xla']):>7} "
                     f"{ratio(r['xla per op'], r['ours xla per op'])}")
    print("\n".join(lines))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "sweep.json"), "w") as f:
        json.dump(dict(machine=info, rounds=rounds, rows=rows,
                       empty_function_s={str(n): f for n, f in floors.items()}), f, indent=1)
    plot_sweep(rows, info, os.path.join(args.out, "sweep.png"))
    print(f"\nwrote {args.out}/sweep.json and {args.out}/sweep.png")


def plot_sweep(rows, info, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, len(SWEEP), figsize=(16, 4.2), sharey=False)
    for ax, name in zip(axes, SWEEP):
        mine = [r for r in rows if r["workload"] == name]
        x = [r["out_bytes"] for r in mine]
        for key, style in (("ours", "o-"), ("tf", "s-"), ("xla", "^-"), ("ours xla", "d-"), ("ours eager", "o--"),
                           ("tf eager", "s--"), ("ours per op", "o:"), ("xla per op", "^:"), ("ours xla per op", "d:")):
            pts = [(xv, r[key] * 1e9) for xv, r in zip(x, mine) if r.get(key)]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=key, markersize=4)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(name)
        ax.set_xlabel("output bytes")
    axes[0].set_ylabel("ns per update row (lower is better)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{info['cpu']} ({info['cpus']} CPUs), our loops: {info['isa']}, allocator: {info['allocator']}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="16x smaller, fewer rounds")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--only", default="", help="comma-separated workload and program names")
    parser.add_argument("--out", default="build/bench")
    parser.add_argument("--isa", choices=["portable", "avx2", "avx512"],
                        help="the instruction set our loops use (capped at what the CPU has)")
    parser.add_argument("--sweep", action="store_true",
                        help="instead: W1, W3, W5, W7 from 16 KiB to 256 MiB outputs (--quick: to 16 MiB)")
    args = parser.parse_args(argv)
    if args.isa:  # read by the library at its first op
        os.environ["TF_SCATTER_OPS_ISA"] = args.isa
    if args.sweep:
        return sweep_main(args)

    only = [n for n in args.only.split(",") if n]
    workloads = [w for w in WORKLOADS if not only or w.name in only]
    programs = [p.name for p in bench_programs.PROGRAMS if not only or p.name in only]
    if args.quick:
        workloads = [quick(w) for w in workloads]
    rounds = args.rounds or (5 if args.quick else 15)
    rng = np.random.default_rng(0)
    copy_bytes = 128 * M if args.quick else 512 * M

    info = machine()
    info["first_touch_us"] = first_touch_cost() * 1e6
    program_rounds = 3 if args.quick else 7
    total = sum(min(rounds, w.rounds or rounds) + 1 for w in workloads) + len(programs) * program_rounds
    done = 0
    results = []
    for w in workloads:
        progress(done, total, f"{w.name}: check")
        if w.kind == "tensor":
            inputs = make_inputs(w, rng)
            impls = implementations(w)
            check(w, impls, inputs)
        else:
            impls, inputs, check_training = training_setup(w, rng)
            check_training()
        done += 1

        def tick(w=w):
            nonlocal done
            done += 1
            progress(done, total, f"{w.name}: timing")

        bandwidth = None if w.eager_tiny else copy_bandwidth(copy_bytes, repeats=3)
        t, t_first = time_workload(w, impls, inputs, min(rounds, w.rounds or rounds), tick)
        nbytes = None if w.eager_tiny else bytes_moved(w, inputs)
        faults = 0.0
        if info["allocator"] == "default" and not w.eager_tiny:
            faults = output_bytes(w, inputs) / 4096 * info["first_touch_us"] * 1e-6
        results.append(dict(name=w.name, title=w.title, ours=t["ours"], tf=t["tf"], xla=t.get("xla"),
                            **{"ours xla": t.get("ours xla")},
                            first=t_first, bandwidth=bandwidth, bytes=nbytes, per_call=w.eager_tiny,
                            floor=nbytes / bandwidth if nbytes else None, faults=faults))
        del inputs, impls

    def program_tick(name):
        nonlocal done
        done += 1
        progress(done, total, f"{name}: timing")

    program_rows = bench_programs.run(programs, args.quick, program_rounds, program_tick) if programs else []
    sys.stderr.write("\n")

    table = render(results, info)
    print(table if results else table.split("\n")[0])  # the machine's line
    if program_rows:
        print("\n" + bench_programs.render(program_rows))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump(dict(machine=info, quick=args.quick, rounds=rounds, results=results,
                       programs=program_rows), f, indent=1)
    if results:
        plot(results, os.path.join(args.out, "bench.png"))
    print(f"\nwrote {args.out}/bench.json and {args.out}/bench.png")


if __name__ == "__main__":
    main()
