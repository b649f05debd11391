"""TensorFlow's errors for the sorted and sparse segment ops, case by case
against stock TensorFlow 2.21: random short id vectors (sorted, unsorted,
negative, past num_segments) and indices (in and out of data's rows), for
segment_* and sparse_segment_* with and without num_segments. TensorFlow's
kernels walk the runs of equal ids and report the first problem in that
order; ours must report the same one, in TensorFlow's words (followed, where
docs/api.md's differences from TensorFlow say so, by the position and the id), and
give TensorFlow's values where it gives values.
"""

import re

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso

IAE = tf.errors.InvalidArgumentError
CASES = 300  # per function family; each case is a few eager calls


def _message(error):
    """A kernel error's text without the node and op TensorFlow wraps it in."""
    text = re.sub(r"^\{\{function_node [^}]*\}\} ", "", error.message)
    return re.sub(r" \[Op:[^\]]*\]( name: .*)?$", "", text, flags=re.S).strip()


def _outcome(f):
    try:
        return "value", f().numpy()
    except IAE as e:
        return "error", _message(e)


def _ids(rng, n):
    """Sorted ids in [0, 4] most of the time; else with one defect."""
    ids = np.sort(rng.integers(0, 5, size=n))
    defect = rng.integers(0, 4) if n else 0
    if defect == 1:  # a swap: not sorted
        i = rng.integers(0, n)
        ids[i] = rng.integers(0, 5)
    elif defect == 2:  # a negative id somewhere
        ids[rng.integers(0, n)] = rng.choice([-1, -2])
    elif defect == 3:  # negative first ids (sorted)
        ids[: rng.integers(1, n + 1)] = -1
    return ids.astype(np.int32)


def _compare(theirs, ours, what, seen):
    kind, value = theirs
    seen[kind] = seen.get(kind, 0) + 1
    our_kind, our_value = ours
    assert our_kind == kind, f"{what}: TensorFlow gave {theirs}, we gave {ours}"
    if kind == "value":
        np.testing.assert_array_equal(our_value, value, err_msg=what)
    else:
        # TensorFlow's words, then (docs/api.md's differences) the position and id
        assert our_value.startswith(value), f"{what}: TensorFlow said {value!r}, we said {our_value!r}"


@pytest.mark.parametrize("op", ["segment_sum", "segment_max", "segment_mean"])
def test_sorted_segment_errors_are_tensorflows(op):
    rng = np.random.default_rng(46888)
    seen = {}
    for case in range(CASES):
        n = int(rng.integers(0, 7))
        ids = _ids(rng, n)
        data = tf.constant(rng.integers(-3, 4, size=(n, 2)).astype(np.float32))
        _compare(_outcome(lambda: getattr(tf.math, op)(data, ids)),
                 _outcome(lambda: getattr(tso, op)(data, ids)), f"{op}(ids={ids.tolist()})", seen)
    assert min(seen.values()) > CASES // 5 and len(seen) == 2, seen  # both paths, often


@pytest.mark.parametrize("op", ["sparse_segment_sum", "sparse_segment_mean"])
def test_sparse_segment_errors_are_tensorflows(op):
    rng = np.random.default_rng(40653)
    seen = {}
    theirs_op = getattr(tf.sparse, op[len("sparse_"):])
    for case in range(CASES):
        n = int(rng.integers(0, 7))
        ids = _ids(rng, n)
        indices = rng.integers(0, 5, size=n).astype(np.int32)
        if n and rng.integers(0, 3) == 0:
            indices[rng.integers(0, n)] = rng.choice([-1, 5, 7])
        num = None if rng.integers(0, 2) else int(rng.integers(-2, 7))
        data = tf.constant(rng.integers(-3, 4, size=(5, 2)).astype(np.float32))
        what = f"{op}(indices={indices.tolist()}, ids={ids.tolist()}, num_segments={num})"
        _compare(_outcome(lambda: theirs_op(data, indices, ids, num_segments=num)),
                 _outcome(lambda: getattr(tso, op)(data, indices, ids, num_segments=num)), what,
                 seen)
    assert min(seen.values()) > CASES // 5 and len(seen) == 2, seen


def test_negative_num_segments_of_sparse_segments_as_tensorflow():
    """Eagerly TensorFlow's kernel error; where a graph is built its
    ValueError; a value known only at run time the kernel's error (never the
    wrappers' 'not given', -1)."""
    data = tf.ones([4, 2])
    for num in (-1, -2):
        with pytest.raises(IAE, match="segment ids must be >= 0"):
            tso.sparse_segment_sum(data, [0, 1, 2, 3], [0, 1, 2, 3], num_segments=num)

        @tf.function
        def static():
            return tso.sparse_segment_mean(data, [0, 1], [0, 1], num_segments=num)

        with pytest.raises(ValueError, match="Cannot specify a negative value for num_segments"):
            static.get_concrete_function()

        @tf.function(input_signature=[tf.TensorSpec([], tf.int32)])
        def dynamic(n):
            return tso.sparse_segment_sqrt_n(data, [0, 1], [0, 1], num_segments=n)

        with pytest.raises(IAE, match="segment ids must be >= 0"):
            dynamic(tf.constant(num))
        assert dynamic(tf.constant(3)).shape == (3, 2)
