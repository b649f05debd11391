#!/usr/bin/env bash
# GPU check of the CUDA core, for a machine with nvcc and a CUDA GPU (PyTorch
# optional; TensorFlow not needed). Builds tests/cc/gpu_harness.cu with the core
# (cc/kernels/cuda/*.cu.cc) for the local GPU, runs the correctness,
# determinism and timing checks of every op, then, when PyTorch is
# importable, times torch on the same data and cross-checks our results;
# then checks a carried library's link and, with TensorFlow there, runs
# tests/test_gpu.py; then times the CPU core at 1 to 16 threads
# (benchmarks/cpu_scaling.cc). Prints
# one summary table last.
#
#   tools/gpu_check.sh [--quick]        (output in $GPU_CHECK_OUT, default build/gpu_check)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${GPU_CHECK_OUT:-build/gpu_check}
# The architectures of this machine's GPUs (or $GPU_ARCH, e.g. 90).
archflags=$(TFSO_CUDA_ARCHS=${GPU_ARCH:-native} tools/cuda_archs.sh nvcc) || exit 2
rm -rf "$out/obj" && mkdir -p "$out/obj"
# The CUDA core sees only its own folders (cc/kernels/common, cuda).
mkdir -p "$out/include"
for d in common cuda; do ln -sfn "$PWD/cc/kernels/$d" "$out/include/$d"; done
read -ra flags <<< "$(cat tools/nvcc_flags) $archflags"
flags+=(-I"$out/include")

echo "== build ($(nvcc --version | tail -1))"
start=$SECONDS
pids=()
for src in tests/cc/gpu_harness.cu cc/kernels/cuda/*.cu.cc; do
  obj="$out/obj/$(basename "$src").o"
  nvcc "${flags[@]}" -x cu -c "$src" -o "$obj" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "BUILD FAILED"; exit 2; }; done
nvcc "${flags[@]}" "$out"/obj/*.o -o "$out/gpu_harness" || { echo "LINK FAILED"; exit 2; }
echo "built in $((SECONDS - start)) s"

echo "== harness"
"$out/gpu_harness" "$@" --dump "$out" 2>&1 | tee "$out/harness.txt"
status=${PIPESTATUS[0]}

if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  echo "== torch on the same data"
  python3 benchmarks/gpu_torch_bench.py "$out" | tee "$out/torch.txt"
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
else
  echo "== PyTorch not importable (or no CUDA in it): timings against the copy bandwidth only"
  sed -n '/^copy bandwidth/,$p' "$out/harness.txt" | tee "$out/torch.txt"
fi

# A built library carried here (make's .so): its CUDA calls must reach the
# runtime linked inside it (tests/helpers/library_link.py). With TensorFlow
# importable, the TensorFlow glue on this GPU (tests/test_gpu.py).
so=tf_scatter_ops/_tf_scatter_ops.so
if [[ -f $so ]]; then
  echo "== library link"
  python3 tests/helpers/library_link.py "$so" | tee "$out/link.txt"
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
fi
if [[ -f $so ]] && python3 -c "import tensorflow" 2>/dev/null; then
  echo "== TensorFlow glue on the GPU"
  python3 -m pytest -q tests/test_gpu.py 2>&1 | tail -15 | tee "$out/tf_gpu.txt"
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
else
  echo "== TensorFlow not importable here: tests/test_gpu.py not run" | tee "$out/tf_gpu.txt"
fi

# The TF-free CPU core on this machine's cores, at 1 to 16 threads, on
# production's scheduler (benchmarks/cpu_scaling.cc; every thread count must give
# the same bits).
echo "== CPU core thread scaling"
mkdir -p "$out/include/cpu-only"
for d in common cpu; do ln -sfn "$PWD/cc/kernels/$d" "$out/include/cpu-only/$d"; done
if g++ -O3 -std=c++17 -pthread -I"$out/include/cpu-only" -Itests/cc benchmarks/cpu_scaling.cc \
     -o "$out/cpu_scaling"; then
  "$out/cpu_scaling" --threads "${CPU_SCALING_THREADS:-1,2,4,8,16}" | tee "$out/scaling.txt"
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
else
  echo "CPU SCALING BUILD FAILED" | tee "$out/scaling.txt"
  status=1
fi

# One table at the end: what passed, the GPU times, the CPU scaling.
echo
echo "== summary ($(nvcc --version | tail -1); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1))"
grep -E "^device:|^core:|cases, [0-9]+ failures|^correctness:|^HARNESS|^FAIL|\.cu:[0-9]+:" "$out/harness.txt"
sed -n '/ours ms\|^copy bandwidth/,$p' "$out/torch.txt"
grep -vE "^W[0-9]: " "$out/scaling.txt"
cat "$out/link.txt" "$out/tf_gpu.txt" 2>/dev/null
exit "$status"
