"""The op table (cc/ops/op_table.h) against everything made from it: the
registered ops and their dtypes, the CPU and XLA kernels of every row and its
variable ops, the library's op functions, the Python wrappers, the variable
functions, the patch, the gradients. A row added to the table without its
registration unit, gradient rule or wrapper fails here."""

import tensorflow as tf
from tensorflow.python.framework import kernels, op_def_registry
from tensorflow.python.framework import ops as tf_ops

import tf_scatter_ops as tso
from tf_scatter_ops import ops, patch, variables
from tf_scatter_ops._dispatch import context as _calls
from tf_scatter_ops._base import library as _loader
from tf_scatter_ops._base import table as _table

VALUE_ATTR = {"ScatterNd": "T", "TensorScatter": "T", "GatherNd": "Tparams", "UnsortedSegment": "T",
              "SortedSegment": "T", "SparseSegment": "T", "Groupwise": "T", "ArgScatter": "T",
              "ArgSegment": "T"}
# The index attrs of each kind.
INDEX_ATTRS = {"SparseSegment": ("Tidx", "Tsegmentids")}


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
        "unsorted_segment_max_with_argmax", "unsorted_segment_min_with_argmin"]
    assert all(row.dtypes for row in _table.OPS)


def test_every_op_of_the_library_is_in_the_table():
    """The library's op functions (one per registered TfScatter> op) are the
    table's ops and their variable ops, no more, no fewer."""
    library = {name for name in dir(_loader.load())
               if name.startswith("tf_scatter_") and not name.endswith("_eager_fallback")}
    made = {_calls.function_name(op) for row in _table.OPS for op, _ in every_op(row)}
    assert library == made


def test_registered_dtypes_and_cpu_kernels_are_the_rows():
    for row in _table.OPS:
        for op_type, attr in every_op(row):
            assert allowed(op_type, attr) == set(row.dtypes), op_type
            for index_attr in INDEX_ATTRS.get(row.kind, ("Tindices",)):
                assert allowed(op_type, index_attr) == set(ops.INDEX_DTYPES), op_type
            assert kernel_dtypes(op_type, attr, "CPU") == set(row.dtypes), op_type


def test_every_scatter_and_gather_row_has_an_xla_kernel():
    """The segment, group-wise and arg rows have none: under XLA their
    functions build TensorFlow's ops."""
    if not tso.built_with_xla():
        return
    for row in _table.OPS:
        devices = {k.device_type for k in
                   kernels.get_registered_kernels_for_op("TfScatter>" + row.op).kernel}
        assert ("XLA_CPU_JIT" in devices) == (row in _table.SCATTER_GATHER), row.op


def test_python_lists_are_the_rows():
    assert ops.DTYPES == {row.py: row.dtypes for row in _table.OPS}
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
        elif row.kind in _table.SEGMENT_KINDS:
            assert patch._MATH[row.py] is getattr(tso, row.py)
        else:
            assert patch._V2[row.py] is getattr(ops, row.py)
    assert set(variables._OPS) == set(_table.VARIABLE_SCATTERS) == set(patch._METHODS)
    for name in variables._OPS:
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
