# The CUDA core run on the CPU (docs/gpu.md, "The CUDA core on the CPU"):
# every cc/kernels/cuda/*.cu.cc and the harness (tests/cc/gpu_harness.cu)
# built by g++ as C++ (-DTFSO_HOST_CUDA) against our host stand-in for the
# CUDA runtime and CUB (tests/cc/host_cuda/, first on the include path), so
# the kernels run on host threads in a shuffled block order. The harness
# compares every result with the serial reference and with the CPU core
# (tests/cc/cpu_core_ref.cc, which needs Eigen: TensorFlow's headers).
#
#   gpu-host       under ASan and UBSan; in CI (about 34,000 cases in 20 s;
#                  with the build, under 2 minutes on 2 idle cores)
#   gpu-host-tsan  under ThreadSanitizer (not in CI)
#
# GPU_HOST_HARNESS_FLAGS: the harness's options, by default every case but
# the two full-size 64-bit ones, which write about 10 GiB (--skip-huge; empty
# runs them too, --quick fewer random cases). GPU_HOST_SEED=N repeats a
# run's block order (each run prints its seed). GPU_HOST_FLAGS: the options
# of the other drivers on these objects (mk/host_new_ops.mk).

.PHONY: gpu-host gpu-host-tsan
CI_EXTRA += gpu-host

GPU_HOST_DIR := $(BUILD)/gpu_host
GPU_HOST_HARNESS_FLAGS ?= --skip-huge
GPU_HOST_FLAGS ?= --quick
GPU_HOST_SEED ?=
GPU_HOST_SRCS := $(CU_SRCS) tests/cc/host_cuda/host_cuda.cc tests/cc/gpu_harness.cu \
  tests/cc/cpu_core_ref.cc
GPU_HOST_HDRS := $(CU_HDRS) $(CPU_CORE_HDRS) tests/cc/cases.h tests/cc/cpu_core_ref.h tests/cc/cpu_types.h \
  $(wildcard tests/cc/host_cuda/*.h tests/cc/host_cuda/cub/*.cuh tests/cc/host_cuda/cub/device/*.cuh)
# build_info.cu.cc wants nvcc's architecture list: the host build has none.
GPU_HOST_CXXFLAGS := -std=c++17 -O1 -g1 -fno-omit-frame-pointer -pthread \
  -Wall -Wextra -Wno-sign-compare -Wno-psabi \
  -DTFSO_HOST_CUDA -DTFSO_HARNESS_CPU_CORE -DCUB_WRAPPED_NAMESPACE=tfso_cub \
  -D__CUDA_ARCH_LIST__=0 -DTFSO_CUDA_PTX=0 \
  -Itests/cc/host_cuda -I$(BUILD)/include/cuda -I$(BUILD)/include/cpu -Itests/cc
GPU_HOST_SANITIZE_asan := -fsanitize=address,undefined -fno-sanitize-recover=all
GPU_HOST_SANITIZE_tsan := -fsanitize=thread
# The CPU core is the reference here, built without ASan and UBSan (four
# times faster to compile; `make sanitize` runs it under both). ThreadSanitizer
# must see every thread's memory accesses: the reference gets it too.
GPU_HOST_REF_SANITIZE_asan :=
GPU_HOST_REF_SANITIZE_tsan := -fsanitize=thread
GPU_HOST_RUN_asan := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
GPU_HOST_RUN_tsan := TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

# One object per source (so `make -j` builds them side by side), per variant.
define GPU_HOST_VARIANT
$(1)_OBJS := $$(patsubst %,$(GPU_HOST_DIR)/$(1)/%.o,$$(notdir $(GPU_HOST_SRCS)))
$(GPU_HOST_DIR)/$(1)/%.cu.cc.o: cc/kernels/cuda/%.cu.cc $(GPU_HOST_HDRS) | $(CORE_INCLUDES)
	@mkdir -p $$(@D)
	$(CXX) $(GPU_HOST_CXXFLAGS) $(GPU_HOST_SANITIZE_$(1)) -x c++ -c $$< -o $$@
$(GPU_HOST_DIR)/$(1)/host_cuda.cc.o: tests/cc/host_cuda/host_cuda.cc $(GPU_HOST_HDRS)
	@mkdir -p $$(@D)
	$(CXX) $(GPU_HOST_CXXFLAGS) $(GPU_HOST_SANITIZE_$(1)) -c $$< -o $$@
$(GPU_HOST_DIR)/$(1)/gpu_harness.cu.o: tests/cc/gpu_harness.cu $(GPU_HOST_HDRS) | $(CORE_INCLUDES)
	@mkdir -p $$(@D)
	$(CXX) $(GPU_HOST_CXXFLAGS) $(GPU_HOST_SANITIZE_$(1)) -x c++ -c $$< -o $$@
$(GPU_HOST_DIR)/$(1)/cpu_core_ref.cc.o: tests/cc/cpu_core_ref.cc $(GPU_HOST_HDRS) $(BUILD)/tf_flags.mk | $(CORE_INCLUDES)
	@mkdir -p $$(@D)
	$(CXX) $(GPU_HOST_CXXFLAGS) $(GPU_HOST_REF_SANITIZE_$(1)) -isystem $(TF_INCLUDE) -c $$< -o $$@
$(GPU_HOST_DIR)/$(1)/gpu_harness: $$($(1)_OBJS)
	$(CXX) $(GPU_HOST_SANITIZE_$(1)) -pthread $$^ -o $$@
endef
$(eval $(call GPU_HOST_VARIANT,asan))
$(eval $(call GPU_HOST_VARIANT,tsan))

gpu-host: $(GPU_HOST_DIR)/asan/gpu_harness
	$(GPU_HOST_RUN_asan) $(if $(GPU_HOST_SEED),TFSO_HOST_CUDA_SEED=$(GPU_HOST_SEED)) \
	  $< $(GPU_HOST_HARNESS_FLAGS)

gpu-host-tsan: $(GPU_HOST_DIR)/tsan/gpu_harness
	$(GPU_HOST_RUN_tsan) $(if $(GPU_HOST_SEED),TFSO_HOST_CUDA_SEED=$(GPU_HOST_SEED)) \
	  $< $(GPU_HOST_HARNESS_FLAGS)
