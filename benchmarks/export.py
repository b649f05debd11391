"""What an export costs in stock TensorFlow: each workload in a plain
tf.function as the plugin's op, as the form tso.stock_ops() and
`python -m tf_scatter_ops.export` write (TensorFlow's built-in ops that
TFLite and tf2onnx take too), and as TensorFlow's own op, in one run.

    python -m benchmarks.export [--quick]

The forms are several ops where TensorFlow has one (an extra segment for
the ids TensorFlow drops, a stable sort for tensor_scatter_nd_update's last
duplicate, a gather and a segment sum for sparse_segment_*), the price of
one model for TensorFlow Serving, TFLite and ONNX alike. Times are medians
of interleaved rounds, ms per call; the CPU runs eagerly, so a call returns
when its result is ready (nothing is copied out).
"""

import argparse

import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso
from benchmarks.harness import interleaved_ms, machine


def _workloads(quick):
    rng = np.random.default_rng(0)
    s = 8 if quick else 1
    edges, nodes, feat = 200_000 // s, 20_000 // s, 32
    messages = tf.constant(rng.normal(size=(edges, feat)).astype(np.float32))
    receivers = tf.constant(rng.integers(0, nodes, edges).astype(np.int32))
    points, voxels = 1_000_000 // s, 256_000 // s
    values = tf.constant(rng.normal(size=(points, 16)).astype(np.float32))
    cells = tf.constant(rng.integers(0, voxels, (points, 1)).astype(np.int32))
    grid = tf.fill([voxels, 16], -np.inf)
    rows, bags = 1_000_000 // s, 65_536 // s
    table = tf.constant(rng.normal(size=(rows, 64)).astype(np.float32))
    ids = tf.constant(rng.integers(0, rows, bags * 8).astype(np.int32))
    bag_of = tf.constant(np.repeat(np.arange(bags), 8).astype(np.int32))
    sorted_ids = tf.sort(receivers)
    n = tf.constant(nodes)
    return {
        "GNN sum (unsorted_segment_sum)": (
            lambda: tso.unsorted_segment_sum(messages, receivers, n),
            lambda: tf.math.unsorted_segment_sum(messages, receivers, n)),
        "GNN max (unsorted_segment_max)": (
            lambda: tso.unsorted_segment_max(messages, receivers, n),
            lambda: tf.math.unsorted_segment_max(messages, receivers, n)),
        "segment_sum (sorted ids)": (
            lambda: tso.segment_sum(messages, sorted_ids),
            lambda: tf.math.segment_sum(messages, sorted_ids)),
        "voxel max (tensor_scatter_nd_max)": (
            lambda: tso.tensor_scatter_nd_max(grid, cells, values),
            lambda: tf.tensor_scatter_nd_max(grid, cells, values)),
        "voxel update (tensor_scatter_nd_update)": (
            lambda: tso.tensor_scatter_nd_update(grid, cells, values),
            lambda: tf.tensor_scatter_nd_update(grid, cells, values)),
        "bags (sparse_segment_mean)": (
            lambda: tso.sparse_segment_mean(table, ids, bag_of),
            lambda: tf.sparse.segment_mean(table, ids, bag_of)),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes / 8, few rounds")
    args = parser.parse_args()
    rounds, calls = (3, 3) if args.quick else (7, 10)
    info = machine()
    print(f"{info['cpu']}, {info['cpus']} CPUs, {info['isa']}, TensorFlow {info['tf']}; "
          f"ms per call in a tf.function")
    print(f"  {'workload':<42} {'plugin':>8} {'export':>8} {'TF op':>8}  export/TF  plugin/export")
    for name, (ours, theirs) in _workloads(args.quick).items():
        plugin = tf.function(ours)
        with tso.stock_ops():
            stock = tf.function(ours).get_concrete_function()
        assert not [op for op in stock.graph.get_operations() if op.type.startswith("TfScatter>")]
        t = interleaved_ms({"plugin": plugin, "export": stock, "TF op": tf.function(theirs)},
                           rounds=rounds, calls=calls)
        print(f"  {name:<42} {t['plugin']:8.2f} {t['export']:8.2f} {t['TF op']:8.2f}  "
              f"{t['export'] / t['TF op']:8.2f}x  {t['export'] / t['plugin']:8.2f}x")


if __name__ == "__main__":
    main()
