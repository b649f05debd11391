"""Every op x every dtype x each index dtype x depth 0..rank, against the
NumPy reference (bitwise), with duplicates, slices and outer index dims."""

import numpy as np
import pytest
import tensorflow as tf

from table_rows import TENSOR_SCATTERS
import tf_scatter_ops as tso
from tf_scatter_ops.ops import DTYPES, INDEX_DTYPES
import reference as ref

SHAPE = (3, 4, 2)
OUTERS = [(7,), (2, 3)]
# The op table's tensor scatters -> their reduction in reference.py.
SCATTERS = {row.py: row.py.rsplit("_", 1)[1] for row in TENSOR_SCATTERS}


def cases(op):
    return [pytest.param(d, i, id=f"{d.name}-{i.name}")
            for d in DTYPES[op] for i in INDEX_DTYPES]


def updates_shape(outer, depth):
    return tuple(outer) + SHAPE[depth:]


@pytest.mark.parametrize("op,dtype,index_dtype", [
    pytest.param(op, d, i, id=f"{op}-{d.name}-{i.name}")
    for op in sorted(SCATTERS) for d in DTYPES[op] for i in INDEX_DTYPES])
def test_tensor_scatter_matches_reference(op, dtype, index_dtype, rng):
    fn = getattr(tso, op)
    for depth in range(len(SHAPE) + 1):
        for outer in OUTERS:
            tensor = ref.random_values(rng, dtype, SHAPE)
            idx = ref.random_indices(rng, SHAPE, depth, outer, index_dtype)
            upd = ref.random_values(rng, dtype, updates_shape(outer, depth))
            expected = ref.scatter(SCATTERS[op], tensor, idx, upd, dtype)
            ref.assert_same(fn(tf.constant(tensor, dtype), tf.constant(idx),
                               tf.constant(upd, dtype)), expected)


@pytest.mark.parametrize("dtype,index_dtype", cases("scatter_nd"))
def test_scatter_nd_matches_reference(dtype, index_dtype, rng):
    for depth in range(len(SHAPE) + 1):
        for outer in OUTERS:
            idx = ref.random_indices(rng, SHAPE, depth, outer, index_dtype)
            upd = ref.random_values(rng, dtype, updates_shape(outer, depth))
            expected = ref.scatter("scatter_nd", ref.zeros(SHAPE, dtype), idx, upd, dtype)
            ref.assert_same(tso.scatter_nd(idx, tf.constant(upd, dtype), SHAPE), expected)


@pytest.mark.parametrize("dtype,index_dtype", cases("gather_nd"))
def test_gather_nd_matches_reference(dtype, index_dtype, rng):
    for depth in range(len(SHAPE) + 1):
        for outer in OUTERS + [()]:
            params = ref.random_values(rng, dtype, SHAPE)
            idx = ref.random_indices(rng, SHAPE, depth, outer, index_dtype)
            expected = ref.gather(params, idx, dtype)
            ref.assert_same(tso.gather_nd(tf.constant(params, dtype), idx), expected)


@pytest.mark.parametrize("op", sorted(SCATTERS) + ["scatter_nd", "gather_nd"])
def test_ignore_policy_matches_reference(op, rng):
    dtype = tf.float32
    for depth in range(1, len(SHAPE) + 1):
        tensor = ref.random_values(rng, dtype, SHAPE)
        idx = ref.random_indices(rng, SHAPE, depth, (9,), tf.int64, bad=4)
        if op == "gather_nd":
            expected = ref.gather(tensor, idx, dtype, ignore=True)
            got = tso.gather_nd(tensor, idx, bad_indices_policy="IGNORE")
        else:
            upd = ref.random_values(rng, dtype, updates_shape((9,), depth))
            if op == "scatter_nd":
                expected = ref.scatter(op, ref.zeros(SHAPE, dtype), idx, upd, dtype, ignore=True)
                got = tso.scatter_nd(idx, upd, SHAPE, bad_indices_policy="IGNORE")
            else:
                expected = ref.scatter(SCATTERS[op], tensor, idx, upd, dtype, ignore=True)
                got = getattr(tso, op)(tensor, idx, upd, bad_indices_policy="IGNORE")
        ref.assert_same(got, expected)
