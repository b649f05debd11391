#!/usr/bin/env bash
# build/torch-venv: PyTorch from PyPI for benchmarks/gnn.py's PyTorch rows
# (benchmarks/torch_requirements.txt), a venv of its own: it shares nothing
# with .venv. Kept while the requirements file is unchanged. Where it cannot
# be installed (no room, no wheel for this platform) it says so and exits 0:
# the benchmark then prints its table without the PyTorch rows.
set -uo pipefail
cd "$(dirname "$0")/.."
venv=build/torch-venv
want=$(sha1sum benchmarks/torch_requirements.txt | cut -c1-12)
[ "$(cat "$venv/.installed" 2>/dev/null)" = "$want" ] && exit 0
rm -rf "$venv"
if python3 -m venv "$venv" && "$venv/bin/pip" install -q -r benchmarks/torch_requirements.txt 2>&1 \
     | { grep -v "^WARNING: Location .* is ignored" || true; } \
   && "$venv/bin/python" -c 'import torch, numpy'; then
  echo "$want" > "$venv/.installed"
else
  echo "torch_venv.sh: PyTorch could not be installed in $venv; the benchmark runs without its rows" >&2
  rm -rf "$venv"
fi
exit 0
