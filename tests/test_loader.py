"""The loader names both TensorFlow versions when they differ."""

import pytest
import tensorflow as tf

from tf_scatter_ops._base import library as _loader


def test_library_is_stamped_with_the_running_tensorflow():
    assert _loader.built_against() == tf.__version__


def test_version_mismatch_names_both_versions_and_the_fix():
    with pytest.raises(_loader.TensorFlowVersionMismatchError) as e:
        _loader.check_version("2.20.0", running="2.21.0")
    msg = str(e.value)
    assert "built against TensorFlow 2.20.0" in msg
    assert "TensorFlow 2.21.0 is running" in msg
    assert "make clean && make" in msg
    _loader.check_version("2.21.0", running="2.21.0")  # same version: no error


def test_mismatch_error_is_an_import_error():
    assert issubclass(_loader.TensorFlowVersionMismatchError, ImportError)


# Importing the package loads the library (SavedModels and Keras models need
# the ops registered before they are read); these run in fresh processes.

from ecosystem_util import python_env, run_python  # noqa: E402


def test_import_registers_the_ops():
    rc, out, err = run_python("""
        from tensorflow.python.framework import op_def_registry
        assert op_def_registry.get("TfScatter>ScatterNd") is None
        import tf_scatter_ops
        from tf_scatter_ops._base.table import OPS
        OP_TYPES = {row.py: row.op for row in OPS}
        for op in OP_TYPES.values():
            assert op_def_registry.get("TfScatter>" + op) is not None, op
        print("ok")
    """)
    assert rc == 0 and out.strip() == "ok", err[-3000:]


def test_import_fails_on_a_library_built_for_another_tensorflow(tmp_path):
    data = open(_loader.library_path(), "rb").read()
    stamp = f"TF_SCATTER_OPS_BUILT_AGAINST_TF={tf.__version__};".encode()
    assert stamp in data
    other = "9" + tf.__version__[1:]  # same length, another version
    fake = tmp_path / "_tf_scatter_ops.so"
    fake.write_bytes(data.replace(stamp, stamp.replace(tf.__version__.encode(), other.encode())))
    rc, out, err = run_python("""
        try:
            import tf_scatter_ops
        except ImportError as e:
            print(type(e).__name__, "|", e)
    """, env=python_env(TF_SCATTER_OPS_LIBRARY=fake))
    assert rc == 0, err[-3000:]
    assert out.startswith("TensorFlowVersionMismatchError |"), out + err[-3000:]
    assert f"built against TensorFlow {other}" in out
    assert f"TensorFlow {tf.__version__} is running" in out


def test_missing_library_is_an_import_error_that_says_how_to_build(tmp_path):
    rc, out, err = run_python("""
        try:
            import tf_scatter_ops
        except ImportError as e:
            print(type(e).__name__, "|", e)
    """, env=python_env(TF_SCATTER_OPS_LIBRARY=tmp_path / "none.so"))
    assert rc == 0, err[-3000:]
    assert out.startswith("ImportError |") and "is missing" in out and "make" in out, out


def test_built_with_gpu_reads_the_loaded_library(tmp_path):
    """tso.built_with_gpu() says what the loaded library holds (the build's
    stamp); the GPU kernels are registered where it holds them and the gate
    lets them run (gpu_status(), test_gpu_gate.py)."""
    import tf_scatter_ops as tso
    from tensorflow.python.framework import kernels
    gpu_kernels = [k for k in kernels.get_registered_kernels_for_op("TfScatter>TensorScatterAdd").kernel
                   if k.device_type == "GPU"]
    assert bool(gpu_kernels) == tso.gpu_status()["registered"]
    assert tso.built_with_gpu() == tso.gpu_status()["built_with_gpu"]
    assert tso.built_with_gpu() or not gpu_kernels
    fake = tmp_path / "lib.so"
    fake.write_bytes(b"\0TF_SCATTER_OPS_BUILT_AGAINST_TF=2.21.0;TF_SCATTER_OPS_GPU=0;\0")
    assert tso.built_with_gpu(str(fake)) is False


def test_python_dtype_lists_equal_the_registered_op_defs():
    """The dtype lists the wrappers check (ops.DTYPES, ops.INDEX_DTYPES) are
    exactly what the registered ops accept, for the tensor and the variable
    ops alike, so the two cannot drift apart."""
    from tensorflow.python.framework import op_def_registry
    from tf_scatter_ops import ops
    from tf_scatter_ops._base import table as _table
    import table_rows

    def allowed(op_type, attr):
        op_def = op_def_registry.get("TfScatter>" + op_type)
        values = next(a for a in op_def.attr if a.name == attr).allowed_values.list.type
        return {tf.as_dtype(t) for t in values}

    for name, op_type in table_rows.OP_TYPES.items():
        value_attr = "Tparams" if name == "gather_nd" else "T"
        assert allowed(op_type, value_attr) == set(ops.DTYPES[name]), name
        index_attrs = ("Tidx", "Tsegmentids") if name.startswith("sparse_segment") else ("Tindices",)
        for index_attr in index_attrs:
            assert allowed(op_type, index_attr) == set(ops.INDEX_DTYPES), name
    for row in _table.VARIABLE_SCATTERS.values():
        for op_type in ("Resource" + row.variable, row.variable):
            assert allowed(op_type, "T") == set(ops.DTYPES[row.py]), op_type
    assert allowed("ResourceGatherNd", "dtype") == set(ops.DTYPES["gather_nd"])
