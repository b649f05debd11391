"""The op table (cc/ops/op_table.h) as the library reports it: one row
per op of the family, read once when the package is imported. The wrappers'
dtype checks, the variable functions, the patch, the gradients and the tests
iterate over it, so no list of ops is written twice."""

import collections
import sys

import tensorflow as tf

from tf_scatter_ops._base import library

Row = collections.namedtuple("Row", [
    "op",         # the op type after TfScatter>
    "py",         # the Python function's name
    "kind",       # "ScatterNd", "TensorScatter", "GatherNd", "UnsortedSegment",
                  # "SortedSegment", "SparseSegment", "Groupwise", "ArgScatter"
                  # or "ArgSegment"
    "reducer",    # the C++ reducer ("AddOp", ...)
    "dtypes",     # the value dtypes, as tf.DType
    "variable",   # the variable ops' base name, or None
    "gradient",   # the gradient rule of tf_scatter_ops/gradients.py
    "tf",         # TensorFlow's op of the same meaning, or None
    "alias",      # TensorFlow's second Python name for it, or None
])


def snake(op_type):
    """ScatterNdAdd -> scatter_nd_add: the Python name of an op type."""
    return "".join(("_" if i and ch.isupper() else "") + ch.lower()
                   for i, ch in enumerate(op_type))


def _rows():
    rows = []
    for line in library.library_function("tf_scatter_ops_op_table").splitlines():
        # interned: the names are looked up in TensorFlow's module wrappers,
        # whose attribute cache is keyed by the str object (see patch.py)
        fields = {key: sys.intern(value)
                  for key, value in (item.split("=", 1) for item in line.split())}
        fields["dtypes"] = tuple(tf.as_dtype(d) for d in fields["dtypes"].split(",") if d)
        for optional in ("variable", "tf", "alias"):
            fields[optional] = None if fields[optional] == "none" else fields[optional]
        rows.append(Row(**fields))
    return tuple(rows)


library.load()
OPS = _rows()
BY_PY = {row.py: row for row in OPS}
BY_OP = {row.op: row for row in OPS}  # op type (after TfScatter>) -> row
SPARSE_SEGMENTS = tuple(row for row in OPS if row.kind == "SparseSegment")
# The functions of each segment's rows (segment_softmax, ...), which
# TensorFlow does not have; each also has a fused gradient op, <op>Grad.
GROUPWISE = tuple(row for row in OPS if row.kind == "Groupwise")
# Where TensorFlow has each function, (module under tf, its name there):
# tf.math.segment_sum, tf.sparse.segment_sum (sparse_segment_sum), tf.gather_nd.
NAMESPACE = {row.py: ("sparse", sys.intern(row.py[len("sparse_"):])) if row.kind == "SparseSegment"
             else ("math", row.py) if row.kind in ("UnsortedSegment", "SortedSegment")
             else ("", row.py)
             for row in OPS if row.tf}
# The in-place variable functions (scatter_nd_add, ...), from the rows that
# have variable ops: Python name -> the row.
VARIABLE_SCATTERS = {sys.intern(snake(row.variable)): row
                     for row in OPS if row.kind == "TensorScatter" and row.variable}


def identity(reducer, dtype):
    """The value the reduction `reducer` (the table's "AddOp", "MulOp",
    "MinOp", "MaxOp") starts from, as cc/kernels/common/reducers.h defines
    it: 0, 1, the highest value (+inf for floats), the lowest (-inf)."""
    if reducer == "AddOp":
        return tf.zeros([], dtype)
    if reducer == "MulOp":
        return tf.ones([], dtype)
    if reducer not in ("MinOp", "MaxOp"):
        raise ValueError(f"{reducer} has no identity here")
    is_min = reducer == "MinOp"
    if dtype.is_floating:
        return tf.constant(float("inf") if is_min else float("-inf"), dtype)
    return tf.constant(dtype.max if is_min else dtype.min, dtype)
