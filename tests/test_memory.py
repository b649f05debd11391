"""Memory: 10,000 calls of each op, on the success path, the
IGNORE path and the error path, eager and in a tf.function, do not grow the
process's resident memory beyond a small bound.

The success and IGNORE calls use 1,000 index rows, so every call allocates
the kernels' slot scratch tensor (8 KiB) and an output; a leak of either
per call would be 80+ MiB over 10,000 calls, far above the bound.

Not measured here: the error path. Every failed eager call grows the
process's resident memory, with TensorFlow's own kernels too, by an amount
that varies from run to run (from under 1 KiB to some 15 KiB per call, for
TensorFlow's ops and ours alike), so no bound is both reliable and
meaningful there; the error-path calls below are only checked to raise the
right error.
"""

import gc
import os

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso

CALLS = 10_000
WARMUP = 10_000
BOUND_MIB = 24
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


def _calls():
    rng = np.random.default_rng(10)
    t = tf.constant(rng.standard_normal(4096), tf.float32)
    idx = tf.constant(rng.integers(0, 4096, (1000, 1)), tf.int64)
    bad = tf.constant(np.r_[rng.integers(0, 4096, 999), 5000].reshape(1000, 1), tf.int64)
    upd = tf.constant(rng.standard_normal(1000), tf.float32)
    bad32 = bad[-32:]  # the error path: 32 rows, the last one bad
    upd32 = upd[-32:]
    shape = tf.constant([4096], tf.int64)
    # > 128k update elements: the block path and its grouping scratch
    idx_many = tf.constant(rng.integers(0, 4096, (140000, 1)), tf.int64)
    upd_many = tf.constant(rng.standard_normal(140000), tf.float32)
    ops = {op: getattr(tso, op) for op in (
        "tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
        "tensor_scatter_nd_min", "tensor_scatter_nd_max")}
    calls = {}
    for name, f in ops.items():
        calls[name] = lambda f=f: f(t, idx, upd)
        calls[name + "-ignore"] = lambda f=f: f(t, bad, upd, bad_indices_policy="IGNORE")
        calls[name + "-error"] = lambda f=f: f(t, bad32, upd32)
    calls["tensor_scatter_nd_add-block-path"] = lambda: ops["tensor_scatter_nd_add"](
        t, idx_many, upd_many)
    calls["scatter_nd"] = lambda: tso.scatter_nd(idx, upd, shape)
    calls["scatter_nd-error"] = lambda: tso.scatter_nd(bad32, upd32, shape)
    calls["gather_nd"] = lambda: tso.gather_nd(t, idx)
    calls["gather_nd-ignore"] = lambda: tso.gather_nd(t, bad, bad_indices_policy="IGNORE")
    calls["gather_nd-error"] = lambda: tso.gather_nd(t, bad32)
    fn = tf.function(lambda t, i, u: tso.tensor_scatter_nd_add(t, i, u) + tso.gather_nd(t, i)[0])
    calls["function-add-gather"] = lambda: fn(t, idx, upd)
    return calls


CALLS_BY_NAME = _calls()


def _repeat(call, n):
    for _ in range(n):
        try:
            call()
        except tf.errors.InvalidArgumentError:
            pass


def _growth(call, warmup=WARMUP, calls=CALLS):
    _repeat(call, warmup)
    gc.collect()
    before = rss_mib()
    _repeat(call, calls)
    gc.collect()
    return rss_mib() - before


GOOD = sorted(n for n in CALLS_BY_NAME if not n.endswith("-error"))


@pytest.mark.slow
@pytest.mark.parametrize("name", GOOD)
def test_10000_calls_do_not_grow_resident_memory(name):
    call = CALLS_BY_NAME[name]
    call()
    # Warm up with as many calls as are measured: allocator pools and malloc
    # arenas of the intra-op threads grow for a while and then level off (a
    # leak does not), so only the second 10,000 calls are measured.
    grown = _growth(call)
    assert grown < BOUND_MIB, f"{name}: resident memory grew {grown:.1f} MiB over {CALLS} calls"


@pytest.mark.parametrize("name", sorted(n for n in CALLS_BY_NAME if n.endswith("-error")))
def test_error_path_calls_raise_the_first_bad_row(name):
    for _ in range(100):
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[31\] = \[5000\]"):
            CALLS_BY_NAME[name]()
