"""segment_* (sorted ids) and sparse_segment_* (rows gathered by indices,
reduced by sorted ids) against TensorFlow's kernels: values (sparse sums
bitwise in TensorFlow's order; sorted reductions in index order, bitwise
TensorFlow's where its kernel reduces in index order), gaps, errors and
policies, gradients, thread counts, tf.function, XLA and the patch."""

import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops._base.table import SPARSE_SEGMENTS
from table_rows import SORTED_SEGMENTS
from tf_scatter_ops.ops import DTYPES
import reference as ref

SORTED = [row.py for row in SORTED_SEGMENTS]  # segment_sum, _prod, _min, _max, _mean
SPARSE = [row.py for row in SPARSE_SEGMENTS]  # sparse_segment_sum, _mean, _sqrt_n
INDEX_DTYPES = [tf.int16, tf.int32, tf.int64]


def theirs(op):
    if op.startswith("sparse_"):
        return getattr(tf.sparse, op[len("sparse_"):])
    return getattr(tf.math, op)


def ours(op):
    return getattr(tso, op)


def values(rng, dtype, shape):
    data = ref.random_values(rng, dtype, shape)
    if dtype.is_integer:  # products and sums of small numbers stay meaningful
        data = (np.asarray(data) % 5).astype(dtype.as_numpy_dtype)
    return tf.constant(data, dtype)


def sorted_ids(rng, n, segments, gaps=True):
    """n sorted ids below `segments`, with empty segments if `gaps`."""
    if gaps:
        return np.sort(rng.integers(0, segments, size=n)).astype(np.int32)
    return np.sort(np.concatenate([np.arange(segments), rng.integers(0, segments, n - segments)]))


def small_case(rng, dtype, n=13, slice_shape=(3,), segments=6):
    """Segments of at most 9 rows, where TensorFlow's sorted kernel reduces in
    index order too."""
    data = values(rng, dtype, (n,) + slice_shape)
    ids = np.sort(np.concatenate([[0, 0], rng.integers(0, segments, n - 2)]))
    while np.bincount(ids).max() > 9:
        ids = np.sort(rng.integers(0, segments, n))
    return data, tf.constant(ids.astype(np.int32))


# -- segment_* -----------------------------------------------------------------

@pytest.mark.parametrize("op,dtype", [(op, d) for op in SORTED for d in DTYPES[op]],
                         ids=lambda v: getattr(v, "name", v))
def test_sorted_every_dtype_equals_tensorflow_bitwise(op, dtype, rng):
    for slice_shape in [(), (3,), (2, 5)]:
        data, ids = small_case(rng, dtype, slice_shape=slice_shape)
        ref.assert_same(ours(op)(data, ids), theirs(op)(data, ids).numpy())


@pytest.mark.parametrize("op", SORTED)
@pytest.mark.parametrize("n,slice_size,segments", [(200000, 1, 3000), (30000, 64, 500),
                                                   (3000, 64, 2), (40, 9000, 3)])
def test_sorted_long_runs_reduce_in_index_order(op, n, slice_size, segments, rng):
    """On long segments TensorFlow's sorted kernel vectorises its sums over 4
    interleaved accumulators; ours reduce in index order, as TensorFlow's
    unsorted kernel does, bitwise; gaps hold segment_*'s 0 (1 for prod)."""
    data = values(rng, tf.float32, (n, slice_size))
    if op == "segment_prod":
        data = 1 + data / 64
    ids = sorted_ids(rng, n, segments)
    got = ours(op)(data, ids).numpy()
    np.testing.assert_allclose(got, theirs(op)(data, ids).numpy(), rtol=2e-4, atol=1e-4)
    unsorted = ("unsorted_segment_sum" if op == "segment_mean" else "unsorted_" + op)
    expected = getattr(tf.math, unsorted)(data, ids, segments).numpy()
    count = np.bincount(ids, minlength=segments)[:, None]
    if op == "segment_mean":
        expected = expected / np.maximum(count, 1).astype(np.float32)
    expected[count[:, 0] == 0] = 1 if op == "segment_prod" else 0
    ref.assert_same(got, expected[:ids[-1] + 1])


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_sorted_index_dtypes(index_dtype, rng):
    data, ids = small_case(rng, tf.float64)
    expected = tf.math.segment_max(data, ids).numpy()
    ref.assert_same(tso.segment_max(data, tf.cast(ids, index_dtype)), expected)


def test_sorted_gaps_and_shapes():
    data = tf.constant([1.0, 2.0, 3.0])
    for op, gap in (("segment_sum", 0), ("segment_max", 0), ("segment_min", 0),
                    ("segment_prod", 1), ("segment_mean", 0)):
        ref.assert_same(ours(op)(data, [0, 0, 3]), theirs(op)(data, [0, 0, 3]).numpy())
        assert ours(op)(data, [0, 0, 3]).numpy()[1] == gap
    ref.assert_same(tso.segment_mean(tf.constant([1, 2, 4]), [0, 0, 3]),
                    np.array([1, 0, 0, 4], np.int32))  # integer division, as TensorFlow
    assert tso.segment_sum(tf.zeros([0, 3]), tf.zeros([0], tf.int32)).shape == (0, 3)
    assert tso.segment_sum(tf.ones([4, 2, 3]), [0, 1, 1, 5]).shape == (6, 2, 3)


def test_sorted_errors_are_tensorflows():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"segment ids are not increasing: segment_ids\[2\] = 1 follows "
                             r"segment_ids\[1\] = 2"):
        tso.segment_sum([1.0, 2.0, 3.0], [0, 2, 1])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Segment id -1 out of range \[0, 2\), possibly because "
                             "'segment_ids' input is not sorted"):
        tso.segment_sum([1.0, 2.0, 3.0], [-1, 0, 1])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="segment_ids should be the same size as dimension 0 of input"):
        tso.segment_sum([1.0, 2.0, 3.0], [0, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="segment_ids should be a vector"):
        tso.segment_sum([[1.0, 2.0, 3.0]], [[0]])
    with pytest.raises(ValueError, match="Shape must be rank 1"):  # a graph's shape function
        tf.function(lambda: tso.segment_sum([[1.0, 2.0, 3.0]], [[0]])).get_concrete_function()
    with pytest.raises(ValueError, match="segment_max does not support dtype complex64"):
        tso.segment_max(tf.ones([2], tf.complex64), [0, 1])
    for bad in ([0, 2, 1], [-1, 0, 1]):  # TensorFlow's messages start ours
        with pytest.raises(tf.errors.InvalidArgumentError) as theirs_:
            tf.math.segment_sum([1.0, 2.0, 3.0], bad)
        with pytest.raises(tf.errors.InvalidArgumentError) as ours_:
            tso.segment_sum([1.0, 2.0, 3.0], bad)
        message = theirs_.value.message.split(" [Op:")[0].split("}} ")[-1]
        assert ours_.value.message.split("}} ")[-1].startswith(message), (ours_.value.message, message)


def test_sorted_ignore_drops_negative_ids():
    got = tso.segment_sum([1.0, 2.0, 4.0, 8.0], [-2, -1, 1, 1], bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(got.numpy(), [0.0, 12.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="not increasing"):
        tso.segment_sum([1.0, 2.0], [1, -1], bad_indices_policy="IGNORE")


# -- sparse_segment_* ----------------------------------------------------------

def sparse_case(rng, dtype, rows=50, n=200, segments=30, slice_shape=(4,)):
    data = values(rng, dtype, (rows,) + slice_shape)
    indices = rng.integers(0, rows, size=n).astype(np.int32)
    return data, tf.constant(indices), tf.constant(sorted_ids(rng, n, segments))


@pytest.mark.parametrize("op,dtype", [(op, d) for op in SPARSE for d in DTYPES[op]],
                         ids=lambda v: getattr(v, "name", v))
def test_sparse_every_dtype_equals_tensorflow_bitwise(op, dtype, rng):
    for slice_shape, n, segments in [((), 40, 7), ((4,), 300, 9), ((3, 2), 9, 2)]:
        data, indices, ids = sparse_case(rng, dtype, n=n, segments=segments,
                                         slice_shape=slice_shape)
        ref.assert_same(ours(op)(data, indices, ids), theirs(op)(data, indices, ids).numpy())
        ref.assert_same(ours(op)(data, indices, ids, num_segments=segments + 3),
                        theirs(op)(data, indices, ids, num_segments=segments + 3).numpy())


@pytest.mark.parametrize("op", SPARSE)
@pytest.mark.parametrize("rows,n,segments,slice_size",
                         [(100000, 512000, 64000, 8), (1000, 20000, 3, 64), (50, 100, 100, 3000)])
def test_sparse_parallel_paths_equal_tensorflow_bitwise(op, rows, n, segments, slice_size, rng):
    data, indices, ids = sparse_case(rng, tf.float32, rows, n, segments, (slice_size,))
    ref.assert_same(ours(op)(data, indices, ids), theirs(op)(data, indices, ids).numpy())


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("id_dtype", INDEX_DTYPES)
def test_sparse_index_dtypes(index_dtype, id_dtype, rng):
    data, indices, ids = sparse_case(rng, tf.float32)
    expected = tf.sparse.segment_mean(data, indices, ids, num_segments=35).numpy()
    got = tso.sparse_segment_mean(data, tf.cast(indices, index_dtype), tf.cast(ids, id_dtype),
                                  num_segments=tf.constant(35, tf.int64))
    ref.assert_same(got, expected)


def test_sparse_errors_and_policy():
    data = tf.constant([[1.0], [2.0], [4.0]])
    cases = [
        (([0, 5], [0, 1], None), r"Bad: indices\[1\] == 5 out of range \[0, 3\)"),
        (([0, -1], [0, 1], None), r"Bad: indices\[1\] == -1 out of range \[0, 3\)"),
        (([0, 1], [1, 0], None), r"segment ids are not increasing: segment_ids\[1\] = 0"),
        (([0, 1], [0, -1], None), r"segment ids must be >= 0"),  # no rows: the last id + 1 = 0
        (([0, 1], [-1, 0], None), r"Segment id -1 out of range \[0, 1\), possibly because "
                                  r"'segment_ids' input is not sorted\."),
        (([0, 1], [0, -1], 3), r"segment ids are not increasing"),
        (([0, 1], [0, 0], -2), r"segment ids must be >= 0"),
        (([0, 1], [0, 3], 2), r"segment ids must be < num_segments: segment_ids\[1\] = 3 is "
                              r"out of range \[0, 2\)"),
        (([0, 1, 2], [0, 1], None), "segment_ids and indices should have same size"),
    ]
    for (indices, ids, num), message in cases:
        with pytest.raises((tf.errors.InvalidArgumentError, ValueError), match=message):
            tso.sparse_segment_sum(data, indices, ids, num_segments=num)
    got = tso.sparse_segment_mean(data, [0, 5, 1, 2, 2], [0, 0, 1, 1, 3], num_segments=2,
                                  bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(got.numpy(), [[1.0], [3.0]])  # dropped rows count for no mean
    assert tso.sparse_segment_sum(tf.zeros([3, 2]), tf.zeros([0], tf.int32),
                                  tf.zeros([0], tf.int32)).shape == (0, 2)
    ref.assert_same(tso.sparse_segment_sqrt_n(data, [0, 1], [0, 0], num_segments=4),
                    tf.sparse.segment_sqrt_n(data, [0, 1], [0, 0], num_segments=4).numpy())


# -- gradients -----------------------------------------------------------------

def grads(fn, data):
    with tf.GradientTape() as tape:
        tape.watch(data)
        y = fn(data)
        loss = tf.reduce_sum(y * tf.cast(tf.reshape(tf.range(1, tf.size(y) + 1), tf.shape(y)),
                                         y.dtype) / 7)
    return tape.gradient(loss, data)


@pytest.mark.parametrize("op", SORTED)
def test_sorted_gradients_equal_tensorflows(op, rng):
    data = tf.constant(rng.integers(-3, 4, size=(14, 3)).astype(np.float64))  # ties and zeros
    ids = tf.constant(sorted_ids(rng, 14, 6))
    expected = grads(lambda d: theirs(op)(d, ids), data)
    ref.assert_same(grads(lambda d: ours(op)(d, ids), data), expected.numpy())
    smooth = tf.constant(np.linspace(0.5, 2.0, 14 * 3).reshape(14, 3))
    theoretical, numerical = tf.test.compute_gradient(lambda d: ours(op)(d, ids), [smooth])
    np.testing.assert_allclose(theoretical[0], numerical[0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op", SPARSE)
@pytest.mark.parametrize("num_segments", [None, 40])
def test_sparse_gradients_equal_tensorflows(op, num_segments, rng):
    data, indices, ids = sparse_case(rng, tf.float64, rows=20, n=60, segments=30)
    f = lambda fn: lambda d: fn(d, indices, ids, num_segments=num_segments)  # noqa: E731
    expected = tf.convert_to_tensor(grads(f(theirs(op)), data)).numpy()
    np.testing.assert_allclose(tf.convert_to_tensor(grads(f(ours(op)), data)).numpy(), expected,
                               rtol=1e-12, atol=1e-12)
    sparse = grads(lambda d: ours(op)(d, indices, ids, num_segments, sparse_gradient=True), data)
    assert isinstance(sparse, tf.IndexedSlices)
    np.testing.assert_allclose(tf.convert_to_tensor(sparse).numpy(), expected, rtol=1e-12,
                               atol=1e-12)
    theoretical, numerical = tf.test.compute_gradient(f(ours(op)), [data])
    np.testing.assert_allclose(theoretical[0], numerical[0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_sparse_gradient_with_every_index_dtype(index_dtype, rng):
    data, indices, ids = sparse_case(rng, tf.float64, rows=20, n=60, segments=30)
    expected = tf.convert_to_tensor(
        grads(lambda d: tf.sparse.segment_sqrt_n(d, indices, ids), data)).numpy()
    narrow = tf.cast(indices, index_dtype), tf.cast(ids, index_dtype)
    for sparse_gradient in (False, True):
        got = grads(lambda d: tso.sparse_segment_sqrt_n(d, *narrow, sparse_gradient=sparse_gradient),
                    data)
        np.testing.assert_allclose(tf.convert_to_tensor(got).numpy(), expected, rtol=1e-12)


def test_second_order():
    data = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    for fn in (lambda d: tso.segment_sum(d * d, [1, 1]),
               lambda d: tso.sparse_segment_mean(d * d, [0, 1, 1], [0, 0, 2])):
        with tf.GradientTape() as outer:
            outer.watch(data)
            with tf.GradientTape() as inner:
                inner.watch(data)
                y = tf.reduce_sum(fn(data))
            g = inner.gradient(y, data)
        expected_fn = {0: lambda d: tf.math.segment_sum(d * d, [1, 1]),
                       1: lambda d: tf.sparse.segment_mean(d * d, [0, 1, 1], [0, 0, 2])}
        with tf.GradientTape() as outer2:
            outer2.watch(data)
            with tf.GradientTape() as inner2:
                inner2.watch(data)
                y2 = tf.reduce_sum(expected_fn[0 if fn(data).shape[0] == 2 else 1](data))
            g2 = inner2.gradient(y2, data)
        ref.assert_same(outer.gradient(g, data), outer2.gradient(g2, data).numpy())


# -- threads, functions, XLA, the patch ---------------------------------------

THREADS_SCRIPT = r"""
import sys, numpy as np, tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(int(sys.argv[1]))
import tf_scatter_ops as tso
rng = np.random.default_rng(5)
data = tf.constant(rng.standard_normal((20000, 48)).astype(np.float32))
ids = np.sort(rng.integers(0, 700, 20000)).astype(np.int32)
idx = rng.integers(0, 20000, 60000).astype(np.int32)
sids = np.sort(rng.integers(0, 5000, 60000)).astype(np.int32)
out = [tso.segment_sum(data, ids), tso.segment_max(data, ids), tso.segment_mean(data, [0] * 20000),
       tso.sparse_segment_mean(data, idx, sids), tso.sparse_segment_sum(data, idx, [0] * 60000)]
np.savez(sys.argv[2], *[o.numpy() for o in out])
"""


def test_same_bits_for_any_thread_count(tmp_path):
    results = []
    for threads in (1, 2, 5):
        path = tmp_path / f"t{threads}.npz"
        subprocess.run([sys.executable, "-c", THREADS_SCRIPT, str(threads), str(path)],
                       check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
        results.append(np.load(path))
    for other in results[1:]:
        for key in results[0]:
            ref.assert_same(other[key], results[0][key])


def test_graph_shape_inference():
    @tf.function(input_signature=[tf.TensorSpec([None, 5]), tf.TensorSpec([None], tf.int32)])
    def f(data, ids):
        return tso.segment_max(data, ids), tso.sparse_segment_sum(data, ids, ids, num_segments=7)
    shapes = [s.as_list() for s in f.get_concrete_function().output_shapes]
    assert shapes == [[None, 5], [7, 5]]


@pytest.mark.parametrize("jit", [False, True], ids=["function", "xla"])
def test_tf_function_and_xla(jit, rng):
    """In a function ours. Under XLA, which has no kernel for TensorFlow's
    segment_* and sparse_segment_* ops, ours fail as stock TensorFlow's do,
    except sparse_segment_* with num_segments, which compiles (a gather and
    XLA's segment sum)."""
    data, indices, ids = sparse_case(rng, tf.float32)
    cases = [("segment_sum", (data, tf.sort(indices)[:50]), {}, False),
             ("sparse_segment_mean", (data, indices, ids), {}, False),
             ("sparse_segment_sqrt_n", (data, indices, ids), {"num_segments": 40}, True)]
    for op, args, kwargs, compiles in cases:
        f = tf.function(lambda *a, op=op, kw=kwargs: ours(op)(*a, **kw), jit_compile=jit)
        expected = theirs(op)(*args, **kwargs).numpy()
        if not jit:
            ref.assert_same(f(*args), expected)
            continue
        stock = tf.function(lambda *a, op=op, kw=kwargs: theirs(op)(*a, **kw), jit_compile=True)
        with pytest.raises(tf.errors.InvalidArgumentError, match="unsupported operations"):
            stock(*args)
        if compiles:
            np.testing.assert_allclose(f(*args).numpy(), expected, rtol=1e-5, atol=1e-6)
        else:
            with pytest.raises(tf.errors.InvalidArgumentError, match="unsupported operations"):
                f(*args)


def op_types(fn, *args):
    graph = tf.Graph()
    with graph.as_default():
        fn(*[tf.constant(a) for a in args])
    return {o.type for o in graph.get_operations()}


def test_the_patch_routes_sorted_and_sparse_names_and_keras(rng):
    data, indices, ids = sparse_case(rng, tf.float32)
    sorted_ids_ = np.sort(indices.numpy()[:50])  # one per row of data
    with tso.patched():
        for name in SORTED:
            for module in (tf.math, tf.compat.v2.math):
                types = op_types(lambda d, i: getattr(module, name)(d, i), data, sorted_ids_)
                assert "TfScatter>" + SORTED_SEGMENTS[SORTED.index(name)].op in types, types
                assert not any(t.startswith("Segment") for t in types), types
        for row in SPARSE_SEGMENTS:
            for module in (tf.sparse, tf.compat.v2.sparse):
                fn = getattr(module, row.py[len("sparse_"):])
                types = op_types(lambda d, x, i: fn(d, x, i), data, indices, ids)
                assert "TfScatter>" + row.op in types, types
        keras = pytest.importorskip(
            "keras", reason="keras is not installed: keras.ops' segment functions not checked")
        types = op_types(lambda d, i: keras.ops.segment_sum(d, i, sorted=True), data, sorted_ids_)
        assert "TfScatter>SegmentSum" in types, types
        got = tf.sparse.segment_sum(data, indices, ids)
    ref.assert_same(got, tf.sparse.segment_sum(data, indices, ids).numpy())


def test_the_patch_densifies_indexed_slices_with_our_segment_sum(rng):
    """The gradient of a row gather is an IndexedSlices; where TensorFlow
    makes it dense (here the gradient of a function's input), the patch's
    conversion runs our segment sum, with TensorFlow's values."""
    params = tf.constant(rng.standard_normal((30, 4)).astype(np.float32))
    rows = tf.constant(rng.integers(0, 30, 100).astype(np.int32))

    def grad(p, r):
        with tf.GradientTape() as tape:
            tape.watch(p)
            loss = tf.reduce_sum(tf.gather(p, r) ** 2)
        return tf.convert_to_tensor(tape.gradient(loss, p))

    expected = grad(params, rows).numpy()
    with tso.patched():
        types = op_types(grad, params.numpy(), rows.numpy())
        got = grad(params, rows)
        xla = tf.function(grad, jit_compile=True)(params, rows)
    assert "TfScatter>UnsortedSegmentSum" in types and "UnsortedSegmentSum" not in types, types
    ref.assert_same(got, expected)
    np.testing.assert_allclose(xla.numpy(), expected, rtol=1e-6)
    assert "TfScatter>UnsortedSegmentSum" not in op_types(grad, params.numpy(), rows.numpy())


@pytest.mark.parametrize("dtype,rows", [(tf.int8, 256), (tf.uint8, 512), (tf.int16, 65536)])
def test_integer_segment_mean_whose_count_wraps_to_zero_raises(dtype, rows):
    """TensorFlow divides by the row count in the data's dtype and crashes
    where that is 0; ours names the segment. One row fewer still divides as
    TensorFlow does (the wrapped sum by the wrapped count)."""
    ids = tf.concat([tf.zeros([3], tf.int32), tf.ones([rows], tf.int32)], 0)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"segment 1 has {rows} rows, which is 0 as {dtype.name}"):
        tso.segment_mean(tf.ones([rows + 3], dtype), ids)
    got = tso.segment_mean(tf.ones([rows + 2], dtype), ids[:-1])
    np.testing.assert_array_equal(got.numpy(), tf.math.segment_mean(tf.ones([rows + 2], dtype),
                                                                     ids[:-1]).numpy())


@pytest.mark.parametrize("n", [40_000, 300_000])
def test_sorted_ids_cut_in_parallel_chunks(n, rng):
    """The ids are cut into runs in parallel chunks (of 16384 ids and more):
    runs across chunk boundaries, a negative prefix longer than a chunk
    (IGNORE), and the first decrease named when a later chunk also has one."""
    ids = np.sort(rng.integers(0, n // 3, size=n))
    data = tf.constant(rng.standard_normal((n, 3)), tf.float32)
    ref.assert_same(tso.segment_sum(data, ids),
                    tf.math.unsorted_segment_sum(data, ids, int(ids[-1]) + 1).numpy())
    long_run = np.concatenate([np.zeros(n // 2, np.int64), ids[n // 2:]])
    ref.assert_same(tso.segment_max(data, long_run),
                    tf.math.segment_max(data, long_run).numpy())
    negative = np.concatenate([np.full(20_000, -1), ids[20_000:]])
    kept = tso.segment_sum(data, negative, bad_indices_policy="IGNORE")
    ref.assert_same(kept, tf.math.unsorted_segment_sum(data, negative, int(ids[-1]) + 1).numpy())
    bad = ids.copy()
    for at in (n - 5, n // 2 + 7):  # the later one is the first
        bad[at] = bad[at - 1] - 1
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"segment_ids\[{n // 2 + 7}\] = {bad[n // 2 + 7]} follows"):
        tso.segment_sum(data, bad)


def test_sparse_large_inputs_name_the_first_bad_row(rng):
    """sparse_segment_* on 200k rows (a run of 100k ids, then short runs):
    a bad index or a decrease deep in the input is named at its first
    position, and IGNORE drops the bad rows as the small cases do."""
    n, rows = 200_000, 5000
    data = tf.constant(rng.standard_normal((rows, 4)), tf.float32)
    indices = rng.integers(0, rows, size=n)
    ids = np.concatenate([np.zeros(n // 2, np.int64), np.sort(rng.integers(1, 900, n - n // 2))])
    ref.assert_same(tso.sparse_segment_mean(data, indices, ids),
                    tf.sparse.segment_mean(data, indices, ids).numpy())
    bad = indices.copy()
    bad[[n - 3, 150_001]] = rows + 1
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"indices\[150001\] == {rows + 1} out of range"):
        tso.sparse_segment_sum(data, bad, ids)
    keep = np.ones(n, bool)
    keep[[n - 3, 150_001]] = False
    ref.assert_same(tso.sparse_segment_sum(data, bad, ids, num_segments=900,
                                           bad_indices_policy="IGNORE"),
                    tf.sparse.segment_sum(data, indices[keep], ids[keep], num_segments=900).numpy())
    down = ids.copy()
    down[170_000] = down[169_999] - 1
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids\[170000\]"):
        tso.sparse_segment_sum(data, indices, down)
