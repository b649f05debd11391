#!/usr/bin/env bash
# The export's ONNX target, checked the way a user would: the models of
# tests/helpers/export_models.py, saved with the plugin and rewritten by
# `python -m tf_scatter_ops.export`, converted by tf2onnx and run by
# onnxruntime in a venv of their own (build/onnx-venv: the TensorFlow of
# .venv, tf2onnx, onnxruntime), so the converters pin nothing in .venv; the
# same models saved under patch_tensorflow() (tf.saved_model.save writes
# TensorFlow's ops then) likewise; and tf2onnx.convert.from_function on a
# function traced under the patch (tests/helpers/onnx_patched.py).
# Prints {model: {"onnx/FORM": result}} and fails if a model fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv=$root/build/onnx-venv
tfv=$(TF_CPP_MIN_LOG_LEVEL=3 .venv/bin/python -c 'import tensorflow as tf; print(tf.__version__)' 2>/dev/null)
want="tensorflow==$tfv tf2onnx==1.17.0 onnx==1.23.2 onnxruntime==1.32.0"
if [ "$(cat "$venv/.installed" 2>/dev/null)" != "$want" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q $want
  echo "$want" > "$venv/.installed"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
PYTHONPATH=$root:$root/tests/helpers TF_CPP_MIN_LOG_LEVEL=3 .venv/bin/python tests/helpers/export_models.py "$out/models" 2>/dev/null
result=$(cd "$out" && TF_CPP_MIN_LOG_LEVEL=3 "$venv/bin/python" "$root/tests/helpers/export_check.py" "$out/models" onnx 2>"$out/stderr" | tail -1) || {
  tail -20 "$out/stderr" >&2; exit 1; }
echo "ONNX (tf2onnx 1.17.0, opset 18, onnxruntime 1.32.0): $result"
# tf2onnx on a function traced under the patch, in a process with the plugin
# (the venv's TensorFlow is .venv's version, so the library loads there)
patched=$(cd "$out" && PYTHONPATH=$root TF_CPP_MIN_LOG_LEVEL=3 "$venv/bin/python" \
  "$root/tests/helpers/onnx_patched.py" 2>"$out/stderr_patched" | tail -1) || {
  tail -20 "$out/stderr_patched" >&2; echo "tf2onnx.convert.from_function under the patch failed" >&2; exit 1; }
echo "ONNX from a function traced under the patch (tf2onnx.convert.from_function): $patched"
python3 -c '
import json, sys
r = json.loads(sys.argv[1])
bad = [m for m, t in r.items() if any(v.startswith("FAILED") for v in t.values())]
sys.exit(f"ONNX export failed for {bad}" if bad or not r else 0)' "$result"
