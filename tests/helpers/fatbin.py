"""The GPU code in an ELF file (the ops library, or an object): the
architectures of the SASS and PTX entries of every fatbin in its .nv_fatbin
section, read without the CUDA toolkit.

A fatbin is a 16-byte header (magic 0xBA55ED50, version, header size, size of
what follows) and entries, each a header (kind: 1 PTX, 2 SASS; its own size;
the payload's size; the architecture at byte 28) and the payload. A linked
library holds one fatbin per CUDA object.

    python fatbin.py FILE...     prints each file's architectures
"""

import os
import re
import struct
import subprocess
import sys

MAGIC = 0xBA55ED50


def _section(data, wanted):
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError("not a 64-bit ELF file")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    entsize, count, names = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * entsize) for i in range(count)]
    strings = headers[names][4]
    for name, _, _, _, offset, size in headers:
        end = data.index(b"\0", strings + name)
        if data[strings + name:end].decode() == wanted:
            return data[offset:offset + size]
    return b""


def fatbins(data):
    """One set of architectures per fatbin: {"sm_80", "compute_90", ...}."""
    section, found, at = _section(data, ".nv_fatbin"), [], 0
    while at + 16 <= len(section):
        magic, _, header, size = struct.unpack_from("<IHHQ", section, at)
        if magic != MAGIC:  # padding between fatbins
            at += 8
            continue
        archs, entry, end = set(), at + header, at + header + size
        while entry < end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", section, entry)
            arch = struct.unpack_from("<I", section, entry + 28)[0]
            archs.add(("compute_" if kind == 1 else "sm_") + str(arch))
            entry += entry_header + payload
        found.append(archs)
        at = end
    return found


def archs(data):
    """The architectures every fatbin of the file has (a kernel runs on a GPU
    only if its own object has code for it), sorted SASS first; [] without GPU
    code."""
    sets = fatbins(data)
    common = set.intersection(*sets) if sets else set()
    return sorted(common, key=lambda a: (a.startswith("compute_"), int(a.split("_")[1])))


def default_archs(nvcc="nvcc"):
    """What a default build with this nvcc carries: tools/cuda_archs.sh's
    flags without $TFSO_CUDA_ARCHS, in archs()'s order."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                          "cuda_archs.sh")
    env = {k: v for k, v in os.environ.items() if k != "TFSO_CUDA_ARCHS"}
    flags = subprocess.run([script, nvcc], env=env, check=True, capture_output=True, text=True).stdout
    codes = set()
    for group in re.findall(r"code=\[?([a-z0-9_,]+)\]?", flags):
        codes.update(group.split(","))
    return sorted(codes, key=lambda a: (a.startswith("compute_"), int(a.split("_")[1])))


if __name__ == "__main__":
    for path in sys.argv[1:]:
        with open(path, "rb") as f:
            print(path, " ".join(archs(f.read())) or "(no GPU code)")
