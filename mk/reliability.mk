# Reliability: the sanitizer build of the TensorFlow-free kernel core,
# run by `make test` through CI_EXTRA, and the long fuzzing profile (`make fuzz`,
# not part of CI). The CI fuzz profile, the bad-input matrix, huge tensors,
# concurrency and memory tests are ordinary pytest files under tests/.

.PHONY: sanitize fuzz
# First in the list: the longest serial step (one translation unit under
# both sanitizers, then its run) starts first under `make -j`, beside the rest.
CI_EXTRA := sanitize $(CI_EXTRA)

SANITIZE_DIR := $(BUILD)/sanitize
SANITIZE_BIN := $(SANITIZE_DIR)/core_test
# Random cases the driver runs (plus its fixed and large cases); seed fixed.
SANITIZE_CASES ?= 3000
SANITIZE_SEED ?= 12345
SANITIZE_FLAGS := -std=c++17 -O1 -g -fno-omit-frame-pointer \
  -fsanitize=address,undefined -fno-sanitize-recover=all \
  -Wall -Wextra -Wno-sign-compare -Wno-psabi -pthread

# Only the CPU core's folders (common, cpu) on the include path: no
# TensorFlow is needed to build or run it.
$(SANITIZE_BIN): tests/cc/core_test.cc tests/cc/cases.h tests/cc/thread_pool.h $(CPU_CORE_HDRS) | $(BUILD)/include/cpu/.made
	mkdir -p $(SANITIZE_DIR)
	$(CXX) $(SANITIZE_FLAGS) -I$(BUILD)/include/cpu $< -o $@

sanitize: $(SANITIZE_BIN)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  $(SANITIZE_BIN) $(SANITIZE_CASES) $(SANITIZE_SEED)

# The long differential fuzzing profile: FUZZ_EXAMPLES cases over every row
# of the op table (100,000: about 20 minutes on 2 cores), a random seed that
# the run prints (FUZZ_SEED= repeats a run); the per-op report and the failing
# specs go to build/fuzz/.
FUZZ_EXAMPLES ?= 100000
FUZZ_SEED ?=
fuzz: $(VENV)/.installed
	$(MAKE) -j$(JOBS) $(SO)
	TF_CPP_MIN_LOG_LEVEL=3 TFSO_FUZZ_PROFILE=long TFSO_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) \
	  $(if $(FUZZ_SEED),TFSO_FUZZ_SEED=$(FUZZ_SEED)) \
	  $(PY) -m pytest -q -s -p no:cacheprovider tests/test_fuzz.py

# Nanoseconds per index row of the lineariser under each ISA (not in CI).
# The CPU core's thread scaling (benchmarks/cpu_scaling.cc): W1, W3, W5, W7 at
# CPU_SCALING_THREADS threads on production's scheduler. CI runs it small,
# for its check that every thread count gives the same bits;
# tools/gpu_check.sh runs it full size on the lent 16-core machine.
.PHONY: cpu-scaling ci-cpu-scaling
CI_EXTRA += ci-cpu-scaling
CPU_SCALING_THREADS ?= 1,2,4,8,16
CPU_SCALING := $(BUILD)/cpu_scaling
$(CPU_SCALING): benchmarks/cpu_scaling.cc tests/cc/thread_pool.h $(CPU_CORE_HDRS) | $(BUILD)/include/cpu/.made
	$(CXX) -O3 -std=c++17 -pthread -Wall -Wno-sign-compare -Wno-psabi -I$(BUILD)/include/cpu -Itests/cc $< -o $@
cpu-scaling: $(CPU_SCALING)
	$(CPU_SCALING) --threads $(CPU_SCALING_THREADS)
ci-cpu-scaling: $(CPU_SCALING)
	$(CPU_SCALING) --threads 1,2,3 --scale 0.1 --reps 2

.PHONY: linearize-bench
linearize-bench: | $(BUILD)/include/cpu/.made
	$(CXX) -O3 -std=c++17 -pthread -I$(BUILD)/include/cpu benchmarks/linearize_bench.cc -o $(BUILD)/linearize_bench
	$(BUILD)/linearize_bench
