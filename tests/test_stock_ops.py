"""tso.stock_ops(): functions traced inside hold TensorFlow's built-in ops
only, with the plugin's results for valid input (and for IGNORE's bad rows);
a SavedModel written inside loads and runs in a process that never imports
the plugin."""

import json
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from ecosystem_util import python_env

T = np.arange(1.0, 25.0, dtype=np.float32).reshape(4, 3, 2)
U2 = np.array([[1.0, -2.0], [3.0, 4.0], [-5.0, 6.0], [7.0, -8.0]], np.float32)
IDS = np.array([[3], [0], [3], [1]])
DEEP = np.array([[3, 2], [0, 1], [3, 2], [1, 0]])
BAD = np.array([[3, 2], [4, 0], [0, 1], [-1, 1]])
DATA = np.arange(1.0, 13.0, dtype=np.float32).reshape(6, 2)

CASES = {
    "scatter_nd": lambda: tso.scatter_nd(IDS, T[:4] * 0 + T, [5, 3, 2]),
    "scatter_nd depth 2": lambda: tso.scatter_nd(DEEP, U2, [4, 3, 2]),
    "scatter_nd depth 0": lambda: tso.scatter_nd(np.zeros((3, 0), np.int32), T[:3], [3, 2]),
    "scatter_nd int16": lambda: tso.scatter_nd(tf.constant(DEEP, tf.int16), U2, [4, 3, 2]),
    "scatter_nd IGNORE": lambda: tso.scatter_nd(BAD, U2, [4, 3, 2], bad_indices_policy="IGNORE"),
    "gather_nd": lambda: tso.gather_nd(T, DEEP),
    "gather_nd int16": lambda: tso.gather_nd(T, tf.constant(IDS, tf.int16)),
    "gather_nd batch_dims": lambda: tso.gather_nd(T, np.array([[1], [0], [2], [1]]), batch_dims=1),
    "gather_nd IGNORE": lambda: tso.gather_nd(T, BAD, bad_indices_policy="IGNORE"),
    "unsorted_segment_mean": lambda: tso.unsorted_segment_mean(DATA, [2, 0, 2, -1, 1, 0], 4),
    "unsorted_segment_sum IGNORE": lambda: tso.unsorted_segment_sum(
        DATA, [2, 0, 7, -1, 1, 0], 3, bad_indices_policy="IGNORE"),
    "unsorted_segment_max IGNORE int16": lambda: tso.unsorted_segment_max(
        DATA, tf.constant([2, 0, 7, -1, 1, 0], tf.int16), 3, bad_indices_policy="IGNORE"),
    "segment_sum": lambda: tso.segment_sum(DATA, [0, 0, 1, 3, 3, 3]),
    "segment_mean IGNORE": lambda: tso.segment_mean(DATA, [-1, 0, 1, 3, 3, 3],
                                                     bad_indices_policy="IGNORE"),
    "sparse_segment_sum": lambda: tso.sparse_segment_sum(DATA, [5, 0, 5, 2], [0, 0, 2, 2]),
    "sparse_segment_mean num_segments": lambda: tso.sparse_segment_mean(
        DATA, [5, 0, 5, 2], [0, 0, 2, 2], num_segments=4),
    "sparse_segment_sqrt_n IGNORE": lambda: tso.sparse_segment_sqrt_n(
        DATA, [5, 9, 5, -2], [0, 1, 1, 3], bad_indices_policy="IGNORE"),
    "sparse_segment_sum IGNORE num_segments": lambda: tso.sparse_segment_sum(
        DATA, [5, 0, 5, 2], [0, 1, 2, 4], num_segments=3, bad_indices_policy="IGNORE"),
}
# half rows summed in float32, as TensorFlow's sparse kernels sum them; counts past 2048
_HALF = np.random.default_rng(0).normal(size=(3000, 2)).astype(np.float16)
for _op in ("sum", "mean", "sqrt_n"):
    CASES[f"sparse_segment_{_op} float16 long bags"] = lambda f=getattr(
        tso, f"sparse_segment_{_op}"): f(_HALF, np.arange(3000) % 2999, np.arange(3000) // 2500)
for _op in ("update", "add", "sub", "min", "max"):
    _f = getattr(tso, f"tensor_scatter_nd_{_op}")
    CASES[f"tensor_scatter_nd_{_op}"] = lambda f=_f: f(T, IDS, T[[0, 1, 2, 3]] * 2 - 20)
    CASES[f"tensor_scatter_nd_{_op} depth 2"] = lambda f=_f: f(T, DEEP, U2)
    CASES[f"tensor_scatter_nd_{_op} depth 0"] = lambda f=_f: f(T, np.zeros((2, 0), np.int32),
                                                               np.stack([T - 9, T + 1]))
    CASES[f"tensor_scatter_nd_{_op} IGNORE"] = lambda f=_f: f(T, BAD, U2,
                                                              bad_indices_policy="IGNORE")
for _op in ("add", "update"):
    CASES[f"tensor_scatter_nd_{_op} depth 8"] = lambda f=getattr(tso, f"tensor_scatter_nd_{_op}"): f(
        np.ones([2] * 8 + [3], np.float32), [[1] * 8, [0] * 8, [1] * 8, [1, 2] + [0] * 6],
        np.arange(12, dtype=np.float32).reshape(4, 3), bad_indices_policy="IGNORE")


def _op_types(concrete):
    graph = concrete.graph
    types = {op.type for op in graph.get_operations()}
    for f in graph.as_graph_def().library.function:
        types.update(node.op for node in f.node_def)
    return types


def _stock(f):
    """f traced inside stock_ops(): (its op types, its result)."""
    with tso.stock_ops():
        concrete = tf.function(f).get_concrete_function()
    return _op_types(concrete), concrete()


@pytest.mark.parametrize("case", CASES)
def test_stock_ops_give_the_plugins_results(case):
    want = CASES[case]()
    types, got = _stock(CASES[case])
    assert not [t for t in types if t.startswith("TfScatter>")], sorted(types)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(got.shape, want.shape)


def test_scatter_nd_of_strings_inside_stock_ops():
    f = lambda: tso.scatter_nd([[1], [0]], tf.constant(["a", "b"]), [3])  # noqa: E731
    types, got = _stock(f)
    assert "ScatterNd" in types and not [t for t in types if t.startswith("TfScatter>")]
    assert got.numpy().tolist() == f().numpy().tolist() == [b"b", b"a", b""]


def test_variables_inside_stock_ops():
    table = tf.Variable(T.reshape(12, 2))

    def step():
        rows = tso.gather_nd(table, [[11], [0], [11]])
        dropped = tso.gather_nd(table, [[12], [1]], bad_indices_policy="IGNORE")
        tso.scatter_nd_add(table, [[11], [0], [11]], rows)
        tso.scatter_nd_max(table, [[3], [4]], [[100.0, -1.0], [0.0, 200.0]])
        tso.scatter_nd_update(table, [[5], [99]], [[7.0, 7.0], [1.0, 1.0]],
                              bad_indices_policy="IGNORE")
        return dropped

    want_dropped = step()
    want = table.numpy()
    table.assign(T.reshape(12, 2))
    types, dropped = _stock(step)
    # rows read as TFLite's converter freezes them: the variable's value, then GatherNd
    assert "ReadVariableOp" in types and "ResourceGatherNd" not in types, sorted(types)
    assert "ResourceScatterNdAdd" in types, sorted(types)
    assert not [t for t in types if t.startswith("TfScatter>")], sorted(types)
    np.testing.assert_array_equal(dropped.numpy(), want_dropped.numpy())
    np.testing.assert_array_equal(table.numpy(), want)
    with tso.stock_ops(), pytest.raises(ValueError, match="depths 1 to 7"):
        tf.function(lambda: tso.scatter_nd_add(table, np.zeros((1, 0), np.int32),
                                        np.ones((1, 12, 2), np.float32)))()


def test_stock_ops_nest_and_stay_in_their_thread():
    f = lambda: tso.gather_nd(T, IDS)  # noqa: E731
    seen = {}

    def other_thread():
        seen["other"] = _op_types(tf.function(f).get_concrete_function())

    with tso.stock_ops():
        with tso.stock_ops():
            inner = _op_types(tf.function(f).get_concrete_function())
        outer = _op_types(tf.function(f).get_concrete_function())
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    after = _op_types(tf.function(f).get_concrete_function())
    assert "GatherNd" in inner and "GatherNd" in outer
    assert "TfScatter>GatherNd" in seen["other"] and "TfScatter>GatherNd" in after


def test_a_saved_model_written_inside_loads_without_the_plugin(tmp_path):
    """Saved inside stock_ops(), the model (tensor ops, segments, a
    variable-backed lookup and update) runs in a child process that never
    imports tf_scatter_ops, with the same outputs."""

    class Model(tf.Module):
        def __init__(self):
            super().__init__()
            self.table = tf.Variable(np.arange(20.0, dtype=np.float32).reshape(10, 2))

        @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
        def __call__(self, ids):
            rows = tso.gather_nd(self.table, ids[:, None])
            pooled = tso.unsorted_segment_mean(rows, tf.range(tf.size(ids)) % 2, 2)
            scattered = tso.tensor_scatter_nd_add(tf.zeros([10, 2]), ids[:, None], rows)
            tso.scatter_nd_add(self.table, ids[:, None], tf.ones_like(rows))
            return {"pooled": pooled, "scattered": scattered,
                    "bags": tso.sparse_segment_sum(self.table, ids, tf.range(tf.size(ids)) // 2)}

    ids = [3, 9, 3, 0]
    model = Model()
    with tso.stock_ops():
        tf.saved_model.save(model, str(tmp_path / "m"))
    code = textwrap.dedent(f"""
        import json, sys
        import tensorflow as tf
        m = tf.saved_model.load({str(tmp_path / 'm')!r})
        out = {{k: v.numpy().tolist() for k, v in m(tf.constant({ids})).items()}}
        assert "tf_scatter_ops" not in sys.modules
        print(json.dumps(out))
    """)
    env = python_env()
    env.pop("PYTHONPATH", None)  # the repository is not importable there
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    want = {k: v.numpy().tolist() for k, v in model(tf.constant(ids)).items()}
    assert got == want


SORTED = tf.constant([0, 0, 1, 3], tf.int32)  # with a gap: TFLite's SEGMENT_SUM takes none
TFLITE = {
    "gather_nd": lambda ids: tso.gather_nd(T[:, :, 0], ids[:, None]),
    "scatter_nd": lambda ids: tso.scatter_nd(ids[:, None], tf.ones([4, 3]), [4, 3]),
    # duplicates: TFLite's lowering of TensorScatterUpdate counts each one
    "tensor_scatter_nd_update": lambda ids: tso.tensor_scatter_nd_update(
        T[:, :, 0], ids[:, None], tf.reshape(tf.range(12.0), [4, 3])),
}
for _op in ("add", "sub", "min", "max"):
    TFLITE[f"tensor_scatter_nd_{_op}"] = lambda ids, f=getattr(tso, f"tensor_scatter_nd_{_op}"): f(
        T[:, :, 0], ids[:, None], tf.reshape(tf.range(12.0) - 5, [4, 3]))
    TFLITE[f"tensor_scatter_nd_{_op} depth 2"] = lambda ids, f=getattr(
        tso, f"tensor_scatter_nd_{_op}"): f(T, tf.stack([ids, ids % 3], 1), U2)
for _op in ("sum", "prod", "min", "max", "mean", "sqrt_n"):
    TFLITE[f"unsorted_segment_{_op}"] = lambda ids, f=getattr(tso, f"unsorted_segment_{_op}"): f(
        T[:, :, 0], ids, 5)
for _op in ("sum", "prod", "min", "max", "mean"):
    TFLITE[f"segment_{_op}"] = lambda ids, f=getattr(tso, f"segment_{_op}"): f(
        T[:, :, 0] - 6, tf.sort(ids))
for _op in ("sum", "mean", "sqrt_n"):
    TFLITE[f"sparse_segment_{_op}"] = lambda ids, f=getattr(tso, f"sparse_segment_{_op}"): f(
        T[:, :, 0], ids, SORTED)


@pytest.mark.skipif(not hasattr(tf.lite, "Interpreter"), reason="no tf.lite.Interpreter")
@pytest.mark.parametrize("case", TFLITE)
def test_tflite_with_builtin_ops_gives_the_plugins_results(case):
    ids = tf.constant([3, 0, 3, 1], tf.int32)
    with tso.stock_ops():
        concrete = tf.function(TFLITE[case]).get_concrete_function(tf.TensorSpec([4], tf.int32))
    converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete])
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    interpreter = tf.lite.Interpreter(model_content=converter.convert())
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], ids.numpy())
    interpreter.invoke()
    got = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    want = TFLITE[case](ids).numpy()
    if "sqrt_n" in case:  # TFLite's square root may round differently
        np.testing.assert_allclose(got, want, rtol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)
