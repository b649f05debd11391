"""Bitwise parity with TensorFlow's own CPU kernels on random cases, small and
large enough to take the parallel paths, plus the seed examples."""

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops._base import table as _table
from tf_scatter_ops.ops import DTYPES, INDEX_DTYPES
import reference as ref

# TensorFlow 2.21 has CPU kernels for exactly our value dtypes
# (shared/tf-behaviour.md 1.2); only its index dtypes are fewer.
TF_DTYPES = DTYPES
# (tensor_scatter_nd_mul and _div: TensorFlow has none; test_scatter_reductions.py)
SCATTERS = [op for op in TF_DTYPES if op.startswith("tensor_") and _table.BY_PY[op].tf]

# (shape, outer dims of indices, depth): small cases and ones large enough for
# the block-parallel path (many rows) and the column-parallel path (long slices):
# more than 128k update elements, or outputs of <= 8 MiB go the serial path.
GEOMETRIES = [
    ((6,), (10,), 1),
    ((3, 4, 2), (4, 3), 2),
    ((3, 4, 2), (5,), 3),
    ((40, 3), (20000,), 1),        # serial in-cache path, heavy duplicates
    ((40, 3), (200000,), 1),       # block path, heavy duplicates
    ((60000,), (300000,), 1),      # block path, element updates
    ((8, 9000), (40,), 1),         # column path, long slices
]


def case(rng, op, dtype, shape, outer, depth):
    tensor = ref.random_values(rng, dtype, shape)
    idx = ref.random_indices(rng, shape, depth, outer, tf.int64)
    upd = ref.random_values(rng, dtype, tuple(outer) + tuple(shape[depth:]))
    return tf.constant(tensor, dtype), tf.constant(idx), tf.constant(upd, dtype)


@pytest.mark.parametrize("op,dtype", [(op, d) for op in SCATTERS for d in TF_DTYPES[op]],
                         ids=lambda v: getattr(v, "name", v))
def test_tensor_scatter_parity(op, dtype, rng):
    for shape, outer, depth in GEOMETRIES:
        tensor, idx, upd = case(rng, op, dtype, shape, outer, depth)
        for index_dtype in (tf.int32, tf.int64):
            i = tf.cast(idx, index_dtype)
            ref.assert_same(getattr(tso, op)(tensor, i, upd), getattr(tf, op)(tensor, i, upd))


@pytest.mark.parametrize("dtype", TF_DTYPES["scatter_nd"], ids=lambda d: d.name)
def test_scatter_nd_parity(dtype, rng):
    for shape, outer, depth in GEOMETRIES:
        _, idx, upd = case(rng, "scatter_nd", dtype, shape, outer, depth)
        ref.assert_same(tso.scatter_nd(idx, upd, shape), tf.scatter_nd(idx, upd, shape))


@pytest.mark.parametrize("dtype", TF_DTYPES["gather_nd"], ids=lambda d: d.name)
def test_gather_nd_parity(dtype, rng):
    for shape, outer, depth in GEOMETRIES + [((3, 4), (2,), 0)]:
        params, idx, _ = case(rng, "gather_nd", dtype, shape, outer, depth)
        for index_dtype in INDEX_DTYPES:
            if shape[0] > 32767 and index_dtype == tf.int16:
                continue
            i = tf.cast(idx, index_dtype)
            # TensorFlow refuses int16 indices into params of > 32767 elements
            # and aborts the process on > 65535 int16 index rows (see below).
            tf_i = i if np.prod(shape) <= 32767 and np.prod(outer) <= 32767 else idx
            ref.assert_same(tso.gather_nd(params, i), tf.gather_nd(params, tf_i))



# Gathers with outputs of >= 8 MiB and rows of a multiple of 64 bytes copy
# with non-temporal stores where the CPU has AVX-512 (cc/kernels/cpu/row_copy.h);
# rows of other sizes and smaller outputs copy as usual.
@pytest.mark.parametrize("dtype,row", [(tf.float32, 64), (tf.float64, 16), (tf.int8, 64),
                                       (tf.bfloat16, 96), (tf.float32, 63)],
                         ids=lambda v: getattr(v, "name", v))
def test_large_gather_nd_parity(dtype, row, rng):
    rows = (9 << 20) // (row * dtype.size) + 1
    params = tf.constant(ref.random_values(rng, dtype, (5000, row)), dtype)
    idx = rng.integers(0, 5000, size=(rows, 1))
    ref.assert_same(tso.gather_nd(params, idx), tf.gather_nd(params, idx))
    # With "IGNORE", bad rows (here 1 in 50) give zeros among the streamed rows.
    bad = rng.random(rows) < 0.02
    idx[bad, 0] = 5000 + rng.integers(0, 3, size=int(bad.sum()))
    expected = params.numpy()[np.minimum(idx[:, 0], 4999)]
    expected[bad] = 0
    ref.assert_same(tso.gather_nd(params, idx, bad_indices_policy="IGNORE"), expected)

def test_gather_nd_batch_dims_parity(rng):
    params = tf.constant(rng.standard_normal((2, 3, 4, 5)), tf.float32)
    for batch_dims, idx_shape in [(1, (2, 6, 2)), (2, (2, 3, 7, 1)), (1, (2, 1)), (2, (2, 3, 2))]:
        depth = idx_shape[-1]
        dims = params.shape[batch_dims:batch_dims + depth]
        idx = np.stack([rng.integers(0, d, size=idx_shape[:-1]) for d in dims], -1)
        ref.assert_same(tso.gather_nd(params, idx, batch_dims=batch_dims),
                        tf.gather_nd(params, idx, batch_dims=batch_dims))


DUPLICATES = [
    # (op, tensor, indices, updates) from shared/tf-behaviour.md 2.1
    ("tensor_scatter_nd_update", [1., 2., 3., 4.], [[1], [1], [1], [3]], [10., 20., 30., 40.]),
    ("tensor_scatter_nd_add", [1., 2., 3., 4.], [[1], [1], [1], [3]], [10., 20., 30., 40.]),
    ("tensor_scatter_nd_sub", [1., 2., 3., 4.], [[1], [1], [1], [3]], [10., 20., 30., 40.]),
    ("tensor_scatter_nd_min", [1., 2., 3., 4.], [[1], [1], [1], [3]], [10., -5., 30., 40.]),
    ("tensor_scatter_nd_max", [1., 2., 3., 4.], [[1], [1], [1], [3]], [10., 20., 30., 40.]),
]


@pytest.mark.parametrize("op,tensor,indices,updates", DUPLICATES, ids=lambda v: str(v)[:24])
def test_duplicates_like_tensorflow(op, tensor, indices, updates):
    ref.assert_same(getattr(tso, op)(tensor, indices, updates),
                    getattr(tf, op)(tensor, indices, updates))


def test_update_last_of_100000_duplicates_wins():
    n = 100000
    got = tso.tensor_scatter_nd_update(tf.zeros([2]), tf.zeros([n, 1], tf.int32),
                                       tf.range(float(n)))
    ref.assert_same(got, np.array([n - 1, 0], np.float32))


def test_string_and_bool_duplicates():
    ref.assert_same(tso.scatter_nd([[1], [1]], ["a", "b"], [4]),
                    np.array([b"", b"ab", b"", b""], dtype=object))
    ref.assert_same(tso.scatter_nd([[1], [1], [2]], [True, False, False], [4]),
                    np.array([False, True, False, False]))


def test_seed_examples():
    idx, upd = [[4], [3], [1], [7]], [9, 10, 11, 12]
    ref.assert_same(tso.scatter_nd(idx, upd, [8]), np.array([0, 11, 0, 10, 9, 0, 0, 12], np.int32))
    ones = tf.ones([8], tf.int32)
    ref.assert_same(tso.tensor_scatter_nd_update(ones, idx, upd),
                    np.array([1, 11, 1, 10, 9, 1, 1, 12], np.int32))
    ref.assert_same(tso.tensor_scatter_nd_sub(ones, idx, upd),
                    np.array([1, -10, 1, -9, -8, 1, 1, -11], np.int32))
    slices = tf.constant([[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]]] * 2)
    ref.assert_same(tso.scatter_nd([[1], [3]], slices, [4, 4, 4]),
                    tf.scatter_nd([[1], [3]], slices, [4, 4, 4]))
    ones3 = tf.ones([4, 4, 4], tf.int32)
    ref.assert_same(tso.tensor_scatter_nd_sub(ones3, [[0], [2]], slices),
                    tf.tensor_scatter_nd_sub(ones3, [[0], [2]], slices))


def test_aliases_are_the_same_functions():
    assert tso.tensor_scatter_update is tso.tensor_scatter_nd_update
    assert tso.tensor_scatter_add is tso.tensor_scatter_nd_add
    assert tso.tensor_scatter_sub is tso.tensor_scatter_nd_sub


def test_nan_handling_of_min_max_matches_tensorflow():
    t = tf.constant([np.nan, 1., 2., np.nan])
    idx = [[0], [1], [2], [3]]
    u = tf.constant([0., np.nan, 5., np.nan])
    for op in ("tensor_scatter_nd_min", "tensor_scatter_nd_max"):
        ref.assert_same(getattr(tso, op)(t, idx, u), getattr(tf, op)(t, idx, u))


# Outputs over 32 MiB with many destination blocks, rows of >= 64 bytes and
# odd row sizes (blocks not a multiple of a cache line).
@pytest.mark.parametrize("row", [16, 17, 20])
@pytest.mark.parametrize("op", ["tensor_scatter_nd_update", "tensor_scatter_nd_add",
                                "tensor_scatter_nd_max", "gather_nd"])
def test_large_outputs_with_long_rows(op, row, rng):
    rows = (40 << 20) // (4 * row)
    tensor = tf.constant(rng.standard_normal((rows, row)), tf.float32)
    n = rows if op == "gather_nd" else rows // 50
    idx = tf.constant(rng.integers(0, rows, size=(n, 1)), tf.int64)
    if op == "gather_nd":
        ours, theirs = tso.gather_nd(tensor, idx), tf.gather_nd(tensor, idx)
    else:
        upd = tf.constant(rng.standard_normal((n, row)), tf.float32)
        ours, theirs = getattr(tso, op)(tensor, idx, upd), getattr(tf, op)(tensor, idx, upd)
    ref.assert_same(ours, theirs.numpy())


def test_gather_nd_int16_indices_with_many_rows():
    """tf.gather_nd aborts the whole process (a CHECK failure in tensor.h,
    "new_num_elements == NumElements()") for int16 indices with more than
    65535 rows: the row count wraps in int16. Ours answers."""
    rng = np.random.default_rng(5)
    params = tf.constant(rng.standard_normal((40, 3)), tf.float32)
    idx = rng.integers(0, 40, size=(70000, 1))
    ours = tso.gather_nd(params, tf.constant(idx, tf.int16))
    ref.assert_same(ours, tf.gather_nd(params, tf.constant(idx, tf.int32)).numpy())


@pytest.mark.parametrize("batch_dims", [1, np.int64(1), tf.constant(1)], ids=["int", "np.int64", "tensor"])
def test_gather_nd_batch_dims_accepts_what_tensorflow_accepts(batch_dims):
    params = tf.reshape(tf.range(12.0), [2, 3, 2])
    idx = tf.constant([[1], [0]])
    ref.assert_same(tso.gather_nd(params, idx, batch_dims=batch_dims),
                    tf.gather_nd(params, idx, batch_dims=batch_dims).numpy())
