"""The TensorFlow version a build stamped into the ops library (see
cc/kernels/library/library_info.cc). No TensorFlow import: setup.py uses it too."""

import re

LIBRARY_NAME = "_tf_scatter_ops.so"
_MARKER = re.compile(rb"TF_SCATTER_OPS_BUILT_AGAINST_TF=([^;\x00]+);")


def built_against(path):
    """The TensorFlow version stamped into the library at `path`, or None."""
    with open(path, "rb") as f:
        match = _MARKER.search(f.read())
    return match.group(1).decode() if match else None


def built_with(path, part):
    """Whether the library at `path` contains its `part` kernels ("GPU", "XLA")."""
    with open(path, "rb") as f:
        return b"TF_SCATTER_OPS_%s=1;" % part.encode() in f.read()

