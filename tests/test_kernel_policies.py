"""The bad_indices_policy values the kernels implement (cc/ops/kernel_policies.h,
the one C++ list): as the library's C ABI hands them to Python
(tf_scatter_ops_kernel_policies: a line per policy, the first one empty), as
every op takes them, and as the kernels' message names them."""
import ctypes

import numpy as np
import pytest
import tensorflow as tf

from tf_scatter_ops._base import library as _loader

IAE = tf.errors.InvalidArgumentError
KERNEL_POLICIES = ["", "DEFAULT", "ERROR", "IGNORE"]


def library_text(name):
    _loader.load()
    function = getattr(ctypes.CDLL(_loader.loaded_path()), name)
    function.restype = ctypes.c_char_p
    return function().decode()


def test_the_c_abi_lists_the_kernel_policies():
    text = library_text("tf_scatter_ops_kernel_policies")
    assert text == "\nDEFAULT\nERROR\nIGNORE\n"  # each name followed by a newline
    assert text.splitlines() == KERNEL_POLICIES
    assert text.split("\n")[:-1] == KERNEL_POLICIES


@pytest.mark.parametrize("policy", KERNEL_POLICIES)
def test_every_kernel_policy_is_taken_eagerly_and_in_a_graph(policy):
    lib = _loader.load()
    params = tf.constant([1.0, 2.0, 3.0])

    def gather():
        return lib.tf_scatter_gather_nd(params=params, indices=[[2], [9]],
                                        bad_indices_policy=policy)

    if policy == "IGNORE":
        np.testing.assert_array_equal(gather().numpy(), [3.0, 0.0])
        np.testing.assert_array_equal(tf.function(gather)().numpy(), [3.0, 0.0])
    else:
        for call in (gather, tf.function(gather)):
            with pytest.raises(IAE, match=r"indices\[1\] = \[9\] does not index into param shape"):
                call()


def test_the_kernels_message_names_the_policy_and_the_list():
    lib = _loader.load()
    expected = (r"Unknown bad_indices_policy 'CLIP': expected '', 'DEFAULT', 'ERROR' or 'IGNORE' "
                r"\(upper case\)")
    with pytest.raises(IAE, match=expected):  # the wrappers' policies are not the kernels'
        lib.tf_scatter_gather_nd(params=[1.0], indices=[[0]], bad_indices_policy="CLIP")
    with pytest.raises(IAE, match=expected):  # in a graph too: when the graph runs
        tf.function(lambda: lib.tf_scatter_gather_nd(params=[1.0], indices=[[0]],
                                                     bad_indices_policy="CLIP"))()
