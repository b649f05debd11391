# A real client's suite, run by `make test` through CI_EXTRA: Keras's own ops
# tests (core, numpy, math and nn, shipped in its wheel), with the TensorFlow
# backend, once on stock TensorFlow and once under patch_tensorflow(), as two
# processes at once. Only the tests that call a patched name run: the ones
# tests/keras_suite/selection.txt lists, which `make keras-suite-record`
# finds by running the files whole with a recorder on every patched name
# (tools/keras_suite.py). Every test that passes stock must pass patched.
# Logs and results go to build/keras_suite/.

.PHONY: ci-keras-suite keras-suite-record
CI_EXTRA += ci-keras-suite
KERAS_SUITE_OUT := $(BUILD)/keras_suite

ci-keras-suite: $(VENV)/.installed $(SO)
	$(PY) tools/keras_suite.py check --out $(KERAS_SUITE_OUT)

keras-suite-record: $(VENV)/.installed $(SO)
	$(PY) tools/keras_suite.py record --out $(KERAS_SUITE_OUT)
