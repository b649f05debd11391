"""Message passing on a graph's edges, fused:

    tso.gather_reduce(params, src, dst, num_segments)             # sum over in-edges
    tso.gather_reduce(params, src, dst, n, weights=w, reduce="mean")  # also "max", "min"
    tso.edge_combine(a, b, src, dst, op="add")                    # a[src] + b[dst]; "sub", "mul", "dot"

gather_reduce(params, src, dst, n, weights, reduce) is
unsorted_segment_<reduce>(params[src] * weights, dst, n) without the
[edges] + params.shape[1:] tensor of gathered rows: the kernel groups the
edges by destination (once per graph: a node keeps its last grouping while
the edges stay the same) and reduces each output row from its edges'
source rows, in edge order, so a sum or mean is the composed form's
bit for bit (the plugin's unsorted_segment_* sums in index order too), on
any thread count. `weights` is None, one value per edge ([edges]), or one
per edge and head ([edges] + params.shape[1:1 + k]: params [nodes, heads,
features] with weights [edges, heads] scales each head's features). Max and
min are those of unsorted_segment_max_with_argmax: ties keep the first edge,
an empty segment holds the dtype's lowest (highest) value, and the gradient
goes to the edge that holds the value alone.

edge_combine(a, b, src, dst, op) is a[src] op b[dst] per edge, "dot" the
sum of the products over the last axis ([edges] + a.shape[1:-1]: an
attention score per edge and head), without the two gathered tensors.

The gradients are the same two ops on the reversed edges (src and dst
swapped): gather_reduce's with respect to params is a gather_reduce of the
incoming gradient, with respect to the weights an edge_combine "dot";
edge_combine's a gather_reduce (dot) or a segment sum (add, sub). A training
step of a GCN, GraphSAGE or GAT layer built on them makes no tensor of
[edges, features] for the aggregation.

Ids: int16, int32 or int64 vectors of one length. An edge with a negative
dst is dropped by gather_reduce (as unsorted_segment_* drops a negative id);
any other id out of range is an InvalidArgumentError naming the first bad
edge under "", "DEFAULT" and "ERROR"; "IGNORE" and "FILL" drop the edge
(edge_combine: its row is 0); "CLIP" clamps each id into its range
(gather_reduce: a negative dst is still dropped). Floating dtypes only.

The kernels run on the CPU and, where the library's GPU kernels are
registered (gpu_status()), on the GPU, with the same bits on both. Under
XLA, inside stock_ops() and on a GPU without our kernels the functions are
the composed form (a gather, a multiply and unsorted_segment_*: the same
values; TensorFlow's order on a GPU).
"""

import tensorflow as tf

from tf_scatter_ops._dispatch import convert, messages

REDUCES = ("sum", "mean", "max", "min")
EDGE_OPS = ("add", "sub", "mul", "dot")


def _edges(src, dst):
    """src and dst as tensors of one index dtype (int64 if either is)."""
    src, dst = convert.int_tensor(src, tf.int32, "src"), convert.int_tensor(dst, tf.int32, "dst")
    for name, ids in (("src", src), ("dst", dst)):
        if ids.dtype not in convert.INDEX_SET:
            raise ValueError(f"{name} must be int16, int32 or int64, got {ids.dtype.name}")
    if src.dtype != dst.dtype:
        src, dst = tf.cast(src, tf.int64), tf.cast(dst, tf.int64)
    return src, dst


@convert.public
def gather_reduce(params, src, dst, num_segments, weights=None, reduce="sum", name=None,
                  bad_indices_policy=""):
    """Reduces each destination's in-edges' source rows, without the edge tensor.

    `unsorted_segment_<reduce>(tf.gather(params, src) * weights, dst,
    num_segments)` in one pass, in the same order (sum and mean: bitwise
    equal to the plugin's composed form).

    Args:
        params: The node rows, [nodes, ...], a floating dtype.
        src: int16, int32 or int64 [edges]: the row of params each edge reads.
        dst: [edges], src's length: the output row each edge reduces into;
            negative: the edge is dropped.
        num_segments: The output's rows, an int32 or int64 scalar.
        weights: None, or params' dtype of shape [edges] +
            params.shape[1:1 + k] (k >= 0): each edge's row is multiplied by
            its weight (per head: weights [edges, heads] with params
            [nodes, heads, features]) before it is reduced.
        reduce: "sum", "mean" (the sum over the number of edges kept, 0 for
            none), "max" or "min" (an empty segment holds the dtype's lowest
            or highest value; the gradient goes to the edge that holds each
            value).
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For src outside [0, nodes) and dst >=
            num_segments: "", "DEFAULT", "ERROR" raise InvalidArgumentError
            naming the first bad edge; "IGNORE" and "FILL" drop the edge;
            "CLIP" clamps the ids into range.

    Returns:
        A tensor of shape [num_segments] + params.shape[1:].

    Raises:
        InvalidArgumentError: An id out of range (default policy), shapes
            that do not fit together, a negative num_segments.
        ValueError: A dtype the op does not take, an unknown `reduce`.

    Example:
        >>> x = tf.constant([[1.0], [2.0], [4.0]])
        >>> tso.gather_reduce(x, [0, 1, 2, 2], [1, 1, 0, 1], 2).numpy().tolist()
        [[4.0], [7.0]]
    """
    if reduce not in REDUCES:
        raise ValueError(f"reduce must be one of {', '.join(map(repr, REDUCES))}, got {reduce!r}")
    policy = convert.check_policy(bad_indices_policy)
    with convert.scope(name or "gather_reduce"):
        params = convert.tensor(params, name="params")
        convert.check_dtype("gather_reduce", params.dtype)
        src, dst = _edges(src, dst)
        num_segments = convert.int_tensor(num_segments, tf.int32, "num_segments")
        if num_segments.dtype not in (tf.int32, tf.int64):
            raise ValueError(f"num_segments must be int32 or int64, got {num_segments.dtype.name}")
        if weights is not None:
            weights = convert.tensor(weights, dtype=params.dtype, name="weights")
        if policy == "CLIP":
            src = messages.clip(src, messages.rows(params))
            dst = tf.minimum(dst, tf.cast(num_segments, dst.dtype) - 1)
        run = (messages.gather_reduce_op if messages.ours_here()
               else messages.composed_gather_reduce)
        return run(params, src, dst, num_segments, weights, reduce,
                   messages.KERNEL_POLICY[policy])[0]


@convert.public
def edge_combine(a, b, src, dst, op="add", name=None, bad_indices_policy=""):
    """a[src] op b[dst] per edge, without the gathered tensors.

    Args:
        a: The source side's rows, [rows_a, ...], a floating dtype.
        b: The destination side's rows, [rows_b] + a.shape[1:], a's dtype.
        src: int16, int32 or int64 [edges]: the row of a each edge reads.
        dst: [edges]: the row of b each edge reads.
        op: "add", "sub", "mul" (element-wise: [edges] + a.shape[1:]) or
            "dot" (the sum of the products over the last axis, in order:
            [edges] + a.shape[1:-1]).
        name: A name scope for the ops (graphs only).
        bad_indices_policy: For ids out of range: "", "DEFAULT", "ERROR"
            raise InvalidArgumentError naming the first bad edge; "IGNORE"
            and "FILL" give the edge a row of zeros; "CLIP" clamps the ids.

    Returns:
        A tensor of a's dtype, one row per edge.

    Raises:
        InvalidArgumentError: An id out of range (default policy), shapes
            that do not fit together.
        ValueError: A dtype the op does not take, an unknown `op`.

    Example:
        >>> q = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        >>> tso.edge_combine(q, q, [0, 1], [1, 1], op="dot").numpy().tolist()
        [11.0, 25.0]
    """
    if op not in EDGE_OPS:
        raise ValueError(f"op must be one of {', '.join(map(repr, EDGE_OPS))}, got {op!r}")
    policy = convert.check_policy(bad_indices_policy)
    with convert.scope(name or "edge_combine"):
        a = convert.tensor(a, name="a")
        convert.check_dtype("edge_combine", a.dtype)
        b = convert.tensor(b, dtype=a.dtype, name="b")
        src, dst = _edges(src, dst)
        if policy == "CLIP":
            src, dst = messages.clip(src, messages.rows(a)), messages.clip(dst, messages.rows(b))
        run = messages.edge_combine_op if messages.ours_here() else messages.composed_edge_combine
        return run(a, b, src, dst, op, messages.KERNEL_POLICY[policy])
