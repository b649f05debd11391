"""Checks built wheels: the ops library and the Python API inside, nothing
else (no benchmarks, demo or tests), libtensorflow_framework never,
the metadata pins the TensorFlow version given and, with --gpu, the library
carries the GPU kernels with code for every architecture of a default build
(fatbin.py) and its own CUDA runtime (library_link.py).

    python wheel_check.py TF_VERSION [--gpu] WHEEL...
"""

import os
import sys
import tempfile
import zipfile

import fatbin
import library_link


def check(wheel, tf_version, gpu):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        assert "tf_scatter_ops/_tf_scatter_ops.so" in names, f"{wheel}: no ops library"
        library = z.read("tf_scatter_ops/_tf_scatter_ops.so")
        if gpu:
            assert b"TF_SCATTER_OPS_GPU=1;" in library, f"{wheel}: built without the GPU kernels"
            archs, expected = fatbin.archs(library), fatbin.default_archs()
            assert archs == expected, f"{wheel}: GPU code for {archs}, a default build has {expected}"
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "_tf_scatter_ops.so")
                with open(path, "wb") as f:
                    f.write(library)
                wrong = library_link.problems(path)
            assert not wrong, f"{wheel}: {wrong}"
        assert not any("libtensorflow_framework" in n for n in names), f"{wheel}: vendors TF"
        extra = [n for n in names if not n.startswith("tf_scatter_ops/")
                 and ".dist-info/" not in n]
        assert not extra, f"{wheel}: holds more than the package: {extra}"
        assert not any("bench" in n or "demo" in n for n in names), f"{wheel}: ships the benchmarks"
        metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines()
                if line.startswith("Requires-Dist:")]
    # the distribution that installed TensorFlow where the wheel was built
    assert any(r.split("==")[0] in ("tensorflow", "tensorflow-cpu", "tensorflow_cpu") and
               r.endswith(f"=={tf_version}") for r in requires), f"{wheel}: requires {requires}"
    kernels = (f"CPU and GPU ({' '.join(fatbin.archs(library))})"
               if b"TF_SCATTER_OPS_GPU=1;" in library else "CPU")
    print(f"wheel ok: {wheel} (requires {', '.join(requires)}; {kernels} kernels)")


if __name__ == "__main__":
    gpu = "--gpu" in sys.argv
    for w in [a for a in sys.argv[2:] if a != "--gpu"]:
        check(w, sys.argv[1], gpu)
