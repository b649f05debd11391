"""The unsorted segment reductions against TensorFlow's own kernels: values
bitwise (every reduction of TensorFlow's CPU kernels is in index order), empty
segments, negative ids, ids out of range under both policies, shapes and
errors, gradients, tf.function and XLA, and the drop-in patch."""

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from table_rows import SEGMENTS
from tf_scatter_ops.ops import DTYPES
import reference as ref

KERNELS = [row.py for row in SEGMENTS]  # sum, prod, min, max: the op table's
COMPOSED = ["unsorted_segment_mean", "unsorted_segment_sqrt_n"]
FLOATS = [tf.bfloat16, tf.float16, tf.float32, tf.float64]

# (data shape, ids rank, num_segments): small; large enough for the parallel
# grouped path (more than 128k update elements); long slices.
GEOMETRIES = [
    ((7,), 1, 5),
    ((6, 3), 1, 4),
    ((4, 3, 2), 2, 5),
    ((200000,), 1, 3000),
    ((3000, 64), 1, 50),
    ((20, 9000), 1, 6),
]


def theirs(op):
    return getattr(tf.math, op)


def ours(op):
    return getattr(tso, op)


def case(rng, dtype, shape, ids_rank, num, negative=True):
    data = ref.random_values(rng, dtype, shape)
    if dtype.is_integer:  # products and sums of small numbers stay meaningful
        data = (np.asarray(data) % 5).astype(dtype.as_numpy_dtype)
    ids = rng.integers(-1 if negative else 0, num, size=shape[:ids_rank])
    return tf.constant(data, dtype), tf.constant(ids, tf.int32)


@pytest.mark.parametrize("op,dtype", [(op, d) for op in KERNELS for d in DTYPES[op]],
                         ids=lambda v: getattr(v, "name", v))
def test_every_kernel_and_dtype_equals_tensorflow_bitwise(op, dtype, rng):
    for shape, ids_rank, num in GEOMETRIES[:3]:
        data, ids = case(rng, dtype, shape, ids_rank, num)
        ref.assert_same(ours(op)(data, ids, num), theirs(op)(data, ids, num).numpy())


@pytest.mark.parametrize("op", KERNELS + COMPOSED)
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=lambda g: f"{g[0]}:{g[1]}")
def test_parallel_paths_equal_tensorflow_bitwise(op, geometry, rng):
    shape, ids_rank, num = geometry
    data, ids = case(rng, tf.float32, shape, ids_rank, num)
    if op == "unsorted_segment_prod":  # keep products finite and nonzero
        data = 1 + data / 64
    ref.assert_same(ours(op)(data, ids, num), theirs(op)(data, ids, num).numpy())


@pytest.mark.parametrize("index_dtype", [tf.int16, tf.int32, tf.int64])
@pytest.mark.parametrize("num_dtype", [tf.int32, tf.int64])
def test_index_and_num_segments_dtypes(index_dtype, num_dtype, rng):
    data, ids = case(rng, tf.float64, (30, 2), 1, 7)
    expected = tf.math.unsorted_segment_sum(data, ids, 7).numpy()
    got = tso.unsorted_segment_sum(data, tf.cast(ids, index_dtype), tf.constant(7, num_dtype))
    ref.assert_same(got, expected)


def test_empty_segments_hold_tensorflows_values():
    for dtype in (tf.float32, tf.float16, tf.bfloat16, tf.int32, tf.uint8):
        data = tf.ones([2, 2], dtype)
        for op in KERNELS:
            ref.assert_same(ours(op)(data, [0, 0], 3), theirs(op)(data, [0, 0], 3).numpy())
    got = tso.unsorted_segment_max(tf.constant([1.0]), [0], 2).numpy()
    assert got[1] == np.finfo(np.float32).min


def test_nan_follows_tensorflows_segment_rules():
    """A NaN row replaces the result and the next number replaces a NaN: not
    the scatters' rule (shared/tf-behaviour, measured)."""
    for values in ([np.nan, 2.0], [2.0, np.nan], [np.nan, np.nan, 3.0]):
        data = tf.constant(values)
        ids = [0] * len(values)
        for op in ("unsorted_segment_max", "unsorted_segment_min"):
            ref.assert_same(ours(op)(data, ids, 1), theirs(op)(data, ids, 1).numpy())


def test_negative_ids_are_dropped_under_every_policy():
    data = tf.constant([1.0, 2.0, 4.0, 8.0])
    for policy in ("", "ERROR", "IGNORE"):
        got = tso.unsorted_segment_sum(data, [0, -1, 1, -5], 2, bad_indices_policy=policy)
        np.testing.assert_array_equal(got.numpy(), [1.0, 4.0])


def test_an_id_past_the_end_is_tensorflows_error_unless_ignored():
    data = tf.constant([[1.0], [2.0], [4.0]])
    for ids, where in (([0, 7, 1], r"segment_ids\[1\] = 7"), ([-1, -2, 3], r"segment_ids\[2\] = 3")):
        with pytest.raises(tf.errors.InvalidArgumentError, match=where + r" is out of range \[0, 3\)"):
            tso.unsorted_segment_sum(data, ids, 3)
        with pytest.raises(tf.errors.InvalidArgumentError, match=where):
            tf.math.unsorted_segment_sum(data, ids, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids\[0,1\] = 5"):
        tso.unsorted_segment_max(tf.ones([2, 2]), [[0, 5], [1, 1]], 4)
    got = tso.unsorted_segment_sum(data, [0, 7, 1], 3, bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(got.numpy(), [[1.0], [4.0], [0.0]])


def test_shapes_and_bad_arguments():
    data = tf.ones([3, 2, 4])
    assert tso.unsorted_segment_sum(data, [[0, 1], [1, 2], [0, 0]], 5).shape == (5, 4)
    assert tso.unsorted_segment_sum(data, 1, 2).shape == (2, 3, 2, 4)  # scalar ids
    assert tso.unsorted_segment_sum(tf.zeros([0, 3]), tf.zeros([0], tf.int32), 2).shape == (2, 3)
    assert tso.unsorted_segment_sum(tf.zeros([0, 3]), tf.zeros([0], tf.int32), 0).shape == (0, 3)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"data.shape = \[3,2,4\] does not start with segment_ids.shape = \[2\]"):
        tso.unsorted_segment_sum(data, [0, 1], 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_segments == -1 must not be negative"):
        tso.unsorted_segment_sum(data, [0, 1, 2], -1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_segments should be a scalar"):
        tso.unsorted_segment_sum(data, [0, 1, 2], [[4]])
    # a vector is a grid's shape (test_grid_segments.py): ids must be rows into it
    with pytest.raises(ValueError, match=r"is a grid of 1 dims, so segment_ids must be index "
                                         r"rows \[\.\.\., 1\] into it; got shape \(3,\)"):
        tso.unsorted_segment_sum(data, [0, 1, 2], [4])
    with pytest.raises(ValueError, match="unsorted_segment_max does not support dtype complex64"):
        tso.unsorted_segment_max(tf.ones([2], tf.complex64), [0, 1], 2)
    with pytest.raises(ValueError, match="indices must be int16, int32 or int64"):
        tso.unsorted_segment_sum(data, tf.constant([0.0, 1.0, 2.0]), 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown bad_indices_policy"):
        tso.unsorted_segment_sum(data, [0, 1, 2], 3, bad_indices_policy="ignore")


def test_graph_shape_inference():
    @tf.function(input_signature=[tf.TensorSpec([None, 5]), tf.TensorSpec([None], tf.int32)])
    def f(data, ids):
        return tso.unsorted_segment_max(data, ids, 6)
    assert f.get_concrete_function().output_shapes.as_list() == [6, 5]

    @tf.function(input_signature=[tf.TensorSpec([3, 5])])
    def bad(data):
        return tso.unsorted_segment_sum(data, tf.zeros([4], tf.int32), 2)
    with pytest.raises(ValueError, match="does not start with segment_ids.shape"):
        bad.get_concrete_function()


@pytest.mark.parametrize("op", KERNELS + COMPOSED)
def test_gradients_equal_tensorflows(op, rng):
    data = tf.constant(rng.integers(-3, 4, size=(12, 3)).astype(np.float64))  # ties and zeros
    ids = tf.constant(rng.integers(-1, 5, size=12), tf.int32)
    expected, got = [], []
    for fn, out in ((theirs(op), expected), (ours(op), got)):
        with tf.GradientTape() as tape:
            tape.watch(data)
            y = fn(data, ids, 5)
            loss = tf.reduce_sum(y * tf.range(1.0, 6.0, dtype=tf.float64)[:, None] / 7)
        out.append(tape.gradient(loss, data).numpy())
    np.testing.assert_array_equal(got[0], expected[0])


def test_gradients_are_numerically_right():
    data = tf.constant(np.linspace(0.5, 2.0, 12).reshape(6, 2))
    ids = tf.constant([0, 1, 0, 2, 1, -1])
    for op in KERNELS + COMPOSED:
        theoretical, numerical = tf.test.compute_gradient(lambda d: ours(op)(d, ids, 3), [data])
        np.testing.assert_allclose(theoretical[0], numerical[0], rtol=1e-6, atol=1e-6)


def test_second_order_sum():
    data = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as outer:
        outer.watch(data)
        with tf.GradientTape() as inner:
            inner.watch(data)
            y = tf.reduce_sum(tso.unsorted_segment_sum(data * data, [1, 1], 2))
        g = inner.gradient(y, data)
    np.testing.assert_array_equal(outer.gradient(g, data).numpy(), np.full([2, 2], 2.0))


@pytest.mark.parametrize("jit", [False, True], ids=["function", "xla"])
def test_tf_function_and_xla(jit, rng):
    data, ids = case(rng, tf.float32, (50, 4), 1, 9)
    for op in KERNELS + COMPOSED:
        f = tf.function(lambda d, i, op=op: ours(op)(d, i, 9), jit_compile=jit)
        expected = theirs(op)(data, ids, 9).numpy()
        if jit:  # XLA runs TensorFlow's op, with XLA's summation order
            np.testing.assert_allclose(f(data, ids).numpy(), expected, rtol=1e-5, atol=1e-5)
        else:  # in a function TensorFlow rewrites sqrt_n's x / sqrt(n) as x * rsqrt(n)
            stock = tf.function(lambda d, i, op=op: theirs(op)(d, i, 9))
            ref.assert_same(f(data, ids), stock(data, ids).numpy())


def op_types(fn, *args):
    """The op types a graph built by fn(*args) holds."""
    graph = tf.Graph()
    with graph.as_default():
        fn(*[tf.constant(a) for a in args])
    return {o.type for o in graph.get_operations()}


def test_the_patch_routes_tensorflows_names_and_keras(rng):
    data, ids = case(rng, tf.float32, (40, 3), 1, 6, negative=False)
    with tso.patched():
        for name in KERNELS + COMPOSED:
            for module in (tf.math, tf.compat.v2.math):
                types = op_types(lambda d, i: getattr(module, name)(d, i, 6), data, ids)
                assert any(t.startswith("TfScatter>UnsortedSegment") for t in types), (name, module.__name__, types)
                assert not any(t.startswith("UnsortedSegment") for t in types), (name, types)
        keras = pytest.importorskip(
            "keras", reason="keras is not installed: keras.ops' segment functions not checked")
        types = op_types(lambda d, i: keras.ops.segment_max(d, i, num_segments=6), data, ids)
        assert "TfScatter>UnsortedSegmentMax" in types, types
        got = keras.ops.segment_sum(data, ids, num_segments=6)
    ref.assert_same(got, tf.math.unsorted_segment_sum(data, ids, 6).numpy())
