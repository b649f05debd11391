"""Run by tests/test_isa.py with TF_SCATTER_OPS_ISA set: the paths that
depend on the instruction set (index linearisation at depths 1-3 and the
generic loop, every index dtype, bad rows; gathers large enough to stream,
rows of 32 and 64 bytes, aligned or not) against TensorFlow's kernels,
element by element (bitwise)."""

import os

import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops.ops import INDEX_DTYPES

MIB = 1 << 20


def same(ours, theirs, what):
    a, b = np.asarray(ours), np.asarray(theirs)
    assert a.shape == b.shape and a.dtype == b.dtype, (what, a.shape, b.shape)
    assert a.tobytes() == b.tobytes(), f"{what}: {np.sum(a != b)} elements differ"


def main():
    isa = os.environ["TF_SCATTER_OPS_ISA"]
    assert tso.active_isa() == isa, (tso.active_isa(), isa)
    rng = np.random.default_rng(3)
    # linearisation: depth 1, 2, 3 (vectorised) and 4 (generic), all index dtypes
    for depth, shape in ((1, (1 << 16,)), (2, (256, 256)), (3, (64, 32, 32)), (4, (16, 16, 16, 16))):
        n = 200_000
        idx = np.stack([rng.integers(0, d, n) for d in shape[:depth]], axis=-1)
        upd = rng.standard_normal(n).astype(np.float32)
        t = np.zeros(shape, np.float32)
        for dtype in INDEX_DTYPES:
            if dtype == tf.int16 and max(shape) > 2**15 - 1:
                continue
            i = tf.constant(idx, dtype)
            theirs_dtype = tf.int32 if dtype == tf.int16 else dtype
            same(tso.tensor_scatter_nd_add(t, i, upd),
                 tf.tensor_scatter_nd_add(t, tf.cast(i, theirs_dtype), upd), f"add depth {depth} {dtype.name}")
            same(tso.gather_nd(t + 1, i), tf.gather_nd(t + 1, tf.cast(i, theirs_dtype)),
                 f"gather depth {depth} {dtype.name}")
        bad = idx.copy()
        bad[n - 7, depth - 1] = shape[depth - 1]  # one bad row near the end
        bad[n - 3, 0] = -1
        try:
            tso.tensor_scatter_nd_update(t, bad, upd)
            raise AssertionError("a bad row did not raise")
        except tf.errors.InvalidArgumentError as e:
            assert f"indices[{n - 7}]" in e.message, e.message
        ignored = tso.tensor_scatter_nd_add(t, bad, upd, bad_indices_policy="IGNORE")
        keep = np.ones(n, bool)
        keep[[n - 7, n - 3]] = False
        same(ignored, tf.tensor_scatter_nd_add(t, idx[keep], upd[keep]), f"IGNORE depth {depth}")
    # streamed gathers: outputs of >= 8 MiB, rows of 64 and 32 bytes (and 12,
    # never streamed), from aligned and offset params
    for row in (16, 8, 3):
        params = rng.standard_normal((100_000, row)).astype(np.float32)
        n = (12 * MIB) // (4 * row)
        idx = rng.integers(0, len(params), (n, 1))
        idx[::97] = len(params) + 5  # bad rows: zeros under IGNORE
        got = tso.gather_nd(params, idx, bad_indices_policy="IGNORE")
        want = tf.gather_nd(params, idx, bad_indices_policy="IGNORE")
        same(got, want, f"streamed gather, {4 * row}-byte rows")
        good = idx[1:96]
        same(tso.gather_nd(params[1:], good - 1), tf.gather_nd(params[1:], good - 1), "offset params")
    print(f"isa {isa}: ok")


if __name__ == "__main__":
    main()
