"""Functions of each segment's rows, fused on the plugin's cores:

    tso.segment_softmax(data, segment_ids, num_segments)       # shaped like data
    tso.segment_log_softmax(data, segment_ids, num_segments)
    tso.segment_logsumexp(data, segment_ids, num_segments)     # [num_segments] + data.shape[ids.rank:]
    tso.segment_var(data, segment_ids, num_segments, ddof=0)
    tso.segment_std(data, segment_ids, num_segments, ddof=0)

The segment ids are unsorted_segment_*'s: int16/32/64, any shape that is a
prefix of data's, negative ids dropped, an id >= num_segments an
InvalidArgumentError naming the first one unless
bad_indices_policy="IGNORE" (then dropped). A dropped row's softmax and
log-softmax are 0, and so is its gradient. Each function is taken over the
rows of a segment, per element of the row's slice:

    softmax      exp(x - m) / sum(exp(x - m))
    log_softmax  (x - m) - log(sum(exp(x - m)))
    logsumexp    m + log(sum(exp(x - m)))          -inf for an empty segment
    var          sum((x - mean)^2) / (n - ddof)      NaN where n - ddof <= 0
    std          sqrt(var)

m is the segment's maximum where finite, else 0 (SciPy's logsumexp rule).
One kernel computes each function: streaming passes over the rows between
segment reductions on the scatter core (sums in index order: the same bits
on any thread count), with a fused gradient op (and a second order).
16-bit floats are computed in float32. The kernels (CPU and GPU) compute the
same steps in the same order with the library's own exp and log, so a GPU
gives the CPU's bits. Under XLA and inside stock_ops() the functions are
TensorFlow's unsorted_segment_max / _sum with gathers and element-wise ops
(the same formulas, TensorFlow's order of summation).
"""

import tensorflow as tf

from tf_scatter_ops._dispatch import backends, convert
from tf_scatter_ops._dispatch.segment_ids import inputs, ungrid

_PER_ROW = ("segment_softmax", "segment_log_softmax")  # shaped like data


def _check_ddof(ddof):
    if isinstance(ddof, bool) or not isinstance(ddof, int) or ddof < 0:
        raise ValueError(f"ddof must be a non-negative Python int, got {ddof!r}")
    return ddof


def _call(op, data, segment_ids, num_segments, ddof, bad_indices_policy, name):
    policy = convert.check_policy(bad_indices_policy)
    ddof = _check_ddof(ddof)
    with convert.scope(name or op):
        data, segment_ids, num_segments, policy, grid = inputs(
            op, data, segment_ids, num_segments, policy)
        out = backends.run(op, policy, ddof=ddof, data=data, segment_ids=segment_ids,
                           num_segments=num_segments)
        return out if op in _PER_ROW else ungrid(out, grid)


def _function(op, doc, takes_ddof):
    if takes_ddof:
        def f(data, segment_ids, num_segments, ddof=0, name=None, bad_indices_policy=""):
            return _call(op, data, segment_ids, num_segments, ddof, bad_indices_policy, name)
    else:
        def f(data, segment_ids, num_segments, name=None, bad_indices_policy=""):
            return _call(op, data, segment_ids, num_segments, 0, bad_indices_policy, name)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return convert.public(f)


segment_softmax = _function(
    "segment_softmax",
    "The softmax of each segment's rows (per element of the slice), shaped like `data`.", False)
segment_log_softmax = _function(
    "segment_log_softmax",
    "The log-softmax of each segment's rows (per element of the slice), shaped like `data`.",
    False)
segment_logsumexp = _function(
    "segment_logsumexp",
    "log(sum(exp(rows))) of each segment, [num_segments] + data.shape[segment_ids.rank:] "
    "(-inf for an empty segment).", False)
segment_var = _function(
    "segment_var",
    "The variance of each segment's rows, sum((x - mean)^2) / (n - ddof) (NaN where "
    "n - ddof <= 0).", True)
segment_std = _function(
    "segment_std",
    "The standard deviation of each segment's rows, sqrt(segment_var(..., ddof)).", True)
