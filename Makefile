# tf-scatter-ops: `make demo` and `make test` work from a fresh clone.
# Everything is installed into .venv/ from requirements.txt; the .so is built
# with g++ and the compile/link flags of the TensorFlow installed there.

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
BUILD := build
SO := tf_scatter_ops/_tf_scatter_ops.so
JOBS ?= $(shell nproc)

KERNEL_SRCS := $(wildcard cc/kernels/*.cc)
OP_SRCS := $(wildcard cc/ops/*.cc)
SRCS := $(KERNEL_SRCS) $(OP_SRCS)
OBJS := $(patsubst cc/%.cc,$(BUILD)/%.o,$(SRCS))
HDRS := $(wildcard cc/kernels/*.h)

.PHONY: all install demo test test-python bench bazel clean
all: $(SO)

# Extra CI steps live in mk/*.mk: each file adds its target to CI_EXTRA,
# which `make test` runs after pytest and the bazel build.
CI_EXTRA :=

install: $(VENV)/.installed
$(VENV)/.installed: requirements.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $@

# Compile and link flags straight from tf.sysconfig (ABI flag, C++ standard,
# include and library folders): never hard-coded.
$(BUILD)/tf_flags.mk: $(VENV)/.installed tools/tf_flags.py
	mkdir -p $(BUILD)
	$(PY) tools/tf_flags.py > $@
-include $(BUILD)/tf_flags.mk

CXXFLAGS := -O3 -fPIC -Wall -Wno-sign-compare -Wno-deprecated-declarations -Wno-interference-size -fvisibility=hidden $(TF_CFLAGS) -DTFSO_TF_VERSION=$(TF_VERSION)
LDFLAGS := -shared $(TF_LFLAGS) -Wl,-rpath,'$$ORIGIN/../tensorflow' -Wl,-O1

$(BUILD)/%.o: cc/%.cc $(HDRS) $(BUILD)/tf_flags.mk
	mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(SO): $(OBJS)
	$(CXX) -o $@ $(OBJS) $(LDFLAGS)

demo: $(VENV)/.installed
	$(MAKE) -j$(JOBS) $(SO)
	TF_CPP_MIN_LOG_LEVEL=3 $(PY) -m tf_scatter_ops.demo
	TF_CPP_MIN_LOG_LEVEL=3 $(PY) -m tf_scatter_ops.bench --quick --only W1,W3,W5,W7,W8

test: $(VENV)/.installed
	$(MAKE) -j$(JOBS) $(SO)
	$(PY) -m pytest -q tests
	$(MAKE) bazel
	$(if $(strip $(CI_EXTRA)),$(MAKE) $(CI_EXTRA))

bench: $(VENV)/.installed
	$(MAKE) -j$(JOBS) $(SO)
	TF_CPP_MIN_LOG_LEVEL=3 $(PY) -m tf_scatter_ops.bench

test-python: $(VENV)/.installed
	$(MAKE) -j$(JOBS) $(SO)
	$(PY) -m pytest -q tests -m "not slow"

# The same .so through bazel (Debian's bazel 4, offline), then a wheel.
bazel: $(VENV)/.installed
	tools/install_bazel.sh
	PYTHON_BIN_PATH=$(abspath $(PY)) bazel build //...
	PYTHON_BIN_PATH=$(abspath $(PY)) ./build_pip_pkg.sh $(BUILD)/wheel
	unzip -l $(BUILD)/wheel/*.whl | grep -q _tf_scatter_ops.so
	! unzip -l $(BUILD)/wheel/*.whl | grep -q libtensorflow_framework

clean:
	rm -rf $(BUILD) $(SO) bazel-*

include $(wildcard mk/*.mk)
