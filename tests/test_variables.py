"""In-place scatters into variables (tso.scatter_nd_{update,add,sub,min,max})
and row reads straight from a variable (tso.gather_nd on a variable).

TensorFlow's own stateful ops are the reference wherever they exist
(tf.compat.v1.scatter_nd_*, the variables' scatter_nd_min/max methods,
tf.raw_ops.ResourceScatterNd* and the ref-variable ScatterNd* ops), compared
bitwise; where TensorFlow has no kernel (int16 indices, depth 0, scalars) the
NumPy reference in reference.py. Covers resource variables eagerly, in
tf.function, in a v1 Session and under XLA, TF1 ref variables in a Session,
the first-bad-row errors (the variable is left untouched, also on the parallel
paths), IGNORE, shape/dtype errors, copy-on-write, determinism, locking under
8 threads, the return value and chaining, and the while_loop in-place case."""

import threading

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.ops import gen_state_ops

from tf_scatter_ops._base.table import VARIABLE_SCATTERS
import tf_scatter_ops as tso
from tf_scatter_ops.ops import DTYPES as TENSOR_DTYPES, INDEX_DTYPES
import reference as ref

OPS = tuple(name.rsplit("_", 1)[1] for name in VARIABLE_SCATTERS)  # the op table's
OURS = {op: getattr(tso, f"scatter_nd_{op}") for op in OPS}
TENSOR_OP = {op: f"tensor_scatter_nd_{op}" for op in OPS}
# TensorFlow's resource-variable kernels, called through tf.raw_ops (never patched).
TF_RESOURCE = {op: getattr(tf.raw_ops, f"ResourceScatterNd{op.capitalize()}") for op in OPS}
# TensorFlow's ref-variable ops (gen_state_ops is never patched either).
TF_REF = {op: getattr(gen_state_ops, f"scatter_nd_{op}") for op in OPS}

# A sample of the value dtypes (one of each kind), each op taking those of
# them that it supports: the variable op accepts its tensor op's dtypes.
SAMPLE_DTYPES = (tf.float32, tf.float64, tf.int32, tf.int64, tf.bfloat16, tf.complex64,
                 tf.bool, tf.string)
DTYPES = {op: tuple(d for d in SAMPLE_DTYPES if d in TENSOR_DTYPES[TENSOR_OP[op]])
          for op in OPS}
OP_DTYPES = [(op, d) for op in OPS for d in DTYPES[op]]

# (variable shape, outer shape of indices, depth): repeated indices, slices
# (depth < rank), elements; the last is big enough for the block-parallel path.
GEOMETRIES = [
    ((8,), (12,), 1),
    ((5, 6), (9,), 1),
    ((3, 4, 2), (4, 3), 2),
    ((3, 4, 2), (7,), 3),
    ((40, 3), (200000,), 1),
]


def _ids(v):
    return getattr(v, "name", v)


@pytest.fixture(autouse=True)
def _tensorflow_not_patched():
    """The TensorFlow names used as the reference must be TensorFlow's own."""
    assert not tso.is_patched()
    yield
    assert not tso.is_patched()


def const(value, dtype):
    return tf.constant(value, dtype=dtype)


def snapshot(value):
    """Bytes (or the list, for strings) of a variable, tensor or array."""
    a = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
    a = np.asarray(a)
    if a.dtype == object:
        return a.tolist()
    return np.ascontiguousarray(a).tobytes()


def tf_indices(idx):
    """TensorFlow's scatter kernels take int32/int64 indices only."""
    idx = np.asarray(idx)
    return idx.astype(np.int32) if idx.dtype == np.int16 else idx


def tf_public(op, var, idx, upd):
    """TensorFlow's public stateful scatter for `op` on a variable."""
    if op in ("update", "add", "sub"):
        return getattr(tf.compat.v1, f"scatter_nd_{op}")(var, idx, upd)
    return getattr(var, f"scatter_nd_{op}")(idx, upd)


def tf_raw(op, var, idx, upd):
    TF_RESOURCE[op](ref=var.handle, indices=tf_indices(idx), updates=upd)


def case(rng, dtype, shape, outer, depth, index_dtype=tf.int64, bad=0):
    init = ref.random_values(rng, dtype, shape)
    idx = ref.random_indices(rng, shape, depth, outer, index_dtype, bad=bad)
    upd = ref.random_values(rng, dtype, tuple(outer) + tuple(shape[depth:]))
    return init, idx, upd


# ---------------------------------------------------------------------------
# Parity with TensorFlow's stateful ops: every op x dtypes x index dtypes.


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=_ids)
@pytest.mark.parametrize("op,dtype", OP_DTYPES, ids=_ids)
def test_resource_variable_matches_tensorflow(op, dtype, index_dtype, rng):
    for shape, outer, depth in GEOMETRIES:
        big = outer[0] > 1000
        if big and dtype in (tf.string, tf.bool):
            continue  # the small cases cover them; Python objects are slow
        init, idx, upd = case(rng, dtype, shape, outer, depth, index_dtype)
        assert idx.dtype == index_dtype.as_numpy_dtype
        ours_var = tf.Variable(const(init, dtype))
        tf_var = tf.Variable(const(init, dtype))
        result = OURS[op](ours_var, idx, const(upd, dtype))
        tf_result = tf_public(op, tf_var, tf_indices(idx), const(upd, dtype))
        ref.assert_same(ours_var.read_value(), tf_var.read_value().numpy())
        ref.assert_same(result, tf_result.numpy())
        if not big:  # an independent check, and that the update did something
            want = ref.scatter(op, init, idx, upd, dtype)
            ref.assert_same(ours_var.read_value(), want)


DEPTH0_CASES = [
    # (variable shape, indices array, updates shape)
    ((3, 2), np.zeros((4, 0), np.int64), (4, 3, 2)),  # whole-tensor slices, duplicates
    ((), np.zeros((3, 0), np.int64), (3,)),  # a scalar variable, three updates
    ((), np.zeros((1, 0), np.int64), (1,)),  # a scalar variable, one update
    ((2, 3), np.zeros((0,), np.int64), (2, 3)),  # rank-1 indices of depth 0: one whole-tensor update
    ((4, 3), np.zeros((0, 1), np.int64), (0, 3)),  # no rows: a no-op
    ((2, 3), np.array([[1, 2], [0, 0], [1, 2]]), (3,)),  # depth == rank, duplicates
]


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=_ids)
@pytest.mark.parametrize("op", OPS)
def test_depth_zero_scalars_and_empty(op, index_dtype, rng):
    for dtype in (tf.float32, tf.int64) + ((tf.string,) if op == "update" else ()):
        for shape, idx, upd_shape in DEPTH0_CASES:
            idx = idx.astype(index_dtype.as_numpy_dtype)
            init = ref.random_values(rng, dtype, shape)
            upd = ref.random_values(rng, dtype, upd_shape)
            want = ref.scatter(op, np.asarray(init), idx, np.asarray(upd), dtype)
            v = tf.Variable(const(init, dtype))
            result = OURS[op](v, idx, const(upd, dtype))
            ref.assert_same(v.read_value(), want)
            ref.assert_same(result, want)
            if op == "update" and shape and idx.shape[0] == 4:  # last whole-tensor slice wins
                ref.assert_same(v.read_value(), np.asarray(upd)[-1])


@pytest.mark.parametrize("op,dtype", OP_DTYPES, ids=_ids)
def test_ref_variable_in_session_matches_tensorflow(op, dtype, rng):
    cases = [case(rng, dtype, shape, outer, depth, index_dtype)
             for (shape, outer, depth) in GEOMETRIES[:4] for index_dtype in INDEX_DTYPES]
    graph = tf.Graph()
    with graph.as_default():
        pairs, outs, tf_outs = [], [], []
        for init, idx, upd in cases:
            ours = tf.compat.v1.Variable(const(init, dtype), use_resource=False)
            theirs = tf.compat.v1.Variable(const(init, dtype), use_resource=False)
            assert ours.dtype._is_ref_dtype
            out = OURS[op](ours, idx, const(upd, dtype))
            assert out.op.type == f"TfScatter>ScatterNd{op.capitalize()}"
            assert out.dtype._is_ref_dtype
            outs.append(out)
            tf_outs.append(TF_REF[op](theirs, tf_indices(idx), const(upd, dtype)))
            pairs.append((ours, theirs))
        init_all = tf.compat.v1.global_variables_initializer()
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(init_all)
            got, want = sess.run([outs, tf_outs])
            finals = sess.run([[a, b] for a, b in pairs])
    for (init, idx, upd), g, w, (a, b) in zip(cases, got, want, finals):
        ref.assert_same(np.asarray(g), np.asarray(w))
        ref.assert_same(np.asarray(a), np.asarray(b))
        ref.assert_same(np.asarray(a), ref.scatter(op, init, idx, upd, dtype))


def test_many_adds_to_one_slot_bitwise(rng):
    n = 10_000
    idx = np.full((n, 1), 3, np.int32)
    for dtype in (tf.float32, tf.float64, tf.bfloat16):
        # mixed magnitudes, so the result depends on the order of the sums
        upd = (rng.standard_normal(n) * 10.0 ** rng.integers(-4, 5, n)).astype(dtype.as_numpy_dtype)
        init = np.array([1.0, 2.0, 3.0, 0.1, 5.0], dtype.as_numpy_dtype)
        for op in ("add", "sub"):
            v = tf.Variable(const(init, dtype))
            w = tf.Variable(const(init, dtype))
            OURS[op](v, idx, const(upd, dtype))
            tf_public(op, w, idx, const(upd, dtype))
            assert snapshot(v) == snapshot(w)
            acc = init[3]
            for u in upd:  # the sequential sum in index order
                acc = (acc + u) if op == "add" else (acc - u)
            got = v.numpy()
            assert got[3].tobytes() == np.asarray(acc, dtype.as_numpy_dtype).tobytes()
            assert snapshot(got[[0, 1, 2, 4]]) == snapshot(init[[0, 1, 2, 4]])


def test_string_update_with_duplicates(rng):
    init = np.array([b"", b"short", b"x" * 100, b"tail"], dtype=object)
    rows = rng.integers(0, 4, 300)
    words = np.array([(b"w%d-" % k) * int(rng.integers(1, 40)) for k in range(300)], dtype=object)
    v = tf.Variable(const(init, tf.string))
    before = v.read_value()
    kept = before.numpy().tolist()
    result = tso.scatter_nd_update(v, rows[:, None], const(words, tf.string))
    want = init.copy()
    for r, w in zip(rows, words):  # last in index order wins
        want[r] = w
    assert v.numpy().tolist() == want.tolist()
    assert result.numpy().tolist() == want.tolist()
    assert before.numpy().tolist() == kept  # copy-on-write, strings too
    theirs = tf.Variable(const(init, tf.string))
    tf.compat.v1.scatter_nd_update(theirs, rows[:, None], const(words, tf.string))
    assert theirs.numpy().tolist() == want.tolist()
    # a 2-D string variable with row slices
    v2 = tf.Variable(const([["a", "b"], ["c", "d"], ["e", "f"]], tf.string))
    tso.scatter_nd_update(v2, [[2], [0], [2]], const([["1", "2"], ["3", "4"], ["5", "6"]], tf.string))
    assert v2.numpy().tolist() == [[b"3", b"4"], [b"c", b"d"], [b"5", b"6"]]


# ---------------------------------------------------------------------------
# Out-of-range indices and the IGNORE policy.


@pytest.mark.parametrize("policy", ["", "DEFAULT", "ERROR"])
@pytest.mark.parametrize("op", OPS)
def test_out_of_range_names_first_bad_row_and_writes_nothing(op, policy):
    v = tf.Variable(np.arange(8, dtype=np.float32) + 0.5)
    before = snapshot(v)
    cases = [
        ([[1], [9], [10], [-1]], r"indices\[1\] = \[9\] does not index into shape \[8\]"),
        ([[3], [2], [-1], [9]], r"indices\[2\] = \[-1\] does not index into shape \[8\]"),
        ([[8]], r"indices\[0\] = \[8\] does not index into shape \[8\]"),
    ]
    f = tf.function(lambda i, u: OURS[op](v, i, u, bad_indices_policy=policy))
    for idx, message in cases:
        for index_dtype in (np.int16, np.int32, np.int64):
            i = np.asarray(idx, index_dtype)
            u = np.full(len(idx), 100.0, np.float32)
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                OURS[op](v, i, u, bad_indices_policy=policy)
            assert snapshot(v) == before
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                f(tf.constant(i), tf.constant(u))
            assert snapshot(v) == before
    v2 = tf.Variable(np.zeros((3, 4), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices\[1\] = \[2, 5\] does not index into shape \[3,4\]"):
        OURS[op](v2, [[0, 1], [2, 5], [7, 7]], [1.0, 2.0, 3.0], bad_indices_policy=policy)
    assert snapshot(v2) == snapshot(np.zeros((3, 4), np.float32))


# Large enough for the parallel paths: (shape, rows, depth); one bad row near the end.
LARGE = [
    ((1 << 20,), 200_000, 1),  # elements, block path
    ((4096, 256), 50_000, 1),  # row slices
    ((1024, 1024), 200_000, 2),  # depth 2 elements
    ((8, 90_000), 40, 1),  # long slices, column path
]


@pytest.mark.parametrize("geometry", LARGE, ids=lambda g: "x".join(map(str, g[0])))
@pytest.mark.parametrize("op", OPS)
def test_failing_large_call_leaves_variable_unchanged(op, geometry, rng):
    shape, rows, depth = geometry
    init, idx, upd = case(rng, tf.float32, shape, (rows,), depth, tf.int32)
    bad_row = rows - 3
    idx[bad_row, depth - 1] = shape[depth - 1]  # one past the end
    idx[rows - 1, 0] = -1  # a later bad row, which must not be the one named
    v = tf.Variable(init)
    before = snapshot(v)
    message = rf"indices\[{bad_row}\] = \[.*\] does not index into shape"
    for use_locking in (True, False):
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            OURS[op](v, idx, upd, use_locking=use_locking)
        assert snapshot(v) == before
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        tf.function(lambda i, u: OURS[op](v, i, u))(tf.constant(idx), tf.constant(upd))
    assert snapshot(v) == before
    # the valid rows alone then do what TensorFlow's kernel does
    good = np.ones(rows, bool)
    good[[bad_row, rows - 1]] = False
    w = tf.Variable(init)
    OURS[op](v, idx[good], upd[good])
    tf_raw(op, w, idx[good], upd[good])
    assert snapshot(v) == snapshot(w)
    assert snapshot(v) != before


@pytest.mark.parametrize("op", ["update", "add"])
def test_ref_variable_failing_large_call_writes_nothing(op, rng):
    shape, rows = (1 << 20,), 200_000
    init, idx, upd = case(rng, tf.float32, shape, (rows,), 1, tf.int64)
    idx[rows - 5, 0] = 1 << 20
    graph = tf.Graph()
    with graph.as_default():
        v = tf.compat.v1.Variable(init, use_resource=False)
        out = OURS[op](v, idx, upd)
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(v.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=rf"indices\[{rows - 5}\] = \[1048576\] does not index into shape \[1048576\]"):
                sess.run(out.op)
            assert snapshot(sess.run(v)) == snapshot(init)


@pytest.mark.parametrize("op", OPS)
def test_ignore_drops_bad_rows(op, rng):
    # small: the NumPy reference
    for shape, outer, depth in GEOMETRIES[:4]:
        init, idx, upd = case(rng, tf.float32, shape, outer, depth, tf.int32, bad=3)
        v = tf.Variable(init)
        result = OURS[op](v, idx, upd, bad_indices_policy="IGNORE")
        want = ref.scatter(op, init, idx, upd, tf.float32, ignore=True)
        ref.assert_same(v.read_value(), want)
        ref.assert_same(result, want)
    # large: TensorFlow's kernel on the valid rows only
    shape, rows = (1 << 20,), 200_000
    init, idx, upd = case(rng, tf.float32, shape, (rows,), 1, tf.int64, bad=50)
    good = (idx[:, 0] >= 0) & (idx[:, 0] < shape[0])
    assert (~good).sum() == 50
    v, w = tf.Variable(init), tf.Variable(init)
    tf.function(lambda i, u: OURS[op](v, i, u, bad_indices_policy="IGNORE"))(
        tf.constant(idx), tf.constant(upd))
    tf_raw(op, w, idx[good], upd[good])
    assert snapshot(v) == snapshot(w)


def test_unknown_policy_is_invalid_argument():
    v = tf.Variable([1.0, 2.0])
    for op in OPS:
        for policy in ("ignore", "FOO", "Error"):
            with pytest.raises(tf.errors.InvalidArgumentError, match="bad_indices_policy"):
                OURS[op](v, [[0]], [5.0], bad_indices_policy=policy)
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad_indices_policy"):
        tso.gather_nd(v, [[0]], bad_indices_policy="clamp")
    assert v.numpy().tolist() == [1.0, 2.0]


# ---------------------------------------------------------------------------
# Shape and dtype errors.

SHAPE_ERRORS = [
    # (variable shape, indices, updates shape)
    ((4, 3), [[1], [2]], (3, 3)),  # outer dims of indices and updates differ
    ((4, 3), [[1]], (1, 2)),  # slice shape differs
    ((4, 3), [[1, 2, 0]], (1,)),  # depth > rank
    ((4, 3), [[1]], (1, 3, 1)),  # updates of the wrong rank
    ((4,), [[1], [2]], (2, 1)),  # updates of the wrong rank, rank-1 variable
]


@pytest.mark.parametrize("op", OPS)
def test_shape_errors(op):
    for shape, idx, upd_shape in SHAPE_ERRORS:
        init = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        v = tf.Variable(init)
        upd = np.ones(upd_shape, np.float32)
        with pytest.raises(tf.errors.InvalidArgumentError):
            OURS[op](v, idx, upd)
        # static shapes: a ValueError when the function is traced
        f = tf.function(lambda i, u: OURS[op](v, i, u))
        with pytest.raises(ValueError):
            f.get_concrete_function(tf.TensorSpec(np.shape(idx), tf.int32),
                                    tf.TensorSpec(upd_shape, tf.float32))
        # unknown shapes: an InvalidArgumentError when it runs
        g = tf.function(lambda i, u: OURS[op](v, i, u),
                        input_signature=[tf.TensorSpec(None, tf.int32), tf.TensorSpec(None, tf.float32)])
        with pytest.raises(tf.errors.InvalidArgumentError):
            g(tf.constant(idx, tf.int32), tf.constant(upd))
        assert snapshot(v) == snapshot(init)


def test_dtype_errors():
    v = tf.Variable([1.0, 2.0, 3.0])
    for op in OPS:
        with pytest.raises(ValueError, match="float32"):  # updates of another dtype
            OURS[op](v, [[0]], tf.constant([1], tf.int32))
        with pytest.raises(ValueError):
            OURS[op](v, [[0]], ["a"])
        with pytest.raises(ValueError, match="indices must be int16, int32 or int64"):
            OURS[op](v, tf.constant([[0.0]]), [1.0])
    assert v.numpy().tolist() == [1.0, 2.0, 3.0]
    # value dtypes an op does not support: ValueError naming the op and dtype
    unsupported = [("add", tf.Variable(["a"])), ("sub", tf.Variable([True])),
                   ("min", tf.Variable([1j])), ("max", tf.Variable(["a"])),
                   ("max", tf.Variable(tf.constant([1j], tf.complex64)))]
    for op, var in unsupported:
        with pytest.raises(ValueError, match=rf"{TENSOR_OP[op]} does not support dtype {var.dtype.name}"):
            OURS[op](var, [[0]], var.read_value())


@pytest.mark.parametrize("op", OPS)
def test_plain_tensor_is_rejected(op):
    for value in (tf.constant([1.0, 2.0]), np.array([1.0, 2.0], np.float32), [1.0, 2.0]):
        with pytest.raises(ValueError, match=TENSOR_OP[op]):
            OURS[op](value, [[0]], [5.0])
    with pytest.raises(ValueError, match=TENSOR_OP[op]):
        tf.function(lambda t: OURS[op](t, [[0]], [5.0]))(tf.constant([1.0, 2.0]))


# ---------------------------------------------------------------------------
# Copy-on-write: a read taken before an update keeps its values.


@pytest.mark.parametrize("op", OPS)
def test_copy_on_write_eager(op, rng):
    for shape, rows in (((16,), 10), ((1 << 20,), 200_000)):
        init, idx, upd = case(rng, tf.float32, shape, (rows,), 1, tf.int32)
        upd = upd + 1000.0 if op != "min" else upd - 1000.0  # every touched element changes
        v = tf.Variable(init)
        r = v.read_value()
        i = tf.identity(v)
        view = r.numpy()  # may alias the variable's buffer
        before = snapshot(init)
        OURS[op](v, idx, upd)
        assert snapshot(r) == before
        assert snapshot(i) == before
        assert snapshot(view) == before
        assert snapshot(v) != before
        w = tf.Variable(init)
        tf_raw(op, w, idx, upd)
        assert snapshot(v) == snapshot(w)
        # a read after the first update keeps its values through a second one
        r2 = v.read_value()
        mid = snapshot(r2)
        OURS[op](v, idx, upd + 1.0 if op != "min" else upd - 1.0)
        assert snapshot(r2) == mid and snapshot(v) != mid


@pytest.mark.parametrize("op", OPS)
def test_copy_on_write_in_tf_function(op):
    v = tf.Variable(np.arange(6, dtype=np.float32))

    @tf.function
    def f():
        r = v.read_value()
        i = tf.identity(v)
        new = OURS[op](v, [[1], [4]], [100.0, -100.0])
        return r, i, tf.identity(new), v.read_value()

    r, i, new, after = f()
    want = {"update": [0, 100, 2, 3, -100, 5], "add": [0, 101, 2, 3, -96, 5],
            "sub": [0, -99, 2, 3, 104, 5], "min": [0, 1, 2, 3, -100, 5],
            "max": [0, 100, 2, 3, 4, 5]}[op]
    assert r.numpy().tolist() == list(range(6))
    assert i.numpy().tolist() == list(range(6))
    assert new.numpy().tolist() == want
    assert after.numpy().tolist() == want
    assert v.numpy().tolist() == want


# ---------------------------------------------------------------------------
# Determinism and concurrency.


@pytest.mark.parametrize("index_dtype", [tf.int16, tf.int64], ids=_ids)
@pytest.mark.parametrize("op", ["add", "sub"])
def test_float_accumulation_is_deterministic_and_matches_tensorflow(op, index_dtype, rng):
    for shape, rows in (((1000,), 300_000), ((1000, 8), 100_000)):
        init, idx, upd = case(rng, tf.float32, shape, (rows,), 1, index_dtype)
        upd *= (10.0 ** rng.integers(-3, 4, upd.shape)).astype(np.float32)
        results = []
        for _ in range(3):
            v = tf.Variable(init)
            OURS[op](v, idx, upd)
            results.append(snapshot(v))
        w = tf.Variable(init)
        tf_raw(op, w, idx, upd)
        assert results[0] == results[1] == results[2] == snapshot(w)
        v = tf.Variable(init)
        tf.function(lambda i, u: OURS[op](v, i, u))(tf.constant(idx), tf.constant(upd))
        assert snapshot(v) == results[0]


def _run_threads(n, target):
    errors = []

    def wrapped(k):
        try:
            target(k)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=wrapped, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize("dtype", [tf.int64, tf.float32], ids=_ids)
def test_eight_threads_locked_adds_equal_serial_sum(dtype):
    n, calls, rows = 1 << 16, 25, 20_000
    rng = np.random.default_rng(8)
    work = [[(rng.integers(0, n, (rows, 1)).astype(np.int32),
              rng.integers(-8, 9, rows).astype(dtype.as_numpy_dtype)) for _ in range(calls)]
            for _ in range(8)]
    want = np.zeros(n, np.int64)
    for thread_work in work:
        for idx, upd in thread_work:
            np.add.at(want, idx[:, 0], upd.astype(np.int64))
    v = tf.Variable(tf.zeros([n], dtype))
    f = tf.function(lambda i, u: tso.scatter_nd_add(v, i, u, use_locking=True))

    def worker(k):
        for c, (idx, upd) in enumerate(work[k]):
            if c % 2:
                tso.scatter_nd_add(v, idx, upd, use_locking=True)
            else:
                f(tf.constant(idx), tf.constant(upd))

    _run_threads(8, worker)
    got = v.numpy()
    assert np.array_equal(got.astype(np.int64), want)
    assert np.abs(want).max() > 0


def test_locked_updates_are_atomic_to_readers():
    """Each call adds 1 to every element (use_locking=True, exclusive): a read
    or a gather taken concurrently sees all elements equal."""
    n, calls = 1 << 18, 30
    v = tf.Variable(tf.zeros([n], tf.int32))
    idx = np.random.default_rng(1).permutation(n).astype(np.int32)[:, None]
    ones = np.ones(n, np.int32)
    stop = threading.Event()
    seen = []

    def writer(k):
        for _ in range(calls):
            tso.scatter_nd_add(v, idx, ones, use_locking=True)

    def reader(k):
        while not stop.is_set():
            a = v.read_value().numpy() if k % 2 else tso.gather_nd(v, idx[::-1]).numpy()
            assert np.all(a == a[0]), (a.min(), a.max())
            seen.append(int(a[0]))

    readers = threading.Thread(target=lambda: _run_threads(2, reader))
    readers.start()
    try:
        _run_threads(4, writer)
    finally:
        stop.set()
        readers.join()
    assert v.numpy().tolist() == [4 * calls] * n
    assert seen


def test_unlocked_adds_to_disjoint_slots():
    n, calls = 1 << 14, 40
    v = tf.Variable(tf.zeros([n], tf.int64))

    def worker(k):
        idx = np.arange(k, n, 4, dtype=np.int64)[:, None]  # each thread its own slots
        for _ in range(calls):
            tso.scatter_nd_add(v, idx, np.full(len(idx), k + 1, np.int64), use_locking=False)

    _run_threads(4, worker)
    assert np.array_equal(v.numpy(), calls * (np.arange(n) % 4 + 1))


# ---------------------------------------------------------------------------
# Every execution mode: eager, tf.function, v1 Session (resource and ref
# variables), XLA.


def _mode_case(op, dtype):
    init = np.array([[1, -2, 3], [4, 5, -6], [7, -8, 9], [0, 2, 1], [-3, 3, 6]])
    idx = np.array([[3], [1], [3], [0], [4], [3], [1]], np.int32)  # duplicates
    upd = np.array([[2, -7, 4], [9, 1, -1], [-5, 5, 8], [3, 3, 3], [-1, 0, 2], [6, -4, 0], [0, 7, -9]])
    return init.astype(dtype.as_numpy_dtype), idx, upd.astype(dtype.as_numpy_dtype)


@pytest.mark.parametrize("dtype", [tf.float32, tf.int32], ids=_ids)
@pytest.mark.parametrize("op", OPS)
def test_every_mode_gives_tensorflows_result(op, dtype):
    init, idx, upd = _mode_case(op, dtype)
    w = tf.Variable(init)
    tf_raw(op, w, idx, upd)
    want = w.numpy()
    assert not np.array_equal(want, init)
    assert np.array_equal(want, ref.scatter(op, init, idx, upd, dtype))

    def check(got):
        ref.assert_same(np.asarray(got), want)

    # eager
    v = tf.Variable(init)
    check(OURS[op](v, idx, upd))
    check(v.numpy())
    # tf.function; the graph holds our resource op
    v = tf.Variable(init)
    f = tf.function(lambda i, u: tf.identity(OURS[op](v, i, u)))
    check(f(idx, upd))
    check(v.numpy())
    types = [o.type for o in f.get_concrete_function(idx, upd).graph.get_operations()]
    assert f"TfScatter>ResourceScatterNd{op.capitalize()}" in types
    # XLA: lowered to TensorFlow's ops, same result for valid input
    v = tf.Variable(init)
    x = tf.function(lambda i, u: tf.identity(OURS[op](v, i, u)), jit_compile=True)
    check(x(idx, upd))
    check(v.numpy())
    # v1 graph and Session: a resource variable and a ref variable
    graph = tf.Graph()
    with graph.as_default():
        rv = tf.compat.v1.Variable(init, use_resource=True)
        refv = tf.compat.v1.Variable(init, use_resource=False)
        out_r = OURS[op](rv, idx, upd)
        out_ref = OURS[op](refv, idx, upd)
        assert out_ref.op.type == f"TfScatter>ScatterNd{op.capitalize()}"
        types = [o.type for o in graph.get_operations()]
        assert f"TfScatter>ResourceScatterNd{op.capitalize()}" in types
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            check(sess.run(out_r))
            check(sess.run(out_ref))
            check(sess.run(rv))
            check(sess.run(refv))


# ---------------------------------------------------------------------------
# gather_nd from a variable.

# A sample of gather_nd's value dtypes (it takes every dtype of ops.ALL_DTYPES).
GATHER_DTYPES = (tf.float32, tf.int64, tf.bfloat16, tf.complex64, tf.bool, tf.string)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=_ids)
@pytest.mark.parametrize("dtype", GATHER_DTYPES, ids=_ids)
def test_gather_nd_from_variable_matches_tensorflow(dtype, index_dtype, rng):
    for shape, outer, depth in [((8,), (12,), 1), ((5, 6), (4, 2), 1), ((3, 4, 2), (7,), 2),
                                ((3, 4, 2), (5,), 3), ((3, 4), (2,), 0), ((300, 16), (5000,), 1)]:
        params = ref.random_values(rng, dtype, shape)
        idx = ref.random_indices(rng, shape, depth, outer, index_dtype)
        v = tf.Variable(const(params, dtype))
        want = tf.gather_nd(const(params, dtype), idx.astype(np.int64))
        ref.assert_same(tso.gather_nd(v, idx), want.numpy())
        ref.assert_same(tf.function(lambda: tso.gather_nd(v, idx))(), want.numpy())


def test_gather_nd_graph_reads_rows_not_the_table():
    v = tf.Variable(tf.reshape(tf.range(4000, dtype=tf.float32), [1000, 4]))

    @tf.function
    def f(i):
        return tso.gather_nd(v, i)

    idx = tf.constant([[7], [999], [7]])
    assert f(idx).numpy().tolist() == [[28, 29, 30, 31], [3996, 3997, 3998, 3999], [28, 29, 30, 31]]
    types = [o.type for o in f.get_concrete_function(idx).graph.get_operations()]
    assert "TfScatter>ResourceGatherNd" in types
    assert "ReadVariableOp" not in types
    assert "GatherNd" not in types and "TfScatter>GatherNd" not in types


def test_gather_nd_sees_sparse_updates():
    v = tf.Variable(np.zeros((6, 2), np.float32))
    before = tso.gather_nd(v, [[1], [3]])
    tso.scatter_nd_add(v, [[3], [1], [3]], [[1.0, 2.0], [5.0, 5.0], [10.0, 20.0]])
    assert tso.gather_nd(v, [[1], [3]]).numpy().tolist() == [[5, 5], [11, 22]]
    assert before.numpy().tolist() == [[0, 0], [0, 0]]

    @tf.function
    def f():
        a = tso.gather_nd(v, [[3]])
        tso.scatter_nd_update(v, [[3]], [[-1.0, -2.0]])
        b = tso.gather_nd(v, [[3]])
        tso.scatter_nd_max(v, [[3], [0]], [[0.0, -5.0], [4.0, 4.0]])
        c = tso.gather_nd(v, [[3], [0]])
        return a, b, c

    a, b, c = f()
    assert a.numpy().tolist() == [[11, 22]]
    assert b.numpy().tolist() == [[-1, -2]]
    assert c.numpy().tolist() == [[0, -2], [4, 4]]


def test_gather_nd_batch_dims_one(rng):
    params = rng.standard_normal((4, 5, 3)).astype(np.float32)
    v = tf.Variable(params)
    for idx in (rng.integers(0, 5, (4, 2, 1)), rng.integers(0, 3, (4, 2, 2)) % np.array([5, 3]),
                rng.integers(0, 5, (4, 1))):
        want = tf.gather_nd(params, idx, batch_dims=1).numpy()
        ref.assert_same(tso.gather_nd(v, idx, batch_dims=1), want)
        ref.assert_same(tf.function(lambda: tso.gather_nd(v, idx, batch_dims=1))(), want)


def test_gather_nd_ignore_gives_zeros_and_default_names_first_bad_row(rng):
    params = rng.standard_normal((5, 3)).astype(np.float32)
    v = tf.Variable(params)
    idx = np.array([[1], [7], [-1], [4], [5]])
    want = ref.gather(params, idx, tf.float32, ignore=True)
    assert np.all(want[[1, 2, 4]] == 0)
    ref.assert_same(tso.gather_nd(v, idx, bad_indices_policy="IGNORE"), want)
    ref.assert_same(tf.function(lambda: tso.gather_nd(v, idx, bad_indices_policy="IGNORE"))(), want)
    for policy in ("", "ERROR"):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices\[1\] = \[7\] does not index into param shape \[5,3\]"):
            tso.gather_nd(v, idx, bad_indices_policy=policy)


# ---------------------------------------------------------------------------
# The return value and chaining.


def test_return_value_reads_as_the_new_value():
    v = tf.Variable([1.0, 2.0, 3.0, 4.0])
    r = tso.scatter_nd_sub(v, [[0], [0]], [1.0, 1.0])
    assert r.numpy().tolist() == [-1.0, 2.0, 3.0, 4.0]
    assert tf.convert_to_tensor(r).numpy().tolist() == [-1.0, 2.0, 3.0, 4.0]
    # eager chaining
    r = tso.scatter_nd_add(tso.scatter_nd_update(v, [[1], [2]], [10.0, 20.0]), [[1]], [5.0])
    assert r.numpy().tolist() == [-1.0, 15.0, 20.0, 4.0]
    assert v.numpy().tolist() == [-1.0, 15.0, 20.0, 4.0]


def test_chaining_in_tf_function_applies_in_order():
    v = tf.Variable([1.0, 1.0, 1.0, 1.0])
    w = tf.Variable([1.0, 1.0, 1.0, 1.0])

    @tf.function
    def ours():
        first = tso.scatter_nd_update(v, [[1], [2]], [10.0, 20.0])
        second = tso.scatter_nd_add(first, [[1]], [5.0])  # after the update: 15, not 10
        third = tso.scatter_nd_max(second, [[2], [3]], [7.0, 9.0])
        return tso.scatter_nd_sub(third, [[3], [0]], [1.0, 2.0])

    @tf.function
    def theirs():
        first = tf.compat.v1.scatter_nd_update(w, [[1], [2]], [10.0, 20.0])
        second = tf.compat.v1.scatter_nd_add(first, [[1]], [5.0])
        third = second.scatter_nd_max([[2], [3]], [7.0, 9.0])
        return tf.compat.v1.scatter_nd_sub(third, [[3], [0]], [1.0, 2.0])

    got = ours()
    assert got.numpy().tolist() == [-1.0, 15.0, 20.0, 8.0]
    assert v.numpy().tolist() == [-1.0, 15.0, 20.0, 8.0]
    assert theirs().numpy().tolist() == got.numpy().tolist()


def test_ref_variable_returns_the_updated_ref_tensor():
    graph = tf.Graph()
    with graph.as_default():
        v = tf.compat.v1.Variable([1.0, 2.0, 3.0], use_resource=False)
        out = tso.scatter_nd_add(v, [[1], [1]], [5.0, 5.0], name="my_add")
        assert out.dtype == tf.float32._as_ref
        assert out.op.name.startswith("my_add")
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(v.initializer)
            assert sess.run(out).tolist() == [1.0, 12.0, 3.0]
            assert sess.run(v).tolist() == [1.0, 12.0, 3.0]


def test_ref_variable_chaining_on_the_returned_ref_tensor():
    """TensorFlow's tf.compat.v1.scatter_nd_* return the ref tensor so that it
    can be passed on; ours returns it too, so it must be accepted the same way
    (it is a ref, not a plain tensor)."""
    graph = tf.Graph()
    with graph.as_default():
        v = tf.compat.v1.Variable([1.0, 1.0, 1.0], use_resource=False)
        w = tf.compat.v1.Variable([1.0, 1.0, 1.0], use_resource=False)
        theirs = tf.compat.v1.scatter_nd_add(tf.compat.v1.scatter_nd_update(w, [[1]], [10.0]), [[1]], [5.0])
        ours = tso.scatter_nd_add(tso.scatter_nd_update(v, [[1]], [10.0]), [[1]], [5.0])
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run([v.initializer, w.initializer])
            assert sess.run(theirs).tolist() == [1.0, 15.0, 1.0]
            assert sess.run(ours).tolist() == [1.0, 15.0, 1.0]


# ---------------------------------------------------------------------------
# The tf.while_loop in-place case (correctness only).


def test_while_loop_row_updates_match_tensorflow(rng):
    steps = 500
    base = rng.standard_normal((4096, 1024)).astype(np.float32)
    idx = rng.integers(0, 4096, (steps, 1)).astype(np.int32)
    idx[10] = idx[3]  # a row written twice: the later write wins
    rows = rng.standard_normal((steps, 1024)).astype(np.float32)

    def loop(scatter):
        @tf.function
        def f(t, i, u):
            def body(k, t):
                return k + 1, scatter(t, i[k:k + 1], u[k:k + 1])
            return tf.while_loop(lambda k, t: k < steps, body, [tf.constant(0), t])[1]
        return f

    t = tf.constant(base)
    ours = loop(tso.tensor_scatter_nd_update)(t, idx, rows).numpy()
    theirs = loop(tf.tensor_scatter_nd_update)(t, idx, rows).numpy()
    assert ours.tobytes() == theirs.tobytes()
    want = base.copy()
    want[idx[:, 0]] = rows  # NumPy: the last assignment to a row wins
    assert ours.tobytes() == want.tobytes()
    assert t.numpy().tobytes() == base.tobytes()  # the input is untouched


def test_raw_variable_ops_reject_misuse_with_clear_errors():
    """Hand-made raw calls: wrong dtype attr, a variable that was never
    assigned, a policy typo; each an error naming the problem, none a crash."""
    from tf_scatter_ops._dispatch.ours import library_op
    v = tf.Variable([1, 2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="variable has dtype int32 but the op's dtype is float"):
        library_op("ResourceScatterNdAdd")(v.handle, [[0]], [1.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="variable has dtype int32 but the op's dtype is float"):
        library_op("ResourceGatherNd")(v.handle, [[0]], dtype=tf.float32)
    for op, args in (("ResourceScatterNdUpdate", ([[0]], [1.0])), ("ResourceGatherNd", ([[0]],))):
        handle = tf.raw_ops.VarHandleOp(dtype=tf.float32, shape=[3], shared_name=f"never_assigned_{op}")
        kwargs = {"dtype": tf.float32} if op == "ResourceGatherNd" else {}
        with pytest.raises(tf.errors.NotFoundError, match="never_assigned"):
            library_op(op)(handle, *args, **kwargs)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown bad_indices_policy 'x'"):
        library_op("ResourceScatterNdAdd")(v.handle, [[0]], [1], bad_indices_policy="x")
    np.testing.assert_array_equal(v.numpy(), [1, 2, 3])
