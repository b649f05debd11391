# Ecosystem CI steps, run by `make test` after pytest and `make bazel`:
#  ci-pip-wheel  A fresh venv under build/ gets the TensorFlow version of .venv (a
#                local install from pip's cache). Its pip runs `pip wheel .` on
#                the clone: build isolation hides that TensorFlow from the build,
#                setup.py finds it anyway and compiles the .so against it with
#                `make library` (the flags must name the venv; with nvcc, both
#                wheels must carry the GPU kernels). Both wheels (pip's and
#                build_pip_pkg.sh's from `make bazel`) must pin that TensorFlow and
#                hold no libtensorflow_framework; each is installed in turn into the
#                venv and the smoke test runs outside the source tree.
#                Then `pip install .` into the same venv, smoke-tested likewise.
#  ci-bazel-test `bazel test //tests:all`: smoke + quick pytest files against the
#                bazel-built .so.
#  ci-tf-oldest  The oldest TensorFlow we support, as tensorflow-cpu: `pip install .`
#                next to it installs nothing else, and the quick tests pass
#                against the installed package (tools/tf_version_check.sh).
#                `make tf-versions` (not in CI) does the same for every version.

WHEEL_VENV := $(BUILD)/wheel-venv
SMOKE := $(abspath tests/helpers/smoke_check.py)

.PHONY: ci-pip-wheel ci-bazel-test ci-tf-oldest tf-versions
CI_EXTRA += ci-pip-wheel ci-bazel-test ci-tf-oldest
TF_OLDEST := 2.17.1
TF_VERSIONS := 2.17.1 2.18.1 2.19.1 2.20.0 2.21.0

ci-pip-wheel: $(VENV)/.installed
	rm -rf $(BUILD)/pipwheel $(WHEEL_VENV)
	set -euo pipefail; \
	tfv=$$(TF_CPP_MIN_LOG_LEVEL=3 $(PY) -c 'import tensorflow as tf; print(tf.__version__)' 2>/dev/null); \
	python3 -m venv $(WHEEL_VENV); \
	$(WHEEL_VENV)/bin/pip install -q "tensorflow==$$tfv"; \
	$(WHEEL_VENV)/bin/pip wheel --no-deps -q -w $(BUILD)/pipwheel .; \
	grep -l "$(abspath $(WHEEL_VENV))/lib" $(BUILD)/pip/*/tf_flags.mk; \
	wheels="$$(ls $(BUILD)/pipwheel/*.whl) $$(ls $(BUILD)/wheel/*.whl 2>/dev/null || true)"; \
	$(PY) tests/helpers/wheel_check.py "$$tfv" $(if $(filter 1,$(TFSO_GPU)),--gpu) $$wheels; \
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
	PYTHON_BIN_PATH=$(abspath $(PY)) bazel test $(BAZEL_CONFIG) --test_env=PYTHON_BIN_PATH //tests:all

# A variant build: its GPU code for one architecture (the default builds,
# make's, pip's and bazel's, are checked for the full list).
ci-tf-oldest:
	TFSO_CUDA_ARCHS=75 tools/tf_version_check.sh $(TF_OLDEST) tensorflow-cpu

tf-versions:
	set -e; for v in $(TF_VERSIONS); do tools/tf_version_check.sh $$v tensorflow; done
