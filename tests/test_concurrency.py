"""Concurrency: 8 Python threads run mixed ops, eagerly and through
shared tf.functions, for a bounded time; every result is checked bitwise
against the NumPy reference computed up front. Includes cases big enough to
take the kernels' parallel paths (the intra-op pool is shared by all
threads) and error cases (bad indices must raise in every thread, without
disturbing the others)."""

import re
import threading
import time

import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso
import reference as ref

THREADS = 8
SECONDS = 6.0  # bound on the run, not a speed assertion
REF_OP = {"tensor_scatter_nd_update": "update", "tensor_scatter_nd_add": "add",
          "tensor_scatter_nd_sub": "sub", "tensor_scatter_nd_min": "min",
          "tensor_scatter_nd_max": "max"}


def _cases(rng):
    """(name, callable(eager: bool) -> result, expected or exception type)."""
    cases = []
    # The last three take the parallel paths (block: elements, rows; columns):
    # more than 128k update elements, else outputs of <= 8 MiB go serially.
    geometries = [((6, 5), (40,), 1), ((4, 3, 2), (7, 2), 2), ((60000,), (300000,), 1),
                  ((300, 64), (5000,), 1), ((8, 9000), (40,), 1)]
    functions = {}

    def fn(op):
        if op not in functions:
            functions[op] = tf.function(getattr(tso, op))
        return functions[op]

    for k, (shape, outer, depth) in enumerate(geometries):
        for op, rop in REF_OP.items():
            dtype = [tf.float32, tf.int32, tf.float64, tf.bfloat16][k % 4]
            tensor = ref.random_values(rng, dtype, shape)
            idx = ref.random_indices(rng, shape, depth, outer, tf.int64)
            upd = ref.random_values(rng, dtype, outer + shape[depth:])
            want = ref.scatter(rop, tensor, idx, upd, dtype)
            args = (tf.constant(tensor, dtype), tf.constant(idx), tf.constant(upd, dtype))
            cases.append((f"{op}-{shape}",
                          lambda eager, op=op, args=args: (getattr(tso, op) if eager else fn(op))(*args),
                          want))
        idx = ref.random_indices(rng, shape, depth, outer, tf.int32)
        upd = ref.random_values(rng, tf.float32, outer + shape[depth:])
        want = ref.scatter("scatter_nd", ref.zeros(shape, tf.float32), idx, upd, tf.float32)
        args = (tf.constant(idx), tf.constant(upd), tf.constant(shape, tf.int32))
        cases.append((f"scatter_nd-{shape}",
                      lambda eager, args=args: (tso.scatter_nd if eager else fn("scatter_nd"))(*args),
                      want))
        params = ref.random_values(rng, tf.float32, shape)
        want = ref.gather(params, idx, tf.float32)
        args = (tf.constant(params), tf.constant(idx))
        cases.append((f"gather_nd-{shape}",
                      lambda eager, args=args: (tso.gather_nd if eager else fn("gather_nd"))(*args),
                      want))
    # Errors: the first bad row is named in every thread.
    bad = tf.constant([[0], [9], [-1]], tf.int64)
    cases.append(("bad-update", lambda eager: (tso.tensor_scatter_nd_update if eager else fn("tensor_scatter_nd_update"))(
        tf.zeros([4]), bad, tf.ones([3])), tf.errors.InvalidArgumentError))
    cases.append(("bad-gather", lambda eager: (tso.gather_nd if eager else fn("gather_nd"))(
        tf.zeros([4, 2]), bad), tf.errors.InvalidArgumentError))
    return cases


def test_eight_threads_mixed_ops_all_results_correct():
    cases = _cases(np.random.default_rng(6))
    for name, call, want in cases:  # trace the functions once, outside the threads
        if not isinstance(want, type):
            ref.assert_same(call(False), want)
    errors, done = [], [0] * THREADS
    deadline = time.monotonic() + SECONDS
    start = threading.Barrier(THREADS)

    def worker(t):
        order = np.random.default_rng(t).permutation(len(cases) * 2)
        start.wait()
        k = 0
        while time.monotonic() < deadline or k < len(order):
            name, call, want = cases[order[k % len(order)] // 2]
            eager = order[k % len(order)] % 2 == 0
            k += 1
            try:
                if isinstance(want, type):
                    try:
                        call(eager)
                        errors.append((t, name, eager, "no error raised"))
                    except want as e:
                        if not re.search(r"indices\[1\] = \[9\] does not index into (param )?shape", str(e)):
                            errors.append((t, name, eager, str(e)))
                else:
                    ref.assert_same(call(eager), want)
                done[t] += 1
            except Exception as e:  # noqa: BLE001 - collected and reported below
                errors.append((t, name, eager, repr(e)[:500]))
            if len(errors) > 20:
                return

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=SECONDS + 300)
    assert not any(th.is_alive() for th in threads), "a thread hung"
    assert not errors, errors[:5]
    # every thread went through every case, eager and in a function, at least once
    assert all(d >= 2 * len(cases) for d in done), done
