"""segment_softmax, _log_softmax, _logsumexp, _var and _std against a NumPy
reference (float64, each segment's rows in index order), against the same
functions written with TensorFlow's ops (_composed.groupwise), their fused
gradients against TensorFlow's gradients of those ops and numerically, second
order, the ids' rules (negative dropped, first bad id named, IGNORE), XLA,
stock_ops(), tf.function with unknown shapes, and the same bits for any
thread count.

What PyTorch defines the same way, written down here: torch.softmax /
log_softmax / logsumexp subtract the maximum as we do (a segment of all -inf
gives NaN softmax, -inf logsumexp); torch.var(correction=ddof) is
sum((x - mean)^2) / (n - ddof), NaN where n - ddof <= 0 (as NumPy's)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops import groupwise
from tf_scatter_ops._dispatch import composed as _composed
from tf_scatter_ops._dispatch import context as _calls
from ecosystem_util import traced_op_types

OPS = ("segment_softmax", "segment_log_softmax", "segment_logsumexp", "segment_var",
       "segment_std")
PER_SEGMENT = ("segment_logsumexp", "segment_var", "segment_std")
DTYPES = (tf.bfloat16, tf.float16, tf.float32, tf.float64)
TOL = {tf.bfloat16: 2e-2, tf.float16: 2e-3, tf.float32: 2e-6, tf.float64: 1e-12}


def reference(op, x, ids, num, ddof=0):
    """The function of each segment's rows, in float64, rows flattened over
    the ids' dims; dropped rows (id < 0 or >= num) give 0 (per-row ops)."""
    x = np.asarray(x, np.float64)
    ids = np.asarray(ids).reshape(-1)
    rows = x.reshape((ids.size, -1))
    per_row = np.zeros_like(rows)
    per_segment = np.zeros((num, rows.shape[1]))
    for s in range(num):
        r = rows[ids == s]
        with np.errstate(all="ignore"):
            if op in ("segment_var", "segment_std"):
                n = r.shape[0]
                mean = r.sum(0) / n if n else np.full(rows.shape[1], np.nan)
                v = ((r - mean) ** 2).sum(0) / (n - ddof) if n - ddof > 0 \
                    else np.full(rows.shape[1], np.nan)
                per_segment[s] = np.sqrt(v) if op == "segment_std" else v
                continue
            m = r.max(0) if r.shape[0] else np.full(rows.shape[1], -np.inf)
            if r.shape[0] and np.isnan(r).any(0).any():
                m = np.where(np.isnan(r).any(0), np.nan, m)
            shift = np.where(np.isfinite(m), m, 0.0)
            total = np.exp(r - shift).sum(0)
            if op == "segment_logsumexp":
                per_segment[s] = shift + np.log(total)
            elif op == "segment_log_softmax":
                per_row[ids == s] = (r - shift) - np.log(total)
            else:
                per_row[ids == s] = np.exp(r - shift) / total
    return per_segment, per_row


def expected(op, x, ids, num, ddof=0):
    per_segment, per_row = reference(op, x, ids, num, ddof)
    x = np.asarray(x)
    ids = np.asarray(ids)
    if op in PER_SEGMENT:
        return per_segment.reshape((num,) + x.shape[ids.ndim:])
    return per_row.reshape(x.shape)


def check(actual, wanted, dtype):
    actual = np.asarray(tf.cast(actual, tf.float64))
    np.testing.assert_allclose(actual, wanted, rtol=TOL[dtype], atol=TOL[dtype])


def call(op, *args, **kwargs):
    return getattr(tso, op)(*args, **kwargs)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("id_dtype", (tf.int16, tf.int32, tf.int64), ids=lambda d: d.name)
@pytest.mark.parametrize("ids_shape,slice_shape", [((60,), ()), ((60,), (3,)),
                                                   ((12, 5), (2, 3)), ((40,), (70,))])
def test_matches_numpy(op, dtype, id_dtype, ids_shape, slice_shape):
    """Every op, dtype, id dtype and id rank, with negative ids (dropped) and
    empty segments; slices wider than a tile (70 columns)."""
    rng = np.random.default_rng(len(ids_shape) * 7 + len(slice_shape))
    x = rng.standard_normal(ids_shape + slice_shape) * 3
    x = np.asarray(tf.cast(tf.cast(x, dtype), tf.float64))  # the values the op sees
    ids = rng.integers(-2, 9, size=ids_shape)  # ids 9 and 10 of 11 stay empty
    out = call(op, tf.cast(x, dtype), tf.constant(ids, id_dtype), 11)
    assert out.dtype == dtype
    check(out, expected(op, x, ids, 11), dtype)


@pytest.mark.parametrize("op", OPS)
def test_matches_tensorflow_ops(op):
    """The fused kernel and the same function written with TensorFlow's ops
    (what XLA and stock_ops() run) agree."""
    rng = np.random.default_rng(3)
    x = tf.constant(rng.standard_normal((500, 4)), tf.float32)
    ids = tf.constant(rng.integers(-1, 50, 500), tf.int32)
    ours = call(op, x, ids, 60)
    theirs = _composed.groupwise(op, x, ids, tf.constant(60))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("ddof", [0, 1, 2, 5])
@pytest.mark.parametrize("op", ("segment_var", "segment_std"))
def test_ddof(op, ddof):
    """NaN where a segment has no more rows than ddof, as NumPy and PyTorch."""
    x = np.arange(10.0) ** 1.5
    ids = np.array([0, 0, 0, 1, 1, 2, 3, 3, 3, 3])
    out = call(op, x, ids, 5, ddof=ddof).numpy()
    np.testing.assert_allclose(out, expected(op, x, ids, 5, ddof), rtol=1e-12)
    for s, n in enumerate([3, 2, 1, 4, 0]):
        assert np.isnan(out[s]) == (n - ddof <= 0)
        if n - ddof > 0:
            np.testing.assert_allclose(out[s], np.var(x[ids == s], ddof=ddof) ** (
                0.5 if op == "segment_std" else 1), rtol=1e-12)


def test_ddof_is_checked():
    for bad in (-1, 1.5, True, "1"):
        with pytest.raises(ValueError, match="ddof"):
            tso.segment_var([1.0, 2.0], [0, 0], 1, ddof=bad)


def test_special_values():
    """-inf rows: softmax 0 beside finite ones, a segment of only -inf gives
    NaN softmax and -inf logsumexp; +inf gives NaN softmax where it is and
    +inf logsumexp; NaN reaches every output of its segment; an empty
    segment's logsumexp is -inf. Large values do not overflow."""
    inf, nan = np.inf, np.nan
    x = np.array([-inf, 1.0, -inf, -inf, inf, 2.0, nan, 3.0, 1000.0, 999.0], np.float32)
    ids = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4])
    for op in OPS:
        for dtype in (tf.float32, tf.float64):
            got = call(op, tf.cast(x, dtype), ids, 6).numpy()
            want = expected(op, x, ids, 6)
            np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
    sm = tso.segment_softmax(x, ids, 6).numpy()
    assert sm[0] == 0 and sm[1] == 1 and np.isnan(sm[2:4]).all() and np.isnan(sm[6:8]).all()
    np.testing.assert_allclose(sm[8:], [1 / (1 + np.exp(-1)), np.exp(-1) / (1 + np.exp(-1))],
                               rtol=1e-6)
    lse = tso.segment_logsumexp(x, ids, 6).numpy()
    assert lse[1] == -inf and lse[2] == inf and np.isnan(lse[3]) and lse[5] == -inf


def test_softmax_sums_to_one_and_is_shift_invariant():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2000, 8)).astype(np.float32) * 10
    ids = rng.integers(0, 100, 2000)
    y = tso.segment_softmax(x, ids, 100)
    sums = tso.unsorted_segment_sum(y, ids, 100).numpy()
    np.testing.assert_allclose(sums, 1.0, rtol=1e-5)
    shifted = tso.segment_softmax(x + 50.0, ids, 100)
    np.testing.assert_allclose(shifted.numpy(), y.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(tf.exp(tso.segment_log_softmax(x, ids, 100)).numpy(), y.numpy(),
                               rtol=1e-5, atol=1e-7)


def test_bad_ids():
    """Negative ids are dropped (0 output and gradient); the first id >=
    num_segments is an InvalidArgumentError naming it, unless IGNORE."""
    x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    for op in OPS:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids\[2\] = 5 is out of "
                           r"range|5 is not in \[0, 3\)"):
            call(op, x, [0, -1, 5, 7], 3)
        ignored = call(op, x, [0, -1, 5, 1], 3, bad_indices_policy="IGNORE")
        dropped = call(op, x, [0, -1, -1, 1], 3)
        np.testing.assert_array_equal(ignored.numpy(), dropped.numpy())
    sm = tso.segment_softmax(x, [0, -1, 0, 1], 2).numpy()
    np.testing.assert_array_equal(sm[1], [0, 0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tso.segment_log_softmax(x, [0, -1, 0, 1], 2)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy()[1], [0, 0])


def test_shape_errors():
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError), match="prefix|segment_ids"):
        tso.segment_softmax(tf.zeros([4, 2]), tf.zeros([3], tf.int32), 2)
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError), match="num_segments"):
        tso.segment_softmax(tf.zeros([4]), tf.zeros([4], tf.int32), -1)
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError), match="num_segments"):
        tso.segment_logsumexp(tf.zeros([4]), tf.zeros([4], tf.int32), [2])
    with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError), match="int32"):
        tso.segment_softmax(tf.zeros([4], tf.int32), tf.zeros([4], tf.int32), 2)


def test_empty():
    for op in OPS:
        out = call(op, tf.zeros([0, 3]), tf.zeros([0], tf.int32), 2).numpy()
        assert out.shape == ((2, 3) if op in PER_SEGMENT else (0, 3))
        out = call(op, tf.zeros([5, 3]), tf.zeros([5], tf.int32) - 1, 0).numpy()
        assert out.shape == ((0, 3) if op in PER_SEGMENT else (5, 3))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", (tf.float32, tf.float64), ids=lambda d: d.name)
def test_gradients_match_tensorflows(op, dtype):
    """The fused gradient against TensorFlow's gradients of the composed ops,
    with dropped rows and empty segments, ids of rank 2."""
    rng = np.random.default_rng(11)
    x = tf.constant(rng.standard_normal((8, 6, 3)), dtype)
    ids = tf.constant(rng.integers(-1, 9, (8, 6)), tf.int32)
    w = tf.constant(rng.standard_normal((10, 3) if op in PER_SEGMENT else (8, 6, 3)), dtype)

    def grad(f):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x, ids, 10)
            loss = tf.reduce_sum(tf.where(tf.math.is_finite(y), y * w, tf.zeros_like(y)))
        return tape.gradient(loss, x).numpy()

    ours = grad(getattr(tso, op))
    theirs = grad(lambda a, b, c: _composed.groupwise(op, a, b, tf.constant(c)))
    tol = 1e-5 if dtype == tf.float32 else 1e-12
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


@pytest.mark.parametrize("op", OPS)
def test_gradients_numerically(op):
    rng = np.random.default_rng(2)
    x = tf.constant(rng.standard_normal((30, 2)))
    ids = tf.constant(rng.integers(0, 5, 30), tf.int64)
    theoretical, numerical = tf.test.compute_gradient(
        lambda a: getattr(tso, op)(a, ids, 5, **({"ddof": 1} if "var" in op or "std" in op
                                                  else {})), [x])
    np.testing.assert_allclose(theoretical[0], numerical[0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op", OPS)
def test_second_order(op):
    rng = np.random.default_rng(4)
    x = tf.constant(rng.standard_normal((40, 2)))
    ids = tf.constant(rng.integers(0, 6, 40), tf.int32)
    results = []
    for f in (getattr(tso, op), lambda a, b, c: _composed.groupwise(op, a, b, tf.constant(c))):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                loss = tf.reduce_sum(tf.sin(f(x, ids, 6)))
            g = inner.gradient(loss, x)
            total = tf.reduce_sum(g * g)
        results.append(outer.gradient(total, x).numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("op", OPS)
def test_xla_and_stock_ops(op):
    """Under jit_compile=True and inside stock_ops() the functions are
    TensorFlow's ops (no TfScatter> op), with the same results; the gradient
    too."""
    rng = np.random.default_rng(6)
    x = tf.constant(rng.standard_normal((300, 4)), tf.float32)
    ids = tf.constant(rng.integers(-1, 40, 300), tf.int32)
    want = call(op, x, ids, 40).numpy()

    def step(a, b):
        with tf.GradientTape() as tape:
            tape.watch(a)
            y = call(op, a, b, 40)
            loss = tf.reduce_sum(tf.where(tf.math.is_finite(y), y * y, 0.0))
        return y, tape.gradient(loss, a)

    ours_grad = step(x, ids)[1].numpy()
    jit = tf.function(step, jit_compile=True)
    y, g = jit(x, ids)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g.numpy(), ours_grad, rtol=1e-4, atol=1e-5)
    with _calls.stock_ops():
        stock = tf.function(step)
        assert not any(t.startswith("TfScatter>") for t in traced_op_types(stock, x, ids))
        y, g = stock(x, ids)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g.numpy(), ours_grad, rtol=1e-4, atol=1e-5)


def test_tf_function_unknown_shapes_and_tensor_num_segments():
    f = tf.function(lambda x, ids, n: (tso.segment_softmax(x, ids, n),
                                       tso.segment_std(x, ids, n, ddof=1)),
                    input_signature=[tf.TensorSpec(None, tf.float32),
                                     tf.TensorSpec(None, tf.int32),
                                     tf.TensorSpec([], tf.int64)])
    rng = np.random.default_rng(8)
    x = rng.standard_normal((50, 3)).astype(np.float32)
    ids = rng.integers(0, 7, 50).astype(np.int32)
    sm, sd = f(x, ids, 7)
    check(sm, expected("segment_softmax", x, ids, 7), tf.float32)
    check(sd, expected("segment_std", x, ids, 7, 1), tf.float32)
    g = tf.function(lambda x, ids: tso.segment_logsumexp(x, ids, 7))
    shape = g.get_concrete_function(tf.TensorSpec([None, 3], tf.float32),
                                    tf.TensorSpec([None], tf.int32)).output_shapes
    assert shape.as_list() == [7, 3]


DETERMINISM = r"""
import hashlib, json, sys
import numpy as np
import tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(int(sys.argv[1]))
import tf_scatter_ops as tso
rng = np.random.default_rng(1)
out = {}
for name, (rows, cols, segments) in {"gat": (200_000, 8, 20_000), "wide": (3_000, 300, 3),
                                     "one": (100_000, 4, 1)}.items():
    x = tf.constant(rng.standard_normal((rows, cols)).astype(np.float32))
    ids = tf.constant(rng.integers(0, segments, rows).astype(np.int32))
    for op in ("segment_softmax", "segment_log_softmax", "segment_logsumexp", "segment_var",
               "segment_std"):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = getattr(tso, op)(x, ids, segments)
        g = tape.gradient(y, x, output_gradients=tf.ones_like(y) * 0.5)
        out[f"{name}/{op}"] = hashlib.sha256(y.numpy().tobytes() + g.numpy().tobytes()).hexdigest()
print(json.dumps(out))
"""


def test_same_bits_for_any_thread_count():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    runs = [json.loads(subprocess.run([sys.executable, "-c", DETERMINISM, str(t)], cwd=root,
                                      env=env, capture_output=True, text=True, timeout=600,
                                      check=True).stdout.strip().splitlines()[-1])
            for t in (1, 2, 7)]
    assert runs[0] == runs[1] == runs[2]
