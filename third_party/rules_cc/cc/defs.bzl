# Debian's bazel 4.2.3 cannot download rules_cc and Debian's bazel-rules-cc
# is too new for it: these forward to the native rules (shared/bazel-offline.md).
def cc_library(**kwargs):
    native.cc_library(**kwargs)

def cc_binary(**kwargs):
    native.cc_binary(**kwargs)

def cc_test(**kwargs):
    native.cc_test(**kwargs)

def cc_import(**kwargs):
    native.cc_import(**kwargs)

def cc_toolchain(**kwargs):
    native.cc_toolchain(**kwargs)

def cc_toolchain_suite(**kwargs):
    native.cc_toolchain_suite(**kwargs)
