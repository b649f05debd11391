#!/usr/bin/env bash
# Turns the bazel build into a wheel: build_pip_pkg.sh [OUTPUT_DIR]
# Run `bazel build //...` first. The wheel holds bazel-bin/_tf_scatter_ops.so
# (never libtensorflow_framework.so.2) and pins the TensorFlow it was built for.
set -euo pipefail
cd "$(dirname "$0")"
out=$(realpath -m "${1:-dist}")
python=${PYTHON_BIN_PATH:-.venv/bin/python}
[ -f bazel-bin/_tf_scatter_ops.so ] || { echo "run 'bazel build //...' first" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -r setup.py pyproject.toml README.md "$stage"/
for folder in tf_scatter_ops tf_scatter_ops/_base tf_scatter_ops/_dispatch tf_scatter_ops/export tf_scatter_ops/keras; do
  mkdir -p "$stage/$folder"
  cp "$folder"/*.py "$stage/$folder/"
done
cp bazel-bin/_tf_scatter_ops.so "$stage/tf_scatter_ops/"
chmod u+w "$stage/tf_scatter_ops/_tf_scatter_ops.so"
mkdir -p "$out"
# setup.py packages this library as is (no compile), pinned to its stamp
TF_SCATTER_OPS_PREBUILT="$stage/tf_scatter_ops/_tf_scatter_ops.so" \
  "$python" -m pip wheel --no-deps --no-build-isolation -q -w "$out" "$stage"
ls "$out"/*.whl
