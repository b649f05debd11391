"""The one query of TensorFlow's build flags (tf.sysconfig): the version, the
compile and link flags, the include and library folders of the TensorFlow
that this interpreter imports. Never hard-coded; make, setup.py and bazel all
ask here.

  python tools/tf_flags.py               make variables (Makefile), with the
                                          include folder and the headers'
                                          identity (headers_digest)
  python tools/tf_flags.py --format json  one JSON object (setup.py)
  python tools/tf_flags.py --format lines version, include, lib and the
                                          compile flags without -I, one per
                                          line (third_party/tf/tf_configure.bzl)
"""
import argparse
import hashlib
import json
import os

import tensorflow as tf

# Our XLA kernels (cc/kernels/xla/xla_kernels.cc) build against TensorFlow's
# tf2xla headers, which need highwayhash's and farmhash's headers from the
# system (tools/install_xla_headers.sh), and are built for the TensorFlow
# versions they are tested with.
XLA_SINCE = (2, 21)
XLA_HEADERS = ("highwayhash/arch_specific.h", "farmhash.h")


def xla_kernels():
    version = tuple(int(p) for p in tf.__version__.split(".")[:2])
    return version >= XLA_SINCE and all(
        any(os.path.exists(os.path.join(d, h)) for d in ("/usr/include", "/usr/local/include"))
        for h in XLA_HEADERS)


def headers_digest(include):
    """What identifies a TensorFlow's headers without reading them: its
    version and a digest of its include folder's file names and sizes. Two
    installs of one TensorFlow (two venvs) give the same digest, so the
    Makefile keeps one set of objects for both."""
    listing = []
    for root, _, files in os.walk(include):
        for f in files:
            path = os.path.join(root, f)
            listing.append(f"{os.path.relpath(path, include)} {os.path.getsize(path)}")
    text = "\n".join([tf.__version__, tf.version.GIT_VERSION] + sorted(listing))
    return f"tf-{tf.__version__}-{hashlib.sha1(text.encode()).hexdigest()[:12]}"


def query():
    xla = xla_kernels()
    return {
        "version": tf.__version__,
        "cflags": tf.sysconfig.get_compile_flags() + [f"-DTFSO_XLA={int(xla)}"],
        "lflags": tf.sysconfig.get_link_flags() + (["-l:libtensorflow_cc.so.2"] if xla else []),
        "include": tf.sysconfig.get_include(),
        "headers": headers_digest(tf.sysconfig.get_include()),
        "lib": tf.sysconfig.get_lib(),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", choices=("make", "json", "lines"), default="make")
    flags = query()
    form = parser.parse_args().format
    if form == "json":
        print(json.dumps(flags))
    elif form == "lines":
        print(flags["version"])
        print(flags["include"])
        print(flags["lib"])
        print(" ".join(f for f in flags["cflags"] if not f.startswith("-I")))
    else:
        print("TF_VERSION :=", flags["version"])
        print("TF_CFLAGS :=", " ".join(flags["cflags"]))
        print("TF_LFLAGS :=", " ".join(flags["lflags"]))
        print("TF_INCLUDE :=", flags["include"])
        print("TF_HEADERS :=", flags["headers"])


if __name__ == "__main__":
    main()
