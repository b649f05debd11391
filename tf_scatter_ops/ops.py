"""Python wrappers with TensorFlow's names and positional order.

Semantics (all ops, every device we register):

* indices ``[..., depth]`` address the first ``depth`` dimensions of the
  output; ``depth`` may be anything from 0 (whole-tensor slices) to the rank.
* Duplicates: ``update`` keeps the last update in index order; ``add``,
  ``sub`` and ``scatter_nd`` accumulate in index order (so float results are
  bitwise equal to TensorFlow's CPU kernel); ``scatter_nd`` concatenates
  strings and ORs bools; ``min``/``max`` include the tensor's own values.
* ``bad_indices_policy``: ``""``, ``"DEFAULT"`` or ``"ERROR"`` raise
  ``InvalidArgumentError`` naming the first bad row (TensorFlow names the
  last one); ``"IGNORE"`` drops bad rows (``gather_nd``: zeros for them).
  Negative indices are out of bounds. Anything else is an
  ``InvalidArgumentError``.
"""

import contextlib
import functools
import inspect
import warnings

import numpy as np
import tensorflow as tf

from tf_scatter_ops import _loader, _table, xla_sites
from tf_scatter_ops._tf_private import EagerTensor as _EagerTensor, control_flow_util, tf_stack

POLICIES = ("", "DEFAULT", "ERROR", "IGNORE")
INDEX_DTYPES = (tf.int16, tf.int32, tf.int64)

# Value dtypes per op, from the op table (cc/kernels/op_table.h).
DTYPES = {row.py: row.dtypes for row in _table.OPS}
# The same as sets: cheap membership tests on the eager hot path (DTypes are
# interned, so lookups match by identity before DType.__eq__ would run).
_DTYPE_SETS = {op: frozenset(ds) for op, ds in DTYPES.items()}
_INDEX_SET = frozenset(INDEX_DTYPES)
# ... and as DataType enums, which an eager tensor gives without building a
# DType (tensor._datatype_enum()).
_ENUM_SETS = {op: frozenset(d.as_datatype_enum for d in ds) for op, ds in DTYPES.items()}
_INDEX_ENUMS = frozenset(d.as_datatype_enum for d in INDEX_DTYPES)


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


# Python name -> the op type: ours, after the TfScatter> prefix, and
# TensorFlow's of the same meaning (used under XLA where ours do not apply).
_RAW_OPS = {row.py: row.op for row in _table.OPS}
_TF_OPS = {row.py: row.tf for row in _table.OPS}


@functools.lru_cache(maxsize=None)  # on every eager call: build each name once
def _snake(op_type):
    """The name of the function tf.load_op_library makes for TfScatter>`op_type`."""
    out = "tf_scatter_"
    for i, ch in enumerate(op_type):
        out += ("_" if i and ch.isupper() else "") + ch.lower()
    return out


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
    function = getattr(_loader.load(), _snake(op_type))
    if tf.executing_eagerly():
        return function

    def build(*args, **kwargs):
        if _HideOurFrames.FILES is None:
            _HideOurFrames.FILES = frozenset(_loader.package_files())
        with _HideOurFrames():
            return function(*args, name=op_type, **kwargs)
    return build


def _raw_op(op, xla_ours=True):
    """The op function to call for `op` here: ours, or TensorFlow's under XLA
    where our XLA kernels do not apply (or not `xla_ours`: this call's)."""
    if in_xla_context() and not (xla_ours and xla_uses_our_kernels()) and lowering_to_xla():
        return functools.partial(_lowered, op, getattr(tf.raw_ops, _TF_OPS[op]))
    return library_op(_RAW_OPS[op])


def _lowered(op, theirs, bad_indices_policy="", **inputs):
    """TensorFlow's op `theirs` for ours, under XLA."""
    if op != "gather_nd" and inputs["indices"].dtype == tf.int16:
        # TensorFlow's scatters take int32 and int64 indices only
        for name in ("indices", "shape"):
            if name in inputs:
                inputs[name] = tf.cast(inputs[name], tf.int32)
    if _takes_policy(theirs):  # XLA honours IGNORE in gathers (zeros)
        inputs["bad_indices_policy"] = bad_indices_policy
    # (older TensorFlows' ops have no bad_indices_policy attr)
    return theirs(**inputs)


@functools.lru_cache(maxsize=None)
def _takes_policy(raw_op):
    return "bad_indices_policy" in inspect.signature(raw_op).parameters


def public(function):
    """Marks a public wrapper: AutoGraph calls it as it is, as it does
    TensorFlow's own functions (converting library code costs trace time and
    would show the generated code in tracebacks). The mark is the attribute
    AutoGraph looks for on its own artifacts (do_not_convert's wrapper would
    add about a microsecond to every eager call)."""
    function.autograph_info__ = {}
    return function


def check_policy(bad_indices_policy):
    """Returns the policy as a str, or raises InvalidArgumentError."""
    if bad_indices_policy == "":
        return ""
    if isinstance(bad_indices_policy, bytes):
        bad_indices_policy = bad_indices_policy.decode()
    if bad_indices_policy not in POLICIES:
        raise tf.errors.InvalidArgumentError(
            None, None,
            f"Unknown bad_indices_policy {bad_indices_policy!r}: expected '', "
            "'DEFAULT', 'ERROR' or 'IGNORE' (upper case)")
    return bad_indices_policy


def _scope(name):
    """A name scope in graphs; nothing in eager mode, where it only costs time."""
    return contextlib.nullcontext() if tf.executing_eagerly() else tf.name_scope(name)


def foreign(value):
    """True for an input our ops do not take but TensorFlow's functions may,
    through their dispatch: a composite tensor (RaggedTensor, SparseTensor,
    an extension type) other than a variable or IndexedSlices (which convert
    to a tensor)."""
    return (isinstance(value, tf.__internal__.CompositeTensor)
            and not isinstance(value, (tf.Variable, tf.IndexedSlices)))


def _tensor(value, dtype=None, dtype_hint=None, name=None):
    """tf.convert_to_tensor, without its overhead for what already is a tensor."""
    if isinstance(value, tf.Tensor) and (dtype is None or value.dtype is dtype):
        return value
    if foreign(value):
        raise ValueError(
            f"{name}: tf_scatter_ops takes tensors, variables and what converts to a "
            f"tensor, not a {type(value).__name__}; TensorFlow's own function takes it "
            "(after tso.patch_tensorflow(), the patched tf.* names hand it to TensorFlow)")
    try:
        return tf.convert_to_tensor(value, dtype=dtype, dtype_hint=dtype_hint, name=name)
    except TypeError as e:  # e.g. ["a"] as float updates: a dtype mismatch
        raise ValueError(f"{name}: {e}") from e


def _int_tensor(value, dtype_hint, name):
    """Integers (indices, a shape) as a tensor, `dtype_hint` when they fit it.

    tf.convert_to_tensor applies an integer dtype_hint by wrapping values that
    do not fit: convert_to_tensor([2**32], dtype_hint=tf.int32) is [0], also
    for an int64 NumPy array, which would turn an out-of-bound index into a
    valid one. Values that do not fit the hint keep a wide dtype instead.
    """
    if isinstance(value, (int, np.integer, list, tuple, np.ndarray)):
        try:
            array = np.asarray(value)
        except Exception:  # e.g. a list of symbolic tensors
            array = None
        if array is not None and array.dtype.kind in "iu":
            info = np.iinfo(dtype_hint.as_numpy_dtype)
            if array.size and (array.min() < info.min or array.max() > info.max):
                return tf.convert_to_tensor(array, name=name)
            return tf.convert_to_tensor(array, dtype=dtype_hint, name=name)
        if array is not None and array.dtype.kind == "b" and array.size:
            # the hint would turn True into index 1; bool is not an index
            return tf.convert_to_tensor(array, name=name)
    return _tensor(value, dtype_hint=dtype_hint, name=name)


def _indices(indices):
    indices = _int_tensor(indices, tf.int32, "indices")
    if indices.dtype not in _INDEX_SET:
        raise ValueError(
            f"indices must be int16, int32 or int64, got {indices.dtype.name}")
    return indices


def _check_dtype(op, dtype):
    if dtype not in _DTYPE_SETS[op]:
        names = ", ".join(d.name for d in DTYPES[op])
        raise ValueError(
            f"{op} does not support dtype {dtype.name}; supported: {names}")


@functools.lru_cache(maxsize=None)
def _eager_op(op):
    """library_op of `op` for the eager fast path (only called eagerly)."""
    return library_op(_RAW_OPS[op])


def _tensor_scatter(op, tensor, indices, updates, bad_indices_policy, name):
    # Tiny eager calls are dominated by Python: go straight to the op when the
    # inputs are eager tensors of valid dtypes (the kernel checks the rest)
    # and we execute eagerly: a function being traced can capture eager
    # tensors, and there the op needs library_op's node name and traceback,
    # or XLA's lowering.
    if (type(tensor) is _EagerTensor and type(indices) is _EagerTensor
            and type(updates) is _EagerTensor and bad_indices_policy == ""
            and tf.executing_eagerly()):
        dtype = tensor._datatype_enum()
        if (dtype in _ENUM_SETS[op] and indices._datatype_enum() in _INDEX_ENUMS
                and updates._datatype_enum() == dtype):
            return _eager_op(op)(tensor, indices, updates)
    policy = check_policy(bad_indices_policy)
    with _scope(name or op):
        tensor = _tensor(tensor, name="tensor")
        _check_dtype(op, tensor.dtype)
        indices = _indices(indices)
        updates = _tensor(updates, dtype=tensor.dtype, name="updates")
        out = _raw_op(op)(tensor=tensor, indices=indices, updates=updates,
                          bad_indices_policy=policy)
        if in_xla_context() and out.op.type.startswith("TfScatter>"):
            xla_sites.mark_scatter(out, tensor)
        return out


@public
def scatter_nd(indices, updates, shape, bad_indices_policy="", name=None):
    """Scatters `updates` into a new zero tensor of `shape` at `indices`.

    Like `tf.scatter_nd`: duplicates accumulate in index order (strings
    concatenate, bools OR). Index depth may be 0..rank; indices may be int16,
    int32 or int64, and `shape` is cast to the wider of its and the indices'
    dtype instead of failing on a mismatch.
    """
    policy = check_policy(bad_indices_policy)
    with _scope(name or "scatter_nd"):
        indices = _indices(indices)
        updates = _tensor(updates, name="updates")
        _check_dtype("scatter_nd", updates.dtype)
        shape = _int_tensor(shape, indices.dtype, "shape")
        if shape.dtype not in _INDEX_SET:
            raise ValueError(
                f"shape must be int16, int32 or int64, got {shape.dtype.name}")
        if shape.dtype != indices.dtype:
            wide = max(shape.dtype, indices.dtype, key=lambda d: d.size)
            shape, indices = tf.cast(shape, wide), tf.cast(indices, wide)
        # XLA needs the shape at compile time. TensorFlow's op has it made a
        # constant of the compiled function; ours must find it in the graph.
        xla_ours = not in_xla_context() or tf.get_static_value(shape) is not None
        return _raw_op("scatter_nd", xla_ours)(indices=indices, updates=updates, shape=shape,
                                               bad_indices_policy=policy)


def _tensor_scatter_function(op, doc):
    """One public tensor_scatter_nd_* function with TensorFlow's signature:
    (tensor, indices, updates, bad_indices_policy="", name=None), except
    tf.tensor_scatter_nd_update, whose 4th parameter is `name`; there
    bad_indices_policy comes last, as in our gather_nd."""
    if op == "tensor_scatter_nd_update":
        def f(tensor, indices, updates, name=None, bad_indices_policy=""):
            return _tensor_scatter(op, tensor, indices, updates, bad_indices_policy, name)
    else:
        def f(tensor, indices, updates, bad_indices_policy="", name=None):
            return _tensor_scatter(op, tensor, indices, updates, bad_indices_policy, name)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return public(f)


tensor_scatter_nd_update = _tensor_scatter_function(
    "tensor_scatter_nd_update",
    """Copy of `tensor` with `updates` written at `indices`; the last duplicate
    in index order wins (on every device). The gradient goes to the winning
    update only (TensorFlow gives it to every duplicate).""")
tensor_scatter_nd_add = _tensor_scatter_function(
    "tensor_scatter_nd_add",
    "Copy of `tensor` with `updates` added at `indices`, in index order.")
tensor_scatter_nd_sub = _tensor_scatter_function(
    "tensor_scatter_nd_sub",
    "Copy of `tensor` with `updates` subtracted at `indices`, in index order.")
tensor_scatter_nd_min = _tensor_scatter_function(
    "tensor_scatter_nd_min",
    "Elementwise minimum of `tensor` and the updates at `indices`.")
tensor_scatter_nd_max = _tensor_scatter_function(
    "tensor_scatter_nd_max",
    "Elementwise maximum of `tensor` and the updates at `indices`.")


def _raw_gather_nd(params, indices, policy):
    return _raw_op("gather_nd")(params=params, indices=indices, bad_indices_policy=policy)


def _batch_indices(params, indices, batch_dims):
    """Prepends each row's batch coordinates, as TensorFlow's batch_gather_nd
    does, so a batched gather becomes a plain one."""
    if indices.shape.rank is None:
        raise ValueError("gather_nd with batch_dims > 0 needs indices of known rank")
    if batch_dims >= indices.shape.rank:
        raise ValueError(
            f"batch_dims = {batch_dims} must be less than the rank of indices "
            f"(shape {indices.shape})")
    if params.shape.rank is not None and batch_dims > params.shape.rank:
        raise ValueError(
            f"batch_dims = {batch_dims} exceeds the rank of params "
            f"(shape {params.shape})")
    outer = tf.shape(indices, out_type=indices.dtype)[:-1]
    rank = indices.shape.rank - 1
    coords = []
    for d in range(batch_dims):
        axis = tf.range(outer[d], dtype=indices.dtype)
        axis = tf.reshape(axis, [-1 if k == d else 1 for k in range(rank)])
        coords.append(tf.broadcast_to(axis, outer))
    return tf.concat([tf.stack(coords, axis=-1), indices], axis=-1)


def _static_int(value):
    """An int from a Python/NumPy integer or a constant scalar tensor (as
    tf.gather_nd accepts for batch_dims); None otherwise."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    static = tf.get_static_value(value) if isinstance(value, tf.Tensor) else None
    if static is not None and np.ndim(static) == 0 and np.issubdtype(np.asarray(static).dtype, np.integer):
        return int(static)
    return None


def _describe(value):
    """What was passed, for a message: a tensor by its dtype, shape and (when
    known) value, anything else by its repr."""
    if isinstance(value, (tf.Tensor, tf.Variable)):
        static = tf.get_static_value(value) if isinstance(value, tf.Tensor) else None
        known = "" if static is None else f" = {np.asarray(static).tolist()!r}"
        return f"a tensor of dtype {value.dtype.name} and shape {value.shape}{known}"
    return repr(value)


@public
def gather_nd(params, indices, batch_dims=0, name=None, bad_indices_policy=""):
    """Gathers slices of `params` at `indices` (the inverse of scatter_nd).

    Like `tf.gather_nd`, including `batch_dims`. With "IGNORE", rows with bad
    indices give zeros; otherwise they raise InvalidArgumentError. From a
    variable, the rows are read straight from its buffer (no copy of the
    variable). For rank-2 indices of depth 1 (row lookups) the gradient is a
    `tf.IndexedSlices`, as in TensorFlow.
    """
    from tf_scatter_ops import variables  # imports this module

    policy = check_policy(bad_indices_policy)
    with _scope(name or "gather_nd"):
        variable = variables.local_variable(params)
        from_variable = variables.is_resource_variable(variable)
        if from_variable:
            params = variable  # rows read from its buffer, not a copy of it
        else:
            params = _tensor(params, name="params")
        _check_dtype("gather_nd", params.dtype)
        indices = _indices(indices)
        given, batch_dims = batch_dims, _static_int(batch_dims)
        if batch_dims is None or batch_dims < 0:
            raise ValueError(
                "batch_dims must be a non-negative integer known when the op is built, "
                f"got {_describe(given)}")
        if batch_dims:
            indices = _batch_indices(params, indices, batch_dims)
        if from_variable:
            return variables.gather_rows(variable, indices, policy)
        return _raw_gather_nd(params, indices, policy)


# TensorFlow 1.x names.
tensor_scatter_update = tensor_scatter_nd_update
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub
