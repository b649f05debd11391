#!/usr/bin/env bash
# Builds and tests the plugin against one TensorFlow, the way a user would:
#
#   tools/tf_version_check.sh VERSION [DISTRIBUTION]    (default: tensorflow)
#
# A fresh venv under build/ gets DISTRIBUTION==VERSION (e.g. tensorflow-cpu
# 2.17.1) and pytest; then `pip install .` builds the library against it and
# must install nothing but tf-scatter-ops (no second TensorFlow); then the
# quick test files run from a copy of tests/ outside the source tree, against
# the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$1
dist=${2:-tensorflow}
venv=build/tf-versions/$dist-$version
python=$(realpath -m "$venv")/bin/python
QUICK_TESTS=${QUICK_TESTS:-"test_errors.py test_fidelity.py test_gradients.py test_patch.py test_tf_function.py test_variables.py test_xla.py test_tf_parity.py"}
start=$(date +%s)

rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q "$dist==$version" pytest
before=$("$venv/bin/pip" list --format=freeze | sort)
"$venv/bin/pip" install -q .
after=$("$venv/bin/pip" list --format=freeze | grep -v '^tf[-_]scatter[-_]ops==' | sort)
if [ "$before" != "$after" ]; then
  echo "pip install . changed other packages next to $dist $version:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
"$venv/bin/pip" check

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r tests "$tmp/"
printf '[pytest]\npythonpath = tests tests/helpers\nmarkers =\n    slow: large or long tests\n    gpu: needs a GPU\n' > "$tmp/pytest.ini"
files=$(for f in $QUICK_TESTS; do echo "tests/$f"; done)
# Every failure's line, not only the last ones: CI's log keeps the tail.
(cd "$tmp" && TF_CPP_MIN_LOG_LEVEL=3 "$python" -m pytest -q -rfE -p no:cacheprovider $files 2>&1 \
  | grep -E '^(FAILED|ERROR) |[0-9]+ (passed|failed)')
installed=$(cd "$tmp" && TF_CPP_MIN_LOG_LEVEL=3 "$python" -c \
  'import tf_scatter_ops as t, tensorflow as tf; print(tf.__version__, t._base.library.loaded_path(), "gpu" if t.built_with_gpu() else "cpu")' 2>/dev/null | tail -1)
echo "$dist $version: built, installed alone and tested in $(( $(date +%s) - start )) s ($installed)"
