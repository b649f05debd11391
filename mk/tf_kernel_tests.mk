# TensorFlow's own kernel tests for the segment family and the embedding
# lookups, run stock and against the plugin (tools/tf_kernel_tests.py):
#
#   make tf-kernel-tests TF_TESTS="tf/python/kernel_tests/math_ops/segment_reduction_ops_test.py \
#                                  tf/python/kernel_tests/nn_ops/embedding_ops_test.py"
#
# TF_TESTS are files of TensorFlow's repository, fetched by whoever runs this;
# they are never part of this one, so this is not a CI step (not in CI_EXTRA).
# TF_KERNEL_TESTS_FLAGS passes options on (--test ID, --stock-only, --out DIR).

.PHONY: tf-kernel-tests
TF_TESTS ?=
TF_KERNEL_TESTS_FLAGS ?=

tf-kernel-tests: $(VENV)/.installed $(SO)
	@test -n "$(TF_TESTS)" || { echo 'usage: make tf-kernel-tests TF_TESTS="PATH/segment_reduction_ops_test.py PATH/embedding_ops_test.py"'; exit 2; }
	$(PY) tools/tf_kernel_tests.py $(TF_KERNEL_TESTS_FLAGS) $(TF_TESTS)
