# Real clients' suites, run by `make test` through CI_EXTRA: the tests that
# Keras, TF-GNN and TensorFlow Recommenders ship in their wheels, under
# patch_tensorflow() as two processes at once, then the tests that did not
# pass patched again, stock and patched (tools/client_suites.py). Only the tests that call a patched name run:
# the ones tests/client_suites/<suite>.txt lists, which `make
# client-suites-record` finds by running the files whole with a recorder on
# every patched name. Every test that passes stock must pass patched. TF-GNN
# and TFRS run in build/clients-venv (tools/client_venv.sh). Logs and results
# go to build/client_suites/.

.PHONY: ci-client-suites client-suites-record
CI_EXTRA += ci-client-suites
CLIENT_SUITES_OUT := $(BUILD)/client_suites

ci-client-suites: $(VENV)/.installed $(SO)
	$(PY) tools/client_suites.py check --out $(CLIENT_SUITES_OUT)

client-suites-record: $(VENV)/.installed $(SO)
	$(PY) tools/client_suites.py record --out $(CLIENT_SUITES_OUT)
