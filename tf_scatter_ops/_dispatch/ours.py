"""Our TfScatter> ops as functions: the ones tf.load_op_library made, with
the node named and its recorded traceback ending in the user's code."""

import functools

import numpy as np
import tensorflow as tf

from tf_scatter_ops._base import library, table
from tf_scatter_ops._base.tf_private import tf_stack
from tf_scatter_ops._dispatch import context, xla_sites

xla_sites.register()


@functools.lru_cache(maxsize=None)  # on every eager call: build each name once
def function_name(op_type):
    """The name of the function tf.load_op_library makes for TfScatter>`op_type`."""
    return "tf_scatter_" + table.snake(op_type)


class _HideOurFrames(tf_stack.StackTraceFilter):
    """Leaves this package's frames out of the traceback TensorFlow records
    for an op, as TensorFlow leaves out its own: an op that fails inside a
    tf.function is then reported as defined at the user's line."""

    FILES = None  # this package's Python files, once the library is loaded

    def get_filtered_filenames(self):
        return self.FILES | self.parent.get_filtered_filenames()


def library_op(op_type):
    """Our op TfScatter>`op_type` as a function. In a graph its node is named
    `op_type` (the default name would be the op type, and a `>` in a node
    name hides the node from TensorFlow's error interpolation) and its
    recorded traceback ends in the user's code."""
    function = getattr(library.load(), function_name(op_type))
    if tf.executing_eagerly():
        return function

    def build(*args, **kwargs):
        if _HideOurFrames.FILES is None:
            _HideOurFrames.FILES = frozenset(library.package_files())
        with _HideOurFrames():
            return function(*args, name=op_type, **kwargs)
    return build


@functools.lru_cache(maxsize=None)
def eager_op(op):
    """library_op of the table's `op` (a Python name) for the eager fast
    path (only called eagerly)."""
    return library_op(table.BY_PY[op].op)


def hint_attrs(indices_are_sorted, unique_indices):
    """The op attrs of the caller's promises about the index rows (Python or
    NumPy bools; a ValueError for anything else): only those promised."""
    attrs = {}
    for attr, value in (("indices_are_sorted", indices_are_sorted),
                        ("unique_indices", unique_indices)):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{attr} must be a Python bool, got {value!r}")
        if value:
            attrs[attr] = True
    return attrs


def call(op, policy, inputs, hints=None):
    """Our op for the table's `op` on `inputs` (by name); under XLA a tensor
    scatter's call site is marked for our XLA kernel (xla_sites.py)."""
    out = library_op(table.BY_PY[op].op)(bad_indices_policy=policy, **inputs, **(hints or {}))
    if table.BY_PY[op].kind == "TensorScatter" and context.in_xla_context():
        xla_sites.mark_scatter(out, inputs["tensor"])
    return out
