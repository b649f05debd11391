"""The benchmark's harness: what the machine is (CPU, ISA, allocator, copy
bandwidth, page-fault cost, a call's floor), the check of every result
against TensorFlow's kernel before anything is timed, and the interleaved
timing."""

import logging
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso


class _IntendedTracing(logging.Filter):
    """Drops TensorFlow's warning that many calls of one Python function
    triggered tf.function retracing: the benchmark makes a tf.function per
    workload, size and implementation from one wrapper on purpose, and traces
    each once before timing it."""

    def filter(self, record):
        return "triggered tf.function retracing" not in record.getMessage()


def expect_retracing():
    """Installs _IntendedTracing on TensorFlow's logger (once)."""
    logger = tf.get_logger()
    if not any(isinstance(f, _IntendedTracing) for f in logger.filters):
        logger.addFilter(_IntendedTracing())


def copy_bandwidth(nbytes=512 << 20, threads=os.cpu_count() or 1, repeats=5):
    """Bytes/s (read + write) of a large parallel copy: the memory floor."""
    src = np.ones(nbytes // 8, np.float64)
    dst = np.empty_like(src)
    chunks = np.array_split(np.arange(src.size), threads)
    bounds = [(c[0], c[-1] + 1) for c in chunks]
    best = float("inf")
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(repeats):
            t0 = time.perf_counter()
            list(pool.map(lambda b: np.copyto(dst[b[0]:b[1]], src[b[0]:b[1]]), bounds))
            best = min(best, time.perf_counter() - t0)
    return 2 * nbytes / best


def machine():
    """What the numbers were measured on: CPU model, the ISA our loops use,
    TensorFlow's CPU allocator."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    bfc = os.environ.get("TF_CPU_ALLOCATOR_USE_BFC", "").lower() in ("1", "true")
    return dict(cpu=model, cpus=os.cpu_count(), isa=tso.active_isa(), cpu_isa=tso.cpu_isa(),
                allocator="bfc" if bfc else "default", tf=tf.__version__)


def first_touch_cost(nbytes=64 << 20, repeats=3):
    """Seconds per 4 KiB page of writing a freshly allocated buffer beyond
    rewriting one already mapped: what a fresh output costs before any work
    (TensorFlow's default CPU allocator hands out fresh pages for large
    tensors on every call; its BFC allocator reuses them)."""
    pages = nbytes // 4096
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fresh = np.empty(nbytes, np.uint8)
        fresh.fill(1)
        t1 = time.perf_counter()
        fresh.fill(2)
        t2 = time.perf_counter()
        best = min(best, ((t1 - t0) - (t2 - t1)) / pages)
        del fresh
    return max(best, 0.0)


def call_floor(args, rounds=5, calls=300):
    """Seconds per call of an empty tf.function taking `args`, without and
    with jit_compile: what any op in a function of its own costs at least,
    before its kernel runs (the runtime's dispatch; XLA's path is shorter)."""
    floors = {}
    for name, jit in (("fn", False), ("xla fn", True)):
        f = tf.function(lambda *a: a[0], jit_compile=jit)
        f(*args)
        best = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _ in range(calls):
                f(*args)
            best.append((time.perf_counter() - t0) / calls)
        floors[name] = statistics.median(best)
    return floors


def check(w, impls, args):
    ours, tf_out = impls["ours"](*args), impls["tf"](*args)
    a, b = ours.numpy(), tf_out.numpy()
    if a.shape != b.shape or a.dtype != b.dtype:
        raise AssertionError(f"{w.name}: our result's shape or dtype differs from TensorFlow's")
    if (a.tobytes() != b.tobytes() if w.exact
            else not np.allclose(a, b, rtol=1e-4, atol=1e-4)):
        raise AssertionError(f"{w.name}: our result differs from TensorFlow's kernel")
    if "ours xla" in impls and impls["ours xla"](*args).numpy().tobytes() != a.tobytes():
        raise AssertionError(f"{w.name}: our result under XLA differs from our kernel's")
    if "xla" in impls:
        x = impls["xla"](*args).numpy().astype(np.float64)
        if not np.allclose(a.astype(np.float64), x, rtol=1e-2, atol=1e-2):
            raise AssertionError(f"{w.name}: XLA's result differs from ours beyond rounding")


def progress(done, total, label):
    width = 30
    filled = int(width * done / total)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label:<28}")
    sys.stderr.flush()


def interleaved_ms(fns, args=(), rounds=7, calls=10):
    """Median ms per call of each function of `fns` (name -> function), each
    warmed up (traced, compiled) once, then timed `calls` in a row, the
    functions taking turns in each of `rounds` rounds."""
    for f in fns.values():
        f(*args)
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                f(*args)
            times[k].append((time.perf_counter() - t0) / calls * 1e3)
    return {k: statistics.median(v) for k, v in times.items()}


def forward_backward(f, wrt=(0,), with_output=False):
    """A step that calls f(*args) and returns the gradients with respect to
    the arguments at positions `wrt` (one tensor for one position) for an
    output gradient of ones: a training step's forward and backward.
    with_output: (output, gradients), so that a function whose gradient does
    not need its output (a linear one) still computes it in a tf.function."""
    def step(*args):
        sources = [args[i] for i in wrt]
        with tf.GradientTape() as tape:
            tape.watch(sources)
            y = f(*args)
        grads = tape.gradient(y, sources, output_gradients=tf.ones_like(y))
        grads = grads[0] if len(grads) == 1 else grads
        return (y, grads) if with_output else grads
    return step


def time_workload(w, impls, args, rounds, tick, burst=3):
    """Each round runs every implementation `burst` times in a row, the order
    rotating from round to round. Returns, per implementation, the median of
    all its calls and the median of the first call of each burst (the call
    that follows another implementation, when the pool may have gone idle)."""
    times = {k: [] for k in impls}
    first = {k: [] for k in impls}
    for name, f in impls.items():  # warm up (trace, compile)
        f(*args)
    names = list(impls)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            f = impls[name]
            for b in range(burst):
                if w.eager_tiny:
                    calls = 2000
                    t0 = time.perf_counter()
                    for _ in range(calls):
                        f(*args)
                    t = (time.perf_counter() - t0) / calls
                else:
                    t0 = time.perf_counter()
                    f(*args)
                    t = time.perf_counter() - t0
                times[name].append(t)
                if b == 0:
                    first[name].append(t)
        tick()
    return ({k: statistics.median(v) for k, v in times.items()},
            {k: statistics.median(v) for k, v in first.items()})
