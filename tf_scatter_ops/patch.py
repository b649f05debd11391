"""Drop-in: route TensorFlow's own names to the plugin.

    tf_scatter_ops.patch_tensorflow()   # tf.scatter_nd & co. now run our ops
    tf_scatter_ops.unpatch()            # TensorFlow's functions are back

    with tf_scatter_ops.patched():      # only inside the block
        model(x)

Patched names: `tf.scatter_nd`, `tf.tensor_scatter_nd_{update,add,sub,min,max}`,
`tf.gather_nd`, `tf.gather`, `tf.nn.embedding_lookup`, `tf.nn.embedding_lookup_sparse`,
`tf.math.unsorted_segment_{sum,prod,min,max,mean,sqrt_n}`,
`tf.math.segment_{sum,prod,min,max,mean}`, `tf.sparse.segment_{sum,mean,sqrt_n}`,
the same names under `tf.compat.v2` and `tf.compat.v1`, v1's top-level
`unsorted_segment_*`, `segment_*` and `sparse_segment_{sum,mean,sqrt_n}`,
v1's `tensor_scatter_{update,add,sub}` and `scatter_nd_{update,add,sub}`
(in-place variable updates), the variables' `scatter_nd_{update,add,sub,
min,max}` methods (resource variables, and v1 ref variables), and a resource
variable's `scatter_{add,sub,min,max,update}` (an IndexedSlices: how Keras's
and v1's optimizers apply a sparse gradient) and `sparse_read`, and the same
methods of a `ShardedVariable` (tables split by ParameterServerStrategy).

Each replacement keeps the positional order of the TensorFlow function it
replaces (v1's `gather_nd` has `name` before `batch_dims`, v1's
`sparse_segment_*` `name` before `num_segments`), dispatches as TensorFlow's
function does (inputs our ops do not take, such as RaggedTensor,
SparseTensor, extension types and Keras 2's symbolic tensors, go to
TensorFlow's dispatch and function) and carries its attributes
(_with_fallback). Code that looks the name up at call time
(`tf.gather_nd(...)`, as Keras' TensorFlow backend does) is routed, and so
are TensorFlow's own `math_ops.unsorted_segment_sum` (its gradients' and
optimizers' densification of sparse gradients) and
`embedding_ops.embedding_lookup_sparse` (what
tf.nn.safe_embedding_lookup_sparse looks its bags up with); references taken
before patching (`from tensorflow import gather_nd`), TensorFlow's other
internal modules and `tf.raw_ops` (but its ResourceScatter<Op>, which
tf-keras's legacy optimizers call) are not. Functions already traced by
`tf.function` keep the ops they were traced with. While patched,
TensorFlow's writers write TensorFlow's ops (export/writers.py).

The tf.compat.v1 namespaces are TensorFlow's module wrappers, whose attribute
cache is keyed by the name's str object: setattr (which interns the name)
updates the entry that attribute syntax (`tf.compat.v1.segment_sum`) and
string literals use, so those lookups follow the patch and unpatch() even when
they were cached before; the patch looks names up by their interned str for
that reason. A `getattr(tf.compat.v1, name)` with a str built at run time (not
interned) caches an entry of that str object's own, which keeps answering with
what it found first. `import tensorflow.compat.v1` makes a second module of
v1's top level; the patch imports it and patches both (see _v1_namespaces).
"""

import contextlib
import functools
import importlib
import inspect
import itertools
import sys
import threading

import tensorflow as tf


from tf_scatter_ops import nn, ops, segments, variables
from tf_scatter_ops._base import table as _table
from tf_scatter_ops._base.tf_private import (EagerTensor, ShardedVariable, embedding_ops,
                                             math_ops, ref_variable, resource_variable_ops,
                                             tf_decorator, tf_dispatch)
from tf_scatter_ops._dispatch import convert as _convert
from tf_scatter_ops.export import writers as _writers


@_convert.public
def _v1_gather_nd(params, indices, name=None, batch_dims=0, bad_indices_policy=""):
    """tf.compat.v1.gather_nd's positional order (name before batch_dims)."""
    return ops.gather_nd(params, indices, batch_dims, name, bad_indices_policy)


# tf.<name> -> ours, for every row of the op table in tf's namespace, and
# tf.gather (row lookups on our gather_nd).
_V2 = {py: getattr(ops, py) for py, (module, _) in _table.NAMESPACE.items() if not module}
_V2["gather"] = ops.gather
# tf.nn's embedding lookups (v2's and v1's signatures). They take a
# SparseTensor or RaggedTensor of ids themselves, and hand what the plugin
# does not read (a partitioned variable) to TensorFlow's function.
_NN = {"embedding_lookup": nn.embedding_lookup,
       "embedding_lookup_sparse": nn.embedding_lookup_sparse}
_V1_NN = {"embedding_lookup": nn.embedding_lookup_v1,
          "embedding_lookup_sparse": nn.embedding_lookup_sparse_v1}
_TAKE_COMPOSITES = frozenset(list(_NN.values()) + list(_V1_NN.values()))
# tf.math.<name> -> ours: the segment family, its rows and the two reductions
# TensorFlow composes from unsorted_segment_sum; tf.sparse.segment_* -> ours.
_MATH = {name: getattr(segments, name) for name in
         [py for py, (module, _) in _table.NAMESPACE.items() if module == "math"]
         + ["unsorted_segment_mean", "unsorted_segment_sqrt_n"]}
_SPARSE = {_table.NAMESPACE[row.py][1]: getattr(segments, row.py)
           for row in _table.SPARSE_SEGMENTS}


# TensorFlow's own Python calls math_ops.unsorted_segment_sum, the module's
# name, not tf.math's: its gradients densify an IndexedSlices with it (the
# reshape, gather-with-batch_dims and tile gradients, through
# array_grad._IndexedSlicesToTensorNoWarning) and optimizers deduplicate a
# sparse gradient's rows with it.
_INTERNAL_MATH = {"unsorted_segment_sum": segments.unsorted_segment_sum}
# tf.nn.safe_embedding_lookup_sparse (tf-keras's Embedding of a SparseTensor)
# prunes and fills the bags, then calls the module's v1 embedding_lookup_sparse.
_INTERNAL_EMBEDDING = {"embedding_lookup_sparse": nn.embedding_lookup_sparse_v1}


# tf.raw_ops' variable scatters, which tf-keras's legacy optimizers call.
_RAW = {raw: variables.raw_resource_scatter(raw, getattr(tf.raw_ops, raw))
        for raw in variables.RAW_RESOURCE_SCATTERS}


def _v1_sparse_segment(ours):
    """tf.compat.v1's sparse_segment_*(data, indices, segment_ids, name=None,
    num_segments=None, sparse_gradient=False): name before num_segments."""
    def f(data, indices, segment_ids, name=None, num_segments=None, sparse_gradient=False,
          bad_indices_policy=""):
        return ours(data, indices, segment_ids, num_segments, name, sparse_gradient,
                    bad_indices_policy)
    f.__name__ = f.__qualname__ = ours.__name__
    f.__doc__ = ours.__doc__
    return _convert.public(f)


# tf.compat.v1.math: the same names where v1 has them (v1's signatures are v2's);
# tf.compat.v1.sparse.segment_*: v1's order.
_V1_MATH = {name: f for name, f in _MATH.items() if hasattr(tf.compat.v1.math, name)}
_V1_SPARSE = {name: _v1_sparse_segment(f) for name, f in _SPARSE.items()
              if hasattr(tf.compat.v1.sparse, name)}


def _v1_variable_scatter(op, use_locking):
    """tf.compat.v1.scatter_nd_*(ref, indices, updates, use_locking, name),
    with TensorFlow's use_locking default and its effect: TensorFlow passes
    use_locking to ref variables only and always locks a resource variable,
    so the patched name does the same (code written for TensorFlow keeps its
    thread safety; tso.scatter_nd_* itself honours use_locking=False)."""
    ours = getattr(variables, op)

    def f(ref, indices, updates, use_locking=use_locking, name=None, bad_indices_policy=""):
        if not getattr(getattr(variables.unwrap(ref), "dtype", None), "_is_ref_dtype", False):
            use_locking = True
        return ours(ref, indices, updates, use_locking, name, bad_indices_policy)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = ours.__doc__
    return _convert.public(f)


def _variable_method(op):
    """variable.scatter_nd_*(indices, updates, name=None): TensorFlow's
    methods take the variable's lock."""
    ours = getattr(variables, op)

    def method(self, indices, updates, name=None):
        return ours(self, indices, updates, True, name)
    method.__name__ = method.__qualname__ = op
    method.__doc__ = ours.__doc__
    return _convert.public(method)


# tf.compat.v1: the same, TensorFlow's second names (tensor_scatter_add, ...)
# and the variable functions it has, with its use_locking defaults.
_V1 = dict(
    _V2,
    gather_nd=_v1_gather_nd,
    **{row.alias: getattr(ops, row.py) for row in _table.OPS if row.alias},
    **{name: _v1_variable_scatter(
        name, inspect.signature(getattr(tf.compat.v1, name)).parameters["use_locking"].default)
       for name in _table.VARIABLE_SCATTERS if hasattr(tf.compat.v1, name)},
    # v1's top-level segment names: tf.compat.v1.segment_sum, .unsorted_segment_sum,
    # .sparse_segment_sum (v1's order), ...
    **{name: f for name, f in _MATH.items() if hasattr(tf.compat.v1, name)},
    **{row.py: _V1_SPARSE[_table.NAMESPACE[row.py][1]] for row in _table.SPARSE_SEGMENTS
       if hasattr(tf.compat.v1, row.py) and _table.NAMESPACE[row.py][1] in _V1_SPARSE},
)
_METHODS = {op: _variable_method(op) for op in variables.TENSOR_OPS}
# A resource variable's methods that take an IndexedSlices (what optimizers
# apply sparse gradients with) and sparse_read; the originals are
# TensorFlow's, taken before any patch.
_BASE = resource_variable_ops.BaseResourceVariable
_RESOURCE_METHODS = dict(
    _METHODS,
    **{name: variables.sparse_delta_method(name, getattr(_BASE, name))
       for name in variables.SPARSE_DELTA_METHODS},
    sparse_read=variables.sparse_read_method(_BASE.sparse_read))
# A ShardedVariable's: its scatter_* on ours (every row checked before any
# shard is written), and sparse_read returning the rows in index order
# (TensorFlow's returns them grouped by shard, so tf.gather of unsorted ids
# from a ShardedVariable comes back in another order).
_SHARDED = ShardedVariable


def _sharded_sparse_read(self, indices, name=None):
    if self.dtype.base_dtype not in _convert.DTYPE_SETS["gather_nd"]:
        return _SHARDED_READ(self, indices, name)
    return ops.gather(self, indices, name=name or "Gather")


_SHARDED_READ = _SHARDED.sparse_read
_SHARDED_METHODS = dict(
    {name: variables.sparse_delta_method(name, getattr(_SHARDED, name))
     for name in variables.SPARSE_DELTA_METHODS},
    sparse_read=_convert.public(_sharded_sparse_read))


def _v1_namespaces():
    """The module objects that are tf.compat.v1's top level. `import
    tensorflow.compat.v1` runs v1's __init__ again as a second module
    (sys.modules["tensorflow.compat.v1"], with its own module wrapper and
    attribute cache; its submodules, tf.compat.v1.math and .sparse, are the
    first one's) and rebinds tf.compat.v1 to it, while code that took
    tf.compat.v1 before holds the first. We import it first, so that a later
    import finds a patched module, and patch both."""
    importlib.import_module("tensorflow.compat.v1")
    found = []
    for module in (tf.compat.v1, sys.modules.get("tensorflow._api.v2.compat.v1"),
                   sys.modules.get("tensorflow.compat.v1")):
        if module is not None and not any(module is seen for seen in found):
            found.append(module)
    return found


def _modules():
    """(module or class, replacements, display prefix) for every namespace
    we patch."""
    return ((tf, _V2, "tf."), (tf.compat.v2, _V2, "tf.compat.v2."),
            *((module, _V1, "tf.compat.v1.") for module in _v1_namespaces()),
            (tf.math, _MATH, "tf.math."), (tf.compat.v2.math, _MATH, "tf.compat.v2.math."),
            (tf.compat.v1.math, _V1_MATH, "tf.compat.v1.math."),
            (tf.sparse, _SPARSE, "tf.sparse."), (tf.compat.v2.sparse, _SPARSE, "tf.compat.v2.sparse."),
            (tf.compat.v1.sparse, _V1_SPARSE, "tf.compat.v1.sparse."),
            (math_ops, _INTERNAL_MATH, "tensorflow.python.ops.math_ops."),
            (embedding_ops, _INTERNAL_EMBEDDING, "tensorflow.python.ops.embedding_ops."),
            (tf.raw_ops, _RAW, "tf.raw_ops."), (tf.compat.v2.raw_ops, _RAW, "tf.compat.v2.raw_ops."),
            (tf.compat.v1.raw_ops, _RAW, "tf.compat.v1.raw_ops."),
            (tf.nn, _NN, "tf.nn."), (tf.compat.v2.nn, _NN, "tf.compat.v2.nn."),
            (tf.compat.v1.nn, _V1_NN, "tf.compat.v1.nn."),
            (resource_variable_ops.BaseResourceVariable, _RESOURCE_METHODS, "tf.Variable."),
            (_SHARDED, _SHARDED_METHODS, "ShardedVariable."),
            (ref_variable.RefVariable, _METHODS, "tf.compat.v1.RefVariable."))


_NOT_SUPPORTED = tf_dispatch.OpDispatcher.NOT_SUPPORTED
_lock = threading.Lock()
_MISSING = object()
_saved = None  # [(module, name, TensorFlow's function)] while patched


def _in_their_order(ours, tensorflows):
    """`ours`, taking its positional arguments in the order of `tensorflows`
    where that differs (an older TensorFlow: 2.17's scatter_nd has `name`
    where 2.21's has `bad_indices_policy`), with that signature."""
    theirs = inspect.signature(tensorflows).parameters
    mine = inspect.signature(ours).parameters
    order = list(theirs)
    if list(mine)[:len(order)] == order:
        return ours

    @functools.wraps(ours)
    def f(*args, **kwargs):
        if len(args) > len(order):
            raise TypeError(f"{ours.__name__}() takes {len(order)} positional arguments, "
                            f"{len(args)} were given")
        kwargs.update(zip(order, args))
        return ours(**kwargs)
    f.__signature__ = inspect.Signature(
        list(theirs.values()) + [p.replace(kind=p.KEYWORD_ONLY) for n, p in mine.items()
                                 if n not in theirs])
    return f


# What TensorFlow's API functions carry (tf_export's names, dispatch's
# dispatchers, tf_decorator's chain), copied to the function that replaces
# one: Keras 2 names a TFOpLambda layer by the API names at the end of the
# tf_decorator chain and reads TensorFlow's signature there (tf_inspect), a
# library imported after the patch registers dispatch_for_api(tf.gather, ...)
# against TensorFlow's signature, and the fallback dispatchers are
# TensorFlow's lists.
_FALLBACK_DISPATCHERS = "_tf_fallback_dispatchers"
_SIGNATURES = tf_dispatch._TYPE_BASED_DISPATCH_SIGNATURES
_TYPE_DISPATCHER = "_tf_type_based_dispatcher"
# The inputs that go straight to ours: no dispatch is registered for them.
_PLAIN = frozenset({EagerTensor, resource_variable_ops.ResourceVariable, int, float, bool,
                    str, bytes, type(None)})


def _with_fallback(ours, tensorflows):
    """`ours` (in TensorFlow's positional order) where TensorFlow's function
    `tensorflows` was, dispatching as TensorFlow's API functions do: inputs
    with a type-based dispatch (RaggedTensor, a user's extension type) go to
    its target, other inputs our ops do not take (a SparseTensor, see
    _convert.foreign) to TensorFlow's function, and inputs that a fallback
    dispatcher takes (Keras 2's symbolic tensors, which become one TFOpLambda
    layer of this function, as with TensorFlow's) to it. TensorFlow tries
    those dispatchers after its function failed on such inputs; ours would
    take a symbolic tensor (as several layers of the ops it is made of), so
    they are tried first. Eager tensors and variables go straight to ours."""
    call = _in_their_order(ours, tensorflows)
    takes_composites = ours in _TAKE_COMPOSITES
    typed = getattr(tensorflows, _TYPE_DISPATCHER, None)
    fallback = hasattr(tensorflows, _FALLBACK_DISPATCHERS)
    # a call with the plugin's own arguments is not TensorFlow's to dispatch
    extra = _extra_parameters(call, tensorflows)
    ours_only = frozenset(extra)
    positional = len(inspect.signature(tensorflows).parameters)

    def f(*args, **kwargs):
        if (all(type(a) in _PLAIN for a in args)
                and all(type(a) in _PLAIN for a in kwargs.values())):
            return call(*args, **kwargs)
        if typed is not None and len(args) <= positional and ours_only.isdisjoint(kwargs):
            result = typed.Dispatch(args, kwargs)
            if result is not NotImplemented:
                return result
        if not takes_composites and any(
                _convert.foreign(a) for a in itertools.chain(args, kwargs.values())):
            return tensorflows(*args, **kwargs)
        if fallback:
            result = tf_dispatch.dispatch(f, args, kwargs)
            if result is not _NOT_SUPPORTED:
                return result
        return call(*args, **kwargs)
    return _convert.public(_as_tensorflows(f, call, tensorflows, extra))


def _as_tensorflows(f, call, tensorflows, extra):
    """`f` with every attribute of `tensorflows` (names, module, docstring and
    what TensorFlow's decorators set), except that Python's signature is
    ours (TensorFlow's parameters, in its order, then ours), __wrapped__ is
    `call`, and f decorates `tensorflows` in tf_decorator's chain, so that
    TensorFlow's tools (tf_inspect, tf_export's names) see its function."""
    f.__dict__.update(getattr(tensorflows, "__dict__", {}))
    for attr in ("__name__", "__qualname__", "__module__"):
        setattr(f, attr, getattr(tensorflows, attr, getattr(call, attr)))
    f.__doc__ = ((tensorflows.__doc__ or "").rstrip() + "\n\n"
                 "Under tf_scatter_ops.patch_tensorflow() this runs on the plugin's kernels"
                 + (f" and also takes {', '.join(extra)}" if extra else "") + ".\n")
    f.__wrapped__ = call
    f.__signature__ = inspect.signature(call)
    # tf_inspect and tf_export's name lookups unwrap to TensorFlow's function
    f._tf_decorator = tf_decorator.TFDecorator("patch_tensorflow", tensorflows)
    f.__original_wrapped__ = tensorflows
    if tensorflows in _SIGNATURES:  # dispatch_for_api(f) records its targets here
        _SIGNATURES[f] = _SIGNATURES[tensorflows]
    return f


def _extra_parameters(call, tensorflows):
    theirs = inspect.signature(tensorflows).parameters
    return [n for n in inspect.signature(call).parameters if n not in theirs]


def patched_names():
    """The names patch_tensorflow() replaces, e.g. 'tf.compat.v1.gather_nd'."""
    return list(dict.fromkeys(prefix + n for _, table, prefix in _modules() for n in table))


def is_patched():
    """Whether patch_tensorflow() is in effect.

    Returns:
        A bool.

    Example:
        >>> tso.is_patched()
        False
    """
    return _saved is not None


def patch_tensorflow():
    """Routes TensorFlow's scatter_nd family and gather_nd names to the plugin.

    The names this module's docstring lists (`tf.scatter_nd`,
    `tf.tensor_scatter_nd_*`, `tf.gather_nd`, `tf.gather`, the segment
    family, their tf.compat.v1 twins and the variables' methods), process
    wide, each keeping TensorFlow's positional order. Inputs the plugin does
    not take go to TensorFlow's function. Idempotent; undo with unpatch().

    Returns:
        None.

    Example:
        >>> tso.patch_tensorflow()
        >>> tf.tensor_scatter_nd_add(tf.zeros([2]), [[5]], [1.0],
        ...                          bad_indices_policy="CLIP").numpy().tolist()
        [0.0, 1.0]
        >>> tso.unpatch()
    """
    global _saved
    with _lock:
        if _saved is not None:
            return
        saved = []
        for module, table, _ in _modules():
            for name, ours in table.items():
                # The tf.compat.v1 namespaces are TensorFlow module wrappers
                # whose attribute cache is keyed by the name's str object, not
                # its value. setattr interns the name and updates the entry of
                # the interned str, the one attribute syntax (tf.compat.v1.x)
                # and literals look up; a getattr with another str object of
                # the same value (our names come from the op table) would
                # cache an entry of its own that no setattr updates. So we
                # look up with the interned name only.
                name = sys.intern(name)
                # a class may inherit the method: remember that, to delete ours
                original = (module.__dict__.get(name, _MISSING) if isinstance(module, type)
                            else getattr(module, name))
                saved.append((module, name, original))
                setattr(module, name, _with_fallback(ours, getattr(module, name)))
        _saved = saved
        _register_densify()
        _writers.install()


_densify_registered = False


def _register_densify():
    """Once per process: our conversion of an IndexedSlices to a dense tensor,
    ahead of TensorFlow's (priority 99 < 100), while patched. TensorFlow
    densifies the IndexedSlices gradient of a row gather (tf.gather,
    gather_nd with depth-1 indices) wherever it meets a dense gradient or
    is returned to dense code, with a segment sum of its rows; under the
    patch that sum is ours. Unpatched, outside the op's dtypes, under XLA
    or for another dtype or a reference, TensorFlow's conversion runs."""
    global _densify_registered
    if not _densify_registered:
        tf.register_tensor_conversion_function(tf.IndexedSlices, _densify, priority=99)
        _densify_registered = True


def _densify(value, dtype=None, name=None, as_ref=False):
    if (_saved is None or as_ref or (dtype is not None and dtype != value.dtype)
            or value.dense_shape is None
            or value.dtype not in _convert.DTYPE_SETS["unsorted_segment_sum"]
            or value.indices.dtype not in _convert.INDEX_SET):
        return NotImplemented
    return segments.unsorted_segment_sum(value.values, value.indices, value.dense_shape[0],
                                         name=name)


def unpatch():
    """Puts TensorFlow's own functions back (a no-op when not patched).

    Returns:
        None.

    Example:
        >>> tso.patch_tensorflow()
        >>> tso.unpatch()
        >>> tso.is_patched()
        False
    """
    global _saved
    with _lock:
        if _saved is None:
            return
        _writers.uninstall()
        for module, name, original in reversed(_saved):
            _SIGNATURES.pop(getattr(module, name), None)
            if original is _MISSING:  # was inherited
                delattr(module, name)
            else:
                setattr(module, name, original)
        _saved = None


@contextlib.contextmanager
def patched():
    """patch_tensorflow() for the duration of a `with` block.

    Leaves the patch in place on exit if it was already there on entry. The
    patch is process-wide: with blocks in several threads, the first to exit
    unpatches for all of them (patch once at start-up instead).

    Returns:
        A context manager.

    Example:
        >>> with tso.patched():
        ...     print(tso.is_patched())
        True
        >>> tso.is_patched()
        False
    """
    was_patched = is_patched()
    patch_tensorflow()
    try:
        yield
    finally:
        if not was_patched:
            unpatch()
