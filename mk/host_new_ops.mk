# tests/cc/gpu_new_ops.cu on the host build of the CUDA core (mk/gpu_host.mk:
# its objects, flags and sanitizers; this file is read after it): the GPU
# kernels of the group-wise functions, the arg reductions and the complex
# products and means, against the CPU kernels (tests/cc/new_ops_cpu_ref.cc,
# which needs Eigen: TensorFlow's headers).
#
#   gpu-host-new-ops   under ASan and UBSan, GPU_HOST_FLAGS (--quick); in CI

.PHONY: gpu-host-new-ops
CI_EXTRA += gpu-host-new-ops

NEW_OPS_DIR := $(GPU_HOST_DIR)/asan
# The CUDA core and the host runtime (not the harness's own main and reference).
NEW_OPS_OBJS := $(filter $(NEW_OPS_DIR)/%.cu.cc.o $(NEW_OPS_DIR)/host_cuda.cc.o,$(asan_OBJS)) \
  $(NEW_OPS_DIR)/gpu_new_ops.cu.o $(NEW_OPS_DIR)/new_ops_cpu_ref.cc.o
NEW_OPS_HDRS := $(GPU_HOST_HDRS) tests/cc/new_ops_cpu_ref.h

$(NEW_OPS_DIR)/gpu_new_ops.cu.o: tests/cc/gpu_new_ops.cu $(NEW_OPS_HDRS) | $(CORE_INCLUDES)
	@mkdir -p $(@D)
	$(CXX) $(GPU_HOST_CXXFLAGS) $(GPU_HOST_SANITIZE_asan) -x c++ -c $< -o $@
$(NEW_OPS_DIR)/new_ops_cpu_ref.cc.o: tests/cc/new_ops_cpu_ref.cc $(NEW_OPS_HDRS) $(BUILD)/tf_flags.mk | $(CORE_INCLUDES)
	@mkdir -p $(@D)
	$(CXX) $(GPU_HOST_CXXFLAGS) $(GPU_HOST_SANITIZE_asan) -isystem $(TF_INCLUDE) -c $< -o $@
$(NEW_OPS_DIR)/gpu_new_ops: $(NEW_OPS_OBJS)
	$(CXX) $(GPU_HOST_SANITIZE_asan) -pthread $^ -o $@

gpu-host-new-ops: $(NEW_OPS_DIR)/gpu_new_ops
	$(GPU_HOST_RUN_asan) $(if $(GPU_HOST_SEED),TFSO_HOST_CUDA_SEED=$(GPU_HOST_SEED)) \
	  $< $(GPU_HOST_FLAGS)
