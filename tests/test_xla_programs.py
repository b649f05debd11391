"""Whole programs under jit_compile=True: each is written once against a
library `L` (TensorFlow's functions or the plugin's) and compiled with each;
the plugin's must compile wherever stock XLA does and give stock XLA's
results, on every path our XLA kernels can take (by size, or forced with
TF_SCATTER_OPS_XLA). The programs: operands with bounded dynamic dimensions
(boolean masks, tf.unique, tf.where, input signatures with unknown
dimensions), loops, tf.cond, gradients of all of them, every index dtype,
batch_dims, and both policies."""

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops import ops

pytestmark = pytest.mark.skipif(
    not ops.xla_uses_our_kernels(),
    reason="our XLA kernels do not run here: the library was built without them "
           "(tf_scatter_ops.built_with_xla() is False) or a GPU is visible")


@pytest.fixture(params=["auto", "ours", "xla"])
def xla_path(request, monkeypatch):
    monkeypatch.setenv("TF_SCATTER_OPS_XLA", request.param)
    return request.param


def masked_scatter(L, x):
    keep = x > 0
    return L.scatter_nd(tf.where(keep), tf.boolean_mask(x, keep), tf.shape(x, out_type=tf.int64))


def unique_counts(L, ids):
    values, idx = tf.unique(ids)
    counts = L.tensor_scatter_nd_add(tf.zeros([32], tf.int32), values[:, None] % 32,
                                     tf.ones_like(values))
    return counts, L.gather_nd(tf.cast(counts, tf.float32), idx[:, None] % 32)


def where_gather(L, x):
    at = tf.where(x > 0.5)  # [<=n, 2]
    return L.gather_nd(x, at), L.tensor_scatter_nd_max(x, at, -L.gather_nd(x, at))


def histogram(L, x):
    """What keras.ops.histogram does on the TensorFlow backend."""
    x = tf.boolean_mask(x, (x >= 0.0) & (x <= 1.0))
    bins = tf.clip_by_value(tf.cast(x * 10, tf.int32), 0, 9)
    return L.tensor_scatter_nd_add(tf.zeros([10]), bins[:, None], tf.ones_like(x))


def segment_rows(L, x):
    """Rows of a mask-selected submatrix summed into groups: dynamic outer
    dimension, slices of 8."""
    rows = tf.boolean_mask(x, x[:, 0] > 0)  # [<=n, 8]
    groups = tf.cast(tf.abs(rows[:, 1]) * 3, tf.int32) % 5
    return L.tensor_scatter_nd_add(tf.zeros([5, 8]), groups[:, None], rows)


def kv_cache(L, cache):
    def body(k, c):
        row = tf.fill([1, cache.shape[1]], tf.cast(k, tf.float32))
        return k + 1, L.tensor_scatter_nd_update(c, [[k % cache.shape[0]]], row)
    return tf.while_loop(lambda k, c: k < 12, body, [0, cache])[1]


def autograph_loop(L, x):
    acc = tf.zeros_like(x)
    for k in tf.range(6):
        acc = L.tensor_scatter_nd_add(acc, [[k % 4]], L.gather_nd(x, [[(k + 1) % 4]]))
    return acc


def cond(L, x):
    return tf.cond(tf.reduce_sum(x) > 0,
                   lambda: L.tensor_scatter_nd_min(x, [[0], [2]], [[-1.0] * 3] * 2),
                   lambda: L.tensor_scatter_nd_sub(x, [[1]], [[1.0] * 3]))


def batch_gather(L, x):
    idx = tf.cast(tf.abs(x[:, :2, 0]) * 3, tf.int64) % x.shape[1]
    return L.gather_nd(x, idx[..., None], batch_dims=1)


def gradients(program):
    """The gradient of a weighted sum of `program`'s float outputs w.r.t. its
    input (weights that differ per element, so each position counts)."""
    def g(L, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            outs = [o for o in tf.nest.flatten(program(L, x)) if o.dtype.is_floating]
            y = tf.add_n([tf.reduce_sum(o * tf.sin(tf.cast(
                tf.reshape(tf.range(tf.size(o)), tf.shape(o)), o.dtype))) for o in outs])
        return tape.gradient(y, x)
    g.__name__ = f"grad_{program.__name__}"
    return g


RNG = np.random.default_rng(7)
X1 = tf.constant(RNG.standard_normal(200), tf.float32)
X2 = tf.constant(RNG.random((6, 5)), tf.float32)
X3 = tf.constant(RNG.standard_normal((4, 3)), tf.float32)
ROWS = tf.constant(RNG.standard_normal((300, 8)), tf.float32)
PROGRAMS = [
    (masked_scatter, X1),
    (unique_counts, tf.constant(RNG.integers(0, 50, 120), tf.int32)),
    (where_gather, X2),
    (histogram, tf.constant(RNG.random(500) * 1.2 - 0.1, tf.float32)),
    (segment_rows, ROWS),
    (kv_cache, tf.zeros([8, 16])),
    (autograph_loop, X3),
    (cond, X3),
    (cond, -tf.abs(X3)),
    (batch_gather, tf.constant(RNG.standard_normal((3, 5, 2)), tf.float32)),
    (gradients(masked_scatter), X1),
    (gradients(where_gather), X2),
    (gradients(histogram), tf.constant(RNG.random(50), tf.float32)),
    (gradients(segment_rows), ROWS),
    (gradients(autograph_loop), X3),
    (gradients(cond), X3),
    (gradients(batch_gather), tf.constant(RNG.standard_normal((3, 5, 2)), tf.float32)),
]


def run(program, L, x):
    return tf.function(lambda x: program(L, x), jit_compile=True)(x)


@pytest.mark.parametrize("program, x", PROGRAMS, ids=[p.__name__ for p, _ in PROGRAMS])
def test_program_gives_stock_xla_results(program, x, xla_path):
    want = run(program, tf, x)
    got = run(program, tso, x)
    for g, w in zip(tf.nest.flatten(got), tf.nest.flatten(want)):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("index_dtype", [tf.int16, tf.int32, tf.int64])
def test_dynamic_operands_with_every_index_dtype(index_dtype, xla_path):
    """Against eager code (TensorFlow's scatters take no int16 indices)."""
    def program(x):
        at = tf.cast(tf.where(x > 0), index_dtype)
        rows = tf.boolean_mask(x, x > 0)
        s = tso.scatter_nd(at, rows, tf.constant([200], index_dtype))
        return s, tso.gather_nd(s, at), tso.tensor_scatter_nd_update(s, at // 2, -rows)
    for g, w in zip(tf.function(program, jit_compile=True)(X1), program(X1)):
        np.testing.assert_array_equal(g, w)


def test_dynamic_bad_rows_follow_the_policy(xla_path):
    """The first bad row is named with the default policy (as an
    InternalError under XLA), IGNORE drops or zeroes bad rows, also when the
    operands' sizes are only known when the program runs."""
    x = tf.constant([0.5, -1.0, 2.0, 3.0, -4.0, 5.0])

    def shifted(x):  # rows 2, 3 and 5 of x are > 0: indices [2], [13], [5]
        at = tf.where(x > 0)
        return at + tf.cast(tf.equal(at, 3), tf.int64) * 10

    def scatter(x, policy=""):
        return tso.tensor_scatter_nd_add(tf.zeros([6]), shifted(x), tf.boolean_mask(x, x > 0),
                                         bad_indices_policy=policy)

    def gather(x, policy=""):
        return tso.gather_nd(tf.reshape(x, [6, 1]), shifted(x), bad_indices_policy=policy)

    for f, message in ((scatter, r"indices\[2\] = \[13\] does not index into shape \[6\]"),
                       (gather, r"indices\[2\] = \[13\] does not index into param shape \[6,1\]")):
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            f(x)
        with pytest.raises(tf.errors.InternalError, match=message):
            tf.function(f, jit_compile=True)(x)
        ignore = lambda x: f(x, "IGNORE")  # noqa: E731
        np.testing.assert_array_equal(tf.function(ignore, jit_compile=True)(x), ignore(x))


def test_bad_row_named_in_outer_dims_of_a_dynamic_operand(xla_path):
    """indices [<=4, 3, 1] (a mask drops one of 4 groups): the bad row is named
    by its place in the run-time outer dimensions, as eagerly."""
    def f(keep):
        idx = tf.boolean_mask(tf.reshape(tf.range(12) % 7, [4, 3, 1]), keep)
        return tso.gather_nd(tf.zeros([6]), idx)

    keep = tf.constant([False, True, True, True])  # rows left: 3,4,5 | 6,0,1 | 2,3,4
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1,0\] = \[6\] does not"):
        f(keep)
    with pytest.raises(tf.errors.InternalError, match=r"indices\[1,0\] = \[6\] does not"):
        tf.function(f, jit_compile=True)(keep)


def test_bad_row_with_an_inner_dynamic_dimension(xla_path):
    """indices [3, <=4, 1] (a mask along the second dimension): rows are not
    one block of XLA's buffer, so fused instructions find the first bad row."""
    def f(keep, policy=""):
        idx = tf.boolean_mask(tf.reshape(tf.range(12) % 8, [3, 4, 1]), keep, axis=1)
        return tso.gather_nd(tf.range(6.0), idx, bad_indices_policy=policy)

    keep = tf.constant([True, False, True, True])  # rows left: 0,2,3 | 4,6,7 | 0,2,3
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1,1\] = \[6\] does not"):
        f(keep)
    with pytest.raises(tf.errors.InternalError, match=r"indices\[1,1\] = \[6\] does not"):
        tf.function(f, jit_compile=True)(keep)
    ignore = lambda keep: f(keep, "IGNORE")  # noqa: E731
    np.testing.assert_array_equal(tf.function(ignore, jit_compile=True)(keep), ignore(keep))


def test_unknown_dims_in_the_signature(xla_path):
    spec = tf.TensorSpec([None], tf.float32)
    f = tf.function(lambda x: masked_scatter(tso, x), jit_compile=True, input_signature=[spec])
    for n in (5, 200):
        x = X1[:n]
        np.testing.assert_array_equal(f(x), masked_scatter(tf, x))
