"""Drop-in fidelity: TensorFlow's messages word for word where they are
informative, TensorFlow's "Detected at node ... defined at" pointer to the
user's line for errors inside tf.function, and inputs our ops do not take
(RaggedTensor, SparseTensor, extension types) handed to TensorFlow's own
functions by the patch."""

import inspect
import re

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso

IAE = tf.errors.InvalidArgumentError


def _message(call):
    with pytest.raises(IAE) as e:
        call()
    return e.value.message


# (what, TensorFlow's call, ours): both must raise the same words, after the
# op-name prefix TensorFlow puts in front.
SAME_WORDS = [
    ("gather_nd names the row's position in indices' outer dims",
     lambda: tf.gather_nd(tf.zeros([3]), [[[0], [7]]]), lambda: tso.gather_nd(tf.zeros([3]), [[[0], [7]]])),
    ("gather_nd from empty params",
     lambda: tf.gather_nd(tf.zeros([0, 3]), [[0]]), lambda: tso.gather_nd(tf.zeros([0, 3]), [[0]])),
    ("scatter_nd outer dims",
     lambda: tf.scatter_nd([[0], [1]], [1., 2., 3.], [4]), lambda: tso.scatter_nd([[0], [1]], [1., 2., 3.], [4])),
    ("scatter_nd inner dims",
     lambda: tf.scatter_nd([[0], [1]], tf.zeros([2, 3]), [3, 4]),
     lambda: tso.scatter_nd([[0], [1]], tf.zeros([2, 3]), [3, 4])),
    ("tensor_scatter outer dims",
     lambda: tf.tensor_scatter_nd_update(tf.zeros([4]), [[0], [1]], [1., 2., 3.]),
     lambda: tso.tensor_scatter_nd_update(tf.zeros([4]), [[0], [1]], [1., 2., 3.])),
    ("tensor_scatter number of inner dims",
     lambda: tf.tensor_scatter_nd_add(tf.zeros([4]), [[0], [1]], tf.zeros([2, 2])),
     lambda: tso.tensor_scatter_nd_add(tf.zeros([4]), [[0], [1]], tf.zeros([2, 2]))),
    ("tensor_scatter inner dims",
     lambda: tf.tensor_scatter_nd_max(tf.zeros([3, 4]), [[0], [1]], tf.zeros([2, 3])),
     lambda: tso.tensor_scatter_nd_max(tf.zeros([3, 4]), [[0], [1]], tf.zeros([2, 3]))),
    ("scatter out of bounds",
     lambda: tf.tensor_scatter_nd_update(tf.zeros([3, 4]), [[2, 5]], [1.]),
     lambda: tso.tensor_scatter_nd_update(tf.zeros([3, 4]), [[2, 5]], [1.])),
]


def _words(message):
    """The message without TensorFlow's node prefix and op suffix."""
    message = re.sub(r"^\{\{[^}]*\}\}\s*", "", message)
    return re.sub(r"(, node name: \w+)?(\s*\[Op:.*)?$", "", message).strip()


@pytest.mark.parametrize("what,theirs,ours", SAME_WORDS, ids=[c[0] for c in SAME_WORDS])
def test_messages_are_tensorflows_word_for_word(what, theirs, ours):
    assert _words(_message(ours)) == _words(_message(theirs))


def test_shape_function_and_kernel_say_the_same():
    """Each message is written once: the trace-time ValueError and the run-time
    InvalidArgumentError carry the same words."""
    static = tf.function(lambda: tso.tensor_scatter_nd_add(tf.zeros([3, 4]), [[0], [1]], tf.zeros([2, 3])))
    with pytest.raises(ValueError) as traced:
        static.get_concrete_function()
    eager = _message(lambda: tso.tensor_scatter_nd_add(tf.zeros([3, 4]), [[0], [1]], tf.zeros([2, 3])))
    words = ("The inner 1 dimensions of output.shape=[3,4] must match the inner 1 dimensions of "
             "updates.shape=[2,3]")
    assert words in str(traced.value) and words in eager


def _defined_at(call):
    """The "Detected at node ... defined at" section of the error `call` raises."""
    with pytest.raises(IAE) as e:
        call()
    text = str(e.value)
    assert "Detected at node" in text, text
    return text.split("Detected at node", 1)[1]


def my_train_step_scatter(t, i, u):
    return tso.tensor_scatter_nd_add(t, i, u)


def my_train_step_gather(p, i):
    return tso.gather_nd(p, i)


VARIABLE = tf.Variable(tf.zeros([4]))


def my_train_step_scatter_nd(i):
    return tso.scatter_nd(i, [1.], [4])


CAPTURED = (tf.zeros([4]), tf.constant([[7]]), tf.constant([1.]))


def my_train_step_captured():
    """Eager tensors captured by the function, not passed to it."""
    return tso.tensor_scatter_nd_add(*CAPTURED)


def my_train_step_variable(i, u):
    tso.scatter_nd_sub(VARIABLE, i, u)
    return tso.gather_nd(VARIABLE, i)


@pytest.mark.parametrize("call", [
    lambda: tf.function(my_train_step_scatter)(tf.zeros([4]), tf.constant([[7]]), tf.constant([1.])),
    lambda: tf.function(my_train_step_gather)(tf.zeros([4]), tf.constant([[7]])),
    lambda: tf.function(my_train_step_variable)(tf.constant([[7]]), tf.constant([1.])),
    lambda: tf.function(my_train_step_scatter_nd)(tf.constant([[9]])),
    lambda: tf.function(my_train_step_captured)(),
], ids=["tensor-scatter", "gather", "variable", "scatter_nd", "captured-tensors"])
def test_errors_inside_tf_function_point_to_the_users_line(call):
    section = _defined_at(call)
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', section)
    assert frames, section
    # the innermost frame is this file, in the user's function; none of ours
    assert frames[-1][0] == __file__, frames
    assert not any("tf_scatter_ops" in f for f, _, _ in frames), frames
    assert "TfScatter>" not in section.split("\n", 1)[0]  # the node name is interpolated


def their_train_step_gather(p, i):
    return tf.gather_nd(p, i)


def test_tensorflows_own_op_gives_the_same_kind_of_pointer():
    """The reference: TensorFlow's op in the same situation."""
    section = _defined_at(lambda: tf.function(their_train_step_gather)(tf.zeros([4]), tf.constant([[7]])))
    assert re.findall(r'File "([^"]+)"', section)[-1] == __file__


# --- inputs our ops do not take --------------------------------------------

RAGGED = tf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]], [[7], [8, 9], []]])

# TensorFlow's ragged gather_nd cases (its dispatch for RaggedTensor params).
RAGGED_CASES = [
    ("rows", lambda gather_nd: gather_nd(RAGGED, [[0], [2]])),
    ("row-and-column", lambda gather_nd: gather_nd(RAGGED, [[0, 1], [2, 0]])),
    ("elements", lambda gather_nd: gather_nd(RAGGED, [[0, 0, 1], [2, 1, 0]])),
    ("batched-indices", lambda gather_nd: gather_nd(RAGGED, [[[0], [1]], [[2], [0]]])),
    ("rank-2-params", lambda gather_nd: gather_nd(tf.ragged.constant([[1, 2], [3]]), [[1, 0], [0, 1]])),
    ("int64-indices", lambda gather_nd: gather_nd(RAGGED, tf.constant([[1], [0]], tf.int64))),
]


def _value(x):
    if isinstance(x, tf.RaggedTensor):
        return ("ragged", x.to_list())
    return ("dense", tf.convert_to_tensor(x).numpy().tolist())


@pytest.mark.parametrize("name,case", RAGGED_CASES, ids=[c[0] for c in RAGGED_CASES])
def test_patched_gather_nd_hands_ragged_params_to_tensorflow(name, case):
    expected = _value(case(tf.gather_nd))
    with tso.patched():
        assert tso.is_patched() and tf.gather_nd is not tso.gather_nd  # ours, with the fallback
        got = _value(case(tf.gather_nd))
        got_v1 = _value(case(lambda p, i, batch_dims=0: tf.compat.v1.gather_nd(p, i, batch_dims=batch_dims)))
        traced = tf.function(lambda: case(tf.gather_nd))()
    assert got == expected and got_v1 == expected
    assert _value(traced) == expected


class Masked(tf.experimental.ExtensionType):
    """A user's extension type with its own tf.gather_nd and
    tf.tensor_scatter_nd_update, registered through TensorFlow's dispatch."""
    values: tf.Tensor
    mask: tf.Tensor


def _masked_gather(params, indices):
    return Masked(tf.gather_nd(params.values, indices), tf.gather_nd(params.mask, indices))


# The dispatch target must have the API's exact signature, which gained
# bad_indices_policy in a later TensorFlow.
if "bad_indices_policy" in inspect.signature(tf.gather_nd).parameters:
    @tf.experimental.dispatch_for_api(tf.gather_nd)
    def _masked_gather_nd(params: Masked, indices, batch_dims=0, name=None, bad_indices_policy=""):
        return _masked_gather(params, indices)
else:
    @tf.experimental.dispatch_for_api(tf.gather_nd)
    def _masked_gather_nd(params: Masked, indices, batch_dims=0, name=None):
        return _masked_gather(params, indices)


@tf.experimental.dispatch_for_api(tf.tensor_scatter_nd_update)
def _masked_update(tensor: Masked, indices, updates, name=None):
    return Masked(tf.tensor_scatter_nd_update(tensor.values, indices, updates),
                  tf.tensor_scatter_nd_update(tensor.mask, indices, tf.ones(tf.shape(updates), tf.bool)))


def test_patched_functions_keep_tensorflows_dispatch_for_extension_types():
    m = Masked(tf.constant([1., 2., 3.]), tf.constant([True, False, True]))
    expected_gather = tf.gather_nd(m, [[2], [1]])
    expected_update = tf.tensor_scatter_nd_update(m, [[1]], [9.])
    with tso.patched():
        gathered = tf.gather_nd(m, [[2], [1]])
        updated = tf.tensor_scatter_nd_update(m, [[1]], [9.])
        # plain tensors still run our op inside the user's dispatch target
        graph = tf.function(lambda: tf.gather_nd(m, [[2], [1]]).values).get_concrete_function().graph
    assert isinstance(gathered, Masked) and isinstance(updated, Masked)
    np.testing.assert_array_equal(gathered.values, expected_gather.values)
    np.testing.assert_array_equal(gathered.mask, expected_gather.mask)
    np.testing.assert_array_equal(updated.values, expected_update.values)
    np.testing.assert_array_equal(updated.mask, expected_update.mask)
    assert "TfScatter>GatherNd" in {op.type for op in graph.get_operations()}


def test_patched_functions_give_sparse_tensors_tensorflows_answer():
    sparse = tf.sparse.from_dense(tf.constant([[0., 2.], [3., 0.]]))

    def outcome(f):
        try:
            return ("value", _value(f()))
        except Exception as e:  # noqa: BLE001 - compared with TensorFlow's
            return ("error", type(e).__name__)

    calls = [lambda: tf.gather_nd(sparse, [[1, 0]]),
             lambda: tf.scatter_nd([[0]], sparse, [2, 2]),
             lambda: tf.tensor_scatter_nd_add(sparse, [[0, 0]], [1.])]
    expected = [outcome(c) for c in calls]
    with tso.patched():
        got = [outcome(c) for c in calls]
    assert got == expected


@pytest.mark.parametrize("call,kind", [
    (lambda: tso.gather_nd(RAGGED, [[0]]), "RaggedTensor"),
    (lambda: tso.tensor_scatter_nd_update(tf.sparse.from_dense([1., 0.]), [[0]], [1.]), "SparseTensor"),
    (lambda: tso.scatter_nd([[0]], Masked(tf.constant([1.]), tf.constant([True])), [2]), "Masked"),
])
def test_unpatched_functions_name_the_type_they_do_not_take(call, kind):
    with pytest.raises(ValueError, match=rf"not a {kind}; TensorFlow's own function takes it"):
        call()


def test_autograph_calls_our_functions_as_they_are():
    """Like TensorFlow's own functions, ours are not converted by AutoGraph
    when a tf.function calls them (no converted copy of library code)."""
    from tensorflow.python.autograph.impl import api  # private: the check AutoGraph makes
    for name in tso.__all__:
        f = getattr(tso, name)
        if callable(f) and name.startswith(("scatter", "tensor_scatter", "gather")):
            assert api.is_autograph_artifact(f), name
    from tensorflow.python.ops import resource_variable_ops
    with tso.patched():
        assert api.is_autograph_artifact(tf.gather_nd)
        assert api.is_autograph_artifact(resource_variable_ops.BaseResourceVariable.scatter_nd_add)
