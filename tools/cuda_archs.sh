#!/usr/bin/env bash
# nvcc's flags for the GPU architectures of a build: SASS for each, PTX for
# the newest, named in a macro for the CUDA core's BuildInfo
# (cc/kernels/cuda/build_info.cu.cc; nvcc itself lists the others).
#
#   tools/cuda_archs.sh NVCC
#
# The list is $TFSO_CUDA_ARCHS if set ("80,90", "sm_86 sm_90", or "native":
# the GPUs of this machine, from nvidia-smi), else tools/cuda_archs: every
# architecture from Turing (sm_75) on. A default architecture that this nvcc
# cannot target is left out with a note (CUDA 12.x before 12.8 has no sm_100
# or sm_120); one asked for in $TFSO_CUDA_ARCHS is an error.
set -euo pipefail
nvcc=${1:?usage: tools/cuda_archs.sh NVCC}
here=$(dirname "$0")
supported=" $("$nvcc" --list-gpu-code | sed 's/^sm_//' | tr '\n' ' ') "
if [[ -n "${TFSO_CUDA_ARCHS:-}" ]]; then
  asked=$TFSO_CUDA_ARCHS
  if [[ "$asked" == native ]]; then
    asked=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d .) ||
      { echo "TFSO_CUDA_ARCHS=native: nvidia-smi found no GPU" >&2; exit 1; }
  fi
  strict=1
else
  asked=$(cat "$here/cuda_archs")
  strict=0
fi
archs=()
for a in $(echo "$asked" | tr ',' ' ' | sed 's/sm_//g; s/compute_//g' | tr ' ' '\n' | sort -un); do
  if [[ ! "$a" =~ ^[0-9]+$ ]]; then
    echo "TFSO_CUDA_ARCHS=$TFSO_CUDA_ARCHS: '$a' is not an architecture (e.g. 80 or sm_80)" >&2
    exit 1
  fi
  if [[ "$supported" != *" $a "* ]]; then
    if (( strict )); then
      echo "TFSO_CUDA_ARCHS: $nvcc cannot target sm_$a (it can: $supported)" >&2
      exit 1
    fi
    echo "note: $nvcc cannot target sm_$a: left out" >&2
    continue
  fi
  archs+=("$a")
done
(( ${#archs[@]} )) || { echo "no GPU architecture to build for" >&2; exit 1; }
newest=${archs[-1]}
flags=""
for a in "${archs[@]}"; do
  if [[ $a == "$newest" ]]; then
    flags+=" -gencode arch=compute_$a,code=[sm_$a,compute_$a]"
  else
    flags+=" -gencode arch=compute_$a,code=sm_$a"
  fi
done
echo "$flags -DTFSO_CUDA_PTX=$newest" | sed 's/^ //'
