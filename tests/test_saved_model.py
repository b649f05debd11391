"""SavedModel: a tf.Module using every op, saved with tf.saved_model.save and
reloaded in a fresh process after `import tf_scatter_ops`, gives the same
results (gradients included); without the import, loading fails with
TensorFlow's "Op type not registered 'TfScatter>...'" (docs/troubleshooting.md says what
to do)."""

import json

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

import tf_scatter_ops as tso
from table_rows import SCATTER_GATHER
from ecosystem_util import run_python

F = tf.TensorSpec([None, None], tf.float32)
I = tf.TensorSpec([None, 1], tf.int64)


class AllOps(tf.Module):
    @tf.function(input_signature=[F, I, F])
    def scatters(self, t, i, u):
        return {
            "scatter_nd": tso.scatter_nd(i, u, tf.shape(t, out_type=tf.int64)),
            "update": tso.tensor_scatter_nd_update(t, i, u),
            "add": tso.tensor_scatter_nd_add(t, i, u),
            "sub": tso.tensor_scatter_nd_sub(t, i, u),
            "min": tso.tensor_scatter_nd_min(t, i, u),
            "max": tso.tensor_scatter_nd_max(t, i, u),
            "mul": tso.tensor_scatter_nd_mul(t, i, u),
            "div": tso.tensor_scatter_nd_div(t, i, u),
            "gather_nd": tso.gather_nd(t, i),
            "ignore": tso.tensor_scatter_nd_add(t, i + 100, u, bad_indices_policy="IGNORE"),
        }

    @tf.function(input_signature=[F, I, F])
    def grads(self, t, i, u):
        with tf.GradientTape() as tape:
            tape.watch([t, u])
            y = tf.reduce_sum(tso.tensor_scatter_nd_max(t, i, u) ** 2)
        dt, du = tape.gradient(y, [t, u])
        return {"dt": dt, "du": du}


def _inputs():
    t = np.arange(12, dtype=np.float32).reshape(6, 2) - 4
    i = np.array([[5], [0], [5], [2]], np.int64)
    u = np.array([[1, -1], [2, 9], [-3, 30], [0.5, 0.5]], np.float32)
    return t, i, u


def _results(module_or_loaded):
    t, i, u = _inputs()
    out = dict(module_or_loaded.scatters(t, i, u))
    out.update(module_or_loaded.grads(t, i, u))
    return {k: v.numpy().tolist() for k, v in out.items()}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("sm") / "all_ops")
    module = AllOps()
    tf.saved_model.save(module, path)
    return path, _results(module)


LOAD = """
    import json, numpy as np, tensorflow as tf
    {imports}
    loaded = tf.saved_model.load({path!r})
    t = np.arange(12, dtype=np.float32).reshape(6, 2) - 4
    i = np.array([[5], [0], [5], [2]], np.int64)
    u = np.array([[1, -1], [2, 9], [-3, 30], [0.5, 0.5]], np.float32)
    out = dict(loaded.scatters(t, i, u))
    out.update(loaded.grads(t, i, u))
    # differentiate through the loaded function: our registered gradients
    tv = tf.constant(t)
    with tf.GradientTape() as tape:
        tape.watch(tv)
        y = tf.reduce_sum(loaded.scatters(tv, i, u)["update"] * 3.0)
    out["loaded_grad"] = tape.gradient(y, tv)
    print(json.dumps({{k: v.numpy().tolist() for k, v in out.items()}}))
"""


def test_saved_model_contains_our_ops(saved):
    path, _ = saved
    proto = saved_model_pb2.SavedModel()
    with open(f"{path}/saved_model.pb", "rb") as f:
        proto.ParseFromString(f.read())
    types = {node.op for mg in proto.meta_graphs
             for fn in mg.graph_def.library.function for node in fn.node_def}
    assert {"TfScatter>" + row.op for row in SCATTER_GATHER} <= types, types


def test_reload_in_a_fresh_process_after_import(saved):
    path, expected = saved
    rc, out, err = run_python(LOAD.format(imports="import tf_scatter_ops", path=path), timeout=180)
    assert rc == 0, err[-3000:]
    got = json.loads(out.strip().splitlines()[-1])
    loaded_grad = got.pop("loaded_grad")
    assert got == expected
    t, i, _ = _inputs()
    want = np.full_like(t, 3.0)
    want[i[:, 0]] = 0.0  # written rows get no gradient from the tensor
    np.testing.assert_array_equal(np.array(loaded_grad, np.float32), want)


def test_without_the_import_the_error_names_our_op(saved):
    """What a user sees (documented in docs/saved-model.md): TensorFlow's error, naming
    the TfScatter> op; nothing of ours runs in that process to add advice."""
    path, _ = saved
    rc, out, err = run_python(LOAD.format(imports="", path=path), timeout=180)
    assert rc != 0
    assert "Op type not registered 'TfScatter>" in err, err[-3000:]
