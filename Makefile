# tf-scatter-ops: `make demo` and `make test` work from a fresh clone.
# Everything is installed into .venv/ from requirements.txt; the .so is built
# with g++ and the compile/link flags of the TensorFlow installed there.

SHELL := /bin/bash
VENV := .venv
PY ?= $(VENV)/bin/python
BUILD ?= build
SO ?= tf_scatter_ops/_tf_scatter_ops.so
JOBS ?= $(shell nproc)
# What the TensorFlow flags need first: the venv's install. setup.py builds
# `library` with another interpreter (PY=...) and clears this.
TF_FLAGS_DEPS ?= $(VENV)/.installed

# Sources (docs/architecture.md): the op layer in cc/ops/; under cc/kernels/
# the TensorFlow-free cores (common/, cpu/, cuda/), the TensorFlow kernel
# glue (tf/), the XLA glue (xla/), what the library says about itself and
# the GPU gate (library/), and the per-row registration units (register/).
# Layer headers are included from cc/ ("ops/...") or cc/kernels/ ("tf/...").
KERNEL_SRCS := $(filter-out %.cu.cc,$(wildcard cc/kernels/*/*.cc))
OP_SRCS := $(wildcard cc/ops/*.cc)
SRCS := $(KERNEL_SRCS) $(OP_SRCS)
HDRS := $(wildcard cc/ops/*.h cc/kernels/*/*.h)
CPU_CORE_HDRS := $(wildcard cc/kernels/common/*.h cc/kernels/cpu/*.h)

# The cores compile against include folders that hold only their own
# folders (links to cc/kernels/common and cpu, or common and cuda), so a core
# that includes the glue or TensorFlow does not build.
CORE_INCLUDES := $(BUILD)/include/cpu/.made $(BUILD)/include/cuda/.made
$(CORE_INCLUDES): $(BUILD)/include/%/.made:
	mkdir -p $(@D)
	for d in common $*; do ln -sfn $(abspath cc/kernels)/$$d $(@D)/$$d; done
	touch $@

# GPU kernels: built into the same .so whenever nvcc is found (TFSO_GPU=0
# turns them off). The CUDA sources include no TensorFlow header; cudart is
# linked statically so the .so still loads into CPU-only TensorFlow.
NVCC ?= $(shell command -v nvcc 2>/dev/null)
TFSO_GPU ?= $(if $(NVCC),1,0)
CUDA_HOME ?= $(realpath $(shell $(NVCC) --dryrun -c -x cu /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$$ TOP=//p'))
CU_SRCS := $(wildcard cc/kernels/cuda/*.cu.cc)
CU_HDRS := $(wildcard cc/kernels/common/*.h cc/kernels/cuda/*.h cc/kernels/cuda/*.cuh)
# nvcc's flags, shared with bazel (third_party/tf/tf_configure.bzl), and the
# architectures: every one from sm_75 that this nvcc can target, or
# $TFSO_CUDA_ARCHS (tools/cuda_archs.sh). The CUDA objects include no
# TensorFlow header, so they are kept by nvcc command, not by BUILD: pip's
# build (setup.py, BUILD=build/pip/...) reuses make's, and a change of the
# architectures builds a set of its own.
NVCCFLAGS := $(shell cat tools/nvcc_flags)
ifeq ($(TFSO_GPU),1)
CUDA_ARCH_FLAGS := $(shell tools/cuda_archs.sh $(NVCC) || echo FAILED)
ifneq ($(filter FAILED,$(CUDA_ARCH_FLAGS)),)
$(error tools/cuda_archs.sh failed (see above))
endif
NVCCFLAGS += $(CUDA_ARCH_FLAGS)
CU_BUILD := build/cuda/$(shell echo '$(NVCC) $(NVCCFLAGS)' | sha1sum | cut -c1-12)
CU_OBJS := $(patsubst cc/%.cu.cc,$(CU_BUILD)/%.cu.o,$(CU_SRCS))
GPU_CXXFLAGS := -DTFSO_WITH_CUDA=1
# The static runtime is linked before TensorFlow's libraries and kept out of
# the library's exports: libtensorflow_framework.so.2 also defines the CUDA
# runtime's symbols (a stub of TensorFlow's own runtime), and a linker that
# meets it first binds our calls there (tests/helpers/library_link.py).
GPU_LDFLAGS := -L$(CUDA_HOME)/lib64 -l:libcudart_static.a -Wl,--exclude-libs,libcudart_static.a -lpthread -lrt
endif

.PHONY: all library install demo test test-python bench bazel clean
# (the files mk/*.mk and the include-folder rules come before this line)
.DEFAULT_GOAL := all
all: $(SO)
# The library alone, with whichever TensorFlow PY imports (setup.py).
library: $(SO)

# Extra CI steps live in mk/*.mk: each file adds its target to CI_EXTRA,
# which `make test` runs after pytest and the bazel build.
CI_EXTRA :=

install: $(VENV)/.installed
$(VENV)/.installed: requirements.txt tools/install_xla_headers.sh
	tools/install_xla_headers.sh
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $@

# Compile and link flags straight from tf.sysconfig (ABI flag, C++ standard,
# include and library folders): never hard-coded.
$(BUILD)/tf_flags.mk: $(TF_FLAGS_DEPS) tools/tf_flags.py
	mkdir -p $(BUILD)
	$(PY) tools/tf_flags.py > $@
-include $(BUILD)/tf_flags.mk

# TensorFlow's (and XLA's) headers are system headers: their own warnings
# are not ours to print. -Wno-psabi: g++'s note that passing std::complex by
# value changed ABI in GCC 10, about the complex instantiations of the core
# (they never cross an ABI boundary).
CXXFLAGS := -O3 -fPIC -Wall -Wno-sign-compare -Wno-deprecated-declarations -Wno-interference-size -Wno-psabi -fvisibility=hidden -Icc -Icc/kernels $(patsubst -I%,-isystem %,$(TF_CFLAGS)) -DTFSO_TF_VERSION=$(TF_VERSION) $(GPU_CXXFLAGS)
LDFLAGS := -shared $(GPU_LDFLAGS) $(TF_LFLAGS) -Wl,-rpath,'$$ORIGIN/../tensorflow' -Wl,-O1 -ldl

# The C++ objects are kept by compile command too (build/obj/<hash>), with
# the TensorFlow install's include folder replaced by what identifies its
# headers (TF_HEADERS: the version and a digest of the folder's file list,
# tools/tf_flags.py): pip's build against another venv that holds the same
# TensorFlow reuses make's objects; another TensorFlow, compiler or flag
# (the GPU kernels on or off) builds a set of its own.
OBJ_BUILD := build/obj/$(shell echo '$(CXX) $(subst $(TF_INCLUDE),$(TF_HEADERS),$(CXXFLAGS))' | sha1sum | cut -c1-12)
OBJS := $(patsubst cc/%.cc,$(OBJ_BUILD)/%.o,$(SRCS)) $(CU_OBJS)

$(OBJ_BUILD)/%.o: cc/%.cc $(HDRS)
	mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(CU_BUILD)/%.cu.o: cc/%.cu.cc $(CU_HDRS) | $(BUILD)/include/cuda/.made
	mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -I$(BUILD)/include/cuda -x cu -c $< -o $@

# The list of objects: a source added or removed relinks the library.
$(shell mkdir -p $(BUILD) && echo '$(OBJS)' | cmp -s - $(BUILD)/objects || echo '$(OBJS)' > $(BUILD)/objects)
$(SO): $(OBJS) $(BUILD)/objects
	mkdir -p $(dir $@)
	$(CXX) -o $@ $(OBJS) $(LDFLAGS)

# The demo builds what this machine can run: without a GPU driver, the
# library without the GPU kernels (minutes less of nvcc). Its objects are
# kept apart from the full build's (by flags), so `make test` only adds the
# CUDA objects and relinks.
HAS_GPU_DRIVER := $(if $(wildcard /proc/driver/nvidia/version),1,0)
DEMO_GPU := $(if $(filter 1,$(HAS_GPU_DRIVER)),$(TFSO_GPU),0)
demo: $(VENV)/.installed
	$(MAKE) -j$(JOBS) $(SO) TFSO_GPU=$(DEMO_GPU)
	TF_CPP_MIN_LOG_LEVEL=3 $(PY) -m examples.demo
	TF_CPP_MIN_LOG_LEVEL=3 $(PY) -m benchmarks.bench --quick --only W1,W3,W5,W7,W8,T2,T5,T6,S1,S4,P1,P2,P3,P4,P5,P6,P7
	TF_CPP_MIN_LOG_LEVEL=3 $(PY) -m benchmarks.bench --sweep --quick --out $(BUILD)/bench/sweep

# pytest runs one worker per core, a test file to a worker (module fixtures
# are built once); the CI steps after bazel's build run side by side, each
# step's output printed whole when it ends. Several of them are one long
# serial job (the sanitizer build of the core, a child venv's installs).
PYTEST_WORKERS := -n $(JOBS) --dist loadfile
test: $(VENV)/.installed
	$(MAKE) -j$(JOBS) $(SO)
	$(PY) -m pytest -q $(PYTEST_WORKERS) tests
	$(MAKE) bazel
	$(if $(strip $(CI_EXTRA)),$(MAKE) -j$(JOBS) --output-sync=target $(CI_EXTRA))

# The full benchmark under both of TensorFlow's CPU allocators, the size
# sweep, the quick table under every ISA this CPU has, graph networks'
# training steps (benchmarks/gnn.py, with PyTorch's aggregation from
# build/torch-venv where tools/torch_venv.sh can install it) and the client libraries'
# (benchmarks/clients.py, in build/clients-venv).
bench: $(VENV)/.installed
	$(MAKE) -j$(JOBS) $(SO)
	TF_CPP_MIN_LOG_LEVEL=3 $(PY) -m benchmarks.bench --out $(BUILD)/bench/default
	TF_CPU_ALLOCATOR_USE_BFC=true TF_CPP_MIN_LOG_LEVEL=3 $(PY) -m benchmarks.bench --out $(BUILD)/bench/bfc
	TF_CPP_MIN_LOG_LEVEL=3 $(PY) -m benchmarks.bench --sweep --out $(BUILD)/bench/sweep
	set -e; for isa in $$(TF_CPP_MIN_LOG_LEVEL=3 $(PY) -c 'import tf_scatter_ops as t; i = ["portable", "avx2", "avx512"]; print(*i[:i.index(t.cpu_isa()) + 1])' 2>/dev/null); do \
	  TF_CPP_MIN_LOG_LEVEL=3 $(PY) -m benchmarks.bench --quick --isa $$isa --only W1,W3,W5,W7 --out $(BUILD)/bench/$$isa; done
	tools/torch_venv.sh
	TF_CPP_MIN_LOG_LEVEL=3 $(PY) -m benchmarks.gnn --out $(BUILD)/bench/gnn
	tools/client_venv.sh
	build/clients-venv/bin/python -m benchmarks.clients --out $(BUILD)/bench/clients

test-python: $(VENV)/.installed
	$(MAKE) -j$(JOBS) $(SO)
	$(PY) -m pytest -q $(PYTEST_WORKERS) tests -m "not slow"

# The same .so through bazel (Debian's bazel 4, offline), with the GPU
# kernels when nvcc is found (as here), then a wheel.
BAZEL_CONFIG := $(if $(filter 1,$(TFSO_GPU)),--config=cuda)
bazel: $(VENV)/.installed
	tools/install_bazel.sh
	PYTHON_BIN_PATH=$(abspath $(PY)) bazel build $(BAZEL_CONFIG) //...
	PYTHON_BIN_PATH=$(abspath $(PY)) ./build_pip_pkg.sh $(BUILD)/wheel
	unzip -l $(BUILD)/wheel/*.whl | grep -q _tf_scatter_ops.so
	! unzip -l $(BUILD)/wheel/*.whl | grep -q libtensorflow_framework

clean:
	rm -rf $(BUILD) $(SO) bazel-*

include $(wildcard mk/*.mk)
