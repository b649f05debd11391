"""The bad-input matrix: every case runs in a worker subprocess, so
a crash (segfault, abort, sanitizer report, OOM kill) is a failure of that
case, not of the test run.

CASES is the table; a new case is one line:
    (id, expression, expected, message regex)
`expression` is evaluated in the worker (namespace: see _namespace below);
`expected` is "IAE" (InvalidArgumentError), "VE" (ValueError), "IAE|VE",
"OOM" (ResourceExhaustedError) or "ok" (then `message` is an expression for
the expected value, compared bitwise). Generated rows add out-of-bound and
negative indices at every depth and coordinate, and int extremes, for every
op and every index dtype.

One persistent worker runs the cases one at a time (a fresh TensorFlow
process per case would cost ~3 s each); if it dies, the case it was running
fails with the exit status and a new worker takes the next case.
"""

import json
import os
import queue
import re
import subprocess
import sys
import threading

import pytest

from tf_scatter_ops._base.table import OPS as _ROWS  # (the worker process has no tests/helpers)

TABLE = tuple(row for row in _ROWS if row.kind in ("ScatterNd", "TensorScatter", "GatherNd"))
TENSOR_SCATTERS = tuple(row for row in _ROWS if row.kind == "TensorScatter")

SCATTERS = tuple(row.py for row in TENSOR_SCATTERS)  # the op table's
OPS = tuple(row.py for row in TABLE)  # the segment family: test_segments.py
OOB = r"indices\[{row}\] = \[{index}\] does not index into shape \[{shape}\]"
# gathers: TensorFlow's "param shape", the row named by its position in indices' outer dims
GATHER_OOB = r"indices\[{row}\] = \[{index}\] does not index into param shape \[{shape}\]"
OUTER = r"Dimensions \[0,{k}\) of indices\[shape=\[{indices}\]\] must match dimensions \[0,{k}\) of updates\[shape=\[{updates}\]\]"
INNER = (r"Dimensions \[{d0},{d1}\) of input\[shape=\[{output}\]\] must match "
         r"dimensions \[{u0},{u1}\) of updates\[shape=\[{updates}\]\]")
# the same rules in the words of TensorFlow's TensorScatter* kernels
T_OUTER = r"Outer dimensions of indices and update must match. Indices shape: \[{indices}\], updates shape:\[{updates}\]"
T_RANK = (r"Inner dimensions of output shape must match inner dimensions of updates shape. "
          r"Output: \[{output}\] updates: \[{updates}\]")
T_INNER = (r"The inner {k} dimensions of output.shape=\[{output}\] must match the inner {m} "
           r"dimensions of updates.shape=\[{updates}\]")
EMPTY = r"Indices and updates specified for empty output shape"

# fmt: off
CASES = [
    # --- index depth > rank: eager (kernel) and traced (shape function) ---
    *[(f"depth>rank-{op}", f"call('{op}', [[0, 0, 0, 0]])", "IAE",
       r"index depth indices.shape\[-1\] = 4 exceeds the rank 3 of the (output|params) shape \[3,4,5\]")
      for op in OPS],
    *[(f"depth>rank-static-{op}", f"static(lambda: call('{op}', [[0, 0, 0, 0]]))", "VE",
       r"index depth indices.shape\[-1\] = 4 exceeds the rank 3") for op in OPS],
    ("depth>rank-dynamic", "dyn(lambda i: tso.gather_nd(T4, i), tf.constant([[0, 0]]))", "IAE",
     r"index depth indices.shape\[-1\] = 2 exceeds the rank 1 of the params shape \[4\]"),
    ("depth>rank-scalar-target", "tso.tensor_scatter_nd_update(tf.constant(1.), [[0]], [2.])", "IAE",
     r"index depth indices.shape\[-1\] = 1 exceeds the rank 0 of the output shape \[\]"),
    # --- shape mismatches (every rule), eager, traced and with unknown shapes ---
    ("outer-mismatch", "tso.tensor_scatter_nd_update(T4, [[0], [1]], [1., 2., 3.])", "IAE",
     T_OUTER.format(indices="2,1", updates="3")),
    ("outer-mismatch-2d", "tso.tensor_scatter_nd_add(T4, tf.zeros([2, 3, 1], tf.int32), tf.zeros([2, 4]))", "IAE",
     T_OUTER.format(indices="2,3,1", updates="2,4")),
    ("outer-updates-rank-too-small", "tso.tensor_scatter_nd_add(T4, tf.zeros([2, 3, 1], tf.int32), tf.zeros([2]))", "IAE",
     T_OUTER.format(indices="2,3,1", updates="2")),
    ("outer-mismatch-static", "static(lambda: tso.tensor_scatter_nd_sub(T4, [[0], [1]], [1., 2., 3.]))", "VE",
     T_OUTER.format(indices="2,1", updates="3")),
    ("outer-mismatch-dynamic", "dyn(lambda i, u: tso.scatter_nd(i, u, [4]), tf.constant([[0], [1]]), tf.ones([3]))", "IAE",
     OUTER.format(k=1, indices="2,1", updates="3")),
    ("inner-dims-wrong", "tso.tensor_scatter_nd_max(tf.zeros([3, 4]), [[0], [1]], tf.zeros([2, 3]))", "IAE",
     T_INNER.format(k=1, output="3,4", m=1, updates="2,3")),
    ("inner-rank-too-many", "tso.tensor_scatter_nd_min(T4, [[0], [1]], tf.zeros([2, 1]))", "IAE",
     T_RANK.format(output="4", updates="2,1")),
    ("inner-rank-too-few", "tso.tensor_scatter_nd_update(tf.zeros([3, 4]), [[0], [1]], tf.zeros([2]))", "IAE",
     T_RANK.format(output="3,4", updates="2")),
    ("inner-static", "static(lambda: tso.scatter_nd([[0], [1]], tf.zeros([2, 3]), [3, 4]))", "VE",
     INNER.format(d0=1, d1=2, output="3,4", u0=1, u1=2, updates="2,3")),
    ("inner-dynamic", "dyn(lambda u: tso.tensor_scatter_nd_add(tf.zeros([3, 4]), [[0], [1]], u), tf.zeros([2, 3]))", "IAE",
     T_INNER.format(k=1, output="3,4", m=1, updates="2,3")),
    ("depth0-wrong-updates", "tso.tensor_scatter_nd_add(tf.zeros([3, 4]), tf.zeros([2, 0], tf.int32), tf.zeros([2, 4]))", "IAE",
     T_RANK.format(output="3,4", updates="2,4")),
    ("empty-output-update", "tso.tensor_scatter_nd_update(tf.zeros([0, 3]), [[0]], [[1., 2., 3.]])", "IAE", EMPTY),
    ("empty-output-scatter_nd", "tso.scatter_nd([[0]], [1.], [0])", "IAE", EMPTY),
    ("empty-output-ignore", "tso.tensor_scatter_nd_add(tf.zeros([0]), [[0]], [1.], bad_indices_policy='IGNORE')", "IAE", EMPTY),
    # --- wrong ranks ---
    *[(f"scalar-indices-{op}", f"call('{op}', 1)", "IAE",
       r"indices must have rank at least 1 \(its last dimension is the index depth\), got indices shape \[\]")
      for op in OPS],
    *[(f"scalar-indices-static-{op}", f"static(lambda: call('{op}', 1))", "VE",
       r"indices must have rank at least 1") for op in OPS],
    *[(f"scalar-updates-{op}", f"tso.{op}(T4, [[1], [2]], 5.)", "IAE",
       r"updates must have rank at least 1, got updates shape \[\]") for op in SCATTERS],
    ("scalar-updates-scatter_nd", "tso.scatter_nd([1], 5., [4])", "IAE",
     r"updates must have rank at least 1, got updates shape \[\]"),
    ("scalar-updates-static", "static(lambda: tso.tensor_scatter_nd_update(T4, [1], 9.))", "VE",
     r"updates must have rank at least 1"),
    ("gather-batch-dims-negative", "tso.gather_nd(tf.zeros([2, 3]), [[0]], batch_dims=-1)", "VE",
     r"batch_dims must be a non-negative integer"),
    ("gather-batch-dims-too-big", "tso.gather_nd(tf.zeros([2, 3]), [0, 1], batch_dims=1)", "VE",
     r"batch_dims = 1 must be less than the rank of indices"),
    ("gather-batch-dims-over-params", "tso.gather_nd(tf.zeros([2]), [[[0]]], batch_dims=2)", "VE",
     r"batch_dims = 2 exceeds the rank of params"),
    # --- scatter_nd's shape: non-vector, negative, overflowing int64 ---
    ("shape-matrix", "tso.scatter_nd(E_IDX, E_UPD, [[4]])", "IAE",
     r"shape must be a vector \(1-D\), got a tensor of shape \[1,1\]"),
    ("shape-scalar", "tso.scatter_nd([[0]], [1.], 4)", "IAE", r"shape must be a vector \(1-D\), got a tensor of shape \[\]"),
    ("shape-matrix-static", "static(lambda: tso.scatter_nd([[0]], [1.], [[4]]))", "VE", r"shape must be a vector \(1-D\)"),
    ("shape-matrix-dynamic", "dyn(lambda s: tso.scatter_nd(E_IDX, E_UPD, s), tf.constant([[4]], tf.int64))", "IAE",
     r"shape must be a vector \(1-D\), got a tensor of shape \[1,1\]"),
    ("shape-negative", "tso.scatter_nd(E_IDX, E_UPD, [-4])", "IAE", r"shape \[-4\] has a negative dimension -4"),
    ("shape-negative-int64-min", "tso.scatter_nd(E_IDX, E_UPD, tf.constant([3, -2**63], tf.int64))", "IAE",
     r"has a negative dimension -9223372036854775808"),
    ("shape-negative-dynamic", "dyn(lambda s: tso.scatter_nd(E_IDX, E_UPD, s), tf.constant([2, -1], tf.int64))", "IAE",
     r"shape \[2, -1\] has a negative dimension -1"),
    ("shape-overflow-2^40^2", "tso.scatter_nd(E_IDX, E_UPD, tf.constant([2**40, 2**40], tf.int64))", "IAE",
     r"overflows int64"),
    ("shape-overflow-int64-max", "tso.scatter_nd(E_IDX, E_UPD, tf.constant([2**63 - 1, 2], tf.int64))", "IAE",
     r"shape \[9223372036854775807, 2\] has too many elements \(the product overflows int64\)"),
    ("shape-overflow-three-dims", "tso.scatter_nd(tf.zeros([0, 1], tf.int64), tf.zeros([0, 2**21, 2**21]), tf.constant([2**21, 2**21, 2**21], tf.int64))", "IAE",
     r"overflows int64"),
    ("shape-overflow-python-list", "tso.scatter_nd([[0, 0]], [1], [2**32, 2**32])", "IAE", r"overflows int64"),
    ("shape-overflow-dynamic", "dyn(lambda s: tso.scatter_nd(E_IDX, E_UPD, s), tf.constant([2**62, 4], tf.int64))", "IAE",
     r"overflows int64"),
    ("shape-zero-times-huge", "tso.scatter_nd(tf.zeros([0, 1], tf.int64), tf.zeros([0, 2**62, 2**62], tf.int8), tf.constant([0, 2**62, 2**62], tf.int64)).shape.as_list()",
     "ok", "[0, 2**62, 2**62]"),
    ("shape-too-big-to-allocate", "tso.scatter_nd(E_IDX, tf.zeros([0], tf.int8), tf.constant([2**62], tf.int64))", "OOM",
     r"OOM when allocating tensor with shape\[4611686018427387904\]"),
    ("shape-float", "tso.scatter_nd([[0]], [1.], [4.])", "VE", r"shape must be int16, int32 or int64, got float32"),
    # --- Python ints / NumPy arrays beyond int32 must not wrap into range ---
    ("list-index-2^32-gather", "tso.gather_nd(T4, [[2**32]])", "IAE", GATHER_OOB.format(row=0, index="4294967296", shape="4")),
    ("list-index-2^32+1-update", "tso.tensor_scatter_nd_update(T4, [[2**32 + 1]], [9.])", "IAE",
     OOB.format(row=0, index="4294967297", shape="4")),
    ("numpy-index-2^32-gather", "tso.gather_nd(T4, np.array([[2**32]]))", "IAE", GATHER_OOB.format(row=0, index="4294967296", shape="4")),
    ("numpy-index-int64-min-add", "tso.tensor_scatter_nd_add(T4, np.array([[1], [-2**63]]), [1., 2.])", "IAE",
     OOB.format(row=1, index="-9223372036854775808", shape="4")),
    ("list-index-beyond-int64", "tso.gather_nd(T4, [[2**64]])", "VE",
     r"indices = \[\[18446744073709551616\]\] does not fit int64"),
    ("numpy-uint64-index", "tso.gather_nd(T4, np.array([[2**64 - 1]], np.uint64))", "VE",
     r"indices must be int16, int32 or int64, got uint64"),
    ("int16-indices-shape-beyond-int16", "tso.scatter_nd(tf.constant([[3]], tf.int16), tf.ones([1], tf.int8), [40000])[:5]", "ok",
     "np.array([0, 0, 0, 1, 0], np.int8)"),
    # --- mismatched and unsupported dtypes ---
    ("updates-float64-into-float32", "tso.tensor_scatter_nd_update(T4, [[0]], tf.constant([1.], tf.float64))", "VE",
     r"updates: Tensor conversion requested dtype float32 for Tensor with dtype float64"),
    ("updates-int32-into-float32", "tso.tensor_scatter_nd_add(T4, [[0]], tf.constant([1]))", "VE",
     r"requested dtype float32 for Tensor with dtype int32"),
    ("updates-strings-into-float32", "tso.tensor_scatter_nd_add(T4, [[0]], ['a'])", "VE", r"updates: .*float"),
    ("tensor-strings-add", "tso.tensor_scatter_nd_add(['a'], [[0]], ['b'])", "VE",
     r"tensor_scatter_nd_add does not support dtype string"),
    ("min-complex", "tso.tensor_scatter_nd_min(tf.zeros([2], tf.complex64), [[0]], tf.ones([1], tf.complex64))", "VE",
     r"tensor_scatter_nd_min does not support dtype complex64"),
    ("max-bool", "tso.tensor_scatter_nd_max([True], [[0]], [False])", "VE", r"tensor_scatter_nd_max does not support dtype bool"),
    ("sub-string", "tso.tensor_scatter_nd_sub(['a'], [[0]], ['b'])", "VE", r"does not support dtype string"),
    ("gather-resource-like-dtype", "tso.gather_nd(tf.constant([1], tf.qint8), [[0]])", "VE", r"gather_nd does not support dtype qint8"),
    ("indices-float", "tso.gather_nd(T4, [[0.5]])", "VE", r"indices must be int16, int32 or int64, got float32"),
    ("indices-uint8", "tso.scatter_nd(tf.constant([[1]], tf.uint8), [1.], [4])", "VE", r"indices must be int16, int32 or int64, got uint8"),
    ("indices-bool", "tso.tensor_scatter_nd_update(T4, [[True]], [1.])", "VE", r"indices must be int16, int32 or int64, got bool"),
    ("indices-string", "tso.gather_nd(T4, [['0']])", "VE", r"indices must be int16, int32 or int64, got string"),
    # --- bad_indices_policy: unknown, lower case, wrong type ---
    *[(f"policy-{name}-{op}", f"call('{op}', [[0, 0]], policy={value!r})", "IAE",
       r"Unknown bad_indices_policy")
      for name, value in [("lower", "ignore"), ("mixed", "Ignore"), ("default-lower", "default"),
                          ("junk", "FOO"), ("padded", " IGNORE"), ("trailing", "ERROR "), ("int", 1), ("none", None)]
      for op in OPS],
    # --- direct op invocation with hand-made attrs (the generated raw-op functions and execute) ---
    ("raw-policy-lower", "lib.tf_scatter_scatter_nd(indices=[[0]], updates=[1.], shape=[4], bad_indices_policy='ignore')", "IAE",
     r"Unknown bad_indices_policy 'ignore': expected '', 'DEFAULT', 'ERROR' or 'IGNORE' \(upper case\)"),
    ("raw-policy-in-graph", "tf.function(lambda: lib.tf_scatter_gather_nd(params=T4, indices=[[0]], bad_indices_policy='nope'))()", "IAE",
     r"Unknown bad_indices_policy 'nope'"),
    ("raw-oob", "lib.tf_scatter_tensor_scatter_min(tensor=T4, indices=tf.constant([[0], [7]], tf.int16), updates=[1., 2.])", "IAE",
     OOB.format(row=1, index="7", shape="4")),
    ("raw-T-mismatch", "lib.tf_scatter_tensor_scatter_update(tensor=T4, indices=[[0]], updates=tf.constant([1]))", "IAE",
     r"input #2\(zero-based\) was expected to be a float tensor but is a int32 tensor"),
    ("raw-shape-dtype-mismatch", "lib.tf_scatter_scatter_nd(indices=tf.constant([[0]]), updates=[1.], shape=tf.constant([4], tf.int64))", "IAE",
     r"input #2\(zero-based\) was expected to be a int32 tensor but is a int64 tensor"),
    ("raw-Tindices-uint8", "lib.tf_scatter_gather_nd(params=T4, indices=tf.constant([[0]], tf.uint8))", "IAE",
     r"Value for attr 'Tindices' of uint8 is not in the list of allowed values: int16, int32, int64"),
    ("raw-scalar-indices", "lib.tf_scatter_tensor_scatter_add(tensor=T4, indices=tf.constant(0), updates=[1.])", "IAE",
     r"indices must have rank at least 1"),
    ("raw-depth>rank", "lib.tf_scatter_tensor_scatter_max(tensor=T4, indices=[[0, 0]], updates=[1.])", "IAE",
     r"index depth indices.shape\[-1\] = 2 exceeds the rank 1"),
    ("exec-Tindices-int8", "execute_op('GatherNd', [T4, tf.constant([[0]], tf.int8)], Tparams=tf.float32, Tindices=tf.int8)", "IAE",
     r"Value for attr 'Tindices' of int8 is not in the list of allowed values"),
    ("exec-T-complex-min", "execute_op('TensorScatterMin', [tf.constant([1j]), tf.constant([[0]]), tf.constant([2j])], T=tf.complex128, Tindices=tf.int32)", "IAE",
     r"Value for attr 'T' of complex128 is not in the list of allowed values"),
    ("exec-policy-int", "execute_op('TensorScatterUpdate', [T4, tf.constant([[0]]), tf.constant([1.])], T=tf.float32, Tindices=tf.int32, bad_indices_policy=3)", "IAE",
     r"Expecting a string value for attr bad_indices_policy, got int"),
    ("exec-policy-lower", "execute_op('ScatterNd', [tf.constant([[0]]), tf.constant([1.]), tf.constant([4])], T=tf.float32, Tindices=tf.int32, bad_indices_policy='ignore')", "IAE",
     r"Unknown bad_indices_policy 'ignore'"),
    ("exec-missing-input", "execute_op('TensorScatterUpdate', [T4, tf.constant([[0]])], T=tf.float32, Tindices=tf.int32)", "IAE",
     r"expected inputs 'float, int32, float' do not match 2 inputs specified"),
    ("exec-attr-disagrees-with-input", "execute_op('TensorScatterUpdate', [T4, tf.constant([[2]], tf.int32), tf.constant([9.])], T=tf.float32, Tindices=tf.int64)",
     "ok", "[1., 2., 9., 4.]"),
    ("exec-scalar-updates", "execute_op('TensorScatterSub', [T4, tf.constant([1]), tf.constant(1.)], T=tf.float32, Tindices=tf.int32)", "IAE",
     r"updates must have rank at least 1"),
    ("exec-shape-matrix", "execute_op('ScatterNd', [tf.constant([[0]]), tf.constant([1.]), tf.constant([[4]])], T=tf.float32, Tindices=tf.int32)", "IAE",
     r"shape must be a vector \(1-D\)"),
    ("exec-shape-int16-negative", "execute_op('ScatterNd', [tf.constant([[0]], tf.int16), tf.constant([1.]), tf.constant([-32768], tf.int16)], T=tf.float32, Tindices=tf.int16)", "IAE",
     r"shape \[-32768\] has a negative dimension -32768"),
    ("exec-string-oob", "execute_op('TensorScatterUpdate', [tf.constant(['a', 'b']), tf.constant([[2]], tf.int64), tf.constant(['c'])], T=tf.string, Tindices=tf.int64)", "IAE",
     OOB.format(row=0, index="2", shape="2")),
    ("exec-gather-oob-int64-max", "execute_op('GatherNd', [tf.zeros([3, 4], tf.bfloat16), tf.constant([[1, 2**63 - 1]], tf.int64)], Tparams=tf.bfloat16, Tindices=tf.int64)", "IAE",
     GATHER_OOB.format(row=0, index="1, 9223372036854775807", shape="3,4")),
]
# fmt: on


def _oob_cases():
    """Out-of-bound and negative indices at every depth and coordinate, with
    the extremes of each index dtype, for every op (row 0 valid, rows 1 and 2
    bad: the first bad row, 1, is named); and IGNORE drops the same rows."""
    shape = (3, 4, 5)
    extremes = {"int64": [-1, "dim", "dim+1", 2**31, 2**63 - 1, -2**63, -(2**63 - 1)],
                "int32": [-1, "dim", 2**31 - 1, -2**31],
                "int16": [-1, "dim", 2**15 - 1, -2**15]}
    rows = []
    for op in OPS:
        for index_dtype, values in extremes.items():
            for depth in (1, 2, 3):
                for coord in range(depth):
                    for v in values:
                        bad = {"dim": shape[coord], "dim+1": shape[coord] + 1}.get(v, v)
                        row = [1] * depth
                        row[coord] = bad
                        idx = f"tf.constant([{[0] * depth}, {row}, {row}], tf.{index_dtype})"
                        text = ", ".join(str(x) for x in row)
                        rows.append((f"oob-{op}-{index_dtype}-d{depth}-c{coord}-{v}",
                                     f"call('{op}', {idx})", "IAE",
                                     (GATHER_OOB if op == "gather_nd" else OOB).format(
                                         row=1, index=re.escape(text), shape="3,4,5")))
                # IGNORE: the same call equals the call with only the valid row
                # (gather: zeros for the bad rows).
                row = [1] * depth
                row[-1] = values[-1]
                idx = f"tf.constant([{[0] * depth}, {row}], tf.{index_dtype})"
                ok_idx = f"tf.constant([{[0] * depth}], tf.{index_dtype})"
                rows.append((f"ignore-{op}-{index_dtype}-d{depth}",
                             f"call('{op}', {idx}, policy='IGNORE')", "ok",
                             f"ignored('{op}', {ok_idx}, {idx})"))
    return rows


def _segment_size_cases():
    """The segment family's sizes taken from user values (num_segments, a
    grid's shape, the last sorted id; tensorflow#46888): eagerly, in a
    tf.function and under XLA, an output whose size overflows int64 is
    TensorFlow's error, one too large to allocate a ResourceExhaustedError,
    a negative num_segments TensorFlow's error; the process survives every
    one (each of these aborted it once, as some abort TensorFlow's own)."""
    from tf_scatter_ops._base import table as _table  # noqa: PLC0415 - the parent reads the table anyway
    overflow = r"Encountered overflow when multiplying 4611686018427387904 with 3"
    per_segment = [row.py for row in _table.OPS
                   if row.kind in ("UnsortedSegment", "Groupwise", "ArgSegment")]
    # every function for the overflow; one of each code path for the rest
    # (each case is a few seconds: XLA compiles, allocations are refused)
    calls = [(f"{py}-2**62", f"tso.{py}(tf.ones([1, 3]), tf.constant([0], tf.int64), 2**62)",
              "IAE", overflow)
             for py in per_segment + ["unsorted_segment_mean", "unsorted_segment_sqrt_n"]]
    for py in ("unsorted_segment_sum", "unsorted_segment_mean", "segment_softmax", "segment_var",
               "unsorted_segment_max_with_argmax"):
        calls += [
            # (XLA's own limit on a gather's dims, for the arg functions' form)
            (f"{py}-2**40", f"tso.{py}(tf.ones([1, 3]), tf.constant([0], tf.int64), 2**40)",
             "OOM|IAE", r"OOM|Out of memory|exceeds the INT_MAX limit"),
            (f"{py}-negative", f"tso.{py}(tf.ones([1, 3]), tf.constant([0], tf.int64), -1)",
             "IAE|VE", r"num_segments == -1 must not be negative|must be non-negative but is -1"),
            (f"{py}-grid-overflow",
             f"tso.{py}(tf.ones([1, 3]), tf.constant([[0, 0, 0]], tf.int64), [2**31, 2**31, 4])",
             "IAE", r"num_segments = \[2147483648, 2147483648, 4\] as a grid's shape: "
             r"Encountered overflow when multiplying 4611686018427387904 with 4"),
        ]
    for py in (row.py for row in _table.SPARSE_SEGMENTS):
        calls += [
            (f"{py}-2**62", f"tso.{py}(tf.ones([4, 3]), [0, 1], [0, 1], num_segments=2**62)",
             "IAE", overflow),
            (f"{py}-negative", f"tso.{py}(tf.ones([4, 3]), [0, 1], [0, 1], num_segments=-2)",
             "IAE|VE", r"segment ids must be >= 0|Cannot specify a negative value"),
            (f"{py}-huge-ids", f"tso.{py}(tf.ones([4, 3]), [0], tf.constant([2**62 - 1], tf.int64))",
             "IAE", overflow + "|unsupported operations"),  # XLA: as TensorFlow's (no kernel)
        ]
    calls += [
        (f"{row.py}-46888", f"tso.{row.py}(np.ones((1, 10, 1)), [1676240524292489355])", "IAE",
         r"Encountered overflow when multiplying 1676240524292489356 with 10|"
         r"unsupported operations")  # XLA has no kernel for the sorted ones (TensorFlow's neither)
        for row in [r for r in _ROWS if r.kind == "SortedSegment"]]
    calls += [("num_segments-beyond-int64", "tso.unsorted_segment_sum(tf.ones([1]), [0], 2**70)",
               "VE", r"num_segments = 1180591620717411303424 does not fit int64"),
              ("num_segments-uint64", "tso.unsorted_segment_sum(tf.ones([1]), [0], 2**63)", "VE",
               r"num_segments must be int32 or int64, got uint64"),
              ("shape-beyond-int64", "tso.scatter_nd([[0]], [1.], [2**65])", "VE",
               r"shape = \[36893488147419103232\] does not fit int64")]
    calls.append(("segment_sum-int64-max", "tso.segment_sum(tf.ones([2]), tf.constant([0, 2**63 - 1], "
                  "tf.int64))", "IAE", r"Last segment id must be < kintmax|unsupported operations"))
    modes = {"eager": "{}", "function": "tf.function(lambda: {})()",
             "xla": "tf.function(lambda: {}, jit_compile=True)()"}
    return [(f"size-{name}-{mode}", wrap.format(call), expected, message)
            for name, call, expected, message in calls for mode, wrap in modes.items()]


ALL_CASES = CASES + _oob_cases() + _segment_size_cases()
_IDS = [c[0] for c in ALL_CASES]
assert len(set(_IDS)) == len(_IDS), "duplicate case ids"

# ----------------------------------------------------------------- the worker


def _namespace():
    import numpy as np
    import tensorflow as tf
    from tensorflow.python.eager import context, execute

    import tf_scatter_ops as tso
    from tf_scatter_ops._base import library as _loader

    lib = _loader.load()
    ns = dict(tf=tf, np=np, tso=tso, lib=lib, T4=tf.constant([1., 2., 3., 4.]),
              E_IDX=tf.zeros([0, 1], tf.int64), E_UPD=tf.zeros([0]))

    def call(op, indices, policy="", shape=(3, 4, 5)):
        """op on a [3,4,5] float target; updates of the right shape (7s)."""
        tensor = tf.reshape(tf.range(int(np.prod(shape)), dtype=tf.float32), shape)
        if op == "gather_nd":
            return tso.gather_nd(tensor, indices, bad_indices_policy=policy)
        indices = tf.convert_to_tensor(indices) if not isinstance(indices, int) else indices
        idx_shape = indices.shape if hasattr(indices, "shape") else ()
        if len(idx_shape) >= 1 and idx_shape[-1] <= len(shape):
            upd_shape = tuple(idx_shape[:-1]) + tuple(shape[idx_shape[-1]:])
        else:
            upd_shape = (1,)
        updates = tf.fill(upd_shape or (1,), 7.)
        if op == "scatter_nd":
            return tso.scatter_nd(indices, updates, shape, bad_indices_policy=policy)
        return getattr(tso, op)(tensor, indices, updates, bad_indices_policy=policy)

    def ignored(op, ok_idx, idx):
        """What IGNORE must give: the valid rows only (gather: zeros elsewhere)."""
        if op != "gather_nd":
            return call(op, ok_idx)
        good = call(op, ok_idx).numpy()
        rest = np.zeros((idx.shape[0] - ok_idx.shape[0],) + good.shape[1:], good.dtype)
        return np.concatenate([good, rest])

    def static(f):
        """Traces f: static shape problems are ValueErrors here."""
        return tf.function(tf.autograph.experimental.do_not_convert(f)).get_concrete_function()

    def dyn(f, *args):
        """Calls f in a tf.function with unknown shapes: the kernel checks."""
        spec = [tf.TensorSpec(None, a.dtype) for a in args]
        return tf.function(tf.autograph.experimental.do_not_convert(f), input_signature=spec)(*args)

    def execute_op(name, inputs, **attrs):
        """Runs TfScatter>name eagerly with exactly these attrs (no inference)."""
        flat = []
        for k, v in attrs.items():
            flat += [k, v.as_datatype_enum if isinstance(v, tf.DType) else v]
        if "bad_indices_policy" not in attrs:
            flat += ["bad_indices_policy", ""]
        return execute.execute(f"TfScatter>{name}".encode(), 1, inputs=inputs,
                               attrs=tuple(flat), ctx=context.context())[0]

    ns.update(call=call, ignored=ignored, static=static, dyn=dyn, execute_op=execute_op)
    return ns


def _run_one(ns, expression, expected, message):
    import numpy as np
    try:
        value = eval(expression, ns)  # noqa: S307 - the table above
    except Exception as e:  # noqa: BLE001 - reported to the parent
        return {"kind": "raised", "type": type(e).__name__,
                "classes": [c.__name__ for c in type(e).__mro__], "message": str(e)}
    if hasattr(value, "numpy"):
        value = value.numpy()
    if expected != "ok":
        return {"kind": "returned", "value": repr(value)[:500]}
    want = eval(message, ns)  # noqa: S307
    want = want.numpy() if hasattr(want, "numpy") else want
    a, b = np.asarray(value), np.asarray(want)
    same = a.shape == b.shape and (a.tobytes() == b.tobytes() if a.dtype == b.dtype
                                   else bool(np.array_equal(a, b)))
    return {"kind": "ok" if same else "wrong", "value": repr(value)[:500],
            "expected": repr(want)[:500]}


def worker_main():
    """Reads case ids from stdin, answers one JSON line each on stdout."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything TensorFlow prints goes to stderr, not the protocol
    ns = _namespace()
    table = {c[0]: c for c in ALL_CASES}
    out.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        case_id = line.strip()
        if not case_id:
            continue
        if case_id == ABORT_CASE:
            os.abort()
        _, expression, expected, message = table[case_id]
        out.write(json.dumps(_run_one(ns, expression, expected, message)) + "\n")


# ----------------------------------------------------------------- the parent

ABORT_CASE = "__abort__"  # the harness's own test: the worker dies on it
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASE_TIMEOUT_S = 120


def _no_core_dumps():
    """A crashing worker (a test of the harness aborts on purpose) must not
    leave a multi-GB core file where core dumps are enabled."""
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class Worker:
    def __init__(self):
        # TF_ENABLE_ONEDNN_OPTS=0: TensorFlow's plain CPU allocator. oneDNN's
        # (the default) waits 10 s for memory to be freed before it reports
        # an allocation it cannot make, as the fuzz's hostile cases do; the
        # error is the same ResourceExhaustedError either way.
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS="0",
                   PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "tests"),
                                               os.environ.get("PYTHONPATH", "")]))
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker"], cwd=ROOT, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=_no_core_dumps)
        self.lines = queue.Queue()
        self.stderr = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._tail, daemon=True).start()
        self.ready = self._read(300)

    def _pump(self, stream, q):
        for line in stream:
            q.put(line)
        q.put(None)  # EOF: the worker is gone

    def _tail(self):
        for line in self.proc.stderr:
            self.stderr = (self.stderr + [line])[-40:]

    def _read(self, timeout):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return {"kind": "timeout"}
        if line is None:
            self.proc.wait(timeout=30)
            return {"kind": "crash", "returncode": self.proc.returncode}
        return json.loads(line)

    def run(self, case_id):
        self.proc.stdin.write(case_id + "\n")
        self.proc.stdin.flush()
        return self._read(CASE_TIMEOUT_S)

    def alive(self):
        return self.proc.poll() is None

    def close(self):
        if self.alive():
            self.proc.kill()  # the worker this test started, by its own handle
        self.proc.wait(timeout=30)


class Pool:
    """One worker at a time; a dead or hung one is replaced."""

    def __init__(self):
        self.worker = None
        self.crashes = []

    def run(self, case_id):
        if self.worker is None or not self.worker.alive():
            self.worker = Worker()
            assert self.worker.ready.get("ready"), (
                f"worker did not start: {self.worker.ready}\n{''.join(self.worker.stderr)}")
        try:
            result = self.worker.run(case_id)
        except (BrokenPipeError, OSError):
            result = {"kind": "crash", "returncode": self.worker.proc.poll()}
        if result["kind"] in ("crash", "timeout"):
            result["stderr"] = "".join(self.worker.stderr)
            self.crashes.append(case_id)
            self.worker.close()
            self.worker = None
        return result

    def close(self):
        if self.worker is not None:
            self.worker.close()


@pytest.fixture(scope="module")
def pool():
    p = Pool()
    yield p
    p.close()


EXCEPTIONS = {"IAE": ("InvalidArgumentError",), "VE": ("ValueError",),
              "IAE|VE": ("InvalidArgumentError", "ValueError"),
              "OOM": ("ResourceExhaustedError",),
              "OOM|IAE": ("ResourceExhaustedError", "InvalidArgumentError")}


@pytest.mark.parametrize("case_id,expression,expected,message", ALL_CASES, ids=_IDS)
def test_bad_input(pool, case_id, expression, expected, message):
    result = pool.run(case_id)
    if result["kind"] == "crash":
        code = result["returncode"]
        how = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        pytest.fail(f"CRASH ({how}) running {expression}\n{result['stderr']}")
    if result["kind"] == "timeout":
        pytest.fail(f"no answer within {CASE_TIMEOUT_S} s: {expression}\n{result['stderr']}")
    if expected == "ok":
        assert result["kind"] == "ok", f"{expression}: {result}"
        return
    assert result["kind"] == "raised", f"{expression} did not raise: {result}"
    wanted = EXCEPTIONS[expected]
    assert any(c in result["classes"] for c in wanted), (
        f"{expression} raised {result['type']}, expected {wanted}: {result['message']}")
    assert re.search(message, result["message"]), (
        f"{expression}: message does not match {message!r}:\n{result['message']}")


def test_worker_reports_a_crash_as_a_failure_of_that_case():
    """The harness itself: a case that kills the worker (here on purpose, with
    abort()) is reported as a crash with its signal, and the next case runs
    in a fresh worker."""
    p = Pool()
    try:
        result = p.run(ABORT_CASE)
        assert result["kind"] == "crash" and result["returncode"] == -6, result
        assert p.crashes == [ABORT_CASE] and p.worker is None
        result = p.run("depth>rank-gather_nd")
        assert result["kind"] == "raised" and result["type"] == "InvalidArgumentError", result
    finally:
        p.close()


if __name__ == "__main__" and "--worker" in sys.argv:
    worker_main()
