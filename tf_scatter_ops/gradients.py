"""Gradients of the TfScatter> ops, built from our own ops so that they are
differentiable again (second order) and honour the forward op's
bad_indices_policy (rows dropped by IGNORE get zero gradient).

TensorFlow's formulas, except for `update` with duplicate indices: only the
update that won (the last one in index order) gets gradient.
"""

import tensorflow as tf

from tf_scatter_ops import ops, segments
from tf_scatter_ops._base import table
from tf_scatter_ops._dispatch import backends, composed, context, convert, messages, segment_ids


def _policy(op):
    return convert.check_policy(op.get_attr("bad_indices_policy"))


def _gather(grad, indices, policy):
    return backends.run("gather_nd", policy, params=grad, indices=indices)


def _scatter_nd_grad(op, grad):
    return [None, _gather(grad, op.inputs[0], _policy(op)), None]


def _add_grad(op, grad):
    return [grad, None, _gather(grad, op.inputs[1], _policy(op))]


def _sub_grad(op, grad):
    return [grad, None, -_gather(grad, op.inputs[1], _policy(op))]


def winning_rows(tensor_shape, indices, policy):
    """Bool [indices.shape[:-1]]: True for the row whose update survives at its
    destination (the last one in index order), False for overwritten
    duplicates and rows dropped by IGNORE."""
    depth = tf.shape(indices)[-1]
    outer = tf.shape(indices)[:-1]
    ids = tf.reshape(tf.range(1, tf.reduce_prod(outer) + 1, dtype=tf.int64), outer)
    slots = tf.zeros(tensor_shape[:depth], tf.int64)
    winners = ops.tensor_scatter_nd_update(slots, indices, ids, bad_indices_policy=policy)
    return tf.equal(_gather(winners, indices, policy), ids)


def _broadcast_rows(mask, updates):
    """Reshapes a per-row mask so it broadcasts against `updates`."""
    slice_rank = tf.rank(updates) - tf.rank(mask)
    shape = tf.concat([tf.shape(mask), tf.ones([slice_rank], tf.int32)], 0)
    return tf.reshape(mask, shape)


def _update_grad(op, grad):
    tensor, indices, updates = op.inputs
    policy = _policy(op)
    tensor_grad = ops.tensor_scatter_nd_update(
        grad, indices, tf.zeros_like(updates), bad_indices_policy=policy)
    wins = _broadcast_rows(winning_rows(tf.shape(tensor), indices, policy), updates)
    gathered = _gather(grad, indices, policy)
    return [tensor_grad, None, tf.where(wins, gathered, tf.zeros_like(gathered))]


def _min_max_grad(op, grad):
    """Ties (the tensor's value and any updates equal to the result) share
    the gradient equally, as in TensorFlow, PyTorch and JAX."""
    tensor, indices, updates = op.inputs
    out = op.outputs[0]
    policy = _policy(op)
    tensor_ind = tf.cast(tf.equal(tensor, out), grad.dtype)
    update_ind = tf.cast(tf.equal(updates, _gather(out, indices, policy)), grad.dtype)
    shape = tf.shape(tensor, out_type=tf.int64)
    indicators = tensor_ind + ops.scatter_nd(
        tf.cast(indices, tf.int64), update_ind, shape, policy)
    share = grad / indicators
    return [share * tensor_ind, None, _gather(share, indices, policy) * update_ind]


def _mul_grad(op, grad):
    """out = tensor * P, P the product of a slot's updates. The tensor gets
    grad * P; an update grad * tensor * the product of its slot's other
    updates, exact with zeros (as segment_prod's rule: with one zero update
    in a slot only that one gets gradient, with two none)."""
    tensor, indices, updates = op.inputs
    policy = _policy(op)
    ones = tf.ones_like(tensor)
    product = ops.tensor_scatter_nd_mul(ones, indices, updates, bad_indices_policy=policy)
    is_zero = tf.equal(updates, tf.zeros_like(updates))
    zeros = ops.tensor_scatter_nd_add(tf.zeros_like(tensor, tf.int32), indices,
                                      tf.cast(is_zero, tf.int32), bad_indices_policy=policy)
    non_zero = ops.tensor_scatter_nd_mul(ones, indices, tf.where(is_zero, tf.ones_like(updates),
                                                                 updates),
                                         bad_indices_policy=policy)
    slot_zeros = _gather(zeros, indices, policy)
    slot_non_zero = _gather(non_zero, indices, policy)
    safe = tf.where(is_zero, tf.ones_like(updates), updates)
    others = tf.where(is_zero, tf.where(tf.equal(slot_zeros, 1), slot_non_zero,
                                        tf.zeros_like(updates)),
                      tf.where(tf.equal(slot_zeros, 0), slot_non_zero / safe,
                               tf.zeros_like(updates)))
    return [grad * product, None, _gather(grad * tensor, indices, policy) * others]


def _div_grad(op, grad):
    """out = tensor / P: the tensor gets grad / P, an update -grad * out / u."""
    tensor, indices, updates = op.inputs
    policy = _policy(op)
    product = ops.tensor_scatter_nd_mul(tf.ones_like(tensor), indices, updates,
                                        bad_indices_policy=policy)
    return [grad / product, None, -_gather(grad * op.outputs[0], indices, policy) / updates]


def _gather_nd_params_grad(grad, indices, shape, policy):
    """The gradient of a gather_nd from params of `shape` (int64).

    Row lookups (indices of depth 1, of any rank: one row's `[1]`, `[N, 1]`,
    a bag's `[B, L, 1]`) get a tf.IndexedSlices of the flattened ids and their rows,
    as TensorFlow's tf.gather does, so optimizers update only the looked-up
    rows; rows dropped by IGNORE are left out of it (an out-of-bound index
    must never reach an optimizer's scatter). Anything else is dense: a
    scatter_nd of the gradient, which drops the same rows.
    """
    if indices.shape.rank is not None and indices.shape.rank >= 1 and indices.shape[-1] == 1:
        rows = tf.reshape(indices, [-1])
        if rows.dtype == tf.int16:
            rows = tf.cast(rows, tf.int32)
        grad = tf.reshape(grad, tf.concat([[-1], tf.shape(grad)[indices.shape.rank - 1:]], 0))
        if policy == "IGNORE":
            keep = tf.logical_and(rows >= 0, rows < tf.cast(shape[0], rows.dtype))
            rows, grad = tf.boolean_mask(rows, keep), tf.boolean_mask(grad, keep)
        return tf.IndexedSlices(grad, rows, shape)
    return ops.scatter_nd(tf.cast(indices, tf.int64), grad, shape, policy)


def _densified_alone(params):
    """True for params that a function computes from other values (a layer's
    output, node states) and that only this gather reads: their producer's
    gradient densifies the IndexedSlices with TensorFlow's serial
    UnsortedSegmentSum. With other readers it stays sparse: TensorFlow
    concatenates the sparse gradients of several gathers and sums them in
    one pass, whose order a dense gradient per gather would change. Unknown
    when executing eagerly (False)."""
    return len(getattr(params, "consumers", lambda: ())()) == 1 and messages.computed(params)


def _gather_nd_grad(op, grad):
    """A row gather of computed params that it alone reads
    (_densified_alone) gets its dense gradient from our segment sum at once
    (the same sums, in index order, as the densification it replaces); any
    other row gather an IndexedSlices."""
    params, indices = op.inputs
    shape = tf.shape(params, out_type=tf.int64)
    dx = _gather_nd_params_grad(grad, indices, shape, _policy(op))
    if isinstance(dx, tf.IndexedSlices) and not tf.executing_eagerly() and _densified_alone(params):
        dx = segments.unsorted_segment_sum(dx.values, dx.indices, shape[0],
                                           bad_indices_policy="IGNORE")
    return [dx, None]


def _resource_gather_nd_grad(op, grad):
    handle, indices = op.inputs
    shape = tf.raw_ops.VariableShape(input=handle, out_type=tf.int64)
    return [_gather_nd_params_grad(grad, indices, shape, _policy(op)), None]


def _gather_drop_negatives(params, ids):
    """params' rows at the segment ids, zeros for negative ids (TensorFlow's
    rule for the segment gradients), with the mask of the kept rows shaped
    to broadcast against them. Ids past the end (dropped by IGNORE) give
    zeros too."""
    clipped = tf.maximum(ids, tf.zeros_like(ids))
    gathered = ops.gather_nd(params, clipped[..., tf.newaxis], bad_indices_policy="IGNORE")
    keep = _broadcast_rows(ids >= 0, gathered)
    return tf.where(keep, gathered, tf.zeros_like(gathered)), keep


def _segment_inputs(op):
    """data, segment_ids, num_segments and the Nones for the other inputs of
    a segment op (segment_*'s output length stands for num_segments)."""
    data, ids = op.inputs[0], op.inputs[1]
    num_segments = op.inputs[2] if len(op.inputs) > 2 else tf.shape(op.outputs[0])[0]
    return data, ids, num_segments, [None] * (len(op.inputs) - 1)


def _segment_sum_grad(op, grad):
    return [_gather_drop_negatives(grad, op.inputs[1])[0]] + _segment_inputs(op)[3]


def _segment_mean_grad(op, grad):
    """segment_mean: each row gets its segment's gradient over its row count."""
    data, ids, num_segments, rest = _segment_inputs(op)
    count = segment_ids.counts(data, ids, num_segments, _policy(op))
    return [_gather_drop_negatives(grad / count, ids)[0]] + rest


def _sparse_segment_grad(op, grad):
    """sparse_segment_{sum,mean,sqrt_n}: each gathered row gets its segment's
    gradient (over the row count for mean, its square root for sqrt_n),
    summed into data's rows at `indices` (an IndexedSlices if the op asked
    for sparse_gradient). Rows the forward op dropped (IGNORE) get none."""
    data, indices, ids, _ = op.inputs
    rows = tf.shape(data, out_type=tf.int64)[0]  # (shapes come in int32 or int64 only)
    nseg = tf.shape(op.outputs[0], out_type=tf.int64)[0]
    wide_indices, wide_ids = tf.cast(indices, tf.int64), tf.cast(ids, tf.int64)
    valid = (wide_indices >= 0) & (wide_indices < rows) & (wide_ids >= 0) & (wide_ids < nseg)
    reducer = table.BY_PY[table.snake(op.type.split(">")[1])].reducer
    if reducer != "AddOp":
        count = segment_ids.counts(data, ids, nseg, "IGNORE", rows=tf.cast(valid, grad.dtype))
        grad = grad / (count if reducer == "MeanOp" else tf.sqrt(count))
    values, _ = _gather_drop_negatives(grad, tf.where(valid, ids, -tf.ones_like(ids)))
    if op.get_attr("sparse_gradient"):
        return [_distinct_rows(values, wide_indices, valid, tf.shape(data, out_type=tf.int64)),
                None, None, None]
    return [segments.unsorted_segment_sum(values, indices, rows, bad_indices_policy="IGNORE"),
            None, None, None]


def _distinct_rows(values, indices, valid, dense_shape):
    """An IndexedSlices of `values` (one row per index, the invalid ones
    zero) with each valid index once, in increasing order, its rows summed
    in index order: TensorFlow's sparse gradient of its sparse segment ops
    (and so of embedding_lookup_sparse). Under XLA, whose shapes are static,
    every index keeps its row (invalid ones as index 0, a zero row)."""
    if context.in_xla_context():
        return tf.IndexedSlices(values, tf.where(valid, indices, tf.zeros_like(indices)),
                                dense_shape)
    kept = tf.reshape(tf.where(valid), [-1])  # the positions of the valid rows
    kept_indices = ops.gather(indices, kept)
    distinct, position = tf.unique(kept_indices, out_idx=tf.int64)
    order = tf.argsort(distinct, stable=True)
    rank = tf.math.invert_permutation(order)  # a distinct index's place in sorted order
    summed = segments.unsorted_segment_sum(ops.gather(values, kept), ops.gather(rank, position),
                                           tf.size(distinct, out_type=tf.int64))
    return tf.IndexedSlices(summed, ops.gather(distinct, order), dense_shape)


def _segment_min_max_grad(op, grad):
    """TensorFlow's rule: the rows equal to their segment's result share its
    gradient equally."""
    data, ids, num_segments, rest = _segment_inputs(op)
    policy = _policy(op)
    gathered, keep = _gather_drop_negatives(op.outputs[0], ids)
    selected = tf.logical_and(tf.equal(data, gathered), keep)
    count = segments.unsorted_segment_sum(tf.cast(selected, grad.dtype), ids, num_segments,
                                          bad_indices_policy=policy)
    share, _ = _gather_drop_negatives(grad / count, ids)
    return [tf.where(selected, share, tf.zeros_like(share))] + rest


def _segment_prod_grad(op, grad):
    """TensorFlow's rule: a segment without zeros divides its product by the
    row; with one zero the zero row gets the product of the others and the
    rest nothing; with two or more zeros nothing."""
    data, ids, num_segments, rest = _segment_inputs(op)
    policy = _policy(op)
    is_zero = tf.equal(data, tf.zeros_like(data))
    zeros = segments.unsorted_segment_sum(tf.cast(is_zero, tf.int32), ids, num_segments,
                                          bad_indices_policy=policy)
    grad = tf.where(zeros > 1, tf.zeros_like(grad), grad)
    non_zero = tf.where(is_zero, tf.ones_like(data), data)
    non_zero_prod = segments.unsorted_segment_prod(non_zero, ids, num_segments,
                                                   bad_indices_policy=policy)
    clipped = tf.maximum(ids, tf.zeros_like(ids))[..., tf.newaxis]
    prod = ops.gather_nd(op.outputs[0], clipped, bad_indices_policy="IGNORE")
    others = ops.gather_nd(non_zero_prod, clipped, bad_indices_policy="IGNORE")
    partial = tf.where(is_zero, others, prod / data)
    return [_gather_drop_negatives(grad, ids)[0] * partial] + rest


def _groupwise_grad(op, grad):
    """The fused gradient op of the row (<op>Grad)."""
    data, ids, num_segments = op.inputs
    ddof, policy = op.get_attr("ddof"), _policy(op)
    forward = op.type.split(">")[1]
    dx = backends.run_groupwise_grad(table.snake(forward), data, op.outputs[0], grad, ids,
                                     num_segments, ddof, policy)
    return [dx, None, None]


def _groupwise_second_order(op, grad):
    """The gradient of a fused gradient op (second order): that of the same
    gradient composed of TensorFlow's ops, with respect to the data and the
    incoming gradient (the output's dependence on the data is in the
    recomputation)."""
    data, _, incoming, ids, num_segments = op.inputs
    forward = table.snake(op.type.split(">")[1][:-len("Grad")])
    with tf.GradientTape() as tape:
        tape.watch([data, incoming])
        dx = composed.groupwise_grad(forward, data, incoming, ids, num_segments,
                                     op.get_attr("ddof"), _policy(op),
                                     backends.route(forward) == backends.STOCK)
    d_data, d_incoming = tape.gradient(dx, [data, incoming], output_gradients=grad)
    return [d_data, None, d_incoming, None, None]


def _arg_grad(op, grad, unused_positions_grad):
    """*_with_argmax / _argmin: the value's gradient to the update row that
    holds it alone (composed.value_gradient), the tensor's where its value
    stayed; the positions (integers) have none."""
    if grad is None:
        return [None] * 3
    if table.BY_OP[op.type[len("TfScatter>"):]].kind == "ArgSegment":  # data, ids, num
        data, ids = op.inputs[0], op.inputs[1]
        d_data, _ = composed.value_gradient(grad, op.outputs[1], data,
                                            tf.shape(ids, tf.int64), segment=True)
        return [d_data, None, None]
    indices, updates = op.inputs[1], op.inputs[2]  # tensor, indices, updates
    d_updates, d_tensor = composed.value_gradient(
        grad, op.outputs[1], updates, tf.shape(indices, tf.int64)[:-1], segment=False)
    return [d_tensor, None, d_updates]


def _edge_mask(src, dst, src_rows, dst_rows):
    """The edges a message-passing op kept (both ids in range; the kernels
    fail on any other unless IGNORE, which drops them)."""
    return messages.in_range(src, src_rows) & messages.in_range(dst, dst_rows)


def _heads_view(x, heads):
    """x [rows, ...] as [rows, heads, -1]."""
    return tf.reshape(x, tf.stack([tf.shape(x, out_type=tf.int64)[0], heads, -1]))


def _held_grads(params, src, weights, grad, positions):
    """gather_reduce's max and min: element (v, j), held by edge
    p = positions[v, j] (-1: none), sends grad[v, j] * weights[p, head(j)]
    to params[src[p], j] and grad[v, j] * params[src[p], j] to
    weights[p, head(j)]; summed by our segment sum (in order)."""
    def take(x, at):  # x's flat elements at `at` (0 where out of range)
        return ops.gather_nd(tf.reshape(x, [-1]), at[:, None], bad_indices_policy="IGNORE")

    width = tf.reduce_prod(tf.shape(params, out_type=tf.int64)[1:])  # a row's elements
    pos = tf.reshape(positions, [-1])
    held = pos >= 0
    edge = tf.where(held, pos, tf.zeros_like(pos))
    col = tf.range(tf.size(pos, out_type=tf.int64)) % tf.maximum(width, 1)
    at = take(tf.cast(src, tf.int64), edge) * width + col  # the element of params
    g = tf.reshape(grad, [-1])
    nothing = -tf.ones_like(at)
    if weights is None:
        value = g
    else:
        heads = tf.reduce_prod(tf.shape(weights, out_type=tf.int64)[1:])
        w_at = edge * heads + col // tf.maximum(width // tf.maximum(heads, 1), 1)
        value = g * take(weights, w_at)
    d_params = segments.unsorted_segment_sum(value, tf.where(held, at, nothing),
                                             tf.size(params, out_type=tf.int64))
    d_params = tf.reshape(d_params, tf.shape(params))
    if weights is None:
        return [d_params, None, None, None, None]
    d_weights = segments.unsorted_segment_sum(g * take(params, at), tf.where(held, w_at, nothing),
                                              tf.size(weights, out_type=tf.int64))
    return [d_params, None, None, None, tf.reshape(d_weights, tf.shape(weights))]


def _gather_reduce_grad(op, grad, unused_positions_grad):
    """The same ops on the reversed edges: params' gradient is a
    gather_reduce of the incoming gradient (scaled by the weights), the
    weights' an edge_combine "dot" of it with params' rows (per head); max
    and min send each value's gradient to the edge that holds it."""
    params, src, dst, num_segments, weights = op.inputs
    reduce = op.get_attr("reduce").decode()
    weighted = op.get_attr("weighted")
    rows = messages.rows(params)
    keep = _edge_mask(src, dst, rows, num_segments)
    dst = tf.where(keep, dst, -tf.ones_like(dst))  # dropped edges get no gradient
    w = weights if weighted else None
    if reduce in ("max", "min"):
        return _held_grads(params, src, w, grad, op.outputs[1])
    if reduce == "mean":
        count = segments.unsorted_segment_sum(tf.cast(keep, grad.dtype), dst, num_segments,
                                              bad_indices_policy="IGNORE")
        grad = grad / _broadcast_rows(tf.maximum(count, 1), grad)
    d_params = messages.gather_reduce_op(grad, dst, src, rows, w, "sum", "IGNORE")[0]
    if not weighted:
        return [d_params, None, None, None, None]
    heads = tf.reduce_prod(tf.shape(weights, out_type=tf.int64)[1:])
    d_weights = messages.edge_combine_op(_heads_view(grad, heads), _heads_view(params, heads),
                                         dst, src, "dot", "IGNORE")
    return [d_params, None, None, None, tf.reshape(d_weights, tf.shape(weights))]


def _edge_combine_grad(op, grad):
    """add / sub: a segment sum of the gradient by src (by dst for b);
    mul: of the gradient times the other side's rows; dot: a gather_reduce
    of the other side's rows weighted by the gradient, on the reversed
    edges."""
    a, b, src, dst = op.inputs
    kind = op.get_attr("op").decode()
    rows_a, rows_b = messages.rows(a), messages.rows(b)
    keep = _edge_mask(src, dst, rows_a, rows_b)
    src_kept = tf.where(keep, src, -tf.ones_like(src))
    dst_kept = tf.where(keep, dst, -tf.ones_like(dst))
    if kind == "dot":
        d_a = messages.gather_reduce_op(b, dst, src_kept, rows_a, grad, "sum", "IGNORE")[0]
        d_b = messages.gather_reduce_op(a, src, dst_kept, rows_b, grad, "sum", "IGNORE")[0]
        return [d_a, d_b, None, None]
    g_a, g_b = grad, grad
    if kind == "mul":
        g_a = grad * ops.gather_nd(b, dst[:, None], bad_indices_policy="IGNORE")
        g_b = grad * ops.gather_nd(a, src[:, None], bad_indices_policy="IGNORE")
    d_a = segments.unsorted_segment_sum(g_a, src_kept, rows_a, bad_indices_policy="IGNORE")
    d_b = segments.unsorted_segment_sum(g_b, dst_kept, rows_b, bad_indices_policy="IGNORE")
    return [d_a, -d_b if kind == "sub" else d_b, None, None]


# The rules by the op table's gradient column, registered for every row.
_RULES = {
    "scatter_nd": _scatter_nd_grad,
    "add": _add_grad,
    "sub": _sub_grad,
    "update": _update_grad,
    "min_max": _min_max_grad,
    "mul": _mul_grad,
    "div": _div_grad,
    "gather_nd": _gather_nd_grad,
    "segment_sum": _segment_sum_grad,
    "segment_min_max": _segment_min_max_grad,
    "segment_prod": _segment_prod_grad,
    "segment_mean": _segment_mean_grad,
    "sparse_segment": _sparse_segment_grad,
    "groupwise": _groupwise_grad,
    "arg": _arg_grad,
    "gather_reduce": _gather_reduce_grad,
    "edge_combine": _edge_combine_grad,
}
for _row in table.OPS:
    tf.RegisterGradient("TfScatter>" + _row.op)(_RULES[_row.gradient])
    if _row.kind == "Groupwise":
        tf.RegisterGradient("TfScatter>" + _row.op + "Grad")(_groupwise_second_order)
    if _row.variable and _row.kind == "GatherNd":
        tf.RegisterGradient("TfScatter>" + _row.variable)(_resource_gather_nd_grad)
    elif _row.variable:  # in-place variable updates have no gradient, as in TensorFlow
        tf.no_gradient("TfScatter>Resource" + _row.variable)
        tf.no_gradient("TfScatter>" + _row.variable)
