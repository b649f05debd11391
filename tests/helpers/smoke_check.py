"""Smoke test of a built tf_scatter_ops: every op once against hand-computed
values, one gradient, the version stamp. Run outside the source tree by CI
(installed wheel) and by bazel (bazel-built library):

    python smoke_check.py [--installed] [--library PATH]

--installed: the package must come from site-packages, and its metadata must
pin the running TensorFlow. --library: load PATH (TF_SCATTER_OPS_LIBRARY).
"""

import argparse
import os
import sys


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--installed", action="store_true")
    parser.add_argument("--library")
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if args.library:
        os.environ["TF_SCATTER_OPS_LIBRARY"] = os.path.abspath(args.library)

    import numpy as np
    import tensorflow as tf

    import tf_scatter_ops as tso
    from tf_scatter_ops._base import library as _loader

    def same(got, want):
        got = np.asarray(got)
        assert got.tolist() == np.asarray(want, got.dtype).tolist(), (got, want)

    t = tf.constant([1., 5., 3., 7.])
    i = tf.constant([[3], [1], [3]])
    u = tf.constant([2., 8., 9.])
    same(tso.scatter_nd(i, u, [4]), [0., 8., 0., 11.])
    same(tso.tensor_scatter_nd_update(t, i, u), [1., 8., 3., 9.])
    same(tso.tensor_scatter_nd_add(t, i, u), [1., 13., 3., 18.])
    same(tso.tensor_scatter_nd_sub(t, i, u), [1., -3., 3., -4.])
    same(tso.tensor_scatter_nd_min(t, i, u), [1., 5., 3., 2.])
    same(tso.tensor_scatter_nd_max(t, i, u), [1., 8., 3., 9.])
    same(tso.gather_nd(t, i), [7., 5., 7.])
    same(tf.function(tso.tensor_scatter_nd_add)(t, i, u), [1., 13., 3., 18.])
    with tf.GradientTape() as tape:
        tape.watch(u)
        y = tf.reduce_sum(tso.scatter_nd(i, u, [4]) * [1., 10., 100., 1000.])
    same(tape.gradient(y, u), [1000., 10., 1000.])
    try:
        tso.gather_nd(t, [[4]])
        raise AssertionError("out-of-bound index did not raise")
    except tf.errors.InvalidArgumentError as e:
        assert "does not index into param shape" in str(e), e

    same(tso.gather(t, [[3, 1]]), [[7., 5.]])
    try:  # the subpackage is installed, where Keras is
        import keras  # noqa: F401
        assert tso.keras.optimizers.LazyAdam and tso.keras.Embedding
    except ImportError:
        pass

    path = _loader.loaded_path()
    assert _loader.built_against(path) == tf.__version__, (_loader.built_against(path), tf.__version__)
    if args.library:
        assert path == os.path.abspath(args.library), path
    if args.installed:
        import importlib.metadata
        source_tree = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        assert "site-packages" in tso.__file__, tso.__file__
        assert not os.path.abspath(tso.__file__).startswith(source_tree + os.sep + "tf_scatter_ops")
        requires = importlib.metadata.requires("tf-scatter-ops")
        assert f"tensorflow=={tf.__version__}" in requires, requires
    print(f"smoke ok: {path} (TensorFlow {tf.__version__}, Python {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
