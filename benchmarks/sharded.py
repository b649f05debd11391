"""A sharded embedding table on parameter servers: one training step (bag
lookup, gradient, in-place SGD update of the touched rows) scheduled on an
in-process cluster of 2 workers and 2 parameter servers, the table split in
two by FixedShardsPartitioner(2), TensorFlow's path against ours, in one run.

    python -m benchmarks.sharded [--quick] [--rows 1000000]

  TensorFlow    tf.nn.embedding_lookup(table, ids) (the ShardedVariable
                dispatch: ResourceGather per shard), the shards' IndexedSlices
                gradients applied with shard.scatter_sub (ResourceScatterSub)
  tso shards    tso.nn.embedding_lookup(table, ids), the same gradients
                applied with tso.scatter_nd_sub on each shard
  tso table     tso.gather(table, ids), the looked-up rows' gradient applied
                with tso.scatter_nd_sub(table, ids[:, None], ...) on the whole
                ShardedVariable (the rows routed to their shards)

Each time is the median over rounds of `steps` steps scheduled at once and
joined, per step. XLA has no row: a ShardedVariable cannot be split inside a
compiled function (data-dependent shapes), in TensorFlow or here.
"""

import argparse
import socket
import statistics
import time

import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso
from benchmarks.harness import machine

DIM, BAG, BATCH, LR = 64, 8, 1024, 0.01


def _free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _cluster():
    """2 workers and 2 PS as servers in this process; the strategy (tables
    split in two) and its coordinator, this process being the chief."""
    chief, *ports = _free_ports(5)
    spec = {"worker": [f"127.0.0.1:{p}" for p in ports[:2]],
            "ps": [f"127.0.0.1:{p}" for p in ports[2:]]}
    config = tf.compat.v1.ConfigProto()
    config.inter_op_parallelism_threads = 4
    servers = [tf.distribute.Server(tf.train.ClusterSpec(spec), job_name=job, task_index=i,
                                    protocol="grpc", config=config, start=True)
               for job in ("worker", "ps") for i in range(2)]
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(dict(spec, chief=[f"127.0.0.1:{chief}"])), rpc_layer="grpc")
    strategy = tf.distribute.experimental.ParameterServerStrategy(
        resolver, variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(2))
    return servers, strategy, tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)


def _steps(strategy, table):
    def loss_of(rows):
        return tf.reduce_sum(tf.reduce_mean(tf.reshape(rows, [BATCH, BAG, DIM]), axis=1) ** 2)

    def per_shard(lookup, update):
        def body(ids):
            with tf.GradientTape() as tape:
                loss = loss_of(lookup(table, ids))
            for shard, grad in zip(table.variables, tape.gradient(loss, table.variables)):
                update(shard, grad)
            return loss
        return body

    def whole_table(ids):
        with tf.GradientTape() as tape:
            rows = tso.gather(table, ids)
            loss = loss_of(rows)
        tso.scatter_nd_sub(table, ids[:, None], LR * tape.gradient(loss, rows))
        return loss

    bodies = {
        "TensorFlow": per_shard(
            tf.nn.embedding_lookup,
            lambda shard, g: shard.scatter_sub(tf.IndexedSlices(LR * g.values, g.indices))),
        "tso shards": per_shard(
            tso.nn.embedding_lookup,
            lambda shard, g: tso.scatter_nd_sub(shard, g.indices[:, None], LR * g.values)),
        "tso table": whole_table,
    }
    return {name: tf.function(lambda ids, body=body: strategy.run(body, args=(ids,)))
            for name, body in bodies.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small table, few steps")
    parser.add_argument("--rows", type=int, default=None)
    args = parser.parse_args()
    rows = args.rows or (50_000 if args.quick else 1_000_000)
    steps, rounds = (5, 2) if args.quick else (20, 5)
    info = machine()
    servers, strategy, coordinator = _cluster()
    with strategy.scope():
        table = tf.Variable(tf.random.uniform([rows, DIM], -0.05, 0.05, seed=1))
    fns = _steps(strategy, table)
    rng = np.random.default_rng(0)
    batches = [tf.constant(rng.integers(0, rows, BATCH * BAG), tf.int32) for _ in range(steps)]
    times = {name: [] for name in fns}
    for name, fn in fns.items():  # trace and warm up
        coordinator.schedule(fn, args=(batches[0],))
    coordinator.join()
    for _ in range(rounds):  # interleaved rounds
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for ids in batches:
                coordinator.schedule(fn, args=(ids,))
            coordinator.join()
            times[name].append((time.perf_counter() - t0) / steps)
    print(f"{info['cpu']}, {info['cpus']} CPUs, TensorFlow {info['tf']}; ms per step "
          f"(batch {BATCH} bags of {BAG} ids, [{rows}, {DIM}] table in "
          f"{len(table.variables)} shards on 2 PS, 2 workers, in-process cluster)")
    base = statistics.median(times["TensorFlow"])
    for name, t in times.items():
        t = statistics.median(t)
        print(f"  {name:<12} {t * 1e3:8.2f}  {base / t:5.2f}x TensorFlow")
    del servers  # the in-process servers cannot be stopped; the process ends here


if __name__ == "__main__":
    main()
