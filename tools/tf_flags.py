"""The one query of TensorFlow's build flags (tf.sysconfig): the version, the
compile and link flags, the include and library folders of the TensorFlow
that this interpreter imports. Never hard-coded; make, setup.py and bazel all
ask here.

  python tools/tf_flags.py               make variables (Makefile)
  python tools/tf_flags.py --format json  one JSON object (setup.py)
  python tools/tf_flags.py --format lines version, include, lib and the
                                          compile flags without -I, one per
                                          line (third_party/tf/tf_configure.bzl)
"""
import argparse
import json

import tensorflow as tf


def query():
    return {
        "version": tf.__version__,
        "cflags": tf.sysconfig.get_compile_flags(),
        "lflags": tf.sysconfig.get_link_flags(),
        "include": tf.sysconfig.get_include(),
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


if __name__ == "__main__":
    main()
