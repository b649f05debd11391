"""The group-wise segment functions (tso.segment_softmax and friends) against
the same function written with TensorFlow's ops (unsorted_segment_max,
gather, exp, unsorted_segment_sum, gather, divide: what GNN code writes
today) in a plain tf.function, and that composition under XLA
(jit_compile=True, where the plugin's functions are that composition too),
in one run. Each workload forward alone and forward + backward (the
gradient with respect to the data).

    python -m benchmarks.groupwise [--quick]

GAT attention: a score per edge and head, [200k, 8], normalised over each
destination node's incoming edges (20k nodes). Times are medians of
interleaved rounds, ms per call; each call waits for its result on the CPU
without copying it out.
"""

import argparse

import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso
from benchmarks.harness import forward_backward, interleaved_ms, machine


def _workloads(quick):
    rng = np.random.default_rng(0)
    s = 8 if quick else 1
    edges, nodes = 200_000 // s, 20_000 // s
    scores = tf.constant(rng.normal(size=(edges, 8)).astype(np.float32))
    receivers = tf.constant(rng.integers(0, nodes, edges).astype(np.int32))
    points, voxels = 1_000_000 // s, 256_000 // s
    features = tf.constant(rng.normal(size=(points, 16)).astype(np.float32))
    cells = tf.constant(rng.integers(0, voxels, points).astype(np.int32))
    return [
        ("GAT softmax, 200k edges x 8 heads into 20k", "segment_softmax", scores, receivers, nodes),
        ("GAT log_softmax", "segment_log_softmax", scores, receivers, nodes),
        ("logsumexp pooling", "segment_logsumexp", scores, receivers, nodes),
        ("voxel std, 1M x 16 into 256k", "segment_std", features, cells, voxels),
    ]


def _tensorflow(op, x, ids, num):
    """`op` as GNN code writes it today, with TensorFlow's own segment ops."""
    if op == "segment_std":
        n = tf.math.unsorted_segment_sum(tf.ones_like(x[:, :1]), ids, num)
        mean = tf.math.unsorted_segment_sum(x, ids, num) / n
        d = x - tf.gather(mean, ids)
        return tf.sqrt(tf.math.unsorted_segment_sum(d * d, ids, num) / n)
    m = tf.math.unsorted_segment_max(x, ids, num)
    shifted = x - tf.gather(m, ids)
    total = tf.math.unsorted_segment_sum(tf.exp(shifted), ids, num)
    if op == "segment_logsumexp":
        return m + tf.math.log(total)
    if op == "segment_log_softmax":
        return shifted - tf.gather(tf.math.log(total), ids)
    return tf.exp(shifted) / tf.gather(total, ids)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes / 8, few rounds")
    args = parser.parse_args()
    rounds, calls = (3, 3) if args.quick else (7, 10)
    info = machine()
    print(f"{info['cpu']}, {info['cpus']} CPUs, {info['isa']}, TensorFlow {info['tf']}; "
          f"ms per call")
    print(f"  {'workload':<44} {'pass':<8} {'plugin':>8} {'TF ops':>8} {'XLA':>8}  "
          f"TF/plugin  XLA/plugin")
    for name, op, x, ids, num in _workloads(args.quick):
        ours = lambda a, b, op=op, num=num: getattr(tso, op)(a, b, num)  # noqa: E731
        theirs = lambda a, b, op=op, num=num: _tensorflow(op, a, b, num)  # noqa: E731
        for label, wrap in (("forward", lambda f: f), ("+ grad", forward_backward)):
            fns = {"plugin": tf.function(wrap(ours)), "TF ops": tf.function(wrap(theirs)),
                   "XLA": tf.function(wrap(theirs), jit_compile=True)}
            # (gradients of std in segments of near-equal rows differ by float cancellation)
            np.testing.assert_allclose(fns["plugin"](x, ids).numpy(), fns["TF ops"](x, ids).numpy(),
                                       rtol=1e-3, atol=1e-4 if label == "forward" else 5e-3)
            t = interleaved_ms(fns, (x, ids), rounds, calls)
            print(f"  {name:<44} {label:<8} {t['plugin']:8.2f} {t['TF ops']:8.2f} {t['XLA']:8.2f}  "
                  f"{t['TF ops'] / t['plugin']:8.2f}x  {t['XLA'] / t['plugin']:8.2f}x")
            name = ""


if __name__ == "__main__":
    main()
