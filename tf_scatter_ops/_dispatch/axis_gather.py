"""tf.gather along another axis than 0, or with batch dimensions, as one row
gather in the canonical form.

params [batch..., outer..., n, inner...] is viewed as rows of
s = prod(inner): [B * O * n, s]. The id i at indices[b, j] picks row
(b * O + o) * n + i for each o, so the output
[batch..., outer..., ids..., inner...] is the rows at the flat ids
[B, O, J]. Bad ids are resolved on the ids themselves, before they are
made flat (a bad id would otherwise pick a wrong row, not a missing one), so
each policy means what it means along axis 0, and the error names the id.

TensorFlow's GatherV2 copies one slice at a time; ours wins from slices of
MIN_SLICE elements (1.3-1.8x at 8 to 128 elements on a 2-core AMD EPYC) and
loses on narrower ones (0.8-0.9x at 1 to 4: building the flat ids costs
about what the copy does). Under XLA and inside stock_ops() TensorFlow's
gather stays (XLA fuses it), unless a policy asks for ours.
"""

import numpy as np
import tensorflow as tf

from tf_scatter_ops._dispatch import backends, bounds, context, convert

MIN_SLICE = 8


def normalized(params, indices, axis, batch_dims):
    """(axis, batch_dims) as non-negative ints where this gather can be ours
    (static axis and batch_dims, ranks known, 0 <= batch_dims <= axis <
    rank(params), batch_dims <= rank(indices), not axis 0 without batch
    dimensions, which is a row lookup); None otherwise, and TensorFlow's
    gather then runs (and raises its own errors)."""
    batch_dims = convert.static_int(batch_dims)
    if axis is None:  # TensorFlow's: the axis after the batch dimensions
        axis = batch_dims if batch_dims is not None and batch_dims >= 0 else None
    else:
        axis = convert.static_int(axis)
    p_rank = tf.TensorShape(getattr(params, "shape", None)).rank
    i_rank = tf.TensorShape(getattr(indices, "shape", None)).rank
    if None in (axis, batch_dims, p_rank, i_rank):
        return None
    axis += p_rank if axis < 0 else 0
    batch_dims += i_rank if batch_dims < 0 else 0
    if not 0 <= batch_dims <= axis < p_rank or batch_dims > i_rank or axis == 0:
        return None
    return axis, batch_dims


def ours_by_default(params, axis):
    """True where TensorFlow's gather is slower than ours: slices of at least
    MIN_SLICE elements, known when the graph is built, outside XLA and
    stock_ops()."""
    inner = tf.TensorShape(params.shape)[axis + 1:]
    if not inner.is_fully_defined() or inner.num_elements() < MIN_SLICE:
        return False
    return not (context.in_xla_context() or context.emitting_stock())


def _product(dims):
    return tf.reduce_prod(dims) if dims.shape[0] else tf.constant(1, dims.dtype)


def _check_batch(params, ids, batch_dims):
    """ValueError (shapes known) or a run-time check (InvalidArgumentError)
    that params and indices share their batch dimensions; None or the check
    to wait for."""
    p_batch, i_batch = params.shape[:batch_dims], ids.shape[:batch_dims]
    message = (f"params.shape[:batch_dims] must equal indices.shape[:batch_dims] "
               f"(batch_dims = {batch_dims})")
    if not p_batch.is_compatible_with(i_batch):
        raise ValueError(f"{message}, got {p_batch} and {i_batch}")
    if p_batch.is_fully_defined() and i_batch.is_fully_defined():
        return None
    return tf.debugging.assert_equal(tf.shape(params, out_type=tf.int64)[:batch_dims],
                                     tf.shape(ids, out_type=tf.int64)[:batch_dims],
                                     message=message)


def gather(params, ids, axis, batch_dims, policy, fill_value):
    """tf.gather(params, ids, axis, batch_dims) on our row gather, under
    `policy` ("" raises InvalidArgumentError naming the first bad id)."""
    params = convert.tensor(params, name="params")
    convert.check_dtype("gather_nd", params.dtype, "gather")
    ids = convert.indices(ids)
    shape = tf.shape(params, out_type=tf.int64)
    batch, outer, n = _product(shape[:batch_dims]), _product(shape[batch_dims:axis]), shape[axis]
    inner = shape[axis + 1:]
    id_shape = tf.shape(ids, out_type=tf.int64)
    per_batch = _product(id_shape[batch_dims:])
    checks = [_check_batch(params, ids, batch_dims)]

    dims = tf.reshape(n, [1])
    ids, kernel_policy = bounds.nd(policy, ids[..., None], shape=dims)
    ids = ids[..., 0]
    bad = bounds.bad_rows(ids[..., None], dims)
    if kernel_policy != "IGNORE" and not context.in_xla_context():
        checks.append(bounds.check_rows(ids[..., None], bad, dims, "indices"))

    rows = batch * outer * n
    static_rows = tf.TensorShape(params.shape)[:axis + 1].num_elements()
    dtype = (tf.int32 if ids.dtype != tf.int64 and static_rows is not None
             and static_rows <= np.iinfo(np.int32).max else tf.int64)
    base = (tf.reshape(tf.range(batch, dtype=dtype), [-1, 1, 1]) * tf.cast(outer, dtype)
            + tf.reshape(tf.range(outer, dtype=dtype), [1, -1, 1])) * tf.cast(n, dtype)
    flat = base + tf.reshape(tf.cast(ids, dtype), tf.stack([batch, 1, per_batch]))
    # a bad id's row: none (-1), which the policy then treats as gather_nd's
    # (zeros under IGNORE and FILL; checked above otherwise, outside XLA)
    flat = tf.where(tf.reshape(bad, tf.stack([batch, 1, per_batch])), tf.constant(-1, dtype),
                    flat)
    flat = tf.reshape(flat, [-1, 1])
    with tf.control_dependencies([c for c in checks if c is not None]):
        table = tf.reshape(params, tf.concat([[rows], [_product(inner)]], 0))
    out = backends.run("gather_nd", kernel_policy, params=table, indices=flat)
    out = tf.reshape(out, tf.concat([[-1], inner], 0))
    out = bounds.fill(policy, out, flat, fill_value, shape=tf.reshape(rows, [1]))
    out = tf.reshape(out, tf.concat([shape[:axis], id_shape[batch_dims:], inner], 0))
    out.set_shape(params.shape[:axis].concatenate(ids.shape[batch_dims:])
                  .concatenate(params.shape[axis + 1:]))
    return out
