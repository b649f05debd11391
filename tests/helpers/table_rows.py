"""The op table's rows grouped as the tests iterate over them (the package
itself needs none of these lists): made from tf_scatter_ops/_base/table.py's
OPS, which the library reports."""

from tf_scatter_ops._base.table import OPS

OP_TYPES = {row.py: row.op for row in OPS}  # Python name -> our op type
SEGMENT_KINDS = ("UnsortedSegment", "SortedSegment", "SparseSegment")
TENSOR_SCATTERS = tuple(row for row in OPS if row.kind == "TensorScatter")
SEGMENTS = tuple(row for row in OPS if row.kind == "UnsortedSegment")
SORTED_SEGMENTS = tuple(row for row in OPS if row.kind == "SortedSegment")
SCATTER_GATHER = tuple(row for row in OPS if row.kind in ("ScatterNd", "TensorScatter", "GatherNd"))
ARG_REDUCTIONS = tuple(row for row in OPS if row.kind in ("ArgScatter", "ArgSegment"))
