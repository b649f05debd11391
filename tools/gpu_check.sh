#!/usr/bin/env bash
# GPU check of the CUDA core, for a machine with nvcc and a CUDA GPU (PyTorch
# optional; TensorFlow not needed). Builds tools/gpu_harness.cu with the core
# (cc/kernels/cuda/*.cu.cc) for the local GPU, runs the correctness,
# determinism and timing checks, then, when PyTorch is importable, times
# torch on the same data and cross-checks our results. Prints a table last.
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
for src in tools/gpu_harness.cu cc/kernels/cuda/*.cu.cc; do
  obj="$out/obj/$(basename "$src").o"
  nvcc "${flags[@]}" -x cu -c "$src" -o "$obj" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "BUILD FAILED"; exit 2; }; done
nvcc "${flags[@]}" "$out"/obj/*.o -o "$out/gpu_harness" || { echo "LINK FAILED"; exit 2; }
echo "built in $((SECONDS - start)) s"

echo "== harness"
"$out/gpu_harness" "$@" --dump "$out" | tee "$out/harness.txt"
status=${PIPESTATUS[0]}

if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  echo "== torch on the same data"
  python3 tools/gpu_torch_bench.py "$out" || status=1
else
  echo "== PyTorch not importable (or no CUDA in it): timings against the copy bandwidth only"
  sed -n '/^copy bandwidth/,$p' "$out/harness.txt"
fi
exit "$status"
