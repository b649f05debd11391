"""tensor_scatter_nd_mul, _div and _mean, and include_self=False, against
NumPy references (each update applied in index order), their gradients
numerically (products with zero updates exactly), XLA (our kernels and the
TensorFlow-op form), stock_ops() and the bad-index rules. The op table's
generic suites (test_reference_matrix, test_bad_inputs, test_tf_function, ...)
cover mul and div for every dtype and index depth too.

PyTorch's semantics, written down here: Tensor.scatter_reduce(dim, index, src,
reduce, include_self) with reduce in "sum", "prod", "mean", "amax", "amin";
include_self=False leaves a slot's own value out of the reduction where any
update reaches it (a slot no update reaches keeps its value); "mean" divides
by the number of values reduced (updates, plus one with include_self), with
floor division for integers (ours truncates, as TensorFlow's segment_mean
does; they differ for negative results)."""

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops._dispatch import context as _calls
from tf_scatter_ops._dispatch import forms as _stock_forms
from ecosystem_util import traced_op_types
import reference as ref

IAE = tf.errors.InvalidArgumentError
SHAPE = (6, 3)


def _case(rng, dtype=tf.float64, n=20, depth=1):
    tensor = ref.random_values(rng, dtype, SHAPE)
    idx = ref.random_indices(rng, SHAPE, depth, (n,), tf.int32)
    upd = ref.random_values(rng, dtype, (n,) + SHAPE[depth:])
    return tensor, idx, upd


def reduce_reference(reduce, tensor, idx, upd, include_self=True):
    """PyTorch's scatter_reduce on rows (depth-1 indices), in index order;
    mean truncates integers."""
    out = tensor.copy()
    slots = {}
    for i, row in enumerate(idx[:, 0]):
        slots.setdefault(int(row), []).append(upd[i])
    for slot, values in slots.items():
        values = ([tensor[slot]] if include_self else []) + values
        acc = values[0].copy()
        with np.errstate(over="ignore"):
            for v in values[1:]:
                acc = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b,
                       "min": np.minimum, "max": np.maximum, "mean": lambda a, b: a + b}[reduce](
                           acc, v)
        if reduce == "mean":
            n = len(values)
            acc = (np.trunc(acc / n).astype(acc.dtype) if np.issubdtype(acc.dtype, np.integer)
                   else acc / n)
        out[slot] = acc
    return out


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.int32, tf.float16])
@pytest.mark.parametrize("reduce", ["add", "mul", "min", "max", "mean"])
@pytest.mark.parametrize("include_self", [True, False])
def test_reductions_match_pytorchs_rule(reduce, dtype, include_self, rng):
    tensor, idx, upd = _case(rng, dtype)
    if dtype.is_integer:  # small values: sums and products in range
        tensor, upd = tensor % 7 - 3, upd % 7 - 3
    got = getattr(tso, "tensor_scatter_nd_" + reduce)(
        tf.constant(tensor), idx, tf.constant(upd), include_self=include_self)
    want = reduce_reference(reduce, tensor, idx, upd, include_self)
    if reduce in ("mul", "mean") and dtype.is_floating:
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-3 if dtype == tf.float16 else 1e-6)
    else:
        ref.assert_same(got, want)


def test_mul_and_div_apply_updates_in_index_order():
    """Each update in turn, not their product first: the bits show it."""
    tensor = tf.constant([1.0, 3.0], tf.float32)
    idx = tf.constant([[0], [0], [0], [1]])
    upd = tf.constant([0.1, 0.3, 7.0, 0.7], tf.float32)
    want_mul = np.float32(np.float32(np.float32(1.0) * np.float32(0.1)) * np.float32(0.3))
    want_mul = np.float32(want_mul * np.float32(7.0))
    assert tso.tensor_scatter_nd_mul(tensor, idx, upd).numpy()[0] == want_mul
    want_div = np.float32(np.float32(np.float32(1.0) / np.float32(0.1)) / np.float32(0.3))
    want_div = np.float32(want_div / np.float32(7.0))
    assert tso.tensor_scatter_nd_div(tensor, idx, upd).numpy()[0] == want_div


def test_integer_mul_wraps_and_div_takes_floats_only():
    big = tf.constant([2**30], tf.int32)
    assert tso.tensor_scatter_nd_mul(big, [[0]], tf.constant([4], tf.int32)).numpy()[0] == 0
    with pytest.raises(ValueError, match="tensor_scatter_nd_div does not support dtype int32"):
        tso.tensor_scatter_nd_div(tf.constant([4], tf.int32), [[0]], tf.constant([2], tf.int32))
    with pytest.raises(ValueError, match="tensor_scatter_nd_mean does not support dtype bool"):
        tso.tensor_scatter_nd_mean(tf.constant([True]), [[0]], tf.constant([False]))
    with pytest.raises(ValueError, match="include_self must be a Python bool"):
        tso.tensor_scatter_nd_mul(tf.constant([1.0]), [[0]], tf.constant([2.0]),
                                  include_self=tf.constant(True))


def test_mean_of_integers_truncates():
    tensor = tf.constant([0, 0, 5], tf.int32)
    got = tso.tensor_scatter_nd_mean(tensor, [[0], [0], [1], [1]], tf.constant([-3, -4, 3, 4]))
    np.testing.assert_array_equal(got.numpy(), [-2, 2, 5])  # -7 / 3, 7 / 3 truncated; untouched


def test_nd_indices_and_whole_tensor_depth():
    rng = np.random.default_rng(3)
    for depth in (0, 1, 2):
        tensor, idx, upd = _case(rng, tf.float64, depth=depth)
        for op in ("mul", "div"):
            want = ref.scatter(op, tensor, idx, upd, tf.float64)
            ref.assert_same(getattr(tso, "tensor_scatter_nd_" + op)(tensor, idx, upd), want)
        ones = np.ones(idx.shape[:-1])
        sums = ref.scatter("add", tensor, idx, upd, tf.float64)
        count = ref.scatter("scatter_nd", np.zeros(SHAPE[:depth]), idx, ones, tf.float64) + 1
        count = count.reshape(count.shape + (1,) * (len(SHAPE) - depth))
        np.testing.assert_allclose(tso.tensor_scatter_nd_mean(tensor, idx, upd).numpy(),
                                   sums / count, rtol=1e-12)


def test_bad_indices():
    tensor = tf.ones([4, 2])
    idx = tf.constant([[1], [9], [2]])
    upd = tf.fill([3, 2], 2.0)
    for op in ("mul", "div", "mean"):
        f = getattr(tso, "tensor_scatter_nd_" + op)
        with pytest.raises(IAE, match=r"indices\[1\] = \[9\] does not index into shape \[4,2\]"):
            f(tensor, idx, upd)
        got = f(tensor, idx, upd, bad_indices_policy="IGNORE").numpy()
        want = {"mul": 2.0, "div": 0.5, "mean": 1.5}[op]
        np.testing.assert_array_equal(got[:, 0], [1.0, want, want, 1.0])


@pytest.mark.parametrize("op", ["mul", "div", "mean"])
def test_gradients_numerically(op):
    rng = np.random.default_rng(5)
    tensor = tf.constant(rng.uniform(0.5, 2.0, SHAPE))
    idx = tf.constant(rng.integers(0, SHAPE[0], (10, 1)), tf.int32)
    upd = tf.constant(rng.uniform(0.5, 2.0, (10, SHAPE[1])))
    f = getattr(tso, "tensor_scatter_nd_" + op)
    theoretical, numerical = tf.test.compute_gradient(lambda t, u: f(t, idx, u), [tensor, upd],
                                                      delta=1e-6)
    for a, b in zip(theoretical, numerical):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


def test_mul_gradient_with_zero_updates_is_exact():
    """One zero in a slot: only it gets gradient (the product of the rest);
    two zeros: none. (The product divided by each update would give NaN.)"""
    tensor = tf.constant([[2.0], [3.0], [5.0]], tf.float64)
    idx = tf.constant([[0], [0], [1], [1], [1], [2]])
    upd = tf.constant([[0.0], [4.0], [0.0], [0.0], [6.0], [7.0]], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch([tensor, upd])
        out = tso.tensor_scatter_nd_mul(tensor, idx, upd)
    d_tensor, d_upd = tape.gradient(out, [tensor, upd])
    np.testing.assert_array_equal(d_tensor.numpy()[:, 0], [0.0, 0.0, 7.0])
    np.testing.assert_array_equal(d_upd.numpy()[:, 0], [2.0 * 4.0, 0.0, 0.0, 0.0, 0.0, 5.0])


def test_second_order_of_mul():
    rng = np.random.default_rng(8)
    tensor = tf.constant(rng.uniform(0.5, 2.0, SHAPE))
    idx = tf.constant(rng.integers(0, SHAPE[0], (8, 1)))
    upd = tf.constant(rng.uniform(0.5, 2.0, (8, SHAPE[1])))

    def grad_norm(u):
        with tf.GradientTape() as inner:
            inner.watch(u)
            loss = tf.reduce_sum(tf.sin(tso.tensor_scatter_nd_mul(tensor, idx, u)))
        g = inner.gradient(loss, u)
        return tf.reduce_sum(g * g)

    theoretical, numerical = tf.test.compute_gradient(grad_norm, [upd], delta=1e-6)
    np.testing.assert_allclose(theoretical[0], numerical[0], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("op", ["mul", "div", "mean"])
@pytest.mark.parametrize("policy", ["", "IGNORE"])
@pytest.mark.parametrize("xla_path", ["ours", "xla"])
def test_xla_and_stock_ops(op, policy, xla_path, monkeypatch):
    """jit_compile=True (our XLA kernels' custom call, or the XLA scatter
    they emit for small calls: TF_SCATTER_OPS_XLA), the TensorFlow-op form
    XLA gets where ours do not apply, and stock_ops() (no TfScatter> op):
    the same values and gradients, up to the order of the products."""
    monkeypatch.setenv("TF_SCATTER_OPS_XLA", xla_path)
    rng = np.random.default_rng(9)
    tensor = tf.constant(rng.uniform(0.5, 2.0, (50, 4)), tf.float32)
    idx = tf.constant(rng.integers(0, 50 + (policy == "IGNORE") * 5, (200, 1)), tf.int32)
    upd = tf.constant(rng.uniform(0.9, 1.1, (200, 4)), tf.float32)
    f = getattr(tso, "tensor_scatter_nd_" + op)

    def step(t, u):
        with tf.GradientTape() as tape:
            tape.watch([t, u])
            y = f(t, idx, u, bad_indices_policy=policy)
            loss = tf.reduce_sum(y * y)
        return [y] + tape.gradient(loss, [t, u])

    want = [v.numpy() for v in step(tensor, upd)]
    results = {"xla": tf.function(step, jit_compile=True)(tensor, upd)}
    if op != "mean":
        results["composed"] = tf.function(
            lambda t, u: _stock_forms.scatter_product("tensor_scatter_nd_" + op, policy,
                                                      tensor=t, indices=idx, updates=u),
            jit_compile=True)(tensor, upd)
    with _calls.stock_ops():
        stock = tf.function(step)
        assert not any(t.startswith("TfScatter>") for t in traced_op_types(stock, tensor, upd))
        results["stock"] = stock(tensor, upd)
    for name, got in results.items():
        for g, w in zip(tf.nest.flatten(got), want):
            np.testing.assert_allclose(g.numpy(), w, rtol=2e-5, err_msg=name)


def test_stock_ops_asserts_on_a_bad_row():
    with _calls.stock_ops():
        f = tf.function(lambda t: tso.tensor_scatter_nd_mul(t, [[0], [7]], tf.ones([2, 2])))
        with pytest.raises(IAE, match="index rows must lie inside the tensor"):
            f(tf.ones([3, 2]))


def test_tf_function_unknown_shapes():
    f = tf.function(lambda t, i, u: (tso.tensor_scatter_nd_mul(t, i, u),
                                     tso.tensor_scatter_nd_mean(t, i, u, include_self=False)),
                    input_signature=[tf.TensorSpec(None, tf.float64),
                                     tf.TensorSpec(None, tf.int64),
                                     tf.TensorSpec(None, tf.float64)])
    rng = np.random.default_rng(11)
    tensor, idx, upd = _case(rng, tf.float64, depth=2)
    mul, mean = f(tensor, idx.astype(np.int64), upd)
    ref.assert_same(mul, ref.scatter("mul", tensor, idx, upd, tf.float64))
    np.testing.assert_allclose(mean.numpy(), tso.tensor_scatter_nd_mean(
        tensor, idx, upd, include_self=False).numpy(), rtol=1e-12)
