"""Finds and loads the compiled ops library.

`import tf_scatter_ops` loads it (see __init__.py), so that the `TfScatter>`
ops are registered before anything reads a graph that uses them: a
SavedModel, a Keras model, a GraphDef. The library only works inside the
TensorFlow it was compiled against, so before loading it we read the version
the build stamped into the file and compare it with the running TensorFlow.

`TF_SCATTER_OPS_LIBRARY=/path/to/_tf_scatter_ops.so` loads another build of
the library (the bazel tests use it for bazel-bin's); the version check
applies to it too.
"""

import functools
import os
import threading
import types

import tensorflow as tf

from tf_scatter_ops._base.stamp import LIBRARY_NAME, built_against as _built_against
from tf_scatter_ops._base.stamp import built_with as _built_with

LIBRARY_ENV = "TF_SCATTER_OPS_LIBRARY"
# tf_scatter_ops/, where the library lies (this file is in tf_scatter_ops/_base/)
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_lock = threading.Lock()
_library = None
_loaded_path = None


class TensorFlowVersionMismatchError(ImportError):
    """The ops library was built against another TensorFlow version."""


def library_path():
    """The library this process loads: $TF_SCATTER_OPS_LIBRARY, else the one
    next to this file."""
    override = os.environ.get(LIBRARY_ENV)
    if override:
        return os.path.abspath(override)
    return os.path.join(PACKAGE_DIR, LIBRARY_NAME)


def loaded_path():
    """The path of the library loaded into this process, or None."""
    return _loaded_path


def built_against(path=None):
    """The TensorFlow version stamped into the library at build time, or None."""
    return _built_against(path or library_path())


def built_with_gpu(path=None):
    """Whether the library holds the GPU kernels.

    Builds made where nvcc was found do (make, pip, bazel --config=cuda).
    Whether they run here: gpu_status().

    Args:
        path: The library file to ask; None asks the loaded (or installed)
            one.

    Returns:
        A bool.

    Example:
        >>> tso.built_with_gpu() in (True, False)
        True
    """
    return _built_with(path or _loaded_path or library_path(), "GPU")


def built_with_xla(path=None):
    """Whether the library holds XLA kernels for the CPU.

    Builds against TensorFlow 2.21 or later with highwayhash's and
    farmhash's headers do (make, pip and bazel here). Asked whenever a
    wrapper is traced for XLA: the answer is read once per file.

    Args:
        path: The library file to ask; None asks the loaded (or installed)
            one.

    Returns:
        A bool.

    Example:
        >>> tso.built_with_xla() in (True, False)
        True
    """
    return _built_with_xla(path or _loaded_path or library_path())


@functools.lru_cache(maxsize=None)
def _built_with_xla(path):
    return _built_with(path, "XLA")


ISA_ENV = "TF_SCATTER_OPS_ISA"
ISAS = ("portable", "avx2", "avx512")


def library_function(name, *args):
    """The text the library's C function `name` returns for `args` (strings)."""
    import ctypes
    function = getattr(ctypes.CDLL(loaded_path() or library_path()), name)
    function.restype = ctypes.c_char_p
    function.argtypes = [ctypes.c_char_p] * len(args)
    return function(*(a.encode() for a in args)).decode()


def active_isa():
    """The instruction set the vectorised CPU loops use.

    The best the CPU has that the library has loops for (cpu_isa()), capped
    by $TF_SCATTER_OPS_ISA.

    Returns:
        "avx512", "avx2" or "portable".

    Example:
        >>> tso.active_isa() in ("avx512", "avx2", "portable")
        True
    """
    load()
    return library_function("tf_scatter_ops_active_isa")


def cpu_isa():
    """The best instruction set of this CPU that the library has loops for.

    Returns:
        "avx512", "avx2" or "portable".

    Example:
        >>> tso.cpu_isa() in ("avx512", "avx2", "portable")
        True
    """
    load()
    return library_function("tf_scatter_ops_cpu_isa")


def check_isa_setting(value=None):
    """Raises ValueError for a $TF_SCATTER_OPS_ISA the library would not know."""
    value = os.environ.get(ISA_ENV, "") if value is None else value
    if value and value not in ISAS:
        raise ValueError(f"{ISA_ENV}={value!r}: expected one of {', '.join(ISAS)} "
                         "(a value above what the CPU has is capped at it)")


def check_version(built, running=None):
    """Raises TensorFlowVersionMismatchError unless `built` is the running TF."""
    running = running or tf.__version__
    if built is not None and built != running:
        raise TensorFlowVersionMismatchError(
            f"tf_scatter_ops was built against TensorFlow {built}, but "
            f"TensorFlow {running} is running; a custom-op library only loads "
            "into the TensorFlow it was compiled against. Rebuild it against "
            "this TensorFlow: `make clean && make` in a clone, or "
            "`pip install --no-cache-dir --force-reinstall .`"
        )


def load():
    """Returns the loaded ops module, loading the library on first call."""
    if _library is not None:
        return _library
    return _load_once()


@tf.autograph.experimental.do_not_convert  # file checks: nothing for AutoGraph
def _load_once():
    global _library, _loaded_path
    with _lock:
        if _library is None:
            path = library_path()
            if not os.path.exists(path):
                raise ImportError(
                    f"tf_scatter_ops: the compiled ops library {path} is missing; "
                    "build it with `make` (or install the package with pip)"
                )
            check_version(built_against(path))
            check_isa_setting()
            library = tf.load_op_library(path)
            _name_generated_code(library)
            _library, _loaded_path = library, path
    return _library


def _with_filename(code, filename):
    """`code` and the code objects nested in it, as if defined in `filename`."""
    consts = tuple(_with_filename(c, filename) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


GENERATED_FILE = "_generated_op_functions.py"


def package_files():
    """This package's Python files, and the name the generated op functions
    are given (_name_generated_code)."""
    files = [os.path.join(folder, n) for folder, _, names in os.walk(PACKAGE_DIR)
             for n in names if n.endswith(".py")]
    return files + [os.path.join(PACKAGE_DIR, GENERATED_FILE)]


def _name_generated_code(library):
    """tf.load_op_library generates the op functions with the file name
    "<string>"; they get one in this package, so that the tracebacks recorded
    for our ops can leave them out (the dispatch's frame filter) without leaving out a
    user's `python -c` frames."""
    generated = os.path.join(PACKAGE_DIR, GENERATED_FILE)
    for value in vars(library).values():
        if isinstance(value, types.FunctionType) and value.__code__.co_filename == "<string>":
            value.__code__ = _with_filename(value.__code__, generated)
