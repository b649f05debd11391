"""The message-passing ops (gather_reduce, edge_combine) below their public
functions: our op, their composed form (TensorFlow's ops through the routed
gather and segment ops: under XLA, in stock_ops(), in exports), and the
trace-time fusion of a segment sum of gathered rows into gather_reduce.

The fusion: in a graph being traced, unsorted_segment_sum(data, ids, n)
whose `data` is a row gather of params (`tf.gather` / `gather_nd` by one
index column, or TensorFlow's GatherV2 along axis 0), or such a gather
times a per-edge weight broadcast over the features (`[edges, heads..., 1,
...]`), that nothing else has read, becomes
gather_reduce(params, src, ids, n, weights): no [edges, features] tensor in
the forward pass. The sums are the same (edge order). Its gradient keeps
TensorFlow's bits: params' is gather_reduce's on the reversed edges where
params are computed in the function and their other readers' gradients
are dense (_params_alone), else TensorFlow's own IndexedSlices (which
TensorFlow sums with the other gradients in its order; a variable's rows,
an input or a captured tensor keep the sparse gradient an optimizer may
need); the weights' is TensorFlow's Mul gradient (the products reduced
over the features). A gather whose output gains another reader after the
sum keeps its own gradient, which TensorFlow then adds to the fused one as
a second sparse gradient (the same values, summed in another order).
"""

import tensorflow as tf

from tf_scatter_ops._dispatch import backends, context, ours
from tf_scatter_ops._dispatch.routing import OURS, route

KERNEL_POLICY = {"": "", "DEFAULT": "DEFAULT", "ERROR": "ERROR", "IGNORE": "IGNORE",
                 "FILL": "IGNORE", "CLIP": "IGNORE"}


def rows(x):
    return tf.shape(x, out_type=tf.int64)[0]


def clip(ids, n):
    return tf.clip_by_value(ids, tf.zeros([], ids.dtype), tf.cast(n, ids.dtype) - 1)


def in_range(ids, n):
    return (ids >= 0) & (tf.cast(ids, tf.int64) < tf.cast(n, tf.int64))


def to_rank(x, rank):
    """x [edges, ...k] as [edges, ...k, 1, ...] of `rank` dims."""
    extra = rank - tf.rank(x)
    return tf.reshape(x, tf.concat([tf.shape(x), tf.ones([extra], tf.int32)], 0))


def ours_here():
    """Our kernels: outside XLA and stock_ops(), on the CPU or on a GPU that
    runs our GPU kernels (XLA, and a GPU without them, run the composed
    form: ours would be placed on the CPU, away from the GPU's tensors)."""
    return (route("gather_reduce") == OURS and not context.in_xla_context()
            and (not context.has_gpu() or context.gpu_kernels_registered()))


def gather_reduce_op(params, src, dst, num_segments, weights, reduce, policy):
    """Our op: (the reduction, the positions: max / min only)."""
    return ours.library_op("GatherReduce")(
        params, src, dst, num_segments,
        tf.zeros([0], params.dtype) if weights is None else weights,
        reduce=reduce, weighted=weights is not None, bad_indices_policy=policy)


def edge_combine_op(a, b, src, dst, op, policy):
    return ours.library_op("EdgeCombine")(a, b, src, dst, op=op, bad_indices_policy=policy)


def composed_gather_reduce(params, src, dst, num_segments, weights, reduce, policy):
    """gather_reduce of TensorFlow's ops (through the routed gather and
    segment ops): a gather, a multiply, unsorted_segment_*; with the op's
    positions output (max / min; else an empty vector). The kernel's
    policies (IGNORE drops an edge with a bad src)."""
    if policy == "IGNORE":  # an edge whose source is out of range is dropped
        dst = tf.where(in_range(src, rows(params)), dst, -tf.ones_like(dst))
        src = clip(src, tf.maximum(rows(params), 1))
    gathered = backends.run("gather_nd", policy, params=params, indices=src[:, None])
    if weights is not None:
        gathered = gathered * to_rank(weights, tf.rank(params))
    none = tf.zeros([0], tf.int64)

    def segment(op, data):
        return backends.run(op, policy, data=data, segment_ids=dst, num_segments=num_segments)
    if reduce in ("max", "min"):
        return segment(f"unsorted_segment_{reduce}_with_arg{reduce}", gathered)
    total = segment("unsorted_segment_sum", gathered)
    if reduce == "sum":
        return total, none
    # the mean: TensorFlow's formula (unsorted_segment_mean), the sum over
    # max(count, 1), the count summed in the data's dtype
    count = segment("unsorted_segment_sum", tf.ones(tf.shape(dst), gathered.dtype))
    return total / to_rank(tf.maximum(count, 1), tf.rank(total)), none


def composed_edge_combine(a, b, src, dst, op, policy):
    """edge_combine of TensorFlow's ops: two gathers and the op (the
    kernel's policies)."""
    x = backends.run("gather_nd", policy, params=a, indices=src[:, None])
    y = backends.run("gather_nd", policy, params=b, indices=dst[:, None])
    if op == "dot":
        out = tf.reduce_sum(x * y, axis=-1)
    else:
        out = {"add": tf.add, "sub": tf.subtract, "mul": tf.multiply}[op](x, y)
    if policy == "IGNORE":  # a bad edge's row is 0 whatever its other side reads
        keep = in_range(src, rows(a)) & in_range(dst, rows(b))
        out = tf.where(to_rank(keep, tf.rank(out)), out, tf.zeros_like(out))
    return out


# ------------------------------------------------------------------ fusion

# What a gather's params can come from where its sparse gradient must stay
# sparse: a variable's value (directly, through an identity or a cast, as a
# Keras mixed-precision variable's), a function's input or a constant, and
# the ops that hand a gradient on as it is (control flow, function calls, a
# concat, whose gradient splits an IndexedSlices per input).
SPARSE_SOURCES = frozenset({
    "Placeholder", "_Arg", "Const", "ReadVariableOp", "ResourceGather",
    "TfScatter>ResourceGatherNd", "ConcatV2", "IdentityN", "Enter", "Switch", "Merge", "Exit",
    "While", "StatelessWhile", "If", "StatelessIf", "Case", "StatelessCase",
    "PartitionedCall", "StatefulPartitionedCall"})
_LOOK_THROUGH = frozenset({"Identity", "Cast"})
_DEFAULT_POLICIES = (b"", b"DEFAULT", b"ERROR")
_SHAPE_READERS = frozenset({"Shape", "ShapeN", "Size", "Rank"})  # no gradient through them


def computed(params):
    """Whether params are computed in the function from other values (a
    layer's output, node states), not a SPARSE_SOURCES value, so that a
    dense gradient for them is what TensorFlow's producer gradient would
    make of a sparse one."""
    producer = params.op
    while producer.type in _LOOK_THROUGH:
        producer = producer.inputs[0].op
    return producer.type not in SPARSE_SOURCES


def _row_gather(t):
    """(params, src: [edges]) if tensor `t` is a row gather by one index
    column under the default policy, else None."""
    op = t.op
    if op.type == "TfScatter>GatherNd":
        params, indices = op.inputs
        if (op.get_attr("bad_indices_policy") not in _DEFAULT_POLICIES
                or indices.shape.rank != 2 or indices.shape[1] != 1):
            return None
        return params, tf.reshape(indices, [-1])
    if op.type == "GatherV2":
        params, indices, axis = op.inputs
        if (op.get_attr("batch_dims") != 0 or tf.get_static_value(axis) != 0
                or indices.shape.rank != 1):
            return None
        return params, indices
    return None


def _read_only_by(t, op):
    """Nothing but `op` (None: nothing) and shape readers reads tensor `t`."""
    return all(c is op or c.type in _SHAPE_READERS for c in t.consumers())


def _edge_weights(w, gathered, params):
    """w as gather_reduce's weights ([edges] + params.shape[1:1 + k]) if it
    is a per-edge weight broadcast over the gathered rows' features
    ([edges, h1..hk, 1, ...]), else None."""
    rank = gathered.shape.rank
    if rank is None or rank < 1 or w.shape.rank != rank or w.dtype != gathered.dtype:
        return None
    dims, inner = w.shape.as_list()[1:], params.shape.as_list()[1:]
    k = 0
    while k < len(dims) and dims[k] is not None and dims[k] != 1:
        if inner[k] != dims[k]:
            return None
        k += 1
    if any(d != 1 for d in dims[k:]):
        return None
    if w.shape[0] is None or w.shape[0] != gathered.shape[0]:
        # (unknown, or 1: the multiply's broadcast over the edges, made explicit)
        w = tf.broadcast_to(w, tf.concat([tf.shape(gathered)[:1], tf.shape(w)[1:]], 0))
    return tf.reshape(w, tf.concat([tf.shape(w)[:1], tf.constant(dims[:k], tf.int32)], 0))


def fused_segment_sum(data, segment_ids, num_segments, policy):
    """gather_reduce for unsorted_segment_sum(data, segment_ids,
    num_segments) where `data` is gathered rows of computed params, read by
    nothing else (module docstring), else None."""
    if (tf.executing_eagerly() or not hasattr(data, "op") or policy not in ("", "DEFAULT", "ERROR")
            or segment_ids.shape.rank != 1 or num_segments.shape.rank != 0
            or data.dtype not in (tf.float16, tf.bfloat16, tf.float32, tf.float64)
            or not _read_only_by(data, None) or not ours_here()):
        return None
    gathered, found, weights, mul = data, _row_gather(data), None, None
    if found is None and data.op.type == "Mul":
        mul = data.op
        for g, w in ((mul.inputs[0], mul.inputs[1]), (mul.inputs[1], mul.inputs[0])):
            found = _row_gather(g) if _read_only_by(g, mul) else None
            weights = None if found is None else _edge_weights(w, g, found[0])
            if weights is not None:
                gathered = g
                break
            found = None
    if found is None or not _read_only_by(found[0], gathered.op):
        # (params read before: TensorFlow sums their sparse gradients in its order)
        return None
    params, src = found
    if src.dtype != segment_ids.dtype:
        src, segment_ids = tf.cast(src, tf.int64), tf.cast(segment_ids, tf.int64)
    return _fused(params, src, segment_ids, num_segments, weights, gathered.op, mul,
                  sparse=not computed(params))


def _fused(params, src, dst, num_segments, weights, gather_op, mul_op, sparse):
    """gather_reduce's sum, with the gradient that keeps TensorFlow's bits
    (`sparse`: params' gradient is always TensorFlow's IndexedSlices, as for
    a variable's rows or an input, which may feed an optimizer's sparse
    update)."""
    made = []  # the ops of the fused call: they take params' gradient

    def forward(params, *weights):
        w = weights[0] if weights else None
        out, _ = gather_reduce_op(params, src, dst, num_segments, w, "sum", "")

        def grad(g):
            kept = tf.where(dst >= 0, dst, -tf.ones_like(dst))
            if not sparse and _params_alone(params, gather_op, mul_op, made):
                d_params = gather_reduce_op(g, kept, src, rows(params), w, "sum", "IGNORE")[0]
            else:  # TensorFlow's sparse gradient, summed with the others in its order
                rows_g = backends.run("gather_nd", "IGNORE", params=g, indices=kept[:, None])
                values = rows_g if w is None else rows_g * to_rank(w, tf.rank(rows_g))
                d_params = tf.IndexedSlices(values, src, tf.shape(params, out_type=tf.int64))
            if w is None:
                return d_params
            # the weights': TensorFlow's Mul gradient, the products of the
            # gathered rows and their gradient reduced over the features
            rows_g = backends.run("gather_nd", "IGNORE", params=g, indices=kept[:, None])
            x = backends.run("gather_nd", "", params=params, indices=src[:, None])
            features = list(range(w.shape.rank, x.shape.rank))
            d_w = tf.reduce_sum(x * rows_g, features) if features else x * rows_g
            return d_params, tf.reshape(d_w, tf.shape(w))
        made.append(out.op)
        return out, grad

    out = tf.custom_gradient(forward)(params, *([] if weights is None else [weights]))
    made.append(out.op)
    return out


# Readers whose gradient with respect to their inputs is a dense tensor
# whatever gradient they receive (not Add, Sub, Neg or BiasAdd: they hand an
# IndexedSlices on). Where params' other readers are all of these,
# TensorFlow makes params' gradient with add_n of dense tensors, converting
# a gather's IndexedSlices first with a segment sum in index order: the
# sums gather_reduce makes on the reversed edges, in the same place of the
# list.
_DENSE_GRADIENT_READERS = frozenset({
    "MatMul", "BatchMatMulV2", "BatchMatMulV3", "Einsum", "Mul", "RealDiv", "Square", "Relu",
    "Elu", "Selu", "LeakyRelu", "Tanh", "Sigmoid", "Sum", "Mean", "Reshape"})


def _params_alone(params, gather_op, mul_op, made):
    """Whether params' gradient can be gather_reduce's dense one with
    TensorFlow's bits: no reader of params but the fused call's ops, shape
    readers, the replaced gather (while its rows feed nothing but the
    replaced multiply) and readers with a dense gradient (read after the
    fused call: fused_segment_sum refuses params read before it)."""
    replaced_dead = (_read_only_by(gather_op.outputs[0], mul_op)
                     and (mul_op is None or _read_only_by(mul_op.outputs[0], None)))
    for c in params.consumers():
        if (c in made or c.type in _SHAPE_READERS or c.type in _DENSE_GRADIENT_READERS
                or (c is gather_op and replaced_dead)):
            continue
        return False
    return True
