"""Packaging: a platform wheel holding the prebuilt ops library, pinned to the
TensorFlow version stamped into it (a custom-op .so only loads into that one).
Build the library first: `make` (g++) or `bazel build //...` + build_pip_pkg.sh."""

import importlib.util
import os

from setuptools import setup
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "tf_scatter_ops")


def _stamp_module():
    spec = importlib.util.spec_from_file_location("_stamp", os.path.join(PACKAGE, "_stamp.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BinaryDistribution(Distribution):
    """The wheel carries a compiled library: platform-specific, never pure."""

    def has_ext_modules(self):
        return True


stamp = _stamp_module()
library = os.path.join(PACKAGE, stamp.LIBRARY_NAME)
if not os.path.exists(library):
    raise SystemExit(f"{library} is missing: build it first with `make` (or bazel, see README)")
tf_version = stamp.built_against(library)

setup(
    distclass=BinaryDistribution,
    install_requires=["numpy", f"tensorflow=={tf_version}"],
)
