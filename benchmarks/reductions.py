"""tensor_scatter_nd_mul and _mean against the same written with TensorFlow's
ops (what code without them writes today: the updates' product per row by
unsorted_segment_prod and one multiply; a tensor_scatter_nd_add, a
scatter_nd of the counts and a divide) in a plain tf.function, and that
composition under XLA (jit_compile=True), in one run; forward alone and
forward + backward (gradients with respect to the tensor and the updates).

    python -m benchmarks.reductions [--quick]

A table of [200k, 16] float32 rows, 100k update rows into random rows
(duplicates). Times are medians of interleaved rounds, ms per call; each
call waits for its result on the CPU without copying it out.
"""

import argparse

import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso
from benchmarks.harness import forward_backward, interleaved_ms, machine


def _tensorflow(op, table, rows, updates):
    """`op` with TensorFlow's own ops, depth-1 rows."""
    n = tf.shape(table)[0]
    if op == "tensor_scatter_nd_mul":
        return table * tf.math.unsorted_segment_prod(updates, rows[:, 0], n)
    sums = tf.tensor_scatter_nd_add(table, rows, updates)
    count = tf.scatter_nd(rows, tf.ones(tf.shape(rows)[:1], table.dtype), [n]) + 1
    return sums / count[:, None]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes / 8, few rounds")
    args = parser.parse_args()
    rounds, calls = (3, 3) if args.quick else (7, 10)
    s = 8 if args.quick else 1
    rng = np.random.default_rng(0)
    table = tf.constant(rng.uniform(0.5, 2.0, (200_000 // s, 16)).astype(np.float32))
    rows = tf.constant(rng.integers(0, 200_000 // s, (100_000 // s, 1)).astype(np.int32))
    updates = tf.constant(rng.uniform(0.9, 1.1, (100_000 // s, 16)).astype(np.float32))
    info = machine()
    print(f"{info['cpu']}, {info['cpus']} CPUs, {info['isa']}, TensorFlow {info['tf']}; "
          f"ms per call")
    print(f"  {'op':<24} {'pass':<8} {'plugin':>8} {'TF ops':>8} {'XLA':>8}  "
          f"TF/plugin  XLA/plugin")
    for op in ("tensor_scatter_nd_mul", "tensor_scatter_nd_mean"):
        ours = lambda t, i, u, op=op: getattr(tso, op)(t, i, u)  # noqa: E731
        theirs = lambda t, i, u, op=op: _tensorflow(op, t, i, u)  # noqa: E731
        for label, wrap in (("forward", lambda f: f),
                            ("+ grad", lambda f: forward_backward(f, wrt=(0, 2)))):
            fns = {"plugin": tf.function(wrap(ours)), "TF ops": tf.function(wrap(theirs)),
                   "XLA": tf.function(wrap(theirs), jit_compile=True)}
            for got, want in zip(tf.nest.flatten(fns["plugin"](table, rows, updates)),
                                 tf.nest.flatten(fns["TF ops"](table, rows, updates))):
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4)
            t = interleaved_ms(fns, (table, rows, updates), rounds, calls)
            print(f"  {op:<24} {label:<8} {t['plugin']:8.2f} {t['TF ops']:8.2f} {t['XLA']:8.2f}  "
                  f"{t['TF ops'] / t['plugin']:8.2f}x  {t['XLA'] / t['plugin']:8.2f}x")
            op = ""


if __name__ == "__main__":
    main()
