"""What the wrappers take: the policies, the dtypes of each op (from the op
table), and the conversion of their inputs to tensors, with messages naming
what was wrong. No op is called here."""

import contextlib

import numpy as np
import tensorflow as tf

from tf_scatter_ops._base import library, table as _table
from tf_scatter_ops._base.tf_private import ShardedVariable

# The policies the kernels implement, as the library lists them
# (cc/ops/kernel_policies.h: one per line, "" first), and those the wrappers
# resolve before the op is built into indices in range and IGNORE
# (bounds.py: CLIP clamps the indices, FILL is IGNORE and a fill).
KERNEL_POLICIES = tuple(library.library_function("tf_scatter_ops_kernel_policies")
                        .split("\n")[:-1])
WRAPPER_POLICIES = ("CLIP", "FILL")
POLICIES = KERNEL_POLICIES + WRAPPER_POLICIES
INDEX_DTYPES = (tf.int16, tf.int32, tf.int64)

# Value dtypes per op, from the op table (cc/ops/op_table.h).
DTYPES = {row.py: row.dtypes for row in _table.OPS}
# The same as sets: cheap membership tests on the eager hot path (DTypes are
# interned, so lookups match by identity before DType.__eq__ would run).
DTYPE_SETS = {op: frozenset(ds) for op, ds in DTYPES.items()}
INDEX_SET = frozenset(INDEX_DTYPES)
# ... and as DataType enums, which an eager tensor gives without building a
# DType (tensor._datatype_enum()).
ENUM_SETS = {op: frozenset(d.as_datatype_enum for d in ds) for op, ds in DTYPES.items()}
INDEX_ENUMS = frozenset(d.as_datatype_enum for d in INDEX_DTYPES)


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
            f"Unknown bad_indices_policy {bad_indices_policy!r}: expected "
            + ", ".join(repr(p) for p in POLICIES[:-1]) + f" or {POLICIES[-1]!r} (upper case)")
    return bad_indices_policy


def scope(name):
    """A name scope in graphs; nothing in eager mode, where it only costs time."""
    return contextlib.nullcontext() if tf.executing_eagerly() else tf.name_scope(name)


def foreign(value):
    """True for an input our ops do not take but TensorFlow's functions may,
    through their dispatch: a composite tensor (RaggedTensor, SparseTensor,
    an extension type) other than a variable, a sharded one or IndexedSlices
    (which convert to a tensor)."""
    return (isinstance(value, tf.__internal__.CompositeTensor)
            and not isinstance(value, (tf.Variable, tf.IndexedSlices, ShardedVariable)))


def tensor(value, dtype=None, dtype_hint=None, name=None):
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


def int_tensor(value, dtype_hint, name):
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
        if (array is not None and array.dtype == object
                and all(isinstance(v, int) for v in array.reshape(-1).tolist())):
            # Python ints beyond uint64 (TensorFlow: an OverflowError in a graph)
            raise ValueError(f"{name} = {value!r} does not fit int64")
        if array is not None and array.dtype.kind in "iu":
            info = np.iinfo(dtype_hint.as_numpy_dtype)
            if array.size and (array.min() < info.min or array.max() > info.max):
                return tf.convert_to_tensor(array, name=name)
            return tf.convert_to_tensor(array, dtype=dtype_hint, name=name)
        if array is not None and array.dtype.kind == "b" and array.size:
            # the hint would turn True into index 1; bool is not an index
            return tf.convert_to_tensor(array, name=name)
    return tensor(value, dtype_hint=dtype_hint, name=name)


def indices(value):
    """Indices as a tensor of an index dtype (int32 unless they need more)."""
    value = int_tensor(value, tf.int32, "indices")
    if value.dtype not in INDEX_SET:
        raise ValueError(
            f"indices must be int16, int32 or int64, got {value.dtype.name}")
    return value


def check_dtype(op, dtype, shown=None):
    """ValueError unless `op` takes `dtype` (`shown`: the function named in
    the message, when it is made of `op`)."""
    if dtype not in DTYPE_SETS[op]:
        names = ", ".join(d.name for d in DTYPES[op])
        raise ValueError(
            f"{shown or op} does not support dtype {dtype.name}; supported: {names}")


def static_int(value):
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


def describe(value):
    """What was passed, for a message: a tensor by its dtype, shape and (when
    known) value, anything else by its repr."""
    if isinstance(value, (tf.Tensor, tf.Variable)):
        static = tf.get_static_value(value) if isinstance(value, tf.Tensor) else None
        known = "" if static is None else f" = {np.asarray(static).tolist()!r}"
        return f"a tensor of dtype {value.dtype.name} and shape {value.shape}{known}"
    return repr(value)
