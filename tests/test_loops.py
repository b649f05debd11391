"""A KV cache as the loop variable of a tf.while_loop in a plain tf.function
(not jit_compile): tensor_scatter_nd_update writes each step's row in place
only when no read of the cache may still hold its buffer at the write.

The check is the CPU allocator's high-water mark, not time. A child process
runs with TF_CPU_ALLOCATOR_USE_BFC=true, so every tensor buffer comes from
one BFC allocator whose peak tf.config.experimental.get_memory_info reports.
The caller holds the cache it passes in, so the first write copies it: a loop
written in place peaks at one cache above what was in use before the call.
A write that copies at any later step needs a new cache-sized buffer while
its source (the previous step's buffer, no longer the caller's) and the
caller's cache are both alive: two caches above, however the steps were
scheduled. Every other buffer of these loops (index rows, one row, scalars)
is a few KiB, so a split at 1.5 caches (32 MiB either way) cannot be crossed
by accident in either direction; the lower bound of the in-place case (the
first copy, counted) shows that the allocator's statistics are live.

The read that costs the in-place update is forced after the write with a
control dependency on the write's result: with no ordering at all the
executor may run the read either side of the write, and a test cannot
depend on which (that variant is checked for its results only).
"""

import json

import pytest

from ecosystem_util import python_env, run_python

ROWS, WIDTH, STEPS = 4096, 4096, 16  # a 64 MiB float32 cache

CHILD = r"""
import json
import numpy as np
import tensorflow as tf
import tf_scatter_ops as tso

ROWS, WIDTH, STEPS = %(ROWS)d, %(WIDTH)d, %(STEPS)d
CACHE_BYTES = ROWS * WIDTH * 4


def row(t):
    return tf.fill([1, WIDTH], tf.cast(t, tf.float32) + 1.0)


def read(cache, t):  # two rows of the cache, summed
    return tf.reduce_sum(tso.gather_nd(cache, [[t // 2], [t]]))


# Each body returns (new cache, what it read); `reads` says which cache the
# read sees ("old": the step's input, "new": the step's result, None: none).
def write_only(cache, t, seen):
    return tso.tensor_scatter_nd_update(cache, [[t]], row(t)), 0.0


def tf_write_only(cache, t, seen):  # TensorFlow's own kernel, which copies
    return tf.tensor_scatter_nd_update(cache, [[t]], row(t)), 0.0


def read_unordered(cache, t, seen):
    r = read(cache, t)
    return tso.tensor_scatter_nd_update(cache, [[t]], row(t)), r


def read_after_write(cache, t, seen):
    new = tso.tensor_scatter_nd_update(cache, [[t]], row(t))
    with tf.control_dependencies([new]):
        r = read(cache, t)
    return new, r


def read_then_write(cache, t, seen):
    r = read(cache, t)
    with tf.control_dependencies([r]):
        new = tso.tensor_scatter_nd_update(cache, [[t]], row(t))
    return new, r


def sum_then_write(cache, t, seen):  # the read reduces over the whole cache
    r = tf.reduce_sum(cache)
    with tf.control_dependencies([r]):
        new = tso.tensor_scatter_nd_update(cache, [[t]], row(t))
    return new, r


def write_waits_for_a_slice(cache, t, seen):  # cache[k] may share the cache's buffer
    s = cache[t // 2]
    with tf.control_dependencies([s]):
        new = tso.tensor_scatter_nd_update(cache, [[t]], row(t))
    with tf.control_dependencies([new]):
        r = tf.reduce_sum(s)
    return new, r


def write_then_read_new_chained(cache, t, seen):  # the next write waits for this read
    new = tso.tensor_scatter_nd_update(cache, [[t]], row(t) + 0.0 * seen)
    return new, read(new, t)


def write_then_read_new_serial(cache, t, seen):  # iterations do not overlap
    new = tso.tensor_scatter_nd_update(cache, [[t]], row(t))
    return new, read(new, t)


VARIANTS = {  # name: (body, which cache the read sees, parallel_iterations)
    "write_only": (write_only, None, 10),
    "tf_write_only": (tf_write_only, None, 10),
    "read_unordered": (read_unordered, "old", 10),
    "read_after_write": (read_after_write, "old", 10),
    "read_then_write": (read_then_write, "old", 10),
    "sum_then_write": (sum_then_write, "sum", 10),
    "write_waits_for_a_slice": (write_waits_for_a_slice, "slice", 10),
    "write_then_read_new_chained": (write_then_read_new_chained, "new", 10),
    "write_then_read_new_serial": (write_then_read_new_serial, "new", 1),
}


def expected(reads):
    # Step t writes t + 1 to row t: after step t, rows 0..t hold 1..t + 1.
    def row_sum(k, t):  # of row k, as the read of step t sees it
        written = k < t or (k == t and reads == "new")
        return WIDTH * (k + 1) if written else 0
    total = 0
    for t in range(STEPS):
        if reads in ("old", "new"):
            total += row_sum(t // 2, t) + row_sum(t, t)
        elif reads == "slice":
            total += row_sum(t // 2, t)
        elif reads == "sum":
            total += sum(row_sum(k, t) for k in range(t))
    cache = np.zeros([ROWS, WIDTH], np.float32)
    cache[:STEPS] = np.arange(1, STEPS + 1, dtype=np.float32)[:, None]
    return cache, total


def make(body, parallel_iterations):
    @tf.function
    def decode(cache, steps):
        def step(t, cache, seen, total):
            new, r = body(cache, t, seen)
            return t + 1, new, tf.cast(r, tf.float32), total + tf.cast(r, tf.float32)
        return tf.while_loop(lambda t, c, s, a: t < steps, step,
                             [tf.constant(0), cache, tf.constant(0.0), tf.constant(0.0)],
                             parallel_iterations=parallel_iterations)[1::2]
    return decode


results = {}
for name, (body, reads, parallel_iterations) in VARIANTS.items():
    decode = make(body, parallel_iterations)
    cache = tf.zeros([ROWS, WIDTH])
    decode(cache, tf.constant(2))                    # trace
    tf.config.experimental.reset_memory_stats("CPU:0")
    before = tf.config.experimental.get_memory_info("CPU:0")["current"]
    out, total = decode(cache, tf.constant(STEPS))
    peak = tf.config.experimental.get_memory_info("CPU:0")["peak"]
    want_cache, want_total = expected(reads)
    results[name] = {
        "extra_caches": (peak - before) / CACHE_BYTES,
        "cache_right": bool(np.array_equal(out.numpy(), want_cache)),
        "input_unchanged": not np.any(cache.numpy()),
        "total": float(total), "want_total": float(want_total),
    }
    del out, total, cache
print("RESULTS " + json.dumps(results))
""" % {"ROWS": ROWS, "WIDTH": WIDTH, "STEPS": STEPS}


@pytest.fixture(scope="module")
def loops():
    rc, out, err = run_python(CHILD, timeout=300, env=python_env(TF_CPU_ALLOCATOR_USE_BFC="true"))
    assert rc == 0, err[-3000:]
    line = [ln for ln in out.splitlines() if ln.startswith("RESULTS ")]
    assert line, out + err[-3000:]
    return json.loads(line[-1][len("RESULTS "):])


IN_PLACE = ["write_only", "read_then_write", "sum_then_write",
            "write_then_read_new_chained", "write_then_read_new_serial"]
COPIES = ["tf_write_only", "read_after_write", "write_waits_for_a_slice"]


@pytest.mark.parametrize("name", sorted(IN_PLACE + COPIES + ["read_unordered"]))
def test_results_are_right(loops, name):
    r = loops[name]
    assert r["cache_right"] and r["input_unchanged"], r
    assert r["total"] == r["want_total"], r


@pytest.mark.parametrize("name", IN_PLACE)
def test_written_in_place(loops, name):
    # One cache above: the copy the first write makes of the caller's cache.
    assert 0.9 < loops[name]["extra_caches"] < 1.5, loops[name]


@pytest.mark.parametrize("name", COPIES)
def test_copied_after_the_first_step(loops, name):
    # A later step copied too: a second cache alive next to the previous one.
    assert loops[name]["extra_caches"] > 1.5, loops[name]
