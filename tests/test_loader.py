"""The loader names both TensorFlow versions when they differ."""

import pytest
import tensorflow as tf

from tf_scatter_ops import _loader


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
