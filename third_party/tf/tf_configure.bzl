"""A repository with the headers, library and flags of the TensorFlow that
PYTHON_BIN_PATH imports, straight from tf.sysconfig (never hard-coded)."""

_QUERY = """
import tensorflow as tf
print(tf.sysconfig.get_include())
print(tf.sysconfig.get_lib())
print(tf.__version__)
print(" ".join(f for f in tf.sysconfig.get_compile_flags() if not f.startswith("-I")))
"""

def _tf_configure_impl(ctx):
    venv = str(ctx.path(Label("//:WORKSPACE")).dirname) + "/.venv/bin/python"
    python = ctx.os.environ.get("PYTHON_BIN_PATH") or venv
    result = ctx.execute([python, "-c", _QUERY])
    if result.return_code != 0:
        fail("could not import tensorflow with %s (set PYTHON_BIN_PATH):\n%s" % (python, result.stderr))
    include, lib, version, flags = result.stdout.strip().split("\n")
    ctx.symlink(include, "include")
    ctx.symlink(lib + "/libtensorflow_framework.so.2", "lib/libtensorflow_framework.so.2")
    ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "tf_header_lib",
    hdrs = glob(["include/**/*.h", "include/**/*.inc", "include/**/*.hpp", "include/**"]),
    includes = ["include"],
)

cc_library(
    name = "libtensorflow_framework",
    srcs = ["lib/libtensorflow_framework.so.2"],
)
""")
    ctx.file("build_defs.bzl", "TF_COPTS = %s\nTF_VERSION = %r\n" % (
        repr(flags.split(" ")),
        version,
    ))

tf_configure = repository_rule(
    implementation = _tf_configure_impl,
    environ = ["PYTHON_BIN_PATH"],
    local = True,
)
