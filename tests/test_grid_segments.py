"""Segments over ND indices: num_segments given as a grid's shape (a
vector), segment_ids as index rows [..., depth] into it, for every function
built on unsorted_segment_*'s inputs (the reductions, mean and sqrt_n, the
group-wise functions, the arg functions). The rows' cells are numbered
row-major, so every call must equal the same call on the flat cell ids with
num_segments = the grid's size, reshaped to the grid; the policies name or
drop or clamp rows as the scatters do."""

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
import reference as ref

IAE = tf.errors.InvalidArgumentError
RNG = np.random.default_rng(3)
GRID = [3, 4, 2]
# data [batch 2, points 50, features 3]; ids [2, 50, 3] into GRID
DATA = RNG.standard_normal((2, 50, 3)).astype(np.float32)
IDS = np.stack([RNG.integers(0, d, (2, 50)) for d in GRID], axis=-1).astype(np.int32)
FLAT = (IDS[..., 0] * 8 + IDS[..., 1] * 2 + IDS[..., 2]).astype(np.int32)

FUNCTIONS = ["unsorted_segment_sum", "unsorted_segment_prod", "unsorted_segment_min",
             "unsorted_segment_max", "unsorted_segment_mean", "unsorted_segment_sqrt_n",
             "segment_softmax", "segment_log_softmax", "segment_logsumexp", "segment_var",
             "segment_std", "unsorted_segment_max_with_argmax", "unsorted_segment_min_with_argmin",
             "unsorted_segment_argmax", "unsorted_segment_argmin"]
PER_ROW = ("segment_softmax", "segment_log_softmax")


def _as_grid(op, flat_result):
    """The flat-id result in the grid's shape."""
    flat_result = np.asarray(flat_result)
    if op in PER_ROW:
        return flat_result
    return flat_result.reshape(GRID + list(flat_result.shape[1:]))


def _check(op, got, want):
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            ref.assert_same(g, _as_grid(op, w))
    else:
        ref.assert_same(got, _as_grid(op, want))


@pytest.mark.parametrize("op", FUNCTIONS)
def test_grid_equals_flat_cell_ids(op):
    f = getattr(tso, op)
    _check(op, f(DATA, IDS, GRID), f(DATA, FLAT, 24))
    # int64 ids, a grid as an int64 tensor, one row of ids (rank 1)
    _check(op, f(DATA, IDS.astype(np.int64), tf.constant(GRID, tf.int64)), f(DATA, FLAT, 24))
    _check(op, f(DATA[0, 0], IDS[0, 0], GRID), f(DATA[0, 0], FLAT[0, 0], 24))


def test_by_hand():
    data = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    ids = [[0, 1], [1, 0], [0, 1], [-1, 0]]
    got = tso.unsorted_segment_sum(data, ids, [2, 2], bad_indices_policy="IGNORE")
    ref.assert_same(got, np.array([[0.0, 4.0], [2.0, 0.0]], np.float32))
    both = tso.unsorted_segment_max_with_argmax(data, ids, [2, 2], bad_indices_policy="IGNORE")
    ref.assert_same(both.argmax, np.array([[-1, 2], [1, -1]], np.int64))


@pytest.mark.parametrize("op", ["unsorted_segment_sum", "segment_softmax", "segment_logsumexp",
                                "unsorted_segment_max_with_argmax"])
def test_policies(op):
    f = getattr(tso, op)
    ids = IDS.copy()
    ids[0, 7] = [1, 4, 0]   # too large
    ids[1, 3] = [-1, 0, 1]  # negative: out of range here (a coordinate, not a segment id)
    with pytest.raises(IAE, match=r"segment_ids\[0,7\] = \[1, 4, 0\] does not index into "
                                  r"shape \[3,4,2\]"):
        f(DATA, ids, GRID)
    graph = tf.function(lambda d, i: f(d, i, GRID))
    with pytest.raises(IAE, match=r"segment_ids\[0,7\] = \[1, 4, 0\] does not index"):
        graph(DATA, ids)
    # IGNORE / FILL drop the rows; CLIP clamps each coordinate
    dropped = FLAT.copy()
    dropped[0, 7] = dropped[1, 3] = -1
    for policy in ("IGNORE", "FILL"):
        _check(op, f(DATA, ids, GRID, bad_indices_policy=policy), f(DATA, dropped, 24))
    clamped = ref.clip(ids, GRID)
    flat = clamped[..., 0] * 8 + clamped[..., 1] * 2 + clamped[..., 2]
    _check(op, f(DATA, ids, GRID, bad_indices_policy="CLIP"), f(DATA, flat, 24))


def test_shape_errors():
    with pytest.raises(IAE, match=r"num_segments = \[3, -4, 2\] as a grid's shape must not have "
                                  "a negative dimension"):
        tso.segment_softmax(DATA, IDS, [3, -4, 2])
    unknown = tf.function(lambda d, i, g: tso.unsorted_segment_sum(d, i, g),
                          input_signature=[tf.TensorSpec(None, tf.float32),
                                           tf.TensorSpec(None, tf.int32),
                                           tf.TensorSpec([3], tf.int32)])
    with pytest.raises(IAE, match="must not have a negative dimension"):
        unknown(DATA, IDS, [-3, -4, 2])
    # a depth that differs from the grid's rank, known at run time only
    rows = tf.function(lambda d, i, g: tso.unsorted_segment_sum(d, i, g),
                       input_signature=[tf.TensorSpec(None, tf.float32),
                                        tf.TensorSpec([2, 50, None], tf.int32),
                                        tf.TensorSpec([None], tf.int32)])
    with pytest.raises(IAE, match=r"segment_ids must be index rows \[\.\.\., depth\] with "
                                  "depth = the rank of the grid"):
        rows(DATA, IDS[..., :2], GRID)
    with pytest.raises(ValueError, match=r"grid of 3 dims, so segment_ids must be index rows "
                                         r"\[\.\.\., 3\]"):
        tso.segment_softmax(DATA, IDS[..., :2], GRID)
    with pytest.raises(ValueError, match="segment_ids must be index rows"):
        tso.unsorted_segment_sum(DATA[0, 0, 0], 1, GRID)


@pytest.mark.parametrize("op", ["unsorted_segment_sum", "unsorted_segment_max", "segment_softmax",
                                "segment_var", "unsorted_segment_max_with_argmax"])
def test_gradients_equal_the_flat_ones(op):
    f = getattr(tso, op)
    data = tf.constant(DATA)

    def value(out):
        return out[0] if isinstance(out, tuple) else out
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(data)
        grid = value(f(data, IDS, GRID))
        flat = value(f(data, FLAT, 24))
    weight = RNG.standard_normal(flat.shape).astype(np.float32)
    want = tape.gradient(flat, data, output_gradients=weight)
    got = tape.gradient(grid, data, output_gradients=_as_grid(op, weight))
    ref.assert_same(tf.convert_to_tensor(got), tf.convert_to_tensor(want))


def test_xla_unknown_shapes_and_stock_forms():
    def f(d, i, g):
        return (tso.segment_logsumexp(d, i, g), tso.segment_softmax(d, i, g),
                tso.unsorted_segment_max_with_argmax(d, i, g).argmax,
                tso.unsorted_segment_mean(d, i, g))
    eager = f(DATA, IDS, GRID)
    compiled = tf.function(lambda d, i: f(d, i, GRID), jit_compile=True)(DATA, IDS)
    unknown = tf.function(f, input_signature=[tf.TensorSpec(None, tf.float32),
                                              tf.TensorSpec(None, tf.int32),
                                              tf.TensorSpec([None], tf.int32)])(DATA, IDS, GRID)
    with tso.stock_ops():
        stock = tf.function(lambda d, i: f(d, i, GRID))(DATA, IDS)
    for results in (compiled, unknown, stock):
        for a, b in zip(results, eager):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # a static grid gives static shapes
    traced = tf.function(lambda d, i: f(d, i, GRID)).get_concrete_function(
        tf.TensorSpec([2, 50, 3], tf.float32), tf.TensorSpec([2, 50, 3], tf.int32))
    assert [o.shape.as_list() for o in traced.outputs] == [
        [3, 4, 2, 3], [2, 50, 3], [3, 4, 2, 3], [3, 4, 2, 3]]


def test_depth_mismatch_under_xla_is_an_error():
    f = tf.function(lambda d, i, n: tso.unsorted_segment_sum(d, i, n), jit_compile=True,
                    input_signature=[tf.TensorSpec([3]), tf.TensorSpec([3, 2], tf.int32),
                                     tf.TensorSpec([None], tf.int32)])
    ids = [[0, 1], [1, 1], [1, 0]]
    ref.assert_same(f([1.0, 2.0, 4.0], ids, [2, 2]), np.array([[0, 1], [4, 2]], np.float32))
    for grid in ([4], [2, 2, 2]):
        with pytest.raises((IAE, tf.errors.InternalError)):
            f([1.0, 2.0, 4.0], ids, grid)
