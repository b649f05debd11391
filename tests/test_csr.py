"""segment_*_csr: reductions of CSR rows (row_splits offsets, a RaggedTensor's
rows) against a NumPy reference, empty rows anywhere (segment_*'s gap
values), gradients numerically, XLA and stock_ops(), and the offsets'
checks.

pytorch_scatter's segment_csr(src, indptr, reduce) defines the same rows
(out[i] reduces src[indptr[i]:indptr[i + 1]]) and also gives 0 for an empty
row's sum, mean, min and max."""

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops._dispatch import context as _calls

OPS = ("sum", "prod", "min", "max", "mean")
IAE = tf.errors.InvalidArgumentError


def reference(op, data, splits):
    out = []
    for a, b in zip(splits[:-1], splits[1:]):
        rows = data[a:b]
        if not len(rows):
            out.append(np.full(data.shape[1:], 1 if op == "prod" else 0, data.dtype))
            continue
        out.append({"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max,
                    "mean": np.mean}[op](rows, axis=0).astype(data.dtype))
    return np.stack(out) if out else np.zeros((0,) + data.shape[1:], data.dtype)


def _case(rng, nrows=9, slice_shape=(3,), dtype=np.float64):
    lengths = rng.integers(0, 4, nrows)
    lengths[0] = lengths[-1] = 0  # empty rows first and last too
    splits = np.concatenate([[0], np.cumsum(lengths)])
    data = rng.standard_normal((splits[-1],) + slice_shape).astype(dtype)
    return data, splits


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("splits_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("slice_shape", [(), (3,), (2, 2)])
def test_matches_numpy(op, splits_dtype, slice_shape, rng):
    data, splits = _case(rng, slice_shape=slice_shape)
    got = getattr(tso, f"segment_{op}_csr")(data, splits.astype(splits_dtype))
    np.testing.assert_allclose(got.numpy(), reference(op, data, splits), rtol=1e-12)


@pytest.mark.parametrize("op", OPS)
def test_ragged_tensor_rows(op, rng):
    data, splits = _case(rng)
    ragged = tf.RaggedTensor.from_row_splits(data, splits)
    f = getattr(tso, f"segment_{op}_csr")
    np.testing.assert_array_equal(f(ragged).numpy(), f(data, splits).numpy())


def test_integers_and_no_rows():
    data = np.array([[4], [-7], [9]], np.int32)
    np.testing.assert_array_equal(tso.segment_mean_csr(data, [0, 2, 3]).numpy(), [[-1], [9]])
    assert tso.segment_sum_csr(np.zeros((0, 2), np.float32), [0]).shape == (0, 2)
    assert tso.segment_max_csr(np.zeros((0, 2), np.float32), [0, 0, 0]).numpy().tolist() == [
        [0.0, 0.0], [0.0, 0.0]]


@pytest.mark.parametrize("op", OPS)
def test_gradients_numerically(op):
    rng = np.random.default_rng(2)
    data, splits = _case(rng)
    f = getattr(tso, f"segment_{op}_csr")
    theoretical, numerical = tf.test.compute_gradient(lambda d: f(d, splits), [tf.constant(data)],
                                                      delta=1e-6)
    np.testing.assert_allclose(theoretical[0], numerical[0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("op", OPS)
def test_xla_and_stock_ops(op):
    rng = np.random.default_rng(3)
    data, splits = _case(rng, nrows=40)
    data, splits = tf.constant(data, tf.float32), tf.constant(splits)
    f = getattr(tso, f"segment_{op}_csr")

    def step(d):
        with tf.GradientTape() as tape:
            tape.watch(d)
            y = f(d, splits)
        return y, tape.gradient(y, d, output_gradients=tf.ones_like(y))

    want = [v.numpy() for v in step(data)]
    with _calls.stock_ops():
        stock = tf.function(step)(data)
    for got in (tf.function(step, jit_compile=True)(data), stock):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-5, atol=1e-6)


def test_bad_offsets():
    data = np.ones((4, 2), np.float32)
    for splits, message in (([1, 4], "must start at 0"), ([0, 3, 2, 4], "must not decrease"),
                            # a decrease whose difference overflows int64 (found by the fuzzer)
                            ([0, 2**62, -(2**62) - 1, 4], "must not decrease"),
                            ([0, 2], "must end at data's row count"), ([], "row_splits is empty")):
        with pytest.raises(IAE, match=message):
            tso.segment_sum_csr(data, np.array(splits, np.int64))
    with pytest.raises(ValueError, match="row_splits must be int32 or int64"):
        tso.segment_sum_csr(data, np.array([0, 4], np.int16))
    with pytest.raises(ValueError, match="row_splits must be 1-D"):
        tso.segment_sum_csr(data, [[0, 4]])
    with pytest.raises(ValueError, match="row_splits is needed"):
        tso.segment_sum_csr(data)
    with pytest.raises(ValueError, match="not both"):
        tso.segment_sum_csr(tf.RaggedTensor.from_row_splits(data, [0, 4]), [0, 4])
    with pytest.raises(ValueError, match="segment_sum_csr does not support dtype bool"):
        tso.segment_sum_csr(np.ones((4, 2), bool), [0, 4])
