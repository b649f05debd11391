"""The CUDA runtime of a built ops library is its own: every CUDA runtime
call of the GPU kernels (nvcc's launch stubs, CUB's host code, ours) is
resolved inside the library by the static cudart it was built with, and
none is exported. libtensorflow_framework.so.2 also defines those symbols
(a stub of TensorFlow's own runtime): a library that leaves them undefined
runs its kernels on TensorFlow's CUDA runtime, of another version.

    python library_link.py LIBRARY...    (exit status 1 if one fails)
"""

import subprocess
import sys


def cuda_symbols(path):
    """(undefined, exported): the CUDA runtime symbols of the library's
    dynamic symbol table that it imports, and those it defines for others."""
    table = subprocess.run(["nm", "-D", path], capture_output=True, text=True,
                           check=True).stdout
    undefined, exported = [], []
    for line in table.splitlines():
        fields = line.split()
        if len(fields) < 2 or not fields[-1].startswith(("cuda", "__cuda")):
            continue
        (undefined if fields[-2] in ("U", "w") else exported).append(fields[-1])
    return undefined, exported


def problems(path):
    """What is wrong with the library's link, in words (empty if nothing)."""
    undefined, exported = cuda_symbols(path)
    found = []
    if undefined:
        found.append(f"{path}: {len(undefined)} CUDA runtime symbols resolved outside the "
                     f"library ({', '.join(sorted(undefined)[:4])}, ...): link the static "
                     "cudart before TensorFlow's libraries")
    if exported:
        found.append(f"{path}: exports {len(exported)} CUDA runtime symbols "
                     f"({', '.join(sorted(exported)[:4])}, ...): -Wl,--exclude-libs")
    return found


if __name__ == "__main__":
    failed = [p for path in sys.argv[1:] for p in problems(path)]
    for p in failed:
        print(p)
    if not failed:
        print(f"own CUDA runtime, none exported: {' '.join(sys.argv[1:])}")
    sys.exit(1 if failed else 0)
