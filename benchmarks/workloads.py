"""The benchmark's workloads: what each W and T row runs, its inputs, the
implementations it compares (ours, TensorFlow's kernel, TensorFlow under XLA,
ours under XLA) and the bytes it must move at least."""

import dataclasses

import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso
from benchmarks.harness import check


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
    exact: bool = True       # ours bitwise TensorFlow's kernel (else within rounding)


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
    # Segment reductions (data [n, slice], ids [n] into [num_segments, slice]).
    Workload("S1", "GNN aggregation: unsorted_segment_sum, 200k edges x 32 into 20k nodes",
             "unsorted_segment_sum", (20_000, 32), 200_000),
    Workload("S2", "GNN aggregation: unsorted_segment_mean, 200k edges x 32 into 20k nodes",
             "unsorted_segment_mean", (20_000, 32), 200_000),
    Workload("S3", "GNN aggregation: unsorted_segment_max, 200k edges x 32 into 20k nodes",
             "unsorted_segment_max", (20_000, 32), 200_000),
    Workload("S4", "voxel max-pooling: unsorted_segment_max, 1M points x 16 into 256k voxels",
             "unsorted_segment_max", (M // 4, 16), M),
    Workload("S5", "embedding bags: sparse_segment_mean, 64k bags of 8 ids from [1M,64]",
             "sparse_segment_mean", (M, 64), 8 * 65_536),
    # TensorFlow's sorted kernel sums long segments over 4 interleaved
    # accumulators; ours in index order (docs/segments.md).
    Workload("S6", "sorted ids: segment_sum, 200k edges x 32 into 20k nodes", "segment_sum",
             (20_000, 32), 200_000, exact=False),
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

    def normal(shape):  # float32 draws: a 256 MiB sweep size needs no float64 copy
        return tf.cast(tf.constant(rng.standard_normal(shape, dtype=np.float32)), w.dtype)

    if w.op.startswith("sparse_segment"):  # bags of 8 rows of the table
        bags = w.n // 8
        ids = tf.constant(np.repeat(np.arange(bags), 8), w.index_dtype)
        return (normal(w.shape), indices[:, 0], ids, tf.constant(bags))
    updates = normal((w.n,) + tuple(w.shape[w.depth:]))
    if w.op == "scatter_nd":
        return (indices, updates, tf.constant(w.shape, w.index_dtype))
    if w.op.startswith("segment"):
        return (updates, tf.sort(indices[:, 0]))
    if is_segment(w):
        return (updates, indices[:, 0], tf.constant(slots))
    tensor = normal(w.shape)
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


def is_segment(w):
    return "segment" in w.op


def tf_function(op):
    """TensorFlow's function of the name: tf.<op>, tf.math.<op> for the
    segment family, tf.sparse.segment_* for sparse_segment_*."""
    if op.startswith("sparse_"):
        return getattr(tf.sparse, op[len("sparse_"):])
    return getattr(tf, op, None) or getattr(tf.math, op)


def xla_peer(w):
    """What stock XLA runs for `w`: TensorFlow's function, or where XLA has
    no kernel for it (segment_*, sparse_segment_*) the same reduction written
    as XLA compiles it, with the output size known."""
    if w.op == "segment_sum":
        return lambda data, ids: tf.math.unsorted_segment_sum(data, ids, w.shape[0])
    if w.op == "sparse_segment_mean":
        return lambda table, idx, ids, n: tf.math.unsorted_segment_mean(tf.gather(table, idx), ids, n)
    return tf_function(w.op)


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
    if w.op.startswith("sparse_segment"):  # the ids, the bags' rows, the output
        table, indices, ids, bags = args
        return size(indices) + size(ids) + (w.n + int(bags)) * row
    if is_segment(w):
        data, ids = args[:2]
        return size(ids) + size(data) + int(np.prod(w.shape)) * data.dtype.size
    tensor, indices, updates = args
    return 2 * size(tensor) + size(indices) + size(updates)


def output_bytes(w, args):
    """Bytes of the output the op allocates (a fresh tensor, when the input
    buffer is not forwarded); none for in-place variable updates."""
    if w.kind in ("variable", "sgd", "loop"):
        return 0
    if w.op == "gather_nd":
        params, _ = args
        return w.n * params.dtype.size * int(np.prod(w.shape[w.depth:]))
    if w.op.startswith("sparse_segment"):
        return int(args[3]) * tf.as_dtype(w.dtype).size * int(np.prod(w.shape[1:]))
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
    ours, theirs = getattr(tso, w.op), tf_function(w.op)
    if w.eager_tiny:
        return {"ours": ours, "tf": theirs}
    impls = {
        "ours": tf.function(positional(ours)),
        "tf": tf.function(positional(theirs)),
        "xla": tf.function(positional(xla_peer(w)), jit_compile=True),
    }
    if tso.xla_uses_our_kernels() and not w.op.startswith(("segment", "sparse_segment")):
        impls["ours xla"] = tf.function(positional(static_shape(w, ours)), jit_compile=True)
    return impls


def static_shape(w, op):
    """`op`, for scatter_nd with the workload's shape as a constant: XLA needs
    the shape when compiling, which TensorFlow's op gets by making its
    argument a constant of the compiled function, and ours from the graph
    (docs/xla.md)."""
    if w.op != "scatter_nd":
        return op
    shape = list(w.shape)
    return lambda indices, updates, _shape: op(indices, updates, shape)
