"""The size sweep: W1, W3, W5 and W7 (or the rows of --only, e.g. the segment
rows S1, S3, S5, S6) from 16 KiB to 256 MiB outputs, per update row, in a
tf.function, eagerly, and as one op more inside a function (the segment rows:
in a tf.function only, against TensorFlow's kernel and XLA)."""

import dataclasses
import json
import os
import sys

import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso
from benchmarks.harness import call_floor, check, machine, time_workload
from benchmarks.workloads import (M, WORKLOADS, implementations, is_segment, make_inputs, static_shape,
                                  tf_function)


SWEEP = ("W1", "W3", "W5", "W7")


# Per-op columns: chains of ops in one tf.function, up to outputs of
# CHAIN_MAX_BYTES (above it one call's cost is a small share of an op's).
# Small ops cost a few microseconds, a small share of a call's: their chains
# are longer, so that the difference of two medians is not noise.
CHAIN_MAX_BYTES = 16 * M


CHAIN_SMALL_MAX_BYTES = M


CHAIN, CHAIN_SMALL = 8, 32


def chain_length(out_bytes):
    return CHAIN_SMALL if out_bytes <= CHAIN_SMALL_MAX_BYTES else CHAIN


# Eager calls up to this output size are timed in runs (time_workload's eager_tiny).
EAGER_RUN_MAX_BYTES = 64 << 10


def chain_inputs(w, args, k=CHAIN):
    """(op, fixed, varying) for a chain of `w`'s op: op(*fixed, v) for each of
    k tensors v that differ in value, so that no compiler can merge two of
    the ops: the updates scaled for scatters, the indices rolled for
    gathers."""
    if w.op == "gather_nd":
        params, indices = args
        return (lambda op: op), (params,), [tf.roll(indices, j, 0) for j in range(k)]
    if w.op == "scatter_nd":
        indices, updates, shape = args
        return ((lambda op: lambda i, s, u: op(i, u, s)), (indices, shape),
                [updates * (1 + j) for j in range(k)])
    tensor, indices, updates = args
    return (lambda op: op), (tensor, indices), [updates * (1 + j) for j in range(k)]


def chained(op, k):
    """A function of k ops, each after the one before (a control dependency,
    as in a model's step), returning every output."""
    def call(*args):
        fixed, varying = args[:-k], args[-k:]
        outs = []
        for v in varying:
            with tf.control_dependencies(outs[-1:]):
                outs.append(op(*fixed, v))
        return outs
    return call


def chain_implementations(w, args, k):
    """Ours, TF's and XLA's chains of 1 and of k ops (and ours under XLA
    where it runs our kernels), as functions of `args` (for time_workload)
    that call the chain with its own inputs."""
    adapt, fixed, varying = chain_inputs(w, args, k)
    impls = {}
    kinds = [("ours", getattr(tso, w.op), False), ("tf", tf_function(w.op), False),
             ("xla", tf_function(w.op), True)]
    if tso.xla_uses_our_kernels():
        kinds.append(("ours xla", static_shape(w, getattr(tso, w.op)), True))
    for name, op, jit in kinds:
        for n in (1, k):
            f = tf.function(chained(adapt(op), n), jit_compile=jit)
            impls[f"{name} x{n}"] = lambda *_, f=f, a=fixed + tuple(varying[:n]): f(*a)
    outs = {name: f() for name, f in impls.items()}  # traced here
    for a, b in zip(outs[f"ours x{k}"], outs[f"tf x{k}"]):
        if a.numpy().tobytes() != b.numpy().tobytes():
            raise AssertionError(f"{w.name}: our chain's result differs from TensorFlow's")
    for a, b in zip(outs[f"ours x{k}"], outs.get(f"ours xla x{k}", [])):
        if a.numpy().tobytes() != b.numpy().tobytes():
            raise AssertionError(f"{w.name}: our chain's result under XLA differs from our kernel's")
    return impls


def sized(w, out_bytes):
    """Workload `w` scaled so that its output has about `out_bytes`, with the
    same ratio of updates (rows) to output as at full size (sparse_segment_*:
    bags of 8 ids, from a table of 16 rows per bag up to its full size)."""
    if w.op.startswith("sparse_segment"):
        bags = max(out_bytes // (4 * int(np.prod(w.shape[1:]))), 16)
        return dataclasses.replace(w, shape=(min(16 * bags, w.shape[0]),) + w.shape[1:], n=8 * bags,
                                   title=f"{w.name} at {out_bytes / M:g} MiB")
    full = int(np.prod(w.shape)) * 4
    scale = out_bytes / full
    if w.depth == 2:
        side = max(int(round((out_bytes / 4) ** 0.5)), 8)
        shape = (side, side)
    else:
        shape = (max(int(w.shape[0] * scale), 16),) + w.shape[1:]
    return dataclasses.replace(w, shape=shape, n=max(int(w.n * scale), 16),
                               title=f"{w.name} at {out_bytes / M:g} MiB")


def sweep_main(args):
    """Time per update row of W1, W3, W5 and W7 at output sizes from 16 KiB
    up, ours vs TensorFlow's kernel vs XLA: one op in a tf.function, eagerly
    (XLA only in tf.function), and one op more inside a function (up to
    CHAIN_MAX_BYTES); checked first, as the main table is."""
    info = machine()
    sizes = [16 << 10 << (2 * k) for k in range(8)]  # 16 KiB .. 256 MiB
    if args.quick:
        sizes = sizes[:6]
    rounds = args.rounds or (3 if args.quick else 5)
    rng = np.random.default_rng(0)
    rows = []
    base = {w.name: w for w in WORKLOADS}
    floors = {nargs: call_floor(make_inputs(sized(base[name], sizes[0]), rng))
              for nargs, name in ((3, "W1"), (2, "W7"))}
    names = [n for n in args.only.split(",") if n] or list(SWEEP)
    for name in names:
        for out_bytes in sizes:
            w = sized(base[name], out_bytes)
            inputs = make_inputs(w, rng)
            impls = implementations(w)
            check(w, impls, inputs)
            t, _ = time_workload(w, impls, inputs, rounds, lambda: None, burst=2)
            if is_segment(w):  # a tf.function and XLA only
                rows.append(dict(workload=name, out_bytes=out_bytes, n=w.n,
                                 **{k: v / w.n for k, v in t.items()}))
                sys.stderr.write(f"\r{name} {out_bytes / M:8.3f} MiB done ")
                del inputs, impls
                continue
            # Eager calls are timed among themselves: an eager op right after
            # a tf.function call costs about 10 us more (the runtime's state,
            # whichever op it is), which interleaving would charge to
            # whichever eager op follows the functions.
            # Calls of a few microseconds are timed as the mean of a run of
            # them (as W8), not one by one.
            eager = {"ours eager": getattr(tso, w.op), "tf eager": tf_function(w.op)}
            w_eager = dataclasses.replace(w, eager_tiny=out_bytes <= EAGER_RUN_MAX_BYTES)
            t.update(time_workload(w_eager, eager, inputs, rounds, lambda: None, burst=2)[0])
            # What one more op costs inside a function: a chain of
            # chain_length() ops less a chain of one, over the ops added; the call's own cost
            # drops out. Timed apart: the chains' outputs would change what
            # the allocator hands the single ops.
            length = chain_length(out_bytes)
            chains = chain_implementations(w, inputs, length) if out_bytes <= CHAIN_MAX_BYTES else {}
            # A difference of two medians: more rounds where the calls are short.
            chain_rounds = rounds * 4 if out_bytes <= M else rounds
            c = time_workload(w, chains, inputs, chain_rounds, lambda: None, burst=2)[0] if chains else {}
            for impl in ("ours", "tf", "xla", "ours xla"):
                t[f"{impl} per op"] = ((c[f"{impl} x{length}"] - c[f"{impl} x1"]) / (length - 1)
                                       if f"{impl} x1" in c else None)
            t.setdefault("ours xla", None)
            del chains
            rows.append(dict(workload=name, out_bytes=out_bytes, n=w.n,
                             **{k: None if v is None else v / w.n for k, v in t.items()}))
            sys.stderr.write(f"\r{name} {out_bytes / M:8.3f} MiB done ")
            del inputs, impls
    sys.stderr.write("\n")
    floor_line = "; ".join(f"{n} tensors: {f['fn'] * 1e6:.0f} us, {f['xla fn'] * 1e6:.0f} us with jit_compile"
                           for n, f in floors.items())

    def ns(v):
        return f"{v * 1e9:9.2f}" if v is not None else f"{'-':>9}"

    def ratio(a, b):
        return f"{a / b:5.1f}x" if a is not None and b else f"{'-':>6}"

    lines = [f"{info['cpu']}, our loops: {info['isa']}, allocator: {info['allocator']}; ns per update row",
             f"an empty tf.function of {floor_line} (each call of the first three columns pays it);",
             f"'/op': one more op inside a function ({CHAIN_SMALL} in a chain up to {CHAIN_SMALL_MAX_BYTES // M} MiB,"
             f" {CHAIN} above, less one alone), without that cost;"
             f" 'per op': XLA/op over ours/op; '@XLA': ours under jit_compile=True (XLA runs our kernel),"
             f" 'vs' XLA's own",
             f"{'workload':<8} {'output':>10} {'ours':>9} {'TF':>9} {'XLA':>9} {'ours@XLA':>9} {'ours eag':>9}"
             f" {'TF eag':>9} {'ours/op':>9} {'TF/op':>9} {'XLA/op':>9} {'@XLA/op':>9} {'vs TF':>6} {'vs XLA':>6}"
             f" {'per op':>6} {'@XLA vs':>7} {'/op vs':>6}"]
    for r in rows:
        r = {k: r.get(k) for k in ("ours", "tf", "xla", "ours xla", "ours eager", "tf eager", "ours per op",
                                   "tf per op", "xla per op", "ours xla per op")} | r
        lines.append(f"{r['workload']:<8} {r['out_bytes'] / M:9.3f}M {ns(r['ours'])} {ns(r['tf'])} {ns(r['xla'])} "
                     f"{ns(r['ours xla'])} {ns(r['ours eager'])} {ns(r['tf eager'])} {ns(r['ours per op'])} "
                     f"{ns(r['tf per op'])} {ns(r['xla per op'])} {ns(r['ours xla per op'])} "
                     f"{ratio(r['tf'], r['ours'])} {ratio(r['xla'], r['ours'])} "
                     f"{ratio(r['xla per op'], r['ours per op'])} {ratio(r['xla'], r['ours xla']):>7} "
                     f"{ratio(r['xla per op'], r['ours xla per op'])}")
    print("\n".join(lines))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "sweep.json"), "w") as f:
        json.dump(dict(machine=info, rounds=rounds, rows=rows,
                       empty_function_s={str(n): f for n, f in floors.items()}), f, indent=1)
    plot_sweep(rows, info, os.path.join(args.out, "sweep.png"))
    print(f"\nwrote {args.out}/sweep.json and {args.out}/sweep.png")


def plot_sweep(rows, info, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart", file=sys.stderr)
        return
    names = list(dict.fromkeys(r["workload"] for r in rows))
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 4.2), sharey=False, squeeze=False)
    axes = axes[0]
    for ax, name in zip(axes, names):
        mine = [r for r in rows if r["workload"] == name]
        x = [r["out_bytes"] for r in mine]
        for key, style in (("ours", "o-"), ("tf", "s-"), ("xla", "^-"), ("ours xla", "d-"), ("ours eager", "o--"),
                           ("tf eager", "s--"), ("ours per op", "o:"), ("xla per op", "^:"), ("ours xla per op", "d:")):
            pts = [(xv, r[key] * 1e9) for xv, r in zip(x, mine) if r.get(key)]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=key, markersize=4)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(name)
        ax.set_xlabel("output bytes")
    axes[0].set_ylabel("ns per update row (lower is better)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{info['cpu']} ({info['cpus']} CPUs), our loops: {info['isa']}, allocator: {info['allocator']}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
