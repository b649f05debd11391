# The export's ONNX target (tools/onnx_check.sh), run by `make test` after
# pytest: the exported models converted by tf2onnx and run by onnxruntime in
# a venv of their own. (Stock TensorFlow and TFLite are checked by pytest:
# tests/test_export.py.)
.PHONY: ci-onnx
CI_EXTRA += ci-onnx

ci-onnx: $(VENV)/.installed
	tools/onnx_check.sh
