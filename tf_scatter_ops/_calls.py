"""How a wrapper calls an op here: our TfScatter> op (its node named and its
traceback ending in the user's code), or, under XLA where our XLA kernels do
not apply, TensorFlow's op of the same meaning."""

import contextlib
import functools
import inspect
import threading
import warnings

import numpy as np
import tensorflow as tf

from tf_scatter_ops import _loader, _stock_forms, _table, xla_sites
from tf_scatter_ops._tf_private import control_flow_util, tf_stack


def in_xla_context():
    """True while a graph is being built for XLA (tf.function(jit_compile=True)).

    There the tensor ops compile to our XLA kernels where we have them
    (xla_uses_our_kernels()); elsewhere, and for the variable ops, the wrappers
    lower to TensorFlow's own XLA-compilable ops (same results for valid
    input; XLA drops out-of-bound scatter rows and clamps gather indices
    whatever the policy). The check uses TensorFlow's private
    control_flow_util (_tf_private).
    """
    if tf.executing_eagerly():
        return False
    return control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph())


def xla_uses_our_kernels():
    """Whether XLA compiles our tensor ops to our kernels here: the library
    has XLA kernels, which are for the CPU, and no GPU is present (compiled
    functions would be placed on it)."""
    return _loader.built_with_xla() and not _has_gpu()


_warned_xla_on_gpu = False
xla_sites.register()


def _has_gpu():
    return bool(tf.config.list_physical_devices("GPU"))


def lowering_to_xla():
    """in_xla_context(), for a wrapper about to lower to TensorFlow's ops.
    With a GPU present it warns, once per process: there XLA is often on
    without the user asking (Keras 3's jit_compile="auto"), and it silently
    trades our kernels for XLA's."""
    global _warned_xla_on_gpu
    if not in_xla_context():
        return False
    if not _warned_xla_on_gpu and _has_gpu():
        _warned_xla_on_gpu = True
        warnings.warn(
            "tf_scatter_ops: this function is compiled with XLA (jit_compile=True; Keras 3's "
            "jit_compile='auto' turns it on when a GPU is present), so the scatter and gather "
            "ops in it run as TensorFlow's XLA ops: not deterministic on GPU, out-of-bound "
            "scatter rows dropped and gather indices clamped whatever bad_indices_policy says. "
            "Compile with jit_compile=False (model.compile(..., jit_compile=False)) to keep "
            "tf_scatter_ops' kernels and their guarantees.", stacklevel=3)
    return True


@functools.lru_cache(maxsize=None)  # on every eager call: build each name once
def function_name(op_type):
    """The name of the function tf.load_op_library makes for TfScatter>`op_type`."""
    return "tf_scatter_" + _table.snake(op_type)


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
    function = getattr(_loader.load(), function_name(op_type))
    if tf.executing_eagerly():
        return function

    def build(*args, **kwargs):
        if _HideOurFrames.FILES is None:
            _HideOurFrames.FILES = frozenset(_loader.package_files())
        with _HideOurFrames():
            return function(*args, name=op_type, **kwargs)
    return build


_stock = threading.local()


@contextlib.contextmanager
def stock_ops():
    """Inside it (in this thread; nestable), every plugin function emits
    TensorFlow's built-in ops of the same meaning instead of the plugin's:
    the same results for valid input, so that a function traced inside
    (tf.saved_model.save, model.export, a TFLite conversion) holds no
    TfScatter> op and loads where the plugin is not installed.

    The forms (_stock_forms.py) are ops that TFLite's built-in ops and
    tf2onnx take too. What goes: the first bad row named (TensorFlow's
    kernels name the last, or, on the GPU, drop it), determinism of GPU
    sums, and in-place loops. IGNORE drops or masks the bad rows first
    (variable updates: TensorFlow's bad_indices_policy); int16 indices are
    widened; index depths TensorFlow's scatters do not take (0, above 7) are
    reshaped into one they do."""
    _stock.depth = getattr(_stock, "depth", 0) + 1
    try:
        yield
    finally:
        _stock.depth -= 1


def emitting_stock():
    """True inside stock_ops() in this thread."""
    return getattr(_stock, "depth", 0) > 0


def lowering(xla_ours=True):
    """Whether a wrapper builds TensorFlow's op here instead of ours: inside
    stock_ops(), or under XLA where our XLA kernels do not apply (or not
    `xla_ours`: this call's)."""
    return emitting_stock() or (in_xla_context() and not (xla_ours and xla_uses_our_kernels())
                                and lowering_to_xla())


def hints(indices_are_sorted, unique_indices, xla_ours=True):
    """The op attrs of the caller's promises about the index rows (Python or
    NumPy bools): none where TensorFlow's op is built instead (it has no
    such attrs) or nothing is promised."""
    attrs = {}
    for attr, value in (("indices_are_sorted", indices_are_sorted),
                        ("unique_indices", unique_indices)):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{attr} must be a Python bool, got {value!r}")
        attrs[attr] = bool(value)
    if not any(attrs.values()) or lowering(xla_ours):
        return {}
    return attrs


def raw_op(op, xla_ours=True):
    """The op function to call for `op` here: ours, or TensorFlow's
    (lowering())."""
    if lowering(xla_ours):
        if _table.BY_PY[op].tf is None:  # no such op in TensorFlow: of its ops
            return functools.partial(_stock_forms.scatter_product, op)
        return functools.partial(_lowered, op, getattr(tf.raw_ops, _table.BY_PY[op].tf))
    return library_op(_table.BY_PY[op].op)


def _lowered(op, theirs, bad_indices_policy="", **inputs):
    """TensorFlow's op `theirs` for ours, under XLA or stock_ops()."""
    if emitting_stock() or _whole_tensor_rows(op, inputs):
        # the forms TensorFlow's kernels take; under XLA, rows of depth 0 as
        # rows [0] into a leading dimension of 1: XLA's scatter keeps only the
        # last of such rows, and TensorFlow's op refuses a scalar tensor
        return _stock_forms.call(op, theirs, bad_indices_policy, inputs, _plain_lowered)
    return _plain_lowered(op, theirs, bad_indices_policy, **inputs)


def _whole_tensor_rows(op, inputs):
    """A scatter whose index rows have depth 0 (each row is the whole tensor)."""
    indices = inputs.get("indices")
    return (_table.BY_PY[op].kind in ("ScatterNd", "TensorScatter") and indices is not None
            and indices.shape.rank is not None and indices.shape[-1] == 0)


def _plain_lowered(op, theirs, bad_indices_policy="", **inputs):
    if op != "gather_nd":
        # TensorFlow's scatters and segment ops take int32 and int64 indices only
        for name in ("segment_ids", "indices", "shape"):
            if name in inputs:
                inputs[name] = _stock_forms.wide(inputs[name])
    if _takes(theirs, "bad_indices_policy"):  # XLA honours IGNORE in gathers (zeros)
        inputs["bad_indices_policy"] = bad_indices_policy
    if "sparse_gradient" in inputs and not _takes(theirs, "sparse_gradient"):
        del inputs["sparse_gradient"]
    # (older TensorFlows' ops have no bad_indices_policy attr)
    return theirs(**inputs)


@functools.lru_cache(maxsize=None)
def _takes(raw_op, attr):
    return attr in inspect.signature(raw_op).parameters


@functools.lru_cache(maxsize=None)
def eager_op(op):
    """library_op of `op` for the eager fast path (only called eagerly)."""
    return library_op(_table.BY_PY[op].op)
