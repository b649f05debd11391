"""The arg reductions (unsorted_segment_max_with_argmax, tensor_scatter_nd_argmin,
...) against a NumPy loop over the update rows in index order, and the
TensorFlow-op form (under XLA, stock_ops()) against the kernel.

The rule, written down here: per output element the update rows are
offered in index order; one takes the element when strictly greater
(smaller), so ties keep the first row; NaN beats every number (NumPy's
argmax), so the first NaN keeps it. A segment starts empty (position -1,
value the dtype's lowest / highest); a tensor scatter starts from the
tensor's value, position -1, which an update takes only by that rule.
PyTorch Scatter's scatter_max returns the same positions for distinct values
(its empty positions are the number of rows, ours -1)."""

import os
import zlib

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops import argminmax, export
from tf_scatter_ops._dispatch import composed as _composed
from tf_scatter_ops._dispatch import context as _calls
from ecosystem_util import traced_op_types
import reference as ref

IAE = tf.errors.InvalidArgumentError
FUNCTIONS = {
    ("segment", "max"): tso.unsorted_segment_max_with_argmax,
    ("segment", "min"): tso.unsorted_segment_min_with_argmin,
    ("scatter", "max"): tso.tensor_scatter_nd_max_with_argmax,
    ("scatter", "min"): tso.tensor_scatter_nd_min_with_argmin,
}


def _takes_element(kind, upd, out):
    u, o = np.float64(upd) if _is_float(upd) else upd, np.float64(out) if _is_float(out) else out
    beats = (o < u) if kind == "max" else (u < o)
    if _is_float(upd):
        beats = beats or (np.isnan(u) and not np.isnan(o))
    return bool(beats)


def _is_float(x):
    dtype = np.asarray(x).dtype
    return dtype.kind == "f" or dtype.name == "bfloat16"


def arg_reference(kind, out, arg, slots, updates, seeded):
    """Offers rows [n, S] to out/arg [slots, S] in index order (slot None: dropped)."""
    for i, slot in enumerate(slots):
        if slot is None:
            continue
        for j in range(out.shape[1]):
            if (not seeded and arg[slot, j] < 0) or _takes_element(kind, updates[i, j],
                                                                  out[slot, j]):
                out[slot, j] = updates[i, j]
                arg[slot, j] = i
    return out, arg


def segment_reference(kind, data, ids, num, dtype):
    ids = np.asarray(ids)
    rows = data.reshape(ids.size, -1)
    identity = (dtype.min if kind == "max" else dtype.max) if dtype.is_integer else \
        (-dtype.max if kind == "max" else dtype.max)
    out = np.full((num, rows.shape[1]), identity, dtype=rows.dtype)
    arg = np.full(out.shape, -1, np.int64)
    slots = [int(s) if 0 <= s < num else None for s in ids.reshape(-1)]
    out, arg = arg_reference(kind, out, arg, slots, rows, seeded=False)
    shape = (num,) + data.shape[ids.ndim:]
    return out.reshape(shape), arg.reshape(shape)


def scatter_reference(kind, tensor, idx, upd):
    depth = idx.shape[-1]
    nslots = int(np.prod(tensor.shape[:depth], dtype=np.int64))
    out = tensor.copy().reshape(nslots, -1)
    arg = np.full(out.shape, -1, np.int64)
    slots = [slot for _, slot, _ in ref._rows(idx, tensor.shape)]
    rows = upd.reshape(len(slots), out.shape[1])
    out, arg = arg_reference(kind, out, arg, slots, rows, seeded=True)
    return out.reshape(tensor.shape), arg.reshape(tensor.shape)


def _tied_values(rng, dtype, shape, nan=False):
    """Few distinct values, so that ties are common; some NaN for floats."""
    values = rng.integers(-3, 4, size=shape)
    if dtype.is_unsigned:
        values = np.abs(values)
    values = values.astype(dtype.as_numpy_dtype)
    if nan and dtype.is_floating:
        values[rng.random(shape) < 0.1] = np.nan
    return values


DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.uint8,
          tf.int8]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("ids_shape", [(40,), (8, 5)])
def test_segments_match_the_in_order_reference(dtype, kind, ids_shape):
    rng = np.random.default_rng(zlib.crc32(repr((dtype.name, kind, ids_shape)).encode()))
    data = _tied_values(rng, dtype, ids_shape + (3,), nan=True)
    ids = rng.integers(-1, 9, size=ids_shape).astype(np.int32)  # -1: dropped; 9 segments
    num = 10  # segment 9 is always empty
    out, arg = FUNCTIONS["segment", kind](data, ids, num)
    want_out, want_arg = segment_reference(kind, data, ids, num, dtype)
    assert arg.dtype == tf.int64
    np.testing.assert_array_equal(arg.numpy(), want_arg)
    ref.assert_same(out, want_out, nan_bits=False)
    only = getattr(tso, f"unsorted_segment_arg{kind}")(data, ids, num)
    np.testing.assert_array_equal(only.numpy(), want_arg)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("depth", [0, 1, 2])
def test_scatters_match_the_in_order_reference(dtype, kind, depth):
    rng = np.random.default_rng(zlib.crc32(repr((dtype.name, kind, depth)).encode()))
    shape = (5, 4, 2)
    tensor = _tied_values(rng, dtype, shape, nan=True)
    idx = ref.random_indices(rng, shape, depth, (6, 3), tf.int64)
    upd = _tied_values(rng, dtype, (6, 3) + shape[depth:], nan=True)
    out, arg = FUNCTIONS["scatter", kind](tensor, idx, upd)
    want_out, want_arg = scatter_reference(kind, tensor, idx, upd)
    np.testing.assert_array_equal(arg.numpy(), want_arg)
    ref.assert_same(out, want_out, nan_bits=False)
    only = getattr(tso, f"tensor_scatter_nd_arg{kind}")(tensor, idx, upd)
    np.testing.assert_array_equal(only.numpy(), want_arg)


def test_the_rule_by_hand():
    # segment 0: rows 0 (2), 2 (5), 3 (5): the first 5 holds it; segment 1:
    # row 1 (NaN) and row 4 (7): NaN wins; segment 2: empty
    data = np.array([2.0, np.nan, 5.0, 5.0, 7.0], np.float32)
    out, arg = tso.unsorted_segment_max_with_argmax(data, [0, 1, 0, 0, 1], 3)
    np.testing.assert_array_equal(arg, [2, 1, -1])
    ref.assert_same(out, np.array([5.0, np.nan, np.finfo(np.float32).min], np.float32),
                    nan_bits=False)
    out, arg = tso.unsorted_segment_min_with_argmin(data, [0, 1, 0, 0, 1], 3)
    np.testing.assert_array_equal(arg, [0, 1, -1])
    # the tensor's own value wins ties and keeps position -1; among updates the first
    out, arg = tso.tensor_scatter_nd_max_with_argmax([5.0, 1.0, 0.0], [[0], [1], [1]],
                                                     [5.0, 3.0, 3.0])
    np.testing.assert_array_equal(out, [5.0, 3.0, 0.0])
    np.testing.assert_array_equal(arg, [-1, 1, -1])
    assert isinstance(tso.tensor_scatter_nd_max_with_argmax([1.0], [[0]], [2.0]),
                      argminmax.MaxWithArgmax)


def _vectorised(kind, slots, values, nslots):
    """The rule without NaN, in NumPy's vector ops: the best value per slot,
    then the lowest row that has it."""
    best = np.full((nslots, values.shape[1]), np.inf if kind == "min" else -np.inf)
    keep = slots >= 0
    (np.maximum if kind == "max" else np.minimum).at(best, slots[keep], values[keep])
    rows = np.broadcast_to(np.arange(len(slots))[:, None], values.shape)
    match = values == best[np.maximum(slots, 0)]
    cand = np.where(match & keep[:, None], rows, np.iinfo(np.int64).max)
    first = np.full(best.shape, np.iinfo(np.int64).max)
    np.minimum.at(first, slots[keep], cand[keep])
    return best, np.where(first == np.iinfo(np.int64).max, -1, first)


@pytest.mark.parametrize("n,slice_len,num", [(300_000, 4, 5_000), (2_000, 5_000, 7),
                                             (50_000, 8, 1)])
@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("form", ["segment", "scatter"])
def test_every_parallel_strategy(n, slice_len, num, kind, form):
    """Large enough for the thread pool (where the machine has more than one
    core): slot ranges per thread, columns per thread (long slices), one
    slot; segments and tensor scatters (the tensor's value wins ties)."""
    rng = np.random.default_rng(n + slice_len)
    data = rng.integers(0, 50, size=(n, slice_len)).astype(np.float32)  # many ties
    ids = rng.integers(0 if form == "scatter" else -1, num, size=n)
    best, first = _vectorised(kind, ids, data.astype(np.float64), num)
    if form == "segment":
        out, arg = FUNCTIONS["segment", kind](data, ids, num)
    else:
        tensor = rng.integers(0, 50, size=(num, slice_len)).astype(np.float32)
        out, arg = FUNCTIONS["scatter", kind](tensor, ids[:, None], data)
        updated = best > tensor if kind == "max" else best < tensor
        best, first = np.where(updated, best, tensor), np.where(updated, first, -1)
    np.testing.assert_array_equal(arg.numpy(), first)
    np.testing.assert_array_equal(out.numpy(), best.astype(np.float32))


def test_bad_indices():
    with pytest.raises(IAE, match=r"indices\[1\] = \[7\] does not index into shape \[4\]"):
        tso.tensor_scatter_nd_max_with_argmax(tf.zeros([4]), [[0], [7]], [1.0, 2.0])
    out, arg = tso.tensor_scatter_nd_max_with_argmax(tf.zeros([4]), [[0], [7], [-1]],
                                                     [1.0, 2.0, 3.0], bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(arg, [0, -1, -1, -1])
    with pytest.raises(IAE, match=r"segment_ids\[2\] = 5 is out of range \[0, 3\)"):
        tso.unsorted_segment_min_with_argmin([1, 2, 3, 4], [0, -1, 5, 6], 3)
    out, arg = tso.unsorted_segment_min_with_argmin([1, 2, 3, 4], [0, -1, 5, 1], 3,
                                                    bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(arg, [0, 3, -1])  # -1 dropped always, 5 by IGNORE
    with pytest.raises(ValueError, match="does not support dtype complex64"):
        tso.unsorted_segment_argmax(tf.zeros([2], tf.complex64), [0, 1], 2)
    with pytest.raises((IAE, ValueError), match="num_segments"):
        tso.unsorted_segment_argmax([1.0], [0], -1)


def test_empty_inputs():
    out, arg = tso.unsorted_segment_max_with_argmax(tf.zeros([0, 2]), tf.zeros([0], tf.int32), 3)
    assert out.shape == (3, 2) and (arg.numpy() == -1).all()
    out, arg = tso.unsorted_segment_max_with_argmax(tf.zeros([2, 2]), [-1, -1], 0)
    assert out.shape == (0, 2) and arg.shape == (0, 2)
    out, arg = tso.tensor_scatter_nd_min_with_argmin(tf.ones([3]), tf.zeros([0, 1], tf.int32),
                                                     tf.zeros([0]))
    np.testing.assert_array_equal(arg, [-1, -1, -1])


@pytest.mark.parametrize("form", ["segment", "scatter"])
def test_gradient_numerically(form):
    rng = np.random.default_rng(7)
    if form == "segment":
        x = rng.permutation(60).astype(np.float64).reshape(20, 3)  # distinct: no ties
        ids = rng.integers(-1, 6, size=20)
        f = lambda x: tso.unsorted_segment_max_with_argmax(x, ids, 7).output  # noqa: E731
        args = [x]
    else:
        tensor = rng.permutation(24).astype(np.float64).reshape(8, 3) + 0.5
        upd = rng.permutation(30).astype(np.float64).reshape(10, 3)
        idx = rng.integers(0, 8, size=(10, 1))
        f = lambda t, u: tso.tensor_scatter_nd_min_with_argmin(t, idx, u).output  # noqa: E731
        args = [tensor, upd]
    theoretical, numerical = tf.test.compute_gradient(f, args)
    for t, n in zip(theoretical, numerical):
        np.testing.assert_allclose(t, n, atol=1e-6)


def test_gradient_goes_to_the_winning_row_alone():
    data = tf.constant([[3.0, 1.0], [3.0, 4.0], [2.0, 4.0]])
    with tf.GradientTape() as tape:
        tape.watch(data)
        out, _ = tso.unsorted_segment_max_with_argmax(data, [0, 0, 0], 2)
    g = tape.gradient(out, data, output_gradients=tf.constant([[10.0, 20.0], [30.0, 40.0]]))
    np.testing.assert_array_equal(g, [[10.0, 0.0], [0.0, 20.0], [0.0, 0.0]])
    tensor = tf.constant([5.0, 1.0])
    upd = tf.constant([5.0, 2.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([tensor, upd])
        out, _ = tso.tensor_scatter_nd_max_with_argmax(tensor, [[0], [1], [1]], upd)
    g_tensor, g_upd = tape.gradient(out, [tensor, upd], output_gradients=tf.constant([7.0, 9.0]))
    np.testing.assert_array_equal(g_tensor, [7.0, 0.0])  # the tensor's 5 stays (a tie)
    np.testing.assert_array_equal(g_upd, [0.0, 9.0, 0.0])


def test_second_order():
    x = tf.constant([1.0, 4.0, 2.0], tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(tso.unsorted_segment_max_with_argmax(x * x, [0, 0, 1], 2).output)
        g = inner.gradient(y, x)
    np.testing.assert_array_equal(g, [0.0, 8.0, 4.0])
    np.testing.assert_array_equal(outer.gradient(g, x), [0.0, 2.0, 2.0])


def _case(rng, form, kind):
    if form == "segment":
        data = _tied_values(rng, tf.float32, (50, 3), nan=True)
        return (data, rng.integers(-1, 6, size=50).astype(np.int32), 7)
    tensor = _tied_values(rng, tf.float32, (6, 3), nan=True)
    idx = rng.integers(0, 6, size=(40, 1)).astype(np.int32)
    return (tensor, idx, _tied_values(rng, tf.float32, (40, 3), nan=True))


@pytest.mark.parametrize("form", ["segment", "scatter"])
@pytest.mark.parametrize("kind", ["max", "min"])
def test_xla_and_stock_forms_agree_with_the_kernel(form, kind):
    rng = np.random.default_rng(3)
    args = _case(rng, form, kind)
    f = FUNCTIONS[form, kind]
    want_out, want_arg = f(*args)
    xla = tf.function(lambda *a: tuple(f(*a)), jit_compile=True)
    out, arg = xla(*args)
    np.testing.assert_array_equal(arg, want_arg)
    ref.assert_same(out, want_out, nan_bits=False)

    def stock(*a):
        with _calls.stock_ops():
            return tuple(f(*a))
    traced = tf.function(stock)
    assert not any(t.startswith("TfScatter>") for t in traced_op_types(traced, *args))
    out, arg = traced(*args)
    np.testing.assert_array_equal(arg, want_arg)
    ref.assert_same(out, want_out, nan_bits=False)


def test_unknown_shapes_and_shape_inference():
    f = tf.function(lambda d, i: tso.unsorted_segment_max_with_argmax(d, i, 4),
                    input_signature=[tf.TensorSpec([None, 3]), tf.TensorSpec([None], tf.int32)])
    concrete = f.get_concrete_function()
    assert concrete.structured_outputs[0].shape.as_list() == [4, 3]
    assert concrete.structured_outputs[1].shape.as_list() == [4, 3]
    out, arg = f(tf.ones([2, 3]), tf.constant([3, 3]))
    np.testing.assert_array_equal(arg[3], [0, 0, 0])
    g = tf.function(lambda t, i, u: tso.tensor_scatter_nd_argmin(t, i, u),
                    input_signature=[tf.TensorSpec(None), tf.TensorSpec([None, 1], tf.int64),
                                     tf.TensorSpec(None)])
    np.testing.assert_array_equal(g(tf.ones([3]), tf.constant([[2]], tf.int64), [0.0]),
                                  [-1, -1, 0])


def test_exported_saved_model_has_only_tensorflow_ops(tmp_path):
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 2]), tf.TensorSpec([None], tf.int32)])
        def pool(self, x, ids):
            out, arg = tso.unsorted_segment_max_with_argmax(x, ids, 3)
            low = tso.tensor_scatter_nd_argmin(tf.zeros([3, 2]), ids[:, None], x)
            return {"out": out, "arg": arg, "low": low}
    src, dst = os.path.join(tmp_path, "src"), os.path.join(tmp_path, "dst")
    tf.saved_model.save(M(), src)
    replaced = export.export(src, dst)
    assert set(replaced) >= {"UnsortedSegmentMaxWithArgmax", "TensorScatterMinWithArgmin"}
    x = tf.constant([[1.0, -2.0], [3.0, -1.0], [3.0, 5.0]])
    ids = tf.constant([0, 0, 2])
    got = tf.saved_model.load(dst).pool(x, ids)
    want = M().pool(x, ids)
    for key in want:
        np.testing.assert_array_equal(got[key], want[key])


def test_gradient_of_empty_inputs():
    data = tf.zeros([0, 3])
    with tf.GradientTape() as tape:
        tape.watch(data)
        out, _ = tso.unsorted_segment_max_with_argmax(data, tf.zeros([0], tf.int32), 2)
    assert tape.gradient(out, data).shape == (0, 3)
    tensor, upd = tf.ones([2, 3]), tf.zeros([0, 3])
    with tf.GradientTape() as tape:
        tape.watch([tensor, upd])
        out, _ = tso.tensor_scatter_nd_max_with_argmax(tensor, tf.zeros([0, 1], tf.int32), upd)
    g_tensor, g_upd = tape.gradient(out, [tensor, upd])
    np.testing.assert_array_equal(g_tensor, np.ones([2, 3]))
    assert g_upd.shape == (0, 3)


def _forms(form, kind, args):
    """(kernel, TensorFlow-op form) of one call, each (value, positions)."""
    f = FUNCTIONS[form, kind]
    composed = _composed.arg_segments if form == "segment" else _composed.arg_scatter
    return tuple(f(*args)), composed(f.__name__, *[tf.convert_to_tensor(a) for a in args])


@pytest.mark.parametrize("kind", ["max", "min"])
def test_infinities_signed_zeros_and_nan_bits(kind):
    """Segments of -inf (+inf) alone, 0.0 tied with -0.0, NaN payloads: the value
    is the held row's own bits, in the kernel and the TensorFlow-op form."""
    inf = np.float32(np.inf if kind == "min" else -np.inf)
    nan = np.array([0x7fc00001, 0xffc00002], np.uint32).view(np.float32)
    data = np.array([inf, inf, 0.0, -0.0, -0.0, 0.0, nan[0], nan[1], 1.0], np.float32)
    ids = np.array([0, 0, 1, 1, 2, 2, 3, 3, 3], np.int16)  # int16 ids
    for out, arg in _forms("segment", kind, (data, ids, 5)):
        np.testing.assert_array_equal(arg, [0, 2, 4, 6, -1])
        ref.assert_same(out[:4], data[[0, 2, 4, 6]])
        assert out[4] == (np.finfo(np.float32).min if kind == "max" else np.finfo(np.float32).max)
    tensor = np.array([inf, 0.0, 5.0], np.float32)
    for out, arg in _forms("scatter", kind, (tensor, [[0], [1], [2], [2]],
                                             np.array([inf, -0.0, nan[1], nan[0]], np.float32))):
        np.testing.assert_array_equal(arg, [-1, -1, 2])  # ties keep the tensor's; first NaN
        ref.assert_same(out, np.array([inf, 0.0, nan[1]], np.float32))


@pytest.mark.parametrize("form", ["segment", "scatter"])
@pytest.mark.parametrize("kind", ["max", "min"])
def test_the_tensorflow_op_form_has_the_kernels_gradient(form, kind):
    """Ties and NaN: all of an element's gradient to the first winning row,
    in both forms (TensorFlow's own max gradient would split it)."""
    args = list(_case(np.random.default_rng(11), form, kind))
    wrt = [0] if form == "segment" else [0, 2]
    g = tf.constant(np.random.default_rng(12).standard_normal((7 if form == "segment" else 6, 3)),
                    tf.float32)
    composed = _composed.arg_segments if form == "segment" else _composed.arg_scatter
    grads = []
    for use_kernel in (True, False):
        sources = [tf.constant(args[i]) for i in wrt]
        with tf.GradientTape() as tape:
            tape.watch(sources)
            call = list(args)
            for i, t in zip(wrt, sources):
                call[i] = t
            if use_kernel:
                out = FUNCTIONS[form, kind](*call).output
            else:
                out = composed(FUNCTIONS[form, kind].__name__,
                               *[tf.convert_to_tensor(a) for a in call])[0]
        grads.append(tape.gradient(out, sources, output_gradients=g))
    for kernel, composed in zip(*grads):
        ref.assert_same(composed, kernel.numpy())
