# Ecosystem CI steps (issue 5), run by `make test` after pytest and `make bazel`:
#  ci-pip-wheel  A fresh venv under build/ gets the TensorFlow version of .venv (a
#                local install from pip's cache). Its pip runs `pip wheel .` on
#                the clone: build isolation hides that TensorFlow from the build,
#                setup.py finds it anyway and compiles the .so against it (the
#                object flags must name the venv). Both wheels (pip's and
#                build_pip_pkg.sh's from `make bazel`) must pin that TensorFlow and
#                hold no libtensorflow_framework; each is installed in turn into the
#                venv and the smoke test runs outside the source tree.
#                Then `pip install .` into the same venv, smoke-tested likewise.
#  ci-bazel-test `bazel test //tests:all`: smoke + quick pytest files against the
#                bazel-built .so.

WHEEL_VENV := $(BUILD)/wheel-venv
SMOKE := $(abspath tests/smoke_check.py)

.PHONY: ci-pip-wheel ci-bazel-test
CI_EXTRA += ci-pip-wheel ci-bazel-test

ci-pip-wheel: $(VENV)/.installed
	rm -rf $(BUILD)/pipwheel $(WHEEL_VENV)
	set -euo pipefail; \
	tfv=$$(TF_CPP_MIN_LOG_LEVEL=3 $(PY) -c 'import tensorflow as tf; print(tf.__version__)' 2>/dev/null); \
	python3 -m venv $(WHEEL_VENV); \
	$(WHEEL_VENV)/bin/pip install -q "tensorflow==$$tfv"; \
	$(WHEEL_VENV)/bin/pip wheel --no-deps -q -w $(BUILD)/pipwheel .; \
	grep -l "$(abspath $(WHEEL_VENV))/lib" $(BUILD)/pip-objs/*/flags.json; \
	wheels="$$(ls $(BUILD)/pipwheel/*.whl) $$(ls $(BUILD)/wheel/*.whl 2>/dev/null || true)"; \
	$(PY) tests/wheel_check.py "$$tfv" $$wheels; \
	smoke=$$(mktemp -d); \
	for w in $$wheels; do \
	  $(WHEEL_VENV)/bin/pip install -q --force-reinstall --no-deps $$w; \
	  $(WHEEL_VENV)/bin/pip check; \
	  (cd $$smoke && TF_CPP_MIN_LOG_LEVEL=3 $(abspath $(WHEEL_VENV))/bin/python $(SMOKE) --installed 2>&1 | tail -1); \
	done; \
	$(WHEEL_VENV)/bin/pip install -q --force-reinstall --no-deps .; \
	(cd $$smoke && TF_CPP_MIN_LOG_LEVEL=3 $(abspath $(WHEEL_VENV))/bin/python $(SMOKE) --installed 2>&1 | tail -1); \
	rm -rf $$smoke

ci-bazel-test: $(VENV)/.installed
	tools/install_bazel.sh
	PYTHON_BIN_PATH=$(abspath $(PY)) bazel test --test_env=PYTHON_BIN_PATH //tests:all
