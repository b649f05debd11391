"""The out-of-bound modes CLIP and FILL on every public function family.

CLIP (JAX's "clip"): each index coordinate clamped into its dimension, so
a call under CLIP must equal the same call with the indices clamped in
NumPy under the default policy (which other suites check against NumPy
and TensorFlow). Segment ids: >= num_segments clamped to the last segment;
negative ids stay dropped where TensorFlow drops them (unsorted_segment_*)
and become 0 where they are out of range (segment_*, sparse_segment_*).
FILL (JAX's "fill"): scatters and segments drop bad rows (= IGNORE);
gathers give fill_value at them (default NaN / the integer's lowest / True).
The bitwise fuzzing of both modes is in test_fuzz.py.
"""

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops._base import library as _loader
from tf_scatter_ops._base.tf_private import ShardedVariable
import reference as ref

IAE = tf.errors.InvalidArgumentError
RNG = np.random.default_rng(29)
DATA = RNG.standard_normal((6, 3)).astype(np.float32)
T = RNG.standard_normal((4, 5, 2)).astype(np.float32)
# depth-2 rows into T's [4, 5]: in range, too large, negative, int extremes
IDX = np.array([[1, 2], [9, 0], [-3, 4], [2, 70], [3, -1], [0, 0]], np.int32)
UPD = RNG.standard_normal((6, 2)).astype(np.float32)
IDS = np.array([0, 5, -1, 2, 9, 2], np.int32)  # into 4 segments


def _same(a, b):
    ref.assert_same(np.asarray(a), np.asarray(b))


TENSOR_SCATTERS = ["tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
                   "tensor_scatter_nd_min", "tensor_scatter_nd_max", "tensor_scatter_nd_mul",
                   "tensor_scatter_nd_div", "tensor_scatter_nd_mean"]


@pytest.mark.parametrize("op", TENSOR_SCATTERS)
def test_tensor_scatters_clip_as_clamped_indices(op):
    f = getattr(tso, op)
    _same(f(T, IDX, UPD, bad_indices_policy="CLIP"), f(T, ref.clip(IDX, T.shape), UPD))
    # and by hand for add: row [9, 0] lands on [3, 0], [-3, 4] on [0, 4], ...
    if op == "tensor_scatter_nd_add":
        want = T.copy()
        for (i, j), u in zip(ref.clip(IDX, T.shape), UPD):
            want[i, j] += u
        np.testing.assert_allclose(f(T, IDX, UPD, bad_indices_policy="CLIP"), want, rtol=1e-6)


@pytest.mark.parametrize("op", TENSOR_SCATTERS)
def test_tensor_scatters_fill_drops_as_ignore(op):
    f = getattr(tso, op)
    _same(f(T, IDX, UPD, bad_indices_policy="FILL"), f(T, IDX, UPD, bad_indices_policy="IGNORE"))


@pytest.mark.parametrize("op", ["tensor_scatter_nd_max_with_argmax",
                                "tensor_scatter_nd_min_with_argmin"])
def test_arg_scatters(op):
    f = getattr(tso, op)
    got, want = f(T, IDX, UPD, bad_indices_policy="CLIP"), f(T, ref.clip(IDX, T.shape), UPD)
    for a, b in zip(got, want):
        _same(a, b)
    for a, b in zip(f(T, IDX, UPD, bad_indices_policy="FILL"),
                    f(T, IDX, UPD, bad_indices_policy="IGNORE")):
        _same(a, b)


def test_scatter_nd_and_int16_indices_into_a_dimension_beyond_int16():
    _same(tso.scatter_nd(IDX, UPD, [4, 5, 2], bad_indices_policy="CLIP"),
          tso.scatter_nd(ref.clip(IDX, T.shape), UPD, [4, 5, 2]))
    # int16 indices cannot exceed the dimension: only negatives are clamped
    idx = np.array([[32767], [-5]], np.int16)
    got = tso.scatter_nd(idx, [1.0, 2.0], tf.constant([40000], tf.int64), bad_indices_policy="CLIP")
    want = np.zeros(40000, np.float32)
    want[32767], want[0] = 1, 2
    _same(got, want)


def test_clip_into_an_empty_dimension_drops_the_row():
    # nothing is in range: a gather's row is zeros (IGNORE's); a scatter into
    # an empty output is TensorFlow's shape error whatever the policy
    for policy in ("IGNORE", "CLIP"):
        with pytest.raises(IAE, match="Indices and updates specified for empty output shape"):
            tso.tensor_scatter_nd_add(tf.zeros([0, 2]), [[3]], [[1.0, 2.0]],
                                      bad_indices_policy=policy)
    _same(tso.gather_nd(tf.zeros([3, 0]), [[1, 4]], bad_indices_policy="CLIP"),
          np.zeros([1], np.float32))


@pytest.mark.parametrize("dtype", [tf.as_dtype(name) for name in ref.FILL_DEFAULTS],
                         ids=list(ref.FILL_DEFAULTS))
def test_gather_fill_default_per_dtype(dtype):
    params = ref.random_values(RNG, dtype, T.shape)
    got = tso.gather_nd(tf.constant(params, dtype), IDX, bad_indices_policy="FILL")
    want = ref.fill(ref.gather(params, IDX, dtype, ignore=True), IDX, T.shape, ref.fill_value(dtype))
    ref.assert_same(got, want)


def test_gather_fill_value_scalar_and_per_slice_and_clip():
    _same(tso.gather_nd(T, IDX, bad_indices_policy="FILL", fill_value=7.0),
          ref.fill(ref.gather(T, IDX, tf.float32, ignore=True), IDX, T.shape, 7.0))
    per_column = np.array([1.0, -1.0], np.float32)  # one value per element of a slice
    _same(tso.gather_nd(T, IDX, bad_indices_policy="FILL", fill_value=per_column),
          ref.fill(ref.gather(T, IDX, tf.float32, ignore=True), IDX, T.shape, per_column))
    _same(tso.gather_nd(T, IDX, bad_indices_policy="CLIP"),
          ref.gather(T, ref.clip(IDX, T.shape), tf.float32))
    # tso.gather (row lookups) and batch_dims
    ids = np.array([[0, 7], [-1, 3]], np.int64)
    _same(tso.gather(DATA, ids, bad_indices_policy="FILL", fill_value=0.5),
          np.where(((ids < 0) | (ids >= 6))[..., None], np.float32(0.5), DATA[np.clip(ids, 0, 5)]))
    _same(tso.gather(DATA, ids, bad_indices_policy="CLIP"), DATA[np.clip(ids, 0, 5)])
    batch = np.array([[[1], [9]], [[-2], [4]], [[0], [0]], [[4], [5]]], np.int32)  # into T's dim 1
    _same(tso.gather_nd(T, batch, batch_dims=1, bad_indices_policy="CLIP"),
          tso.gather_nd(T, np.clip(batch, 0, 4), batch_dims=1))
    filled = tso.gather_nd(T, batch, batch_dims=1, bad_indices_policy="FILL", fill_value=3.0)
    bad = (batch[..., 0] < 0) | (batch[..., 0] >= 5)
    _same(filled, np.where(bad[..., None], np.float32(3.0),
                           tso.gather_nd(T, np.clip(batch, 0, 4), batch_dims=1)))


def test_fill_value_errors():
    with pytest.raises(ValueError, match="fill_value is given for bad_indices_policy='FILL'"):
        tso.gather_nd(T, IDX, fill_value=1.0)
    with pytest.raises(ValueError, match="fill_value is given for bad_indices_policy='FILL'"):
        tso.gather(DATA, [0], bad_indices_policy="IGNORE", fill_value=1.0)
    with pytest.raises(ValueError, match="fill_value must be of the output's dtype float32"):
        tso.gather_nd(T, IDX, bad_indices_policy="FILL", fill_value="x")
    with pytest.raises(ValueError, match="fill_value must be of the output's dtype float32"):
        tso.gather_nd(T, IDX, bad_indices_policy="FILL", fill_value=tf.constant(1.0, tf.float64))
    with pytest.raises(ValueError, match="fill_value 1000 does not fit the output's dtype int8"):
        tso.gather(tf.constant([1, 2], tf.int8), [1, 9], bad_indices_policy="FILL", fill_value=1000)
    with pytest.raises(ValueError, match="fill_value -1 does not fit the output's dtype uint8"):
        tso.gather(tf.constant([1, 2], tf.uint8), [1, 9], bad_indices_policy="FILL", fill_value=-1)
    for shape in ([3], [1, 2], [2, 1]):  # a slice of T at depth-2 rows is [2]
        with pytest.raises(ValueError, match=r"fill_value of shape \(.*\) does not broadcast to a "
                                             r"gathered slice of shape \(2,\)"):
            tso.gather_nd(T, IDX, bad_indices_policy="FILL", fill_value=np.ones(shape, np.float32))
    with pytest.raises(IAE, match="Unknown bad_indices_policy 'clip'"):
        tso.gather_nd(T, IDX, bad_indices_policy="clip")
    # the raw ops know ERROR and IGNORE only: the modes are the wrappers'
    with pytest.raises(IAE, match="Unknown bad_indices_policy 'CLIP'"):
        _loader.load().tf_scatter_gather_nd(params=T, indices=IDX, bad_indices_policy="CLIP")


def test_variables_clip_and_fill():
    v = tf.Variable(T)
    tso.scatter_nd_add(v, IDX, UPD, bad_indices_policy="CLIP")
    _same(v, tso.tensor_scatter_nd_add(T, ref.clip(IDX, T.shape), UPD))
    v.assign(T)
    tso.scatter_nd_max(v, IDX, UPD, bad_indices_policy="FILL")
    _same(v, tso.tensor_scatter_nd_max(T, IDX, UPD, bad_indices_policy="IGNORE"))
    now = v.numpy()
    _same(tso.gather_nd(v, IDX, bad_indices_policy="FILL", fill_value=2.0),
          tso.gather_nd(now, IDX, bad_indices_policy="FILL", fill_value=2.0))
    _same(tso.gather_nd(v, IDX, bad_indices_policy="CLIP"), tso.gather_nd(now, ref.clip(IDX, T.shape)))


UNSORTED = ["unsorted_segment_sum", "unsorted_segment_prod", "unsorted_segment_min",
            "unsorted_segment_max", "unsorted_segment_mean", "unsorted_segment_sqrt_n",
            "segment_softmax", "segment_log_softmax", "segment_logsumexp", "segment_std",
            "segment_var", "unsorted_segment_argmax", "unsorted_segment_argmin"]


@pytest.mark.parametrize("op", UNSORTED)
def test_unsorted_segments(op):
    f = getattr(tso, op)
    clamped = np.minimum(IDS, 3)  # negative ids stay dropped, as TensorFlow defines them
    _same(f(DATA, IDS, 4, bad_indices_policy="CLIP"), f(DATA, clamped, 4))
    _same(f(DATA, IDS, 4, bad_indices_policy="FILL"), f(DATA, IDS, 4, bad_indices_policy="IGNORE"))
    # 2-D ids, and no segment at all: every row dropped
    ids2 = IDS.reshape(2, 3)
    _same(f(DATA.reshape(2, 3, 3), ids2, 4, bad_indices_policy="CLIP"),
          f(DATA.reshape(2, 3, 3), np.minimum(ids2, 3), 4))
    _same(f(DATA, IDS, 0, bad_indices_policy="CLIP"), f(DATA, -np.ones_like(IDS), 0))


@pytest.mark.parametrize("op", ["segment_sum", "segment_prod", "segment_min", "segment_max",
                                "segment_mean"])
def test_sorted_segments(op):
    f = getattr(tso, op)
    ids = np.array([-2, -1, 0, 0, 3, 4], np.int32)  # negatives are out of range here
    _same(f(DATA, ids, bad_indices_policy="CLIP"), f(DATA, np.maximum(ids, 0)))
    _same(f(DATA, ids, bad_indices_policy="FILL"), f(DATA, ids, bad_indices_policy="IGNORE"))


@pytest.mark.parametrize("op", ["sparse_segment_sum", "sparse_segment_mean",
                                "sparse_segment_sqrt_n"])
def test_sparse_segments(op):
    f = getattr(tso, op)
    indices = np.array([0, 8, -1, 5, 2], np.int64)  # into DATA's 6 rows
    ids = np.array([-1, 0, 1, 3, 7], np.int32)
    rows = np.clip(indices, 0, 5)
    _same(f(DATA, indices, ids, num_segments=4, bad_indices_policy="CLIP"),
          f(DATA, rows, np.clip(ids, 0, 3), num_segments=4))
    _same(f(DATA, indices, ids, bad_indices_policy="CLIP"), f(DATA, rows, np.maximum(ids, 0)))
    _same(f(DATA, indices, ids, num_segments=4, bad_indices_policy="FILL"),
          f(DATA, indices, ids, num_segments=4, bad_indices_policy="IGNORE"))


def test_embedding_lookups():
    tables = [tf.Variable(DATA[:3]), tf.Variable(DATA[3:])]  # "div": rows 0-2, 3-5
    ids = np.array([[0, 5], [11, -1]], np.int64)
    clamped = np.clip(ids, 0, 5)
    for params in (tf.Variable(DATA), tables):
        _same(tso.nn.embedding_lookup(params, ids, bad_indices_policy="CLIP"), DATA[clamped])
        bad = ((ids < 0) | (ids > 5))[..., None]
        _same(tso.nn.embedding_lookup(params, ids, bad_indices_policy="FILL"),
              np.where(bad, np.float32(np.nan), DATA[clamped]))
    bags = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([1, 9, -4], tf.int64), [2, 2])
    _same(tso.nn.embedding_lookup_sparse(tf.Variable(DATA), bags, None, combiner="sum",
                                         bad_indices_policy="CLIP"),
          np.stack([DATA[1] + DATA[5], DATA[0]]))
    _same(tso.nn.embedding_lookup_sparse(tf.Variable(DATA), bags, None, combiner="sum",
                                         bad_indices_policy="FILL"),
          np.stack([DATA[1], np.zeros(3, np.float32)]))  # FILL leaves the bad ids out of the bag


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("policy", ["IGNORE", "FILL"])
def test_embedding_bags_leave_bad_ids_out_on_every_path(combiner, policy):
    # the fast path (one table, no weights, no max_norm) and the others: a
    # bad id counts for no mean, whatever reads the rows
    table = tf.constant(DATA)
    bags = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1]], tf.constant([0, 7, 1, 2], tf.int64),
                           [2, 2])
    ones = tf.SparseTensor(bags.indices, tf.ones([4]), bags.dense_shape)
    want = tso.nn.embedding_lookup_sparse(table, bags, None, combiner=combiner,
                                          bad_indices_policy=policy)
    kept = {0: [0], 1: [1, 2]}
    by_hand = [DATA[r].sum(0) / {"sum": 1, "mean": len(r), "sqrtn": np.sqrt(len(r))}[combiner]
               for r in kept.values()]
    np.testing.assert_allclose(want, np.stack(by_hand), rtol=1e-6)
    for got in (tso.nn.embedding_lookup_sparse(table, bags, ones, combiner=combiner,
                                               bad_indices_policy=policy),
                tso.nn.embedding_lookup_sparse([table[:3], table[3:]], bags, None,
                                               combiner=combiner, bad_indices_policy=policy),
                tso.nn.embedding_lookup_sparse(table, bags, None, combiner=combiner,
                                               max_norm=100.0, bad_indices_policy=policy)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("op", ["sparse_segment_sum", "sparse_segment_mean",
                                "sparse_segment_sqrt_n"])
def test_sparse_segments_under_xla_drop_bad_indices(op):
    # XLA's gather clamps; the function drops the row as eagerly
    f = getattr(tso, op)
    indices = tf.constant([0, 7, -1, 1])
    ids = tf.constant([0, 0, 1, 1])
    data = tf.constant(DATA)

    def step(d):
        with tf.GradientTape() as tape:
            tape.watch(d)
            y = f(d, indices, ids, num_segments=2, bad_indices_policy="IGNORE")
        return y, tape.gradient(y, d)
    eager = step(data)
    compiled = tf.function(step, jit_compile=True)(data)
    for a, b in zip(compiled, eager):
        np.testing.assert_allclose(tf.convert_to_tensor(a), tf.convert_to_tensor(b), rtol=1e-6)
    np.testing.assert_allclose(eager[0], np.stack([DATA[0], DATA[1]]), rtol=1e-6)


def test_gradients():
    params = tf.constant(T)
    updates = tf.constant(UPD)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([params, updates])
        clip_rows = tso.gather_nd(params, IDX, bad_indices_policy="CLIP")
        fill_value = tf.constant([0.0, 0.0])
        tape.watch(fill_value)
        filled = tso.gather_nd(params, IDX, bad_indices_policy="FILL", fill_value=fill_value)
        scattered = tso.tensor_scatter_nd_add(params, IDX, updates, bad_indices_policy="CLIP")
    weight = RNG.standard_normal(clip_rows.shape).astype(np.float32)
    # a clamped row's gradient goes where it was clamped to
    want = np.zeros_like(T)
    for (i, j), w in zip(ref.clip(IDX, T.shape), weight):
        want[i, j] += w
    np.testing.assert_allclose(tape.gradient(clip_rows, params, output_gradients=weight), want,
                               rtol=1e-6)
    # a filled row's goes to fill_value, not to params
    bad = np.array([(i < 0 or i >= 4 or j < 0 or j >= 5) for i, j in IDX])
    want = np.zeros_like(T)
    for (i, j), w, b in zip(IDX, weight, bad):
        if not b:
            want[i, j] += w
    np.testing.assert_allclose(tf.convert_to_tensor(
        tape.gradient(filled, params, output_gradients=weight)), want, rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(filled, fill_value, output_gradients=weight),
                               weight[bad].sum(axis=0), rtol=1e-6)
    up = RNG.standard_normal(T.shape).astype(np.float32)
    np.testing.assert_allclose(tape.gradient(scattered, updates, output_gradients=up),
                               up[tuple(ref.clip(IDX, T.shape).T)], rtol=1e-6)


def test_xla_unknown_shapes_and_stock_forms_agree():
    def f(t, i, u, ids):
        return (tso.gather_nd(t, i, bad_indices_policy="FILL", fill_value=-1.0),
                tso.gather_nd(t, i, bad_indices_policy="CLIP"),
                tso.tensor_scatter_nd_add(t, i, u, bad_indices_policy="CLIP"),
                tso.scatter_nd(i, u, [4, 5, 2], bad_indices_policy="CLIP"),
                tso.unsorted_segment_sum(t[:, 0, :], ids, 3, bad_indices_policy="CLIP"),
                tso.segment_softmax(t[:, 0, :], ids, 3, bad_indices_policy="CLIP"))
    ids = np.array([0, 7, -1, 2], np.int32)
    args = (T, IDX, UPD, ids)
    eager = f(*args)
    spec = [tf.TensorSpec(None, tf.float32), tf.TensorSpec(None, tf.int32),
            tf.TensorSpec(None, tf.float32), tf.TensorSpec(None, tf.int32)]
    unknown = tf.function(f, input_signature=spec)(*args)
    compiled = tf.function(f, jit_compile=True)(*args)
    with tso.stock_ops():
        stock = tf.function(f)(*args)
    for results in (unknown, compiled, stock):
        for a, b in zip(results, eager):
            np.testing.assert_allclose(a, b, rtol=1e-6)
    # and the values themselves
    _same(eager[0], ref.fill(ref.gather(T, IDX, tf.float32, ignore=True), IDX, T.shape, -1.0))
    _same(eager[4], tso.unsorted_segment_sum(T[:, 0, :], np.minimum(ids, 2), 3))


def test_sharded_tables():
    table = ShardedVariable([tf.Variable(DATA[:4]), tf.Variable(DATA[4:])])
    ids = np.array([[2], [8], [-1], [5]], np.int32)
    clamped = np.clip(ids, 0, 5)
    _same(tso.gather_nd(table, ids, bad_indices_policy="CLIP"), DATA[clamped[:, 0]])
    bad = ((ids < 0) | (ids > 5))
    _same(tso.gather_nd(table, ids, bad_indices_policy="FILL", fill_value=9.0),
          np.where(bad, np.float32(9.0), DATA[clamped[:, 0]]))
    tso.scatter_nd_add(table, ids, np.ones([4, 3], np.float32), bad_indices_policy="CLIP")
    want = DATA.copy()
    for i in clamped[:, 0]:
        want[i] += 1
    _same(np.concatenate([v.numpy() for v in table.variables]), want)


def test_review_cases():
    # float64 bag weights keep their precision when bad ids are left out
    table = tf.constant(np.ones([4, 1]), tf.float64)
    bags = tf.SparseTensor([[0, 0], [0, 1]], tf.constant([0, 1], tf.int64), [1, 2])
    weights = tf.SparseTensor(bags.indices, tf.constant([1 + 1e-12, 1.0], tf.float64), [1, 2])
    for policy in ("", "IGNORE"):
        got = tso.nn.embedding_lookup_sparse(table, bags, weights, combiner="sum",
                                             bad_indices_policy=policy)
        assert got.numpy()[0, 0] - 2.0 == pytest.approx(1e-12, rel=1e-3)
    # CLIP with a depth beyond the rank: the op's own message
    with pytest.raises(IAE, match="exceeds"):
        tso.tensor_scatter_nd_add(tf.zeros([2]), [[0, 1, 2]], [1.0], bad_indices_policy="CLIP")
    # a variable's rows under XLA keep the policy (XLA's gather would clamp)
    v = tf.Variable(DATA)
    for policy, want in (("IGNORE", np.zeros(3, np.float32)), ("FILL", np.full(3, np.nan, np.float32)),
                         ("CLIP", DATA[5])):
        got = tf.function(lambda i: tso.gather(v, i, bad_indices_policy=policy),
                          jit_compile=True)(tf.constant([1, 9]))
        _same(got, np.stack([DATA[1], want]))
    with pytest.raises(tf.errors.InternalError, match=r"indices\[1\] = \[9\] does not index"):
        tf.function(lambda i: tso.gather(v, i), jit_compile=True)(tf.constant([1, 9]))
    # int16 indices into a variable under XLA
    tf.function(lambda: tso.scatter_nd_add(v, tf.constant([[2]], tf.int16), DATA[:1]),
                jit_compile=True)()
    _same(v[2], DATA[2] + DATA[0])
    # a policy where TensorFlow's function reads the rows is refused, as for embedding_lookup
    # (tables of lengths unknown when traced)
    lookup = tf.function(lambda a, b: tso.nn.embedding_lookup_sparse(
        [a, b], bags, None, bad_indices_policy="IGNORE"),
        input_signature=[tf.TensorSpec([None, 1], tf.float64)] * 2)
    with pytest.raises(ValueError, match="bad_indices_policy applies where the plugin reads"):
        lookup(table, table)
