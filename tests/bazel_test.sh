#!/usr/bin/env bash
# bazel test //tests:smoke and //tests:pytest_quick: checks against the
# bazel-built library (never the Makefile's copy next to the sources):
#   bazel_test.sh LIBRARY smoke|pytest [pytest args...]
# Python: $PYTHON_BIN_PATH (pass it with --test_env=PYTHON_BIN_PATH), else the
# .venv of the workspace these runfiles point into.
set -euo pipefail
library=$(readlink -f "$1")
mode=$2
shift 2
python="${PYTHON_BIN_PATH:-}"
if [ -z "$python" ]; then
  root=$(dirname "$(dirname "$(dirname "$(readlink -f tests/helpers/smoke_check.py)")")")
  python="$root/.venv/bin/python"
fi
export TF_CPP_MIN_LOG_LEVEL=3 TF_SCATTER_OPS_LIBRARY="$library"
export PYTHONPATH="$PWD:$PWD/tests:$PWD/tests/helpers${PYTHONPATH:+:$PYTHONPATH}"
export HOME="${TEST_TMPDIR:-/tmp}"
case "$mode" in
  smoke) exec "$python" tests/helpers/smoke_check.py --library "$library" ;;
  pytest) exec "$python" -m pytest -q -p no:cacheprovider "$@" ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
