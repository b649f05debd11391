"""One training step built on the plugin's ops, run three times on one device,
under MirroredStrategy (two logical CPUs) or under MultiWorkerMirroredStrategy
(one worker of two; TF_CONFIG says which). Used by tests/test_distribute.py:

    python tests/helpers/distribute_worker.py single|mirrored|multiworker OUT.json
"""

import json
import os
import sys

import numpy as np

GLOBAL_BATCH, K, ROWS, UNITS, STEPS, LR = 8, 3, 10, 2, 3, 0.125


def batches():
    rng = np.random.default_rng(7)
    for _ in range(STEPS):
        ids = rng.integers(0, ROWS, (GLOBAL_BATCH, K)).astype(np.int32)
        w = (rng.integers(-4, 5, (GLOBAL_BATCH, K)) / 4).astype(np.float32)
        y = rng.integers(-3, 4, (GLOBAL_BATCH, UNITS)).astype(np.float32)
        yield ids, w, y


def initial():
    table = (np.arange(ROWS * UNITS, dtype=np.float32).reshape(ROWS, UNITS) % 5 - 2) / 2
    return table, np.zeros([UNITS], np.float32)


def loss_fn(tf, tso, table, bias, ids, w, y):
    """Sum over the examples of |max(bag(ids, w), -1.5) - y|^2 / global batch:
    gather_nd, tensor_scatter_nd_add and _max forward, their gradients backward."""
    rows = tso.gather_nd(table, ids[..., None])                              # [b, K, UNITS]
    n = tf.shape(ids)[0]
    example = tf.broadcast_to(tf.range(n)[:, None], tf.shape(ids))[..., None]
    out = tso.tensor_scatter_nd_add(tf.broadcast_to(bias, [n, UNITS]), example,
                                    rows * w[..., None])
    # and no prediction below -1.5 (elementwise max per example, our max op)
    out = tso.tensor_scatter_nd_max(out, example[:, 0], tf.fill([n, UNITS], -1.5))
    return tf.reduce_sum((out - y) ** 2) / GLOBAL_BATCH


def train(strategy=None):
    import tensorflow as tf
    import tf_scatter_ops as tso

    table0, bias0 = initial()
    agg = tf.VariableAggregation.ONLY_FIRST_REPLICA
    if strategy is None:
        table, bias = tf.Variable(table0), tf.Variable(bias0)
    else:
        with strategy.scope():
            table = tf.Variable(table0, aggregation=agg)
            bias = tf.Variable(bias0, aggregation=agg)

    def step(ids, w, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(tf, tso, table, bias, ids, w, y)
        grads = tape.gradient(loss, [table, bias])
        if strategy is not None:
            grads = tf.distribute.get_replica_context().all_reduce("sum", grads)
            loss = tf.distribute.get_replica_context().all_reduce("sum", loss)
        table.assign_sub(LR * tf.convert_to_tensor(grads[0]))  # a bag lookup's IndexedSlices
        bias.assign_sub(LR * grads[1])
        return loss

    @tf.function
    def run(ids, w, y):
        if strategy is None:
            return step(ids, w, y)
        per_replica = GLOBAL_BATCH // strategy.num_replicas_in_sync

        def shard(ctx):
            lo = ctx.replica_id_in_sync_group * per_replica
            return ids[lo:lo + per_replica], w[lo:lo + per_replica], y[lo:lo + per_replica]

        values = strategy.experimental_distribute_values_from_function(shard)
        losses = strategy.run(step, args=values)
        return strategy.experimental_local_results(losses)[0]

    losses = [float(run(*b)) for b in batches()]
    table_value = table.numpy() if strategy is None else strategy.experimental_local_results(table)[0].numpy()
    bias_value = bias.numpy() if strategy is None else strategy.experimental_local_results(bias)[0].numpy()
    return {"losses": losses, "table": table_value.tolist(), "bias": bias_value.tolist(),
            "replicas": 1 if strategy is None else strategy.num_replicas_in_sync}


def main(mode, out):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    if mode == "single":
        strategy = None
    elif mode == "mirrored":
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    elif mode == "multiworker":
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    else:
        raise SystemExit(f"unknown mode {mode}")
    result = train(strategy)
    with open(out + ".tmp", "w") as f:
        json.dump(result, f)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main(*sys.argv[1:])
