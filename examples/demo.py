"""`make demo`: the seed examples, ours next to TensorFlow's."""

import os
import textwrap

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import tf_scatter_ops as tso  # noqa: E402


def examples():
    idx = [[4], [3], [1], [7]]
    upd = [9, 10, 11, 12]
    ones8 = tf.ones([8], tf.int32)
    slices = tf.constant(
        [[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]],
         [[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]]])
    ones444 = tf.ones([4, 4, 4], tf.int32)
    return [
        ("scatter_nd([[4],[3],[1],[7]], [9,10,11,12], [8])",
         lambda m: m.scatter_nd(idx, upd, [8])),
        ("tensor_scatter_nd_update(ones([8]), [[4],[3],[1],[7]], [9,10,11,12])",
         lambda m: m.tensor_scatter_nd_update(ones8, idx, upd)),
        ("tensor_scatter_nd_sub(ones([8]), [[4],[3],[1],[7]], [9,10,11,12])",
         lambda m: m.tensor_scatter_nd_sub(ones8, idx, upd)),
        ("scatter_nd([[1],[3]], slices [2,4,4], [4,4,4])",
         lambda m: m.scatter_nd([[1], [3]], slices, [4, 4, 4])),
        ("tensor_scatter_nd_sub(ones([4,4,4]), [[0],[2]], slices [2,4,4])",
         lambda m: m.tensor_scatter_nd_sub(ones444, [[0], [2]], slices)),
    ]


def main():
    print(f"tf_scatter_ops vs TensorFlow {tf.__version__}\n")
    all_same = True
    for title, f in examples():
        ours, theirs = f(tso).numpy(), f(tf).numpy()
        same = ours.shape == theirs.shape and np.array_equal(ours, theirs)
        all_same &= same
        print(f"{title}  [{'same' if same else 'DIFFERENT'}]")
        if ours.ndim <= 1:
            print(f"  ours:       {ours.tolist()}\n  TensorFlow: {theirs.tolist()}\n")
        else:
            print("  ours:\n" + textwrap.indent(np.array2string(ours), "    "))
            print("  TensorFlow:\n" + textwrap.indent(np.array2string(theirs), "    ") + "\n")
    print("all results equal TensorFlow's" if all_same else "SOME RESULTS DIFFER")
    return 0 if all_same else 1


if __name__ == "__main__":
    raise SystemExit(main())
