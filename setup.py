"""Packaging: a platform wheel holding the ops library, pinned to the
TensorFlow version it was built against (a custom-op .so only loads into that
one), never containing libtensorflow_framework.so.2.

* `pip wheel .` / `pip install .` compile cc/ here with the Makefile's
  `library` target ($CXX, default g++, and nvcc for the GPU kernels when it is
  on the PATH) and the compile/link flags of the TensorFlow installed in the
  target environment: the interpreter running pip, or $TF_SCATTER_OPS_PYTHON.
  TensorFlow is not a build requirement, so pip never downloads one into its
  isolated build environment; we ask a child interpreter without pip's
  overlay instead (with --no-build-isolation it is the same TensorFlow).
  Install TensorFlow first.
* TF_SCATTER_OPS_PREBUILT=/path/to/_tf_scatter_ops.so packages that library
  as is (build_pip_pkg.sh does this with bazel's), pinned to its stamp.
"""

import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "tf_scatter_ops")
PREBUILT = os.environ.get("TF_SCATTER_OPS_PREBUILT")

# Which distribution installed the `tensorflow` package there: tensorflow,
# tensorflow-cpu, tf-nightly, ... (no TensorFlow import needed).
_DISTRIBUTION_QUERY = """
import importlib.metadata as md
names = sorted(set(md.packages_distributions().get("tensorflow", [])))
print("tensorflow" if not names or "tensorflow" in names else names[0])
"""


def _stamp_module():
    spec = importlib.util.spec_from_file_location("_stamp", os.path.join(PACKAGE, "_base", "stamp.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


stamp = _stamp_module()


def _target_env():
    """The environment without pip's build-isolation overlay: its PYTHONPATH
    entries (pip-build-env-*) and PYTHONNOUSERSITE go, so the child sees the
    site-packages that pip installs into."""
    env = dict(os.environ)
    entries = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    kept = [p for p in entries if "pip-build-env" not in p]
    if len(kept) != len(entries):
        env.pop("PYTHONNOUSERSITE", None)
    if kept:
        env["PYTHONPATH"] = os.pathsep.join(kept)
    else:
        env.pop("PYTHONPATH", None)
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    return env


def tensorflow_config():
    """Version and flags of the target environment's TensorFlow, from the
    query make and bazel use too (tools/tf_flags.py)."""
    python = os.environ.get("TF_SCATTER_OPS_PYTHON") or sys.executable
    result = subprocess.run([python, os.path.join(HERE, "tools", "tf_flags.py"), "--format", "json"],
                            env=_target_env(), cwd=os.path.expanduser("~"), capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(
            f"tf-scatter-ops builds against the TensorFlow installed where it is being "
            f"installed, but {python} cannot import tensorflow:\n{result.stderr[-2000:]}\n"
            "Install TensorFlow first (e.g. `pip install tensorflow==2.21.0`), or point "
            "TF_SCATTER_OPS_PYTHON at the interpreter whose TensorFlow to use.")
    return json.loads(result.stdout.strip().splitlines()[-1])


def tensorflow_distribution():
    """The name of the distribution that provides TensorFlow in the target
    environment: the wheel pins that one, so that installing it next to
    tensorflow-cpu (say) does not pull in a second copy of TensorFlow."""
    python = os.environ.get("TF_SCATTER_OPS_PYTHON") or sys.executable
    result = subprocess.run([python, "-c", _DISTRIBUTION_QUERY], env=_target_env(),
                            cwd=os.path.expanduser("~"), capture_output=True, text=True)
    name = result.stdout.strip().splitlines()[-1] if result.returncode == 0 and result.stdout.strip() else ""
    return name or "tensorflow"


def compile_library(config, output, builddir):
    """Compiles cc/ into `output` with the project's Makefile (`make
    library`, the path `make` itself takes: one translation unit per job,
    the GPU kernels too when nvcc is found), against the TensorFlow of the
    target environment; objects are kept in `builddir` for the next build."""
    python = os.environ.get("TF_SCATTER_OPS_PYTHON") or sys.executable
    jobs = os.environ.get("TF_SCATTER_OPS_JOBS", str(os.cpu_count() or 1))
    cmd = ["make", "-C", HERE, f"-j{jobs}", "library", f"PY={python}", f"BUILD={builddir}",
           f"SO={os.path.abspath(output)}", "TF_FLAGS_DEPS="]
    print(" ".join(shlex.quote(c) for c in cmd), flush=True)
    subprocess.run(cmd, check=True, env=_target_env())
    built = stamp.built_against(output)
    if built != config["version"]:
        raise SystemExit(f"{output} is stamped {built!r}, expected {config['version']!r}")


class BuildPyWithLibrary(build_py):
    """build_py, then the ops library into the build tree (compiled here, or
    copied from TF_SCATTER_OPS_PREBUILT)."""

    def run(self):
        super().run()
        output = os.path.join(self.build_lib, "tf_scatter_ops", stamp.LIBRARY_NAME)
        if PREBUILT:
            os.makedirs(os.path.dirname(output), exist_ok=True)
            shutil.copyfile(PREBUILT, output)
        else:
            key = hashlib.sha256(json.dumps(TF, sort_keys=True).encode()).hexdigest()[:12]
            builddir = os.path.join("build", "pip", f"{TF['version']}-{key}")
            compile_library(TF, output, builddir)


class BinaryDistribution(Distribution):
    """The wheel carries a compiled library: platform-specific, never pure."""

    def has_ext_modules(self):
        return True


if PREBUILT:
    TF = None
    if not os.path.exists(PREBUILT):
        raise SystemExit(f"TF_SCATTER_OPS_PREBUILT={PREBUILT} does not exist")
    tf_version = stamp.built_against(PREBUILT)
    if tf_version is None:
        raise SystemExit(f"{PREBUILT} carries no TensorFlow version stamp")
else:
    TF = tensorflow_config()
    tf_version = TF["version"]

setup(
    distclass=BinaryDistribution,
    cmdclass={"build_py": BuildPyWithLibrary},
    install_requires=["numpy", f"{tensorflow_distribution()}=={tf_version}"],
)
