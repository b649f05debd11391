"""indices_are_sorted and unique_indices (JAX's names) on scatter_nd and the
tensor scatters. Sorted rows let the CPU kernel skip its grouping passes (one
check pass and one apply pass over the rows, nothing stored per row). The
results are bitwise those without the hints (the rows still apply in index
order); a false indices_are_sorted is an InvalidArgumentError naming the
first row that breaks it (the first kept row whose index comes before the
previous kept row's; with unique_indices too: the first not strictly after
it), with the input untouched; under bad_indices_policy="IGNORE" the rows
are applied as without the hints, and bad rows are skipped by the check.
unique_indices alone changes no work on the CPU, so it is neither relied on
nor checked: a repeated row gives the plain result. Where TensorFlow's ops
run (XLA, stock_ops()) the hints are dropped."""

import zlib

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops._dispatch import context as _calls
from tf_scatter_ops._base import table as _table
import table_rows
from ecosystem_util import traced_op_types
import reference as ref

IAE = tf.errors.InvalidArgumentError
SCATTERS = [row.py for row in table_rows.TENSOR_SCATTERS]


def _rows(rng, nslots, n, sorted_, unique, depth=1, dims=None):
    """Index rows of `depth` into `dims` (flat slots sorted and/or distinct)."""
    if unique:
        flat = rng.permutation(nslots)[:n]
    else:
        flat = rng.integers(0, nslots, size=n)
    if sorted_:
        flat = np.sort(flat)
    if depth == 1:
        return flat[:, None]
    return np.stack(np.unravel_index(flat, dims), axis=-1)


def _call(op, tensor, idx, upd, **kw):
    if op == "scatter_nd":
        return tso.scatter_nd(idx, upd, tensor.shape, **kw)
    return getattr(tso, op)(tensor, idx, upd, **kw)


@pytest.mark.parametrize("op", SCATTERS + ["scatter_nd"])
@pytest.mark.parametrize("hint", ["sorted", "unique", "both"])
@pytest.mark.parametrize("depth", [1, 2])
def test_hinted_equals_unhinted_bitwise(op, hint, depth):
    rng = np.random.default_rng(zlib.crc32(f"{op} {hint} {depth}".encode()))
    dims = (40, 25)
    nslots = 40 if depth == 1 else 1000
    n = 30 if hint != "sorted" else 300
    idx = _rows(rng, nslots, n, hint != "unique", hint != "sorted", depth, dims)
    tensor = rng.standard_normal(dims).astype(np.float32)
    upd = rng.standard_normal((n,) + dims[depth:]).astype(np.float32)
    if op == "tensor_scatter_nd_div":
        upd = upd + np.float32(3)
    kw = {"indices_are_sorted": hint != "unique", "unique_indices": hint != "sorted"}
    ref.assert_same(_call(op, tensor, idx, upd, **kw), _call(op, tensor, idx, upd).numpy())


@pytest.mark.parametrize("hint", ["sorted", "unique", "both"])
@pytest.mark.parametrize("slice_len", [1, 16, 5000])
def test_parallel_paths_match_bitwise(hint, slice_len):
    """Large enough for the thread pool: runs split across threads (sorted),
    float sums in index order. unique alone and 5000-wide slices take the
    unhinted core (the promise checked first for the wide ones): the same
    results by construction, kept as a guard on that routing."""
    rng = np.random.default_rng(slice_len)
    nslots = 200_000 // slice_len + 10
    n = nslots // 2 if hint != "sorted" else 4 * nslots
    idx = _rows(rng, nslots, n, hint != "unique", hint != "sorted").astype(np.int64)
    tensor = rng.standard_normal((nslots, slice_len)).astype(np.float32)
    upd = rng.standard_normal((n, slice_len)).astype(np.float32)
    kw = {"indices_are_sorted": hint != "unique", "unique_indices": hint != "sorted"}
    for op in ("tensor_scatter_nd_add", "tensor_scatter_nd_update", "scatter_nd"):
        ref.assert_same(_call(op, tensor, idx, upd, **kw), _call(op, tensor, idx, upd).numpy())
    # some rows bad, dropped under IGNORE; the input forwarded (in place)
    bad = idx.copy()
    bad[rng.random(n) < 0.05] = -1
    bad[rng.random(n) < 0.05] = nslots
    ign = {"bad_indices_policy": "IGNORE"}
    ref.assert_same(tso.tensor_scatter_nd_add(tf.constant(tensor) * 1, bad, upd, **kw, **ign),
                    tso.tensor_scatter_nd_add(tensor, bad, upd, **ign).numpy())
    ref.assert_same(tso.scatter_nd(bad, upd, tensor.shape, **kw, **ign),
                    tso.scatter_nd(bad, upd, tensor.shape, **ign).numpy())


def test_a_false_promise_names_the_first_row_that_breaks_it():
    t = tf.zeros([5])
    with pytest.raises(IAE, match=r"indices_are_sorted=True, but indices\[3\] = \[1\] comes "
                                  r"before the previous row's index"):
        tso.tensor_scatter_nd_add(t, [[0], [2], [2], [1], [0]], tf.ones([5]),
                                  indices_are_sorted=True)
    with pytest.raises(IAE, match=r"indices_are_sorted=True and unique_indices=True, but "
                                  r"indices\[2\] = \[2\] is not after"):
        tso.scatter_nd([[0], [2], [2]], tf.ones([3]), [5], indices_are_sorted=True,
                       unique_indices=True)
    with pytest.raises(IAE, match=r"indices\[1\] = \[1, 0\] comes before"):
        tso.tensor_scatter_nd_max(tf.zeros([3, 3]), [[1, 1], [1, 0]], [1.0, 2.0],
                                  indices_are_sorted=True)


def test_unique_alone_is_not_relied_on():
    idx, upd = [[0], [4], [2], [0], [4]], [1.0, 2.0, 3.0, 4.0, 5.0]
    for op in ("tensor_scatter_nd_update", "tensor_scatter_nd_add"):
        want = getattr(tso, op)(tf.zeros([5]), idx, upd)
        ref.assert_same(getattr(tso, op)(tf.zeros([5]), idx, upd, unique_indices=True),
                        want.numpy())


def test_a_forwarded_input_is_intact_after_a_false_promise():
    tensor = tf.constant([1.0, 2.0, 3.0])
    with pytest.raises(IAE):
        tso.tensor_scatter_nd_add(tensor + 0, [[2], [1]], [5.0, 6.0], indices_are_sorted=True)
    np.testing.assert_array_equal(tensor, [1.0, 2.0, 3.0])


def test_ignore_applies_the_rows_without_a_false_promise_and_skips_bad_rows():
    idx = [[2], [9], [1], [-1], [1]]
    upd = [1.0, 2.0, 3.0, 4.0, 5.0]
    want = tso.tensor_scatter_nd_add(tf.zeros([4]), idx, upd, bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(want, [0.0, 8.0, 1.0, 0.0])
    for kw in ({"indices_are_sorted": True}, {"unique_indices": True},
               {"indices_are_sorted": True, "unique_indices": True}):
        got = tso.tensor_scatter_nd_add(tf.zeros([4]), idx, upd, bad_indices_policy="IGNORE",
                                        **kw)
        ref.assert_same(got, want.numpy())
    # bad rows between sorted ones break nothing
    got = tso.tensor_scatter_nd_add(tf.zeros([4]), [[0], [7], [1], [-3], [3]], [1.0] * 5,
                                    bad_indices_policy="IGNORE", indices_are_sorted=True,
                                    unique_indices=True)
    np.testing.assert_array_equal(got, [1.0, 1.0, 0.0, 1.0])
    with pytest.raises(IAE, match=r"indices\[1\] = \[7\] does not index into shape \[4\]"):
        tso.tensor_scatter_nd_add(tf.zeros([4]), [[0], [7]], [1.0, 1.0], indices_are_sorted=True)


def test_an_empty_output_keeps_tensorflows_rule():
    """Rows into an output with no elements are TensorFlow's error, promise
    or not (the core checks the promise there too: tests/cc/core_test.cc)."""
    for rows in ([[3], [1]], [[1], [3]]):
        with pytest.raises(IAE, match="Indices and updates specified for empty output shape"):
            tso.scatter_nd(rows, tf.zeros([2, 0]), [4, 0], indices_are_sorted=True)


def test_hints_must_be_python_bools():
    with pytest.raises(ValueError, match="indices_are_sorted must be a Python bool"):
        tso.tensor_scatter_nd_add(tf.zeros([2]), [[0]], [1.0], indices_are_sorted=1)
    with pytest.raises(ValueError, match="unique_indices must be a Python bool"):
        tso.scatter_nd([[0]], [1.0], [2], unique_indices=tf.constant(True))
    np.testing.assert_array_equal(  # NumPy's bools are bools
        tso.scatter_nd([[0], [1]], [1.0, 2.0], [2], indices_are_sorted=np.bool_(True)), [1, 2])


def test_mean_include_self_and_gradients_take_the_hints():
    idx = [[0], [0], [2]]
    got = tso.tensor_scatter_nd_mean([2.0, 3.0, 5.0], idx, [4.0, 6.0, 1.0],
                                     indices_are_sorted=True)
    np.testing.assert_array_equal(got, [4.0, 3.0, 3.0])
    got = tso.tensor_scatter_nd_max([2.0, 3.0, 5.0], [[0], [2]], [1.0, 4.0], include_self=False,
                                    unique_indices=True)
    np.testing.assert_array_equal(got, [1.0, 3.0, 4.0])
    upd = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(upd)
        y = tso.tensor_scatter_nd_update(tf.zeros([3]), [[0], [1], [2]], upd * upd,
                                         indices_are_sorted=True, unique_indices=True)
    np.testing.assert_array_equal(tape.gradient(y, upd), [2.0, 4.0, 6.0])


def _assert_xla_and_stock_forms(f, args, want):
    """f under XLA and inside stock_ops() (TensorFlow's ops only) gives `want`."""
    np.testing.assert_array_equal(tf.function(f, jit_compile=True)(*args), want)

    def stock(*a):
        with _calls.stock_ops():
            return f(*a)
    traced = tf.function(stock)
    assert not any(t.startswith("TfScatter>") for t in traced_op_types(traced, *args))
    np.testing.assert_array_equal(traced(*args), want)


def test_graph_attrs_xla_and_stock_ops():
    args = (tf.zeros([6, 2]), tf.constant([[0], [1], [1], [4]]), tf.ones([4, 2]))

    def f(t, i, u):
        return tso.tensor_scatter_nd_add(t, i, u, indices_are_sorted=True)
    want = tso.tensor_scatter_nd_add(*args)
    graph = tf.function(f).get_concrete_function(*args).graph
    (node,) = [op for op in graph.get_operations() if op.type.startswith("TfScatter>")]
    assert node.get_attr("indices_are_sorted") and not node.get_attr("unique_indices")
    _assert_xla_and_stock_forms(f, args, want)


SEGMENTS = ("unsorted_segment_sum", "unsorted_segment_prod", "unsorted_segment_min",
            "unsorted_segment_max", "unsorted_segment_mean", "unsorted_segment_sqrt_n")


@pytest.mark.parametrize("op", SEGMENTS)
@pytest.mark.parametrize("size", ["small", "large"])
def test_segments_hinted_equal_unhinted_bitwise(op, size):
    """Sorted ids with dropped (negative) ones among them, 2-D ids, on one
    thread and on the pool."""
    rng = np.random.default_rng(len(op) + len(size))
    n, num, width = (40, 9, 3) if size == "small" else (300_000, 50_000, 4)
    ids = np.sort(rng.integers(0, num, n))
    ids[rng.random(n) < 0.1] = -1
    data = rng.uniform(0.5, 1.5, (n, width)).astype(np.float32)
    f = getattr(tso, op)
    for unique in (False, True):
        if unique:
            ids = np.unique(ids[ids >= 0])
            data = data[:len(ids)]
        want = f(data, ids, num).numpy()
        ref.assert_same(f(data, ids, num, indices_are_sorted=True, unique_indices=unique), want)
    # ids of rank 2 (a prefix of data's shape)
    ids2 = np.sort(rng.integers(-1, num, 24)).reshape(4, 6)
    data2 = rng.standard_normal((4, 6, 2)).astype(np.float32)
    ref.assert_same(f(data2, ids2, num, indices_are_sorted=True), f(data2, ids2, num).numpy())


def test_segments_false_promise_and_policies():
    data = tf.ones([5, 2])
    with pytest.raises(IAE, match=r"indices_are_sorted=True, but segment_ids\[3\] = 1 comes "
                                  r"before the previous row's index"):
        tso.unsorted_segment_sum(data, [0, 2, 2, 1, 3], 4, indices_are_sorted=True)
    with pytest.raises(IAE, match=r"indices_are_sorted=True and unique_indices=True, but "
                                  r"segment_ids\[1,0\] = 2 is not after"):
        tso.unsorted_segment_max(tf.ones([2, 2]), [[0, 2], [2, 3]], 4, indices_are_sorted=True,
                                 unique_indices=True)
    # an id out of range is named before a false promise (as a scatter's bad
    # row is), even when the promise breaks first
    with pytest.raises(IAE, match=r"segment_ids\[1\] = 9 is out of range \[0, 4\)"):
        tso.unsorted_segment_sum(tf.ones([3, 1]), [2, 9, 1], 4, indices_are_sorted=True)
    with pytest.raises(IAE, match=r"indices\[1\] = \[9\] does not index into shape \[4\]"):
        tso.tensor_scatter_nd_add(tf.zeros([4]), [[2], [9], [1]], [1.0] * 3,
                                  indices_are_sorted=True)
    # under IGNORE: the plain result; an id >= num_segments is still the
    # default policy's error, hinted or not
    ids = [0, 2, 9, 1, 3]
    ref.assert_same(tso.unsorted_segment_sum(data, ids, 4, bad_indices_policy="IGNORE",
                                             indices_are_sorted=True),
                    tso.unsorted_segment_sum(data, ids, 4, bad_indices_policy="IGNORE").numpy())
    with pytest.raises(IAE, match=r"segment_ids\[2\] = 9 is out of range \[0, 4\)"):
        tso.unsorted_segment_sum(data, [0, 1, 9, 3, 3], 4, indices_are_sorted=True)
    # CLIP: ids >= num_segments go to the last segment, still sorted here
    ref.assert_same(tso.unsorted_segment_sum(data, [0, 1, 3, 7, 9], 4, bad_indices_policy="CLIP",
                                             indices_are_sorted=True),
                    np.array([[1, 1], [1, 1], [0, 0], [3, 3]], np.float32))
    # unique alone: not relied on
    ref.assert_same(tso.unsorted_segment_sum(data, [3, 0, 3, 1, 0], 4, unique_indices=True),
                    tso.unsorted_segment_sum(data, [3, 0, 3, 1, 0], 4).numpy())


def test_segments_grid_xla_and_stock_ops():
    """Cells of a grid in row-major order are sorted flat ids; under XLA and
    in stock_ops() the promise is dropped (TensorFlow's ops take none)."""
    cells = tf.constant([[0, 0], [0, 1], [0, 1], [1, 0], [1, 2]])
    data = tf.constant([[1.0], [2.0], [3.0], [4.0], [5.0]])
    want = tso.unsorted_segment_sum(data, cells, [2, 3])
    ref.assert_same(tso.unsorted_segment_sum(data, cells, [2, 3], indices_are_sorted=True),
                    want.numpy())

    def f(d, i):
        return tso.unsorted_segment_mean(d, i, 4, indices_are_sorted=True)
    args = (tf.ones([4, 2]), tf.constant([0, 0, 1, 3]))
    want = tso.unsorted_segment_mean(*args, 4)
    graph = tf.function(f).get_concrete_function(*args).graph
    nodes = [op for op in graph.get_operations() if op.type.startswith("TfScatter>")]
    assert nodes and all(op.get_attr("indices_are_sorted") for op in nodes)
    _assert_xla_and_stock_forms(f, args, want)
