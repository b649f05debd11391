"""Where a call is being made: eagerly or in a graph, in a graph that XLA
compiles, inside stock_ops(), with a GPU present. Questions only: what to do
about the answers is decided in backends.py (which op runs) and by the
checks that cannot run under XLA (asserts)."""

import contextlib
import functools
import threading
import warnings

import tensorflow as tf

from tf_scatter_ops._base import library
from tf_scatter_ops._base.tf_private import control_flow_util


def in_xla_context():
    """True while a graph is being built for XLA (tf.function(jit_compile=True)).

    There the tensor ops compile to our XLA kernels where we have them
    (xla_uses_our_kernels()); elsewhere, and for the variable ops, the wrappers
    lower to TensorFlow's own XLA-compilable ops (same results for valid
    input; XLA drops out-of-bound scatter rows and clamps gather indices
    whatever the policy)."""
    if tf.executing_eagerly():
        return False
    return control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph())


def has_gpu():
    return bool(tf.config.list_physical_devices("GPU"))


@functools.lru_cache(maxsize=None)
def gpu_kernels_registered():
    """Whether the library registered its GPU kernels in this process (the
    GPU gate's decision when it loaded: tf_scatter_ops/gpu.py)."""
    library.load()
    return "registered=1" in library.library_function("tf_scatter_ops_gpu_status").splitlines()


def xla_uses_our_kernels():
    """Whether XLA compiles the plugin's tensor ops to its own kernels here.

    True where the library has XLA kernels, which are for the CPU, and no
    GPU is present (compiled functions would be placed on it); elsewhere
    `jit_compile=True` builds TensorFlow's ops instead.

    Returns:
        A bool.

    Example:
        >>> tso.xla_uses_our_kernels() in (True, False)
        True
    """
    return library.built_with_xla() and not has_gpu()


_warned_xla_on_gpu = False


def warn_once_if_xla_on_gpu():
    """With a GPU present, XLA is often on without the user asking (Keras 3's
    jit_compile="auto"), and it silently trades our kernels for XLA's: say
    so, once per process."""
    global _warned_xla_on_gpu
    if not _warned_xla_on_gpu and has_gpu():
        _warned_xla_on_gpu = True
        warnings.warn(
            "tf_scatter_ops: this function is compiled with XLA (jit_compile=True; Keras 3's "
            "jit_compile='auto' turns it on when a GPU is present), so the scatter and gather "
            "ops in it run as TensorFlow's XLA ops: not deterministic on GPU, out-of-bound "
            "scatter rows dropped and gather indices clamped whatever bad_indices_policy says. "
            "Compile with jit_compile=False (model.compile(..., jit_compile=False)) to keep "
            "tf_scatter_ops' kernels and their guarantees.", stacklevel=5)


_stock = threading.local()


@contextlib.contextmanager
def stock_ops():
    """A context in which the plugin's functions emit TensorFlow's built-in ops.

    Inside it (in this thread; nestable), every plugin function emits
    TensorFlow's built-in ops of the same meaning instead of the plugin's:
    the same results for valid input, so that a function traced inside
    (tf.saved_model.save, model.export, a TFLite conversion) holds no
    TfScatter> op and loads where the plugin is not installed.

    The forms are ops that TFLite's built-in ops and tf2onnx take too. What
    goes: the first bad row named (TensorFlow's kernels name the last, or, on
    the GPU, drop it), determinism of GPU sums, and in-place loops. IGNORE
    drops or masks the bad rows first (variable updates: TensorFlow's
    bad_indices_policy); int16 indices are widened; index depths
    TensorFlow's scatters do not take (0, above 7) are reshaped into one
    they do. Typical use: `with tso.stock_ops(): tf.saved_model.save(model,
    "plain_model")`, a model that loads without the plugin.

    Returns:
        A context manager.

    Example:
        >>> ours, stock = tf.Graph(), tf.Graph()
        >>> with ours.as_default():
        ...     total = tso.segment_sum([1.0, 2.0, 3.0], [0, 0, 1])
        >>> with stock.as_default(), tso.stock_ops():
        ...     total = tso.segment_sum([1.0, 2.0, 3.0], [0, 0, 1])
        >>> [any(op.type.startswith("TfScatter>") for op in g.get_operations())
        ...  for g in (ours, stock)]
        [True, False]
    """
    _stock.depth = getattr(_stock, "depth", 0) + 1
    try:
        yield
    finally:
        _stock.depth -= 1


def emitting_stock():
    """True inside stock_ops() in this thread."""
    return getattr(_stock, "depth", 0) > 0
