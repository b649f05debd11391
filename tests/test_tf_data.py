"""The ops inside tf.data: Dataset.map with num_parallel_calls=AUTOTUNE, and
on elements large enough for the parallel paths."""

import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso
import reference as ref

N = 48


def _element(k):
    """Element k: a [6, 2] tensor, 4 index rows (duplicates), updates; from k only."""
    k = tf.cast(k, tf.int32)
    t = tf.reshape(tf.cast(tf.range(12) * (k + 1) % 7, tf.float32), [6, 2])
    i = tf.reshape((tf.range(4) * 5 + k) % 6, [4, 1])
    u = tf.reshape(tf.cast(tf.range(8) - k, tf.float32), [4, 2])
    return t, i, u


def _all_ops(k):
    t, i, u = _element(k)
    return {
        "k": k,
        "update": tso.tensor_scatter_nd_update(t, i, u),
        "add": tso.tensor_scatter_nd_add(t, i, u),
        "sub": tso.tensor_scatter_nd_sub(t, i, u),
        "min": tso.tensor_scatter_nd_min(t, i, u),
        "max": tso.tensor_scatter_nd_max(t, i, u),
        "scatter_nd": tso.scatter_nd(i, u, [6, 2]),
        "gather_nd": tso.gather_nd(t, i),
    }


def _expected(k):
    t, i, u = (x.numpy() for x in _element(tf.constant(k)))
    out = {op: ref.scatter(op, t, i, u, tf.float32) for op in ("update", "add", "sub", "min", "max")}
    out["scatter_nd"] = ref.scatter("scatter_nd", np.zeros_like(t), i, u, tf.float32)
    out["gather_nd"] = ref.gather(t, i, tf.float32)
    return out


def _check(elements):
    seen = sorted(int(e["k"]) for e in elements)
    assert seen == list(range(N))
    for e in elements:
        for op, want in _expected(int(e["k"])).items():
            ref.assert_same(e[op], want)


def test_map_autotune_in_order():
    ds = tf.data.Dataset.range(N).map(_all_ops, num_parallel_calls=tf.data.AUTOTUNE)
    elements = list(ds)
    assert [int(e["k"]) for e in elements] == list(range(N))
    _check(elements)


def test_map_autotune_nondeterministic_order_and_batched_gather():
    ds = (tf.data.Dataset.range(N)
          .map(_all_ops, num_parallel_calls=tf.data.AUTOTUNE, deterministic=False)
          .prefetch(tf.data.AUTOTUNE))
    _check(list(ds))

    # Batched: gather_nd with batch_dims over a batch built by the pipeline.
    def batched(b):
        params = tf.reshape(tf.cast(b, tf.float32), [-1, 1]) * tf.range(5, dtype=tf.float32)
        idx = tf.reshape(b % 5, [-1, 1])
        return b, tso.gather_nd(params, tf.expand_dims(idx, 1), batch_dims=1)

    ds = (tf.data.Dataset.range(N).batch(8)
          .map(batched, num_parallel_calls=tf.data.AUTOTUNE, deterministic=False))
    count = 0
    for b, got in ds:
        b = b.numpy()
        ref.assert_same(got, (b * (b % 5)).astype(np.float32).reshape(-1, 1))
        count += len(b)
    assert count == N


def test_large_elements_with_and_without_an_intra_op_parallelism_cap():
    # Large enough for the parallel paths eagerly; tf.data runs map functions
    # with a thread pool of its own (one thread), and with the option set or
    # not the results are those of eager code, bit for bit.
    rng = np.random.default_rng(3)
    t = rng.standard_normal((200_000,)).astype(np.float32)
    idx = rng.integers(0, 200_000, size=(300_000, 1))
    upd = rng.standard_normal((300_000,)).astype(np.float32)
    want = (tso.tensor_scatter_nd_add(t, idx, upd).numpy(), tso.gather_nd(t, idx).numpy())
    for cap in (None, 1, 2):
        options = tf.data.Options()
        if cap is not None:
            options.threading.max_intra_op_parallelism = cap
        ds = (tf.data.Dataset.range(2)
              .map(lambda k: (tso.tensor_scatter_nd_add(t, idx, upd), tso.gather_nd(t, idx)))
              .with_options(options))
        count = 0
        for got in ds:
            for g, w in zip(got, want):
                assert g.numpy().tobytes() == w.tobytes()
            count += 1
        assert count == 2
