"""The op table (cc/ops/op_table.h) against everything made from it: the
registered ops and their dtypes, the CPU and XLA kernels of every row and its
variable ops, the library's op functions, the Python wrappers, the variable
functions, the patch, the gradients. A row added to the table without its
registration unit, gradient rule or wrapper fails here."""

import pytest
import tensorflow as tf
from tensorflow.python.framework import kernels, op_def_registry
from tensorflow.python.framework import ops as tf_ops

import tf_scatter_ops as tso
from tf_scatter_ops import ops, patch, variables
from tf_scatter_ops._dispatch import ours as _ours
from tf_scatter_ops._base import library as _loader
from tf_scatter_ops._base import table as _table
import table_rows

VALUE_ATTR = {"ScatterNd": "T", "TensorScatter": "T", "GatherNd": "Tparams", "UnsortedSegment": "T",
              "SortedSegment": "T", "SparseSegment": "T", "Groupwise": "T", "ArgScatter": "T",
              "ArgSegment": "T", "GatherReduce": "T", "EdgeCombine": "T"}
# The index attrs of each kind.
INDEX_ATTRS = {"SparseSegment": ("Tidx", "Tsegmentids")}

# The oracle for the dtypes, written out here by hand from cc/ops/op_table.h
# and cc/kernels/common/dtypes.h (not computed from the product): a dtype
# dropped from or added to the table, its registration or the Python lists
# fails here.
FLOAT = ["bfloat16", "float16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
INTEGER = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
MINMAX = FLOAT + INTEGER            # the real numbers
ADD = FLOAT + COMPLEX + INTEGER     # every number
ALL = ADD + ["bool", "string"]
INDEX = ["int16", "int32", "int64"]
EXPECTED_DTYPES = {
    "scatter_nd": ALL, "tensor_scatter_nd_update": ALL, "tensor_scatter_nd_add": ADD,
    "tensor_scatter_nd_sub": ADD, "tensor_scatter_nd_min": MINMAX,
    "tensor_scatter_nd_max": MINMAX, "tensor_scatter_nd_mul": MINMAX,
    "tensor_scatter_nd_div": FLOAT, "gather_nd": ALL,
    "unsorted_segment_sum": ADD, "unsorted_segment_prod": ADD, "unsorted_segment_min": MINMAX,
    "unsorted_segment_max": MINMAX, "segment_sum": ADD, "segment_prod": ADD,
    "segment_min": MINMAX, "segment_max": MINMAX, "segment_mean": ADD,
    "sparse_segment_sum": MINMAX, "sparse_segment_mean": FLOAT, "sparse_segment_sqrt_n": FLOAT,
    "segment_softmax": FLOAT, "segment_log_softmax": FLOAT, "segment_logsumexp": FLOAT,
    "segment_var": FLOAT, "segment_std": FLOAT,
    "tensor_scatter_nd_max_with_argmax": MINMAX, "tensor_scatter_nd_min_with_argmin": MINMAX,
    "unsorted_segment_max_with_argmax": MINMAX, "unsorted_segment_min_with_argmin": MINMAX,
    "gather_reduce": FLOAT, "edge_combine": FLOAT,
}


def names(dtypes):
    return sorted(tf.as_dtype(d).name for d in dtypes)


def variable_ops(row):
    """(op type, its value attr) of the row's variable ops."""
    if not row.variable:
        return []
    if row.kind == "GatherNd":
        return [(row.variable, "dtype")]
    return [("Resource" + row.variable, "T"), (row.variable, "T")]


def every_op(row):
    fused_grad = [(row.op + "Grad", "T")] if row.kind == "Groupwise" else []
    return [(row.op, VALUE_ATTR[row.kind])] + variable_ops(row) + fused_grad


def allowed(op_type, attr):
    op_def = op_def_registry.get("TfScatter>" + op_type)
    assert op_def is not None, f"TfScatter>{op_type} is not registered"
    values = next(a for a in op_def.attr if a.name == attr).allowed_values.list.type
    return {tf.as_dtype(t) for t in values}


def kernel_dtypes(op_type, attr, device):
    return {tf.as_dtype(t)
            for k in kernels.get_registered_kernels_for_op("TfScatter>" + op_type).kernel
            if k.device_type == device
            for c in k.constraint if c.name == attr
            for t in c.allowed_values.list.type}


def test_the_table_has_the_family():
    assert [row.py for row in _table.OPS] == [
        "scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
        "tensor_scatter_nd_sub", "tensor_scatter_nd_min", "tensor_scatter_nd_max", "tensor_scatter_nd_mul",
        "tensor_scatter_nd_div", "gather_nd",
        "unsorted_segment_sum", "unsorted_segment_prod", "unsorted_segment_min",
        "unsorted_segment_max", "segment_sum", "segment_prod", "segment_min", "segment_max",
        "segment_mean", "sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n",
        "segment_softmax", "segment_log_softmax", "segment_logsumexp", "segment_var",
        "segment_std", "tensor_scatter_nd_max_with_argmax", "tensor_scatter_nd_min_with_argmin",
        "unsorted_segment_max_with_argmax", "unsorted_segment_min_with_argmin",
        "gather_reduce", "edge_combine"]
    assert all(row.dtypes for row in _table.OPS)


def test_every_op_of_the_library_is_in_the_table():
    """The library's op functions (one per registered TfScatter> op) are the
    table's ops and their variable ops, no more, no fewer."""
    library = {name for name in dir(_loader.load())
               if name.startswith("tf_scatter_") and not name.endswith("_eager_fallback")}
    made = {_ours.function_name(op) for row in _table.OPS for op, _ in every_op(row)}
    assert library == made


def test_registered_dtypes_and_cpu_kernels_are_the_rows():
    assert sorted(row.py for row in _table.OPS) == sorted(EXPECTED_DTYPES)
    for row in _table.OPS:
        want = sorted(EXPECTED_DTYPES[row.py])
        assert names(row.dtypes) == want, row.py
        for op_type, attr in every_op(row):
            assert names(allowed(op_type, attr)) == want, op_type
            for index_attr in INDEX_ATTRS.get(row.kind, ("Tindices",)):
                assert names(allowed(op_type, index_attr)) == INDEX, op_type
            assert names(kernel_dtypes(op_type, attr, "CPU")) == want, op_type


def test_every_scatter_and_gather_row_has_an_xla_kernel():
    """The segment, group-wise and arg rows have none: under XLA their
    functions build TensorFlow's ops."""
    if not tso.built_with_xla():
        pytest.skip("the library was built without XLA kernels (TensorFlow older than 2.21, "
                    "or no highwayhash / farmhash headers at build time)")
    for row in _table.OPS:
        devices = {k.device_type for k in
                   kernels.get_registered_kernels_for_op("TfScatter>" + row.op).kernel}
        assert ("XLA_CPU_JIT" in devices) == (row in table_rows.SCATTER_GATHER), row.op


def test_python_lists_are_the_rows():
    """The wrappers' dtype lists against the oracle above and against the
    CPU kernels TensorFlow's registry holds (neither is the Python product)."""
    assert {op: names(ds) for op, ds in ops.DTYPES.items()} == {
        op: sorted(ds) for op, ds in EXPECTED_DTYPES.items()}
    assert names(ops.INDEX_DTYPES) == INDEX
    for row in _table.OPS:
        registered = kernel_dtypes(row.op, VALUE_ATTR[row.kind], "CPU")
        assert names(ops.DTYPES[row.py]) == names(registered), row.py
    for row in _table.OPS:
        assert callable(getattr(tso, row.py)), row.py
        if row.kind == "Groupwise" or row.tf is None:  # TensorFlow has none: not patched
            assert row.tf is None and row.py not in _table.NAMESPACE
            assert row.py not in patch._MATH and row.py not in patch._V2
            continue
        assert getattr(tf.raw_ops, row.tf), row.tf  # TensorFlow's counterpart exists
        if row.alias:
            assert getattr(tso, row.alias) is getattr(tso, row.py)
            assert patch._V1[row.alias] is getattr(ops, row.py)
        if row.kind == "SparseSegment":
            assert patch._SPARSE[row.py[len("sparse_"):]] is getattr(tso, row.py)
        elif row.kind in table_rows.SEGMENT_KINDS:
            assert patch._MATH[row.py] is getattr(tso, row.py)
        else:
            assert patch._V2[row.py] is getattr(ops, row.py)
    # the VARIABLE column of op_table.h's tensor scatters, written out: the
    # three lists are made from the table, so comparing them with each other
    # alone could not fail
    variable_scatters = {"scatter_nd_update", "scatter_nd_add", "scatter_nd_sub",
                         "scatter_nd_min", "scatter_nd_max"}
    assert set(variables.TENSOR_OPS) == variable_scatters
    assert set(_table.VARIABLE_SCATTERS) == variable_scatters
    assert set(patch._METHODS) == variable_scatters
    for name in variables.TENSOR_OPS:
        assert callable(getattr(tso, name)), name


def test_every_op_has_its_gradient_rule():
    for row in _table.OPS:
        assert tf_ops._gradient_registry.lookup("TfScatter>" + row.op) is not None, row.op
        for op_type, _ in variable_ops(row):
            # a gradient for the row read, none (registered as None) for in-place updates
            rule = tf_ops._gradient_registry.lookup("TfScatter>" + op_type)
            assert (rule is not None) == (row.kind == "GatherNd"), op_type
        if row.kind == "Groupwise":  # the fused gradient op's: second order
            assert tf_ops._gradient_registry.lookup("TfScatter>" + row.op + "Grad") is not None
