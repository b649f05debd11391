"""A repository with the headers, library and flags of the TensorFlow that
PYTHON_BIN_PATH imports, from tools/tf_flags.py (the query make and setup.py
use too)."""

def _tf_configure_impl(ctx):
    venv = str(ctx.path(Label("//:WORKSPACE")).dirname) + "/.venv/bin/python"
    python = ctx.os.environ.get("PYTHON_BIN_PATH") or venv
    result = ctx.execute([python, str(ctx.path(Label("//:tools/tf_flags.py"))), "--format", "lines"])
    if result.return_code != 0:
        fail("could not import tensorflow with %s (set PYTHON_BIN_PATH):\n%s" % (python, result.stderr))
    version, include, lib, flags = result.stdout.rstrip("\n").split("\n")[-4:]
    ctx.symlink(include, "include")
    ctx.symlink(lib + "/libtensorflow_framework.so.2", "lib/libtensorflow_framework.so.2")
    # libtensorflow_cc only for a build with our XLA kernels (the flags say
    # -DTFSO_XLA=1), as the Makefile links it.
    xla = "-DTFSO_XLA=1" in flags.split(" ")
    if xla:
        ctx.symlink(lib + "/libtensorflow_cc.so.2", "lib/libtensorflow_cc.so.2")
    cc = """
# XLA's op registry and custom-call targets (our XLA kernels).
cc_library(
    name = "libtensorflow_cc",
    srcs = ["lib/libtensorflow_cc.so.2"],
)
""" if xla else """
cc_library(name = "libtensorflow_cc")  # no XLA kernels: not linked
"""
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
""" + cc)
    ctx.file("build_defs.bzl", "TF_COPTS = %s\nTF_VERSION = %r\n" % (
        repr(flags.split(" ")),
        version,
    ))

tf_configure = repository_rule(
    implementation = _tf_configure_impl,
    environ = ["PYTHON_BIN_PATH"],
    local = True,
)

def _cuda_home(ctx, nvcc):
    """The toolkit's folder, as nvcc itself reports it (`nvcc` may be a
    wrapper script elsewhere), as the Makefile finds it; or $CUDA_HOME."""
    if ctx.os.environ.get("CUDA_HOME"):
        return ctx.os.environ["CUDA_HOME"]
    result = ctx.execute([nvcc, "--dryrun", "-c", "-x", "cu", "/dev/null", "-o", "/dev/null"])
    for line in (result.stdout + result.stderr).split("\n"):
        if line.startswith("#$ TOP="):
            return str(ctx.path(line[len("#$ TOP="):].strip()).realpath)
    fail("could not find the CUDA toolkit of %s (set CUDA_HOME)" % nvcc)

def _cuda_configure_impl(ctx):
    """The CUDA toolkit of the nvcc on the PATH (or $NVCC), for the GPU
    kernels of `bazel build --config=cuda`: nvcc's path and flags (the
    Makefile's: tools/nvcc_flags and the architectures of tools/cuda_archs.sh,
    $TFSO_CUDA_ARCHS if set) and cudart as a static library."""
    flags = ctx.read(Label("//:tools/nvcc_flags")).strip()
    nvcc = ctx.os.environ.get("NVCC") or ctx.which("nvcc")
    found = nvcc != None
    if found:
        ctx.path(Label("//:tools/cuda_archs"))  # the default list: a change reruns this rule
        archs = ctx.execute([ctx.path(Label("//:tools/cuda_archs.sh")), str(nvcc)])
        if archs.return_code != 0:
            fail("tools/cuda_archs.sh: " + archs.stderr)
        flags += " " + archs.stdout.strip()
        ctx.symlink(_cuda_home(ctx, nvcc) + "/lib64/libcudart_static.a", "lib/libcudart_static.a")
        cudart = """
cc_library(
    name = "cudart_static",
    srcs = ["lib/libcudart_static.a"],
    # kept out of the library's exports (tests/helpers/library_link.py)
    linkopts = ["-Wl,--exclude-libs,libcudart_static.a", "-ldl", "-lpthread", "-lrt"],
)
"""
    else:
        cudart = """
cc_library(name = "cudart_static")
"""
    ctx.file("BUILD", "package(default_visibility = [\"//visibility:public\"])\n" + cudart)
    ctx.file("build_defs.bzl", "CUDA_FOUND = %r\nNVCC = %r\nNVCC_FLAGS = %r\n" % (
        found,
        str(nvcc) if found else "",
        flags,
    ))

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["CUDA_HOME", "NVCC", "PATH", "TFSO_CUDA_ARCHS"],
    local = True,
)
