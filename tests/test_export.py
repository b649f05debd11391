"""Deploying without the plugin: models built with tf_scatter_ops, saved
with its ops, rewritten by `python -m tf_scatter_ops.export`, and run in a
child process that never imports the plugin, on stock TensorFlow and on
TFLite's interpreter (built-in ops only), against the originals' outputs.
(ONNX: tools/onnx_check.sh, a CI step with its own venv.)"""

import functools
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import export_models
import tf_scatter_ops as tso
from ecosystem_util import ROOT, python_env
from tf_scatter_ops import export
from tf_scatter_ops.export import compare as _check


def _plugin_free_env():
    env = python_env()
    env.pop("PYTHONPATH", None)  # the repository is not importable there
    return env


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Every model saved and exported; the child's results per target."""
    out = tmp_path_factory.mktemp("models")
    replaced = {name: export_models.save(name, str(out / name)) for name in export_models.MODELS}
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tests", "helpers", "export_check.py"), str(out),
         "tensorflow", "tflite"], env=_plugin_free_env(), cwd=str(out), capture_output=True,
        text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, replaced, json.loads(proc.stdout.strip().splitlines()[-1])


CASES = [(name, target) for name, (_, _, targets) in export_models.MODELS.items()
         for target in targets if target != "onnx"]


@pytest.mark.parametrize("name,target", CASES)
def test_the_export_runs_without_the_plugin_with_the_originals_outputs(exported, name, target):
    _, replaced, results = exported
    assert replaced[name], "the original holds no TfScatter> op to replace"
    result = results[name][f"{target}/export"]
    assert result.startswith(("equal", "close")), result


PATCHED_CASES = [(name, key) for name, target in CASES
                 for key in [f"{target}/patched"] + (["tflite/patched.tflite"]
                                                     if target == "tflite" else [])]


@pytest.mark.parametrize("name,form", PATCHED_CASES)
def test_under_the_patch_tensorflows_writers_write_tensorflows_ops(exported, name, form):
    """tf.saved_model.save (model.export for Keras) and TFLite's converter
    (from the Keras model, or from a concrete function, which it freezes)
    under the patch, on functions traced with the plugin's ops: the results
    run without the plugin and give the original's outputs."""
    _, _, results = exported
    result = results[name][form]
    assert result.startswith(("equal", "close")), result


def test_the_export_holds_no_plugin_op_and_keeps_the_signature(exported):
    out, _, _ = exported
    original = tf.saved_model.load(str(out / "embedding" / "original"))
    rewritten = tf.saved_model.load(str(out / "embedding" / "export"))
    assert (rewritten.signatures["serving_default"].structured_input_signature
            == original.signatures["serving_default"].structured_input_signature)
    for f in rewritten.signatures["serving_default"].graph.as_graph_def().library.function:
        assert not [n.op for n in f.node_def if n.op.startswith("TfScatter>")]


def test_the_cli_checks_the_export_in_a_process_without_the_plugin(tmp_path):
    model = export_models.EmbeddingUpdate()
    tf.saved_model.save(model, str(tmp_path / "src"), signatures={"serving_default": model.__call__})
    proc = subprocess.run(
        [sys.executable, "-m", "tf_scatter_ops.export", str(tmp_path / "src"),
         str(tmp_path / "dst"), "--check"], env=python_env(), capture_output=True, text=True,
        timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert '"ResourceScatterNdAdd": 1' in proc.stdout and "serving_default/rows" in proc.stdout
    assert "check: the export gives the original's outputs without the plugin" in proc.stdout


def test_check_reports_outputs_that_differ(tmp_path):
    model = export_models.TensorOps()
    tf.saved_model.save(model, str(tmp_path / "src"), signatures={"serving_default": model.__call__})
    export.export(str(tmp_path / "src"), str(tmp_path / "dst"))
    line, same = _check._compare("x", np.array([1.0, 2.0]), np.array([1.0, 2.5]))
    assert not same and "max difference 0.5" in line
    inputs = {"ids": export_models.IDS, "x": export_models.X}
    np.savez(tmp_path / "in.npz", **inputs)
    assert all(" equal" in line for line in export.check(str(tmp_path / "src"), str(tmp_path / "dst"),
                                                          str(tmp_path / "in.npz")))


def test_refusals(tmp_path):
    (tmp_path / "dst").mkdir()
    (tmp_path / "dst" / "file").write_text("x")
    with pytest.raises(ValueError, match="exists and is not empty"):
        export.export(str(tmp_path), str(tmp_path / "dst"))
    with pytest.raises(ValueError, match="holds no saved_model.pb"):
        export.export(str(tmp_path), str(tmp_path / "new"))


def test_a_model_exported_inside_stock_ops_needs_no_rewrite(tmp_path):
    model = export_models.keras_model()
    with tso.stock_ops():
        model.export(str(tmp_path / "keras"), verbose=False)
    assert export.export(str(tmp_path / "keras"), str(tmp_path / "again")) == {}


def _saved_op_types(folder):
    from tensorflow.core.protobuf import saved_model_pb2
    from tf_scatter_ops.export import rewrite
    model = saved_model_pb2.SavedModel()
    with open(os.path.join(folder, "saved_model.pb"), "rb") as f:
        model.ParseFromString(f.read())
    return rewrite.graph_def_op_types(model.meta_graphs[0].graph_def)


def test_a_namespace_whitelist_keeps_our_ops_only_when_it_names_ours(tmp_path):
    """Under the patch a save with a whitelist that does not name TfScatter
    (TensorFlow Recommenders saves with ["Scann"]) passes and holds
    TensorFlow's ops; one that names it keeps ours, for a process that loads
    the plugin. Unpatched, a save keeps what the functions hold, as before."""
    model = export_models.Embedding()
    ids = tf.constant(export_models.IDS)
    want = model(ids)["bags"]
    save = functools.partial(tf.saved_model.save, model,
                             signatures={"serving_default": model.__call__})
    with tso.patched():
        save(str(tmp_path / "scann"), options=tf.saved_model.SaveOptions(namespace_whitelist=["Scann"]))
        save(str(tmp_path / "keep"), options=tf.saved_model.SaveOptions(
            namespace_whitelist=["Scann", "TfScatter"]))
    save(str(tmp_path / "unpatched"))
    assert _saved_op_types(str(tmp_path / "scann")) == set()
    assert {"TfScatter>ResourceGatherNd", "TfScatter>SparseSegmentMean"} <= \
        _saved_op_types(str(tmp_path / "keep")) == _saved_op_types(str(tmp_path / "unpatched"))
    for folder in ("scann", "keep"):
        got = tf.saved_model.load(str(tmp_path / folder)).signatures["serving_default"](ids=ids)
        np.testing.assert_array_equal(got["bags"], want)
    with pytest.raises(ValueError, match="TfScatter"):  # TensorFlow's own check, unpatched
        save(str(tmp_path / "refused"), options=tf.saved_model.SaveOptions(
            namespace_whitelist=["Scann"]))


def test_unpatch_gives_tensorflow_its_writers_back():
    from tensorflow.python.framework import convert_to_constants
    from tensorflow.python.saved_model import save as saved_model_save
    before = (saved_model_save._verify_ops, convert_to_constants._run_inline_graph_optimization)
    with tso.patched():
        assert saved_model_save._verify_ops is not before[0]
        assert convert_to_constants._run_inline_graph_optimization is not before[1]
    assert (saved_model_save._verify_ops,
            convert_to_constants._run_inline_graph_optimization) == before
