"""Runs the exported models of tests/helpers/export_models.py where the plugin is
not installed, and compares them with the originals' outputs (io.npz):

    python tests/helpers/export_check.py OUT tensorflow tflite   # stock TensorFlow, TFLite
    python tests/helpers/export_check.py OUT onnx                # tf2onnx + onnxruntime

It never imports tf_scatter_ops (it fails if anything did). Prints one JSON
line: {model: {target/form: "equal" | "close <max difference>" | "FAILED: why"}}
for each model folder under OUT, target the model goes to (targets.txt) and
form: "export" (the SavedModel rewritten by tf_scatter_ops.export),
"patched" (the SavedModel TensorFlow's save wrote under the patch) and, for
TFLite, "patched.tflite" (what the converter wrote under the patch).
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def _io(folder):
    io = np.load(os.path.join(folder, "io.npz"), allow_pickle=False)
    inputs = {k[3:]: io[k] for k in io.files if k.startswith("in/")}
    outputs = {k[4:]: io[k] for k in io.files if k.startswith("out/")}
    return inputs, outputs


# Where a target is known to differ, and how: the outputs compared after
# `fix` is applied to both.
KNOWN = {
    # TFLite's select (or its folding) turns a -inf (+inf) that our form
    # puts back into the lowest (highest) finite value: a sorted segment of
    # infinities only has max -inf (min +inf) in TensorFlow
    ("tflite", "segment_max"): lambda a: np.clip(a, np.finfo(a.dtype).min, None),
    ("tflite", "segment_min"): lambda a: np.clip(a, None, np.finfo(a.dtype).max),
}


def _compare(got, want, target=None):
    """"equal", "close <diff>" (float outputs within 1e-5 relative: TFLite's
    and onnxruntime's kernels may round a division or a square root
    differently), or raises."""
    worst, known = 0.0, []
    for name, w in want.items():
        g = np.asarray(got[name])
        fix = KNOWN.get((target, name))
        if fix is not None and not np.array_equal(g, w, equal_nan=True):
            g, w = fix(g), fix(w)
            known.append(name)
        if g.shape != w.shape:
            raise AssertionError(f"{name}: shape {g.shape} against {w.shape}")
        if np.array_equal(g, w, equal_nan=w.dtype.kind == "f"):
            continue
        if w.dtype.kind != "f" or not np.allclose(g, w, rtol=1e-5, atol=1e-6, equal_nan=True):
            raise AssertionError(f"{name}: {g.ravel()[:8]} against {w.ravel()[:8]}")
        worst = max(worst, float(np.nanmax(np.abs(g.astype(np.float64) - w))))
    result = "equal" if worst == 0 else f"close {worst:.2g}"
    return result + (f" (known difference: {', '.join(known)})" if known else "")


def run_tensorflow(export, inputs):
    import tensorflow as tf

    signature = tf.saved_model.load(export).signatures["serving_default"]
    return {k: v.numpy() for k, v in signature(**{k: tf.constant(v) for k, v in
                                                  inputs.items()}).items()}


def run_tflite(export, inputs):
    import tensorflow as tf

    converter = tf.lite.TFLiteConverter.from_saved_model(export)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    interpreter = tf.lite.Interpreter(model_content=converter.convert())
    runner = interpreter.get_signature_runner("serving_default")
    return runner(**inputs)


def run_onnx(export, inputs):
    import onnxruntime

    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.onnx")
        proc = subprocess.run([sys.executable, "-m", "tf2onnx.convert", "--saved-model", export,
                               "--output", model, "--opset", "18"],
                              capture_output=True, text=True)
        if proc.returncode:
            raise AssertionError("tf2onnx: " + proc.stderr[-1500:])
        session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
        feeds = {}
        for i in session.get_inputs():  # tf2onnx names inputs NAME:0
            feeds[i.name] = inputs[i.name.split(":")[0]]
        names = [o.name for o in session.get_outputs()]
        return {name.split(":")[0]: value for name, value in
                zip(names, session.run(names, feeds))}


def run_tflite_file(path, inputs, output_names):
    """A converted model: through its signature when it has one (the
    converter saved the model first), else (it froze a concrete function)
    inputs by name, outputs in the function's order (its structure
    flattened: a dict's keys sorted)."""
    import tensorflow as tf

    with open(path, "rb") as f:
        interpreter = tf.lite.Interpreter(model_content=f.read())
    if interpreter.get_signature_list():
        return interpreter.get_signature_runner()(**inputs)
    details = interpreter.get_input_details()
    by_name = {d["name"].split(":")[0]: d for d in details}
    for name, value in inputs.items():
        interpreter.resize_tensor_input(by_name[name]["index"], value.shape)
    interpreter.allocate_tensors()
    for name, value in inputs.items():
        interpreter.set_tensor(by_name[name]["index"], value)
    interpreter.invoke()
    outputs = interpreter.get_output_details()
    if len(outputs) != len(output_names):
        raise AssertionError(f"{len(outputs)} outputs, {len(output_names)} wanted")
    return {name: interpreter.get_tensor(d["index"]) for name, d in zip(output_names, outputs)}


RUN = {"tensorflow": run_tensorflow, "tflite": run_tflite, "onnx": run_onnx}
FORMS = ("export", "patched")


def main(out, targets):
    results = {}
    for name in sorted(os.listdir(out)):
        folder = os.path.join(out, name)
        with open(os.path.join(folder, "targets.txt")) as f:
            wanted = f.read().split()
        inputs, outputs = _io(folder)
        for target in targets:
            if target not in wanted:
                continue
            runs = {f"{target}/{form}": lambda form=form: RUN[target](
                os.path.join(folder, form), inputs) for form in FORMS}
            if target == "tflite":
                runs["tflite/patched.tflite"] = lambda: run_tflite_file(
                    os.path.join(folder, "patched.tflite"), inputs, sorted(outputs))
            for key, run in runs.items():
                try:
                    results.setdefault(name, {})[key] = _compare(run(), outputs, target)
                except Exception as e:  # reported, not raised: every model is tried
                    results.setdefault(name, {})[key] = f"FAILED: {type(e).__name__}: {e}"[:2000]
    assert "tf_scatter_ops" not in sys.modules, "the plugin was imported"
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
