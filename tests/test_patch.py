"""Drop-in: patch_tensorflow() routes TensorFlow's names to the plugin, with
TensorFlow's positional order, and unpatch()/patched() put TensorFlow back."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from tensorflow.python.ops import ref_variable, resource_variable_ops

import tf_scatter_ops as tso
from tf_scatter_ops import patch
import reference as ref

NAMES = ["scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
         "tensor_scatter_nd_sub", "tensor_scatter_nd_min", "tensor_scatter_nd_max", "gather_nd"]
V1_ONLY = ["tensor_scatter_update", "tensor_scatter_add", "tensor_scatter_sub"]
V1_VARIABLE = ["scatter_nd_update", "scatter_nd_add", "scatter_nd_sub"]
SEGMENTS = ["unsorted_segment_sum", "unsorted_segment_prod", "unsorted_segment_min",
            "unsorted_segment_max", "unsorted_segment_mean", "unsorted_segment_sqrt_n",
            "segment_sum", "segment_prod", "segment_min", "segment_max", "segment_mean"]
MATH = {"tf.math": tf.math, "tf.compat.v2.math": tf.compat.v2.math}
SPARSE_SEGMENTS = ["segment_sum", "segment_mean", "segment_sqrt_n"]
SPARSE = {"tf.sparse": tf.sparse, "tf.compat.v2.sparse": tf.compat.v2.sparse}
METHODS = ["scatter_nd_update", "scatter_nd_add", "scatter_nd_sub", "scatter_nd_min", "scatter_nd_max"]
CLASSES = {"tf.Variable": resource_variable_ops.BaseResourceVariable,
           "tf.compat.v1.RefVariable": ref_variable.RefVariable}


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
    spaces = dict(_namespaces(), **CLASSES, **MATH, **SPARSE)
    names = _all_names() + [("tf.compat.v1", n) for n in V1_VARIABLE]
    names += [(m, n) for m in MATH for n in SEGMENTS]
    names += [(m, n) for m in SPARSE for n in SPARSE_SEGMENTS]
    names += [(c, m) for c in CLASSES for m in METHODS]
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


@pytest.mark.parametrize("call", ["tf.compat.v1", "method"])
@pytest.mark.parametrize("name", METHODS)
def test_variable_updates_build_our_op_while_patched(call, name):
    if call == "tf.compat.v1" and name not in V1_VARIABLE:
        pytest.skip("TensorFlow has no tf.compat.v1 function for it")
    start = np.array([1., 2., 3., 4.], np.float32)

    def run():
        v = tf.Variable(start)
        f = (lambda: getattr(tf.compat.v1, name)(v, [[3], [1], [3]], [10., 20., 30.])) \
            if call == "tf.compat.v1" else (lambda: getattr(v, name)([[3], [1], [3]], [10., 20., 30.]))
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
