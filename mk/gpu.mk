# The CUDA core's standalone harness (tests/cc/gpu_harness.cu). CI has nvcc but
# no GPU: it compiles and links the harness against the objects of the .so;
# tools/gpu_check.sh builds and runs it on a GPU machine.
.PHONY: gpu-harness
ifeq ($(TFSO_GPU),1)
CI_EXTRA += gpu-harness
endif

gpu-harness: $(BUILD)/gpu_harness
# Its own code for one architecture only: this build is a compile and link
# check (gpu_check.sh builds everything for the GPU it runs on).
HARNESS_NVCCFLAGS := $(shell cat tools/nvcc_flags) -gencode arch=compute_75,code=sm_75
$(BUILD)/gpu_harness: tests/cc/gpu_harness.cu tests/cc/cases.h $(CU_OBJS) $(CU_HDRS)
	$(NVCC) $(HARNESS_NVCCFLAGS) -I$(BUILD)/include/cuda -x cu -c tests/cc/gpu_harness.cu -o $(BUILD)/gpu_harness.o
	$(NVCC) $(NVCCFLAGS) $(BUILD)/gpu_harness.o $(CU_OBJS) -o $@
	@echo "built $@ (run it on a GPU machine with tools/gpu_check.sh)"
