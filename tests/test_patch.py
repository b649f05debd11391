"""Drop-in: patch_tensorflow() routes TensorFlow's names to the plugin, with
TensorFlow's positional order, and unpatch()/patched() put TensorFlow back."""

import inspect
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from tensorflow.python.distribute import sharded_variable
from tensorflow.python.ops import embedding_ops, math_ops, ref_variable, resource_variable_ops

import tf_scatter_ops as tso
from tf_scatter_ops import patch
from tf_scatter_ops._base import table as _table
import table_rows
import ecosystem_util
import reference as ref

NAMES = ["scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
         "tensor_scatter_nd_sub", "tensor_scatter_nd_min", "tensor_scatter_nd_max", "gather_nd"]
V1_ONLY = ["tensor_scatter_update", "tensor_scatter_add", "tensor_scatter_sub"]
V1_VARIABLE = ["scatter_nd_update", "scatter_nd_add", "scatter_nd_sub"]
SEGMENTS = ["unsorted_segment_sum", "unsorted_segment_prod", "unsorted_segment_min",
            "unsorted_segment_max", "unsorted_segment_mean", "unsorted_segment_sqrt_n",
            "segment_sum", "segment_prod", "segment_min", "segment_max", "segment_mean"]
MATH = {"tf.math": tf.math, "tf.compat.v2.math": tf.compat.v2.math,
        "tf.compat.v1.math": tf.compat.v1.math}
SPARSE_SEGMENTS = ["segment_sum", "segment_mean", "segment_sqrt_n"]
SPARSE = {"tf.sparse": tf.sparse, "tf.compat.v2.sparse": tf.compat.v2.sparse,
          "tf.compat.v1.sparse": tf.compat.v1.sparse}
# v1's top-level segment names (tf.compat.v1.segment_sum, .sparse_segment_sum, ...),
# interned as a name in source is (TensorFlow's v1 module wrappers cache a lookup by
# the str object: see test_lookups_by_the_patchs_own_name_strings_are_routed_then_restored)
V1_SEGMENTS = [n for n in SEGMENTS + [sys.intern("sparse_" + n) for n in SPARSE_SEGMENTS]
               if hasattr(tf.compat.v1, n)]
METHODS = ["scatter_nd_update", "scatter_nd_add", "scatter_nd_sub", "scatter_nd_min", "scatter_nd_max"]
CLASSES = {"tf.Variable": resource_variable_ops.BaseResourceVariable,
           "tf.compat.v1.RefVariable": ref_variable.RefVariable}
# a resource variable's IndexedSlices methods (tests/test_lookups.py)
RESOURCE_METHODS = ["scatter_add", "scatter_sub", "scatter_min", "scatter_max", "scatter_update",
                    "sparse_read"]
NN = {"tf.nn": tf.nn, "tf.compat.v2.nn": tf.compat.v2.nn, "tf.compat.v1.nn": tf.compat.v1.nn}
NN_NAMES = ["embedding_lookup", "embedding_lookup_sparse"]


@pytest.fixture(autouse=True)
def _always_unpatched():
    tso.unpatch()
    yield
    tso.unpatch()


def _namespaces():
    return {"tf": tf, "tf.compat.v2": tf.compat.v2, "tf.compat.v1": tf.compat.v1}


def _all_names():
    return [(ns, n) for ns in _namespaces() for n in NAMES] + [("tf.compat.v1", n) for n in V1_ONLY]


def _op_types(fn, *args):
    return {op.type for op in tf.function(fn).get_concrete_function(*args).graph.get_operations()}


def _every_patched_name():
    """(namespace or class, name) of everything patch_tensorflow() replaces."""
    spaces = dict(_namespaces(), **CLASSES, **MATH, **SPARSE, **NN,
                  ShardedVariable=sharded_variable.ShardedVariable,
                  **{"tf.raw_ops": tf.raw_ops, "tf.compat.v2.raw_ops": tf.compat.v2.raw_ops,
                     "tf.compat.v1.raw_ops": tf.compat.v1.raw_ops,
                     "tensorflow.python.ops.math_ops": math_ops,
                     "tensorflow.python.ops.embedding_ops": embedding_ops})
    names = _all_names() + [("tf.compat.v1", n) for n in V1_VARIABLE]
    names += [(ns, "gather") for ns in _namespaces()]
    names += [(m, n) for m in NN for n in NN_NAMES]
    names += [("tf.Variable", m) for m in RESOURCE_METHODS]
    names += [("ShardedVariable", m) for m in RESOURCE_METHODS]  # tests/test_sharded.py
    names += [(m, n) for m in MATH for n in SEGMENTS]
    names += [(m, n) for m in SPARSE for n in SPARSE_SEGMENTS]
    names += [("tf.compat.v1", n) for n in V1_SEGMENTS]
    names += [(c, m) for c in CLASSES for m in METHODS]
    names += [(ns, n) for ns in ("tf.raw_ops", "tf.compat.v2.raw_ops", "tf.compat.v1.raw_ops")
              for n in ("ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterMin",
                        "ResourceScatterMax", "ResourceScatterUpdate")]
    names += [("tensorflow.python.ops.math_ops", "unsorted_segment_sum"),
              ("tensorflow.python.ops.embedding_ops", "embedding_lookup_sparse")]
    return spaces, names


def test_patch_replaces_every_name_and_unpatch_restores_the_originals():
    spaces, names = _every_patched_name()
    originals = {(ns, n): getattr(spaces[ns], n) for ns, n in names}
    assert sorted(patch.patched_names()) == sorted(f"{ns}.{n}" for ns, n in names)
    tso.patch_tensorflow()
    assert tso.is_patched()
    for (ns, n), original in originals.items():
        assert getattr(spaces[ns], n) is not original, f"{ns}.{n} not patched"
    tso.patch_tensorflow()  # idempotent: unpatch still restores TensorFlow's
    tso.unpatch()
    assert not tso.is_patched()
    for (ns, n), original in originals.items():
        assert getattr(spaces[ns], n) is original, f"{ns}.{n} not restored"
    # an inherited method is inherited again, not copied onto the class
    assert "scatter_nd_min" not in resource_variable_ops.ResourceVariable.__dict__


def test_every_replacement_keeps_the_positional_order_of_the_function_it_replaces():
    spaces, names = _every_patched_name()
    theirs = {(ns, n): inspect.signature(getattr(spaces[ns], n)).parameters for ns, n in names}
    with tso.patched():
        ours = {(ns, n): inspect.signature(getattr(spaces[ns], n)).parameters for ns, n in names}
    for key, params in theirs.items():
        assert list(ours[key])[:len(params)] == list(params), (key, list(ours[key]), list(params))


def test_every_replacement_carries_the_attributes_of_the_function_it_replaces():
    """TensorFlow's API names (Keras 2 names a TFOpLambda layer by them),
    its dispatchers (the same lists and dispatcher objects), its decorator
    chain (tf_inspect reads TensorFlow's signature through it), its name,
    module and docstring (with a line about the patch added)."""
    from tensorflow.python.util import tf_decorator, tf_inspect
    spaces, names = _every_patched_name()
    theirs = {(ns, n): getattr(spaces[ns], n) for ns, n in names}
    with tso.patched():
        ours = {(ns, n): getattr(spaces[ns], n) for ns, n in names}
    for key, original in theirs.items():
        mine = ours[key]
        for attr, value in getattr(original, "__dict__", {}).items():
            if attr not in ("__wrapped__", "__signature__", "_tf_decorator",
                            "__original_wrapped__"):
                assert mine.__dict__.get(attr, None) is value, (key, attr)
        assert tf_decorator.unwrap(mine)[1] is tf_decorator.unwrap(original)[1], key
        for attr in ("__name__", "__qualname__", "__module__"):
            assert getattr(mine, attr) == getattr(original, attr), (key, attr)
        assert mine.__doc__.startswith((original.__doc__ or "").rstrip()), key
        assert "tf_scatter_ops.patch_tensorflow()" in mine.__doc__, key
        assert tf_inspect.signature(mine) == tf_inspect.signature(original), key


def test_tensorflows_own_densification_of_a_sparse_gradient_is_routed():
    """A gather's IndexedSlices gradient through a reshape (GATv2's edge
    features: 4 such densifications per step): TensorFlow's reshape gradient
    densifies it with math_ops.unsorted_segment_sum, which the patch routes;
    bitwise stock's."""
    w = tf.constant(np.random.default_rng(0).normal(size=(60, 4)).astype(np.float32))
    ids = tf.constant(np.random.default_rng(1).integers(0, 30, 200), tf.int32)

    def grad(w):
        with tf.GradientTape() as tape:
            tape.watch(w)
            rows = tf.gather(tf.reshape(w, [30, 8]), ids)
            loss = tf.reduce_sum(tf.sin(rows) * tf.range(8.0))
        return tape.gradient(loss, w)

    want = grad(w)
    assert {"UnsortedSegmentSum"} <= _op_types(grad, w)
    with tso.patched():
        got = grad(w)
        types = _op_types(grad, w)
    assert "UnsortedSegmentSum" not in types and "TfScatter>UnsortedSegmentSum" in types, types
    np.testing.assert_array_equal(got, want)


def test_safe_embedding_lookup_sparse_reaches_our_ops():
    """tf.nn.safe_embedding_lookup_sparse (tf-keras's Embedding of a
    SparseTensor): bags with an invalid id, an empty bag and weights;
    bitwise stock's, the rows read by the plugin."""
    table = tf.Variable(np.random.default_rng(0).normal(size=(20, 4)).astype(np.float32))
    ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [3, 0], [3, 2]], [3, -1, 7, 7, 19], [4, 3])
    weights = tf.SparseTensor(ids.indices, [0.5, 1.0, 2.0, 1.0, 3.0], ids.dense_shape)

    def lookup():
        return [tf.nn.safe_embedding_lookup_sparse(table, ids, w, combiner=c)
                for w in (None, weights) for c in ("sum", "mean", "sqrtn")]

    want = lookup()
    with tso.patched():
        got = lookup()
        types = {op.type for op in tf.function(lookup).get_concrete_function().graph.get_operations()}
    assert any(t.startswith("TfScatter>") for t in types), types
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("raw", ["ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterMin",
                                 "ResourceScatterMax", "ResourceScatterUpdate"])
def test_raw_resource_scatters_reach_our_ops(raw):
    """tf.raw_ops.ResourceScatter<Op> (tf-keras's legacy optimizers' row
    updates): indices of rank 2 with duplicates, bitwise stock's, eagerly
    and in a tf.function, which builds our op."""
    rng = np.random.default_rng(2)
    start = rng.normal(size=(9, 3)).astype(np.float32)
    ids = np.array([[1, 4], [4, 8]], np.int32)
    updates = rng.normal(size=(2, 2, 3)).astype(np.float32)

    def run(fn):
        v = tf.Variable(start)
        fn(v)
        return v.numpy()

    def update(v):
        getattr(tf.raw_ops, raw)(resource=v.handle, indices=ids, updates=updates)

    want = run(update)
    with tso.patched():
        assert np.array_equal(run(update), want)
        assert np.array_equal(run(tf.function(update)), want)
        v = tf.Variable(start)
        graph = tf.function(update).get_concrete_function(v).graph
        assert any(op.type.startswith("TfScatter>ResourceScatterNd") for op in graph.get_operations())


class _Boxed:
    """A value that only a registered dispatcher knows."""

    def __init__(self, value):
        self.value = value


class _Masked(tf.experimental.ExtensionType):
    values: tf.Tensor


def test_patched_names_dispatch_as_tensorflows_do():
    """A type-based dispatch registered on tf.gather after patching (as a
    library imported later registers one), and a fallback dispatcher (what
    Keras 2 registers for its symbolic tensors) reach the patched name; plain
    tensors still reach our op."""
    from tensorflow.python.util import dispatch

    seen = []

    class Fallback(dispatch.GlobalOpDispatcher):
        def handle(self, op, args, kwargs):
            if any(isinstance(a, _Boxed) for a in list(args) + list(kwargs.values())):
                seen.append(op)
                return "fallback"
            return self.NOT_SUPPORTED

    fallback = Fallback()
    fallback.register()
    try:
        with tso.patched():
            assert tf.gather(_Boxed(1), [0]) == "fallback" and seen == [tf.gather]
            assert tf.math.unsorted_segment_sum(_Boxed(1), [0], 1) == "fallback"

            @tf.experimental.dispatch_for_api(tf.gather, {"params": _Masked})
            def _masked_rows(params, indices, validate_indices=None, axis=None,
                             batch_dims=0, name=None):
                return "typed"
            try:
                assert tf.gather(_Masked(tf.ones([3])), [1]) == "typed"
                assert _op_types(lambda: tf.gather(tf.ones([3, 2]), [1])) >= {"TfScatter>GatherNd"}
            finally:
                tf.experimental.unregister_dispatch_for(_masked_rows)
            ragged = tf.ragged.constant([[1, 2], [3]])  # RaggedTensor's own dispatch
            assert tf.gather(ragged, [1]).to_list() == [[3]]
    finally:
        dispatch._GLOBAL_DISPATCHERS.remove(fallback)


# -- the tf.compat.v1 segment names ------------------------------------------

V1_SPACES = {"tf.compat.v1": tf.compat.v1, "tf.compat.v1.math": tf.compat.v1.math,
             "tf.compat.v1.sparse": tf.compat.v1.sparse}
V1_SEGMENT_NAMES = ([("tf.compat.v1.math", n) for n in SEGMENTS]
                    + [("tf.compat.v1.sparse", n) for n in SPARSE_SEGMENTS]
                    + [("tf.compat.v1", n) for n in V1_SEGMENTS])
_DATA = np.array([[1., 2.], [3., -4.], [5., 6.], [-7., 8.], [9., 10.], [0.5, -12.]], np.float32)


def _v1_segment_case(ns, name):
    """(inputs, TensorSpecs, how to call it, our op type) for a segment
    function by its namespace and name (`segment_sum` under
    tf.compat.v1.sparse is the sparse one)."""
    if name.startswith("unsorted_"):
        inputs = (_DATA, np.array([2, 0, 2, -1, 1, 2], np.int32))
        specs = (tf.TensorSpec([None, 2]), tf.TensorSpec([None], tf.int32))
        py = name if name in table_rows.OP_TYPES else "unsorted_segment_sum"  # mean, sqrt_n
        bind = lambda f: (lambda d, i: f(d, i, 4))  # noqa: E731
        return inputs, specs, bind, "TfScatter>" + table_rows.OP_TYPES[py]
    if name.startswith("sparse_") or ns == "tf.compat.v1.sparse":
        inputs = (_DATA, np.array([5, 0, 2, 2, 4], np.int32), np.array([0, 0, 2, 2, 3], np.int32))
        specs = (tf.TensorSpec([None, 2]),) + (tf.TensorSpec([None], tf.int32),) * 2
        py = name if name.startswith("sparse_") else "sparse_" + name
        return inputs, specs, lambda f: f, "TfScatter>" + table_rows.OP_TYPES[py]
    inputs = (_DATA, np.array([0, 0, 1, 1, 1, 3], np.int32))
    specs = (tf.TensorSpec([None, 2]), tf.TensorSpec([None], tf.int32))
    return inputs, specs, lambda f: f, "TfScatter>" + table_rows.OP_TYPES[name]


@pytest.mark.parametrize("ns,name", V1_SEGMENT_NAMES)
def test_v1_segment_names_looked_up_before_patching_are_routed_then_restored(ns, name):
    """TensorFlow's tf.compat.v1 namespaces are module wrappers with an
    attribute cache (filled by the first lookup of a name): a lookup after
    patch_tensorflow() must give ours, one after unpatch() TensorFlow's, also
    for a name that was cached before the patch."""
    module = V1_SPACES[ns]
    theirs = getattr(module, name)
    assert getattr(module, name) is theirs
    if hasattr(module, "_fastdict_key_in"):  # the case at stake: the name is cached
        assert module._fastdict_key_in(name)
    inputs, specs, bind, ours = _v1_segment_case(ns, name)
    call = lambda *a: bind(getattr(module, name))(*a)  # noqa: E731 (looked up at call time)
    tf_types = _op_types(call, *specs)
    expected = call(*inputs)
    tso.patch_tensorflow()
    try:
        patched = getattr(module, name)
        types = _op_types(call, *specs)
        got = call(*inputs)
        traced_again = _op_types(call, *specs)
    finally:
        tso.unpatch()
    assert patched is not theirs, f"{ns}.{name} still TensorFlow's after the patch"
    assert ours in types and ours in traced_again, (ns, name, types)
    assert ours not in tf_types, tf_types
    ref.assert_same(got, expected.numpy())
    assert getattr(module, name) is theirs, f"{ns}.{name} not restored"
    assert module.__dict__[name] is theirs
    assert ours not in _op_types(call, *specs)
    # patched again after the restore: the cache follows the second setattr too
    with tso.patched():
        assert ours in _op_types(call, *specs)
    assert getattr(module, name) is theirs


def test_lookups_by_the_patchs_own_name_strings_are_routed_then_restored():
    """TensorFlow's v1 module wrappers key their attribute cache by the str
    object: a getattr with a str equal to, but not the one setattr updates,
    caches an entry of its own that keeps TensorFlow's function. The patch's
    names (from the op table) are looked up before and while patched, here
    and by the patch itself, and must be the interned ones."""
    tables = [(module, prefix, name) for module, table, prefix in patch._modules()
              if not isinstance(module, type) for name in table]
    theirs = {prefix + name: getattr(module, name) for module, prefix, name in tables}
    with tso.patched():
        stale = [prefix + name for module, prefix, name in tables
                 if getattr(module, name) is theirs[prefix + name]]
    assert not stale, stale
    restored = [prefix + name for module, prefix, name in tables
                if getattr(module, name) is not theirs[prefix + name]]
    assert not restored, restored


def test_v1_names_are_routed_in_both_of_tensorflows_v1_top_level_modules():
    """`import tensorflow.compat.v1` makes a second module of v1's top level
    (with its own attribute cache) and rebinds tf.compat.v1 to it; code that
    took tf.compat.v1 before holds the first. Both are patched and restored;
    the submodules (math, sparse) are shared."""
    import tensorflow.compat.v1 as tf1
    from tensorflow.compat import v1
    first = sys.modules["tensorflow._api.v2.compat.v1"]
    assert v1 is tf1 is tf.compat.v1 and tf1.math is first.math
    names = ["segment_sum", "sparse_segment_sum", "unsorted_segment_max", "gather_nd"]
    theirs = {(id(m), n): getattr(m, n) for m in (first, tf1) for n in names}

    def graph_of(m):
        ids = tf.constant([0, 1, 1])
        return _op_types(lambda d: m.segment_sum(d, ids) + m.sparse_segment_sum(d, ids, ids)
                         + m.unsorted_segment_max(d, ids, 3) + m.gather_nd(d, [[0], [1], [2]]),
                         tf.TensorSpec([3, 2]))

    with tso.patched():
        types = {m.__name__: graph_of(m) for m in (first, tf1)}
    for name, t in types.items():
        assert {"TfScatter>SegmentSum", "TfScatter>SparseSegmentSum",
                "TfScatter>UnsortedSegmentMax", "TfScatter>GatherNd"} <= t, (name, t)
    assert all(getattr(m, n) is theirs[id(m), n] for m in (first, tf1) for n in names)


def test_v1_names_imported_after_patching_or_taken_before_are_routed():
    """In a fresh process: tf.compat.v1 taken before the patch, and
    `import tensorflow.compat.v1` after it (its first import), both give ours;
    unpatch() gives TensorFlow's back to both."""
    script = """if True:
        import tensorflow as tf
        import tf_scatter_ops as tso
        early = tf.compat.v1
        theirs = early.math.segment_sum, early.sparse_segment_sum
        tso.patch_tensorflow()
        import tensorflow.compat.v1 as tf1
        def types(f):
            g = tf.function(f).get_concrete_function(tf.TensorSpec([3, 2])).graph
            return {op.type for op in g.get_operations()}
        ids = tf.constant([0, 0, 1])
        for m in (early, tf1):
            t = types(lambda d: m.math.segment_sum(d, ids) + m.sparse_segment_sum(d, ids, ids))
            assert {"TfScatter>SegmentSum", "TfScatter>SparseSegmentSum"} <= t, (m.__name__, t)
        tso.unpatch()
        for m in (early, tf1):
            assert (m.math.segment_sum, m.sparse_segment_sum) == theirs, m.__name__
        print("ok", early is not tf1)
    """
    code, out, err = ecosystem_util.run_python(script, timeout=300)
    assert code == 0, err[-3000:]
    assert out.split()[-2:] == ["ok", "True"], out  # True: two v1 modules, both routed


@pytest.mark.parametrize("fn", ["tf.compat.v1.sparse_segment_sum",
                                "tf.compat.v1.sparse.segment_mean",
                                "tf.compat.v1.sparse.segment_sqrt_n"])
def test_patched_v1_sparse_segments_keep_v1s_positional_order(fn):
    """v1: (data, indices, segment_ids, name, num_segments, sparse_gradient);
    v2 has num_segments before name."""
    module, name = fn.rsplit(".", 1)
    name = sys.intern(name)  # as a name in source is (see V1_SEGMENTS)
    data = tf.constant(_DATA)
    indices, ids = tf.constant([5, 0, 2, 2]), tf.constant([0, 0, 2, 2])

    def run():
        f = getattr(V1_SPACES[module], name)
        graph = tf.function(lambda d: f(d, indices, ids, "mine", 5)).get_concrete_function(
            tf.TensorSpec([6, 2])).graph
        with tf.GradientTape() as tape:
            tape.watch(data)
            out = f(data, indices, ids, None, 5, True)  # sparse_gradient=True
            loss = tf.reduce_sum(out * out)
        grad = tape.gradient(loss, data)
        return graph, f(data, indices, ids, "mine", 5), out, grad

    _, expected, expected_out, expected_grad = run()
    with tso.patched():
        graph, got, out, grad = run()
    op = "TfScatter>" + table_rows.OP_TYPES["sparse_" + name.replace("sparse_", "")]
    assert any(o.type == op and o.name.startswith("mine") for o in graph.get_operations()), \
        [(o.name, o.type) for o in graph.get_operations()]
    assert got.shape == (5, 2)  # num_segments, the fifth argument
    ref.assert_same(got, expected.numpy())
    ref.assert_same(out, expected_out.numpy())
    assert isinstance(grad, tf.IndexedSlices) and isinstance(expected_grad, tf.IndexedSlices)
    np.testing.assert_allclose(tf.convert_to_tensor(grad), tf.convert_to_tensor(expected_grad),
                               rtol=1e-6)


@pytest.mark.parametrize("call", ["tf.compat.v1", "method"])
@pytest.mark.parametrize("name", METHODS)
def test_variable_updates_build_our_op_while_patched(call, name):
    if call == "tf.compat.v1" and name not in V1_VARIABLE:
        pytest.skip("TensorFlow has no tf.compat.v1 function for it")
    start = np.array([1., 2., 3., 4.], np.float32)

    def run():
        v = tf.Variable(start)

        # named functions, not two lambdas on one line: AutoGraph finds a
        # lambda by its source line and may convert the other one
        def v1_function():
            return getattr(tf.compat.v1, name)(v, [[3], [1], [3]], [10., 20., 30.])

        def method():
            return getattr(v, name)([[3], [1], [3]], [10., 20., 30.])
        f = v1_function if call == "tf.compat.v1" else method
        types = _op_types(f)
        v.assign(start)
        value = tf.function(f)()
        return types, v.numpy(), tf.convert_to_tensor(value).numpy()

    tf_types, tf_var, tf_value = run()
    with tso.patched():
        types, var, value = run()
    ours = "TfScatter>ResourceScatterNd" + name.split("_")[-1].capitalize()
    assert ours in types and ours not in tf_types, types
    assert not any(t.startswith("ResourceScatterNd") for t in types)
    np.testing.assert_array_equal(var, tf_var)
    np.testing.assert_array_equal(value, tf_value)
    np.testing.assert_array_equal(value, var)  # the returned value is the new value


@pytest.mark.parametrize("ns,name", _all_names())
def test_every_patched_name_builds_our_op(ns, name):
    module = _namespaces()[ns]
    t = tf.constant([1., 2., 3., 4.])
    i = tf.constant([[3], [1]])
    u = tf.constant([10., 20.])
    if name == "scatter_nd":
        call, ours = (lambda: module.scatter_nd(i, u, [4])), "TfScatter>ScatterNd"
        expected = ref.scatter("scatter_nd", np.zeros(4, np.float32), i.numpy(), u.numpy(), tf.float32)
    elif name == "gather_nd":
        call, ours = (lambda: module.gather_nd(t, i)), "TfScatter>GatherNd"
        expected = np.array([4., 2.], np.float32)
    else:
        op = name.split("_")[-1]
        call = lambda: getattr(module, name)(t, i, u)  # noqa: E731
        ours = "TfScatter>TensorScatter" + op.capitalize()
        expected = ref.scatter(op, t.numpy(), i.numpy(), u.numpy(), tf.float32)
    tf_types = _op_types(call)
    assert ours not in tf_types
    tf_result = call()
    with tso.patched():
        types = _op_types(call)
        ours_result = call()
    assert ours in types, types
    ref.assert_same(ours_result, expected)
    ref.assert_same(ours_result, tf_result)


def test_patched_functions_keep_tensorflows_positional_order():
    t = tf.constant([[1., 2.], [3., 4.]])
    with tso.patched():
        # tf.tensor_scatter_nd_update(tensor, indices, updates, name): no policy before name.
        f = tf.function(lambda: tf.tensor_scatter_nd_update(t, [[1]], [[7., 8.]], "mine"))
        graph = f.get_concrete_function().graph
        assert any(op.name.startswith("mine") and op.type == "TfScatter>TensorScatterUpdate"
                   for op in graph.get_operations())
        # v1 gather_nd(params, indices, name, batch_dims)
        got = tf.compat.v1.gather_nd(t, [[1], [0]], "g", 1)
        # v2 gather_nd(params, indices, batch_dims, name)
        got2 = tf.gather_nd(t, [[1], [0]], 1, "g")
        # the policy is still there as a keyword
        ignored = tf.tensor_scatter_nd_update(t, [[5]], [[0., 0.]], bad_indices_policy="IGNORE")
    ref.assert_same(got, np.array([2., 3.], np.float32))
    ref.assert_same(got2, np.array([2., 3.], np.float32))
    ref.assert_same(ignored, t.numpy())


def test_context_manager_restores_even_on_error_and_keeps_an_outer_patch():
    original = tf.gather_nd
    with pytest.raises(RuntimeError):
        with tso.patched():
            assert tf.gather_nd is not original
            raise RuntimeError("boom")
    assert tf.gather_nd is original and not tso.is_patched()
    tso.patch_tensorflow()
    with tso.patched():
        pass
    assert tso.is_patched() and tf.gather_nd is not original


def test_errors_are_ours_while_patched():
    with tso.patched():
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = \[5\] does not index"):
            tf.tensor_scatter_nd_add(tf.zeros([4]), [[5], [6]], [1., 1.])


class ExistingLayer(keras.layers.Layer):
    """TensorFlow code written without tf_scatter_ops in mind."""

    def build(self, input_shape):
        self.row = self.add_weight(name="row", shape=(input_shape[-1],), initializer="ones")

    def call(self, x):
        n = tf.shape(x)[0]
        idx = tf.stack([tf.range(0, n, 2)], axis=-1)
        rows = tf.broadcast_to(self.row, [tf.shape(idx)[0], tf.shape(x)[1]])
        y = tf.tensor_scatter_nd_update(x, idx, rows)  # every even row := self.row
        return tf.gather_nd(y, idx) * 2.0 + tf.reduce_sum(y)


def test_existing_keras_layer_runs_through_the_plugin():
    x = tf.constant(np.arange(15, dtype=np.float32).reshape(5, 3))
    layer = ExistingLayer()
    expected = layer(x)

    def grads(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(x) ** 2)
        return tape.gradient(loss, layer.trainable_variables)

    expected_grad = grads(x)
    with tso.patched():
        types = _op_types(lambda v: layer(v), tf.TensorSpec([None, 3]))
        got = layer(x)
        got_grad = tf.function(grads)(x)
        grad_types = _op_types(grads, tf.TensorSpec([None, 3]))
        keras_types = _op_types(lambda v: keras.ops.scatter([[1], [0]], v, [4, 3]),
                                tf.TensorSpec([2, 3]))
    assert {"TfScatter>TensorScatterUpdate", "TfScatter>GatherNd"} <= types, types
    assert "TensorScatterUpdate" not in types and "GatherNd" not in types
    assert "TfScatter>TensorScatterUpdate" in grad_types  # update's gradient is ours too
    # gather_nd's row lookups have an IndexedSlices gradient, as in TensorFlow
    assert "TfScatter>ScatterNd" not in grad_types
    assert "TfScatter>ScatterNd" in keras_types  # keras.ops.scatter calls tf.scatter_nd
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_allclose(got_grad[0], expected_grad[0], rtol=1e-6)


def test_patched_v1_scatter_locks_resource_variables_as_tensorflow_does():
    """TensorFlow's tf.compat.v1.scatter_nd_add(resource_variable, ...) takes
    the variable's lock whatever use_locking says; the patched name too."""
    v = tf.Variable([1., 2., 3.])

    def attrs(f):
        graph = tf.function(f).get_concrete_function().graph
        return [op.get_attr("use_locking") for op in graph.get_operations()
                if op.type.startswith(("TfScatter>ResourceScatterNd", "ResourceScatterNd"))]

    theirs = attrs(lambda: tf.compat.v1.scatter_nd_add(v, [[0]], [1.], use_locking=False))
    with tso.patched():
        ours = attrs(lambda: tf.compat.v1.scatter_nd_add(v, [[0]], [1.], use_locking=False))
        default = attrs(lambda: tf.compat.v1.scatter_nd_sub(v, [[0]], [1.]))
    assert theirs == ours == default == [True]
    # called directly, ours honours it
    assert attrs(lambda: tso.scatter_nd_add(v, [[0]], [1.], use_locking=False)) == [False]


def test_a_replacement_takes_an_older_tensorflows_positional_order():
    """TensorFlow 2.17's scatter_nd is (indices, updates, shape, name); ours
    has bad_indices_policy before name, as 2.21's: the replacement maps the
    positional arguments by TensorFlow's order (checked on 2.17 by
    test_every_replacement_keeps_the_positional_order_..., in CI's tf-oldest)."""
    from tf_scatter_ops import patch

    def theirs(indices, updates, shape, name=None):
        raise AssertionError("not called")

    def ours(indices, updates, shape, bad_indices_policy="", name=None):
        return (indices, updates, shape, bad_indices_policy, name)

    f = patch._with_fallback(ours, theirs)
    assert f(1, 2, 3, "n") == (1, 2, 3, "", "n")
    assert f(1, 2, 3, bad_indices_policy="IGNORE") == (1, 2, 3, "IGNORE", None)
    assert list(inspect.signature(f).parameters) == ["indices", "updates", "shape", "name",
                                                     "bad_indices_policy"]
    with pytest.raises(TypeError):
        f(1, 2, 3, "n", "IGNORE")
    assert patch._with_fallback(ours, ours)(1, 2, 3, "IGNORE") == (1, 2, 3, "IGNORE", None)
