"""Embedding training whose table lives on a parameter server, updated in
place by the plugin's ops; used by tests/test_parameter_server.py:

    python tests/helpers/ps_worker.py single OUT.json
    python tests/helpers/ps_worker.py ps OUT.json CHIEF_PORT WORKER0_PORT WORKER1_PORT PS0_PORT PS1_PORT

`ps` starts an in-process cluster on 127.0.0.1 (2 workers and 2 PS as
tf.distribute.Server objects in this process, the chief being this process's
coordinator), builds tf.distribute.experimental.ParameterServerStrategy (its
variable_partitioner: FixedShardsPartitioner(2) for the tables of SHARDED_ROWS
rows, none for the others) and a ClusterCoordinator, and schedules the steps
on the workers. `single` runs the same steps in one process without a
strategy, every table one variable. Both write the tables (and, for `ps`,
where the variables live and which ops the traced steps hold) to OUT.

Variants, each on its own table:
  scatter    tso.gather_nd forward, tape.gradient (an IndexedSlices), and
             tso.scatter_nd_sub(table, grad.indices[:, None], LR * grad.values);
             join() after every schedule, so the order is fixed: exact result.
  commuting  a linear loss (its gradient does not depend on the table) with
             tso.scatter_nd_add; all steps scheduled at once and run by both
             workers in any order. Every value is a multiple of 1/16 below
             2^10, so every float32 sum is exact and the order cannot matter.
  optimizer  tso.gather_nd forward and an optimizer's apply_gradients
             (keras.optimizers.SGD) on the IndexedSlices; join() per step.
  sharded_scatter  a table of SHARDED_ROWS rows in 2 shards (one per PS):
             tso.gather forward, the gradient of the looked-up rows, and
             tso.scatter_nd_sub(table, ids[:, None], ...) on the whole
             ShardedVariable (each shard updates its rows); join() per step.
  sharded_grads    the same table kind: tso.nn.embedding_lookup forward,
             tape.gradient on the shards (an IndexedSlices each), and
             tso.scatter_nd_sub on each shard; join() per step.
After those, one step with a bad id (the last of three, the other two one
per shard) on the sharded_scatter table: it must raise and leave both
shards as they were.

The servers of an in-process cluster cannot be stopped, so the process ends
with os._exit after writing OUT; the test kills its process group anyway.
Exit code 75 means a server could not bind its port (the test retries once
with fresh ports).
"""

import ctypes
import json
import os
import sys
import traceback

import numpy as np

ROWS, DIM, BATCH, STEPS, LR = 1000, 8, 16, 6, 0.25
SHARDED_ROWS = 1001  # shards of 501 and 500 rows
BAD_IDS = [3, 900, SHARDED_ROWS]
PORT_IN_USE = 75
VARIANTS = ("scatter", "commuting", "optimizer", "sharded_scatter", "sharded_grads")
SHARDED = ("sharded_scatter", "sharded_grads")


def initial(rows=ROWS):
    """[rows, DIM] float32, multiples of 1/16 in [-0.5, 0.5]."""
    return ((np.arange(rows * DIM, dtype=np.int64).reshape(rows, DIM) * 7 % 17) - 8).astype(
        np.float32) / 16


def make_tables(tf):
    return {v: tf.Variable(initial(SHARDED_ROWS if v in SHARDED else ROWS), name=v)
            for v in VARIANTS}


def shards(table):
    """The variables a table is made of: a ShardedVariable's shards, or itself."""
    return list(getattr(table, "variables", [table]))


def partitioner(tf):
    """FixedShardsPartitioner(2) for the sharded variants' tables only."""
    two = tf.distribute.experimental.partitioners.FixedShardsPartitioner(2)

    def partition(shape, dtype):
        return two(shape, dtype) if shape[0] == SHARDED_ROWS else [1] * shape.rank
    return partition


def batches():
    """STEPS fixed batches (ids, w, y): ids with duplicates within a batch and
    across batches (half from rows 0..19, half from anywhere), w a per-column
    weight, y targets; all small multiples of 1/4."""
    rng = np.random.default_rng(20240611)
    out = []
    for _ in range(STEPS):
        ids = np.concatenate([rng.integers(0, 20, BATCH // 2),
                              rng.integers(0, ROWS, BATCH - BATCH // 2)]).astype(np.int32)
        rng.shuffle(ids)
        w = (rng.integers(-4, 5, (BATCH, DIM)) / 4).astype(np.float32)
        y = (rng.integers(-4, 5, BATCH) / 4).astype(np.float32)
        out.append((ids, w, y))
    return out


def make_steps(tf, tso, tables, optimizer, strategy=None):
    """One tf.function per variant; each runs one training step on its table
    (under a strategy: in strategy.run, as ParameterServerStrategy's scheduled
    functions do) and returns the loss."""

    def replicated(body):
        @tf.function
        def step(ids, w, y):
            if strategy is None:
                return body(ids, w, y)
            return strategy.run(body, args=(ids, w, y))
        step.__name__ = body.__name__
        return step

    def predict(table, ids, w):
        rows = tso.gather_nd(table, ids[:, None])          # [BATCH, DIM], from the variable
        return tf.reduce_sum(rows * w, axis=1)

    @replicated
    def scatter_step(ids, w, y):
        table = tables["scatter"]
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum((predict(table, ids, w) - y) ** 2) / BATCH
        grad = tape.gradient(loss, table)
        assert isinstance(grad, tf.IndexedSlices), type(grad)
        tso.scatter_nd_sub(table, grad.indices[:, None], LR * grad.values)
        return loss

    @replicated
    def commuting_step(ids, w, y):
        table = tables["commuting"]
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(predict(table, ids, w) * y)   # linear in the table
        grad = tape.gradient(loss, table)                      # rows w * y: multiples of 1/16
        assert isinstance(grad, tf.IndexedSlices), type(grad)
        tso.scatter_nd_add(table, grad.indices[:, None], -grad.values)
        return loss

    @replicated
    def optimizer_step(ids, w, y):
        table = tables["optimizer"]
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum((predict(table, ids, w) - y) ** 2) / BATCH
        grad = tape.gradient(loss, table)
        assert isinstance(grad, tf.IndexedSlices), type(grad)
        optimizer.apply_gradients([(grad, table)])
        return loss

    @replicated
    def sharded_scatter_step(ids, w, y):
        table = tables["sharded_scatter"]
        with tf.GradientTape() as tape:
            rows = tso.gather(table, ids)
            loss = tf.reduce_sum((tf.reduce_sum(rows * w, axis=1) - y) ** 2) / BATCH
        tso.scatter_nd_sub(table, ids[:, None], LR * tape.gradient(loss, rows))
        return loss

    @replicated
    def sharded_grads_step(ids, w, y):
        table = tables["sharded_grads"]
        with tf.GradientTape() as tape:
            rows = tso.nn.embedding_lookup(table, ids)
            loss = tf.reduce_sum((tf.reduce_sum(rows * w, axis=1) - y) ** 2) / BATCH
        for shard, grad in zip(shards(table), tape.gradient(loss, shards(table))):
            assert isinstance(grad, tf.IndexedSlices), type(grad)
            tso.scatter_nd_sub(shard, grad.indices[:, None], LR * grad.values)
        return loss

    return {"scatter": scatter_step, "commuting": commuting_step, "optimizer": optimizer_step,
            "sharded_scatter": sharded_scatter_step, "sharded_grads": sharded_grads_step}


def bad_step(tf, tso, table, strategy=None):
    """A step whose ids' last row is out of range (see BAD_IDS)."""
    def body():
        ids = tf.constant(BAD_IDS)
        tso.scatter_nd_add(table, ids[:, None], tf.ones([len(BAD_IDS), DIM]))
        return tf.constant(0)

    @tf.function
    def step():
        return body() if strategy is None else strategy.run(body)
    return step


def bad_step_error(run):
    """The message of the InvalidArgumentError `run()` raises (None if none)."""
    import tensorflow as tf
    try:
        run()
    except tf.errors.InvalidArgumentError as e:
        return str(e)
    return None


def make_optimizer():
    import keras
    return keras.optimizers.SGD(learning_rate=LR)


def op_types(graph):
    """The op types in a FuncGraph and the function bodies it calls."""
    types = set()
    for op in graph.get_operations():
        types.add(op.type)
    for fdef in graph.as_graph_def().library.function:
        types.update(node.op for node in fdef.node_def)
    return types


def train_single():
    import tensorflow as tf
    import tf_scatter_ops as tso

    tables = make_tables(tf)
    optimizer = make_optimizer()
    optimizer.build([tables["optimizer"]])
    steps = make_steps(tf, tso, tables, optimizer)
    data = batches()
    losses = {v: [float(steps[v](*(tf.constant(a) for a in b))) for b in data]
              for v in VARIANTS}
    before = tables["sharded_scatter"].numpy()
    error = bad_step_error(bad_step(tf, tso, tables["sharded_scatter"]))
    return {"tables": {v: tables[v].numpy().tolist() for v in VARIANTS}, "losses": losses,
            "bad_step": {"error": error,
                         "unchanged": bool((tables["sharded_scatter"].numpy() == before).all())}}


def exit_if_port_in_use(error):
    if "Could not start gRPC server" in str(error):
        print(f"PORT IN USE: {error}", flush=True)
        os._exit(PORT_IN_USE)


def start_cluster(tf, ports):
    """The servers of 2 workers and 2 PS, in this process; a resolver whose
    cluster also names the chief (this process, the coordinator)."""
    chief, worker0, worker1, ps0, ps1 = ports
    cluster = {"worker": [f"127.0.0.1:{worker0}", f"127.0.0.1:{worker1}"],
               "ps": [f"127.0.0.1:{ps0}", f"127.0.0.1:{ps1}"]}
    worker_config = tf.compat.v1.ConfigProto()
    worker_config.inter_op_parallelism_threads = 3  # >= workers + 1, or it may hang
    ps_config = tf.compat.v1.ConfigProto()
    ps_config.device_count["GPU"] = 0
    servers = []
    try:
        for i in range(2):
            servers.append(tf.distribute.Server(tf.train.ClusterSpec(cluster), job_name="worker",
                                                task_index=i, protocol="grpc",
                                                config=worker_config, start=True))
        for i in range(2):
            servers.append(tf.distribute.Server(tf.train.ClusterSpec(cluster), job_name="ps",
                                                task_index=i, protocol="grpc",
                                                config=ps_config, start=True))
    except tf.errors.UnknownError as e:
        exit_if_port_in_use(e)
        raise
    full = dict(cluster, chief=[f"127.0.0.1:{chief}"])
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(full), rpc_layer="grpc")
    return servers, resolver


def train_ps(ports):
    import tensorflow as tf
    import tf_scatter_ops as tso  # before the servers: they run our kernels in this process

    tf.debugging.set_log_device_placement(True)  # the workers get this config: placer printf
    servers, resolver = start_cluster(tf, ports)
    try:  # connects this process to the cluster as the chief: a server on its port
        strategy = tf.distribute.experimental.ParameterServerStrategy(
            resolver, variable_partitioner=partitioner(tf))
    except tf.errors.UnknownError as e:
        exit_if_port_in_use(e)
        raise
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
    with strategy.scope():
        tables = make_tables(tf)
        optimizer = make_optimizer()
        optimizer.build([tables["optimizer"]])
    steps = make_steps(tf, tso, tables, optimizer, strategy)
    data = [tuple(tf.constant(a) for a in b) for b in batches()]

    losses = {}
    for v in ("scatter", "optimizer") + SHARDED:  # one step at a time: a fixed order
        losses[v] = []
        for b in data:
            remote = coordinator.schedule(steps[v], args=b)
            coordinator.join()
            losses[v].append(float(remote.fetch()))
    remotes = [coordinator.schedule(steps["commuting"], args=b) for b in data]
    coordinator.join()
    losses["commuting"] = [float(r.fetch()) for r in remotes]

    before = tables["sharded_scatter"].numpy()

    def scheduled_bad_step():
        coordinator.schedule(bad_step(tf, tso, tables["sharded_scatter"], strategy))
        coordinator.join()
    error = bad_step_error(scheduled_bad_step)
    unchanged = bool((tables["sharded_scatter"].numpy() == before).all())

    specs = [tf.TensorSpec.from_tensor(t) for t in data[0]]
    graphs = {}
    for v in VARIANTS:
        concrete = steps[v].get_concrete_function(*specs)
        captured = [ext.device for ext, _ in concrete.graph.captures
                    if ext.dtype == tf.resource]
        shapes = {tuple(t.shape.as_list()) for op in concrete.graph.get_operations()
                  for t in op.outputs if t.shape.rank is not None and t.shape.is_fully_defined()}
        graphs[v] = {"op_types": sorted(op_types(concrete.graph)),
                     "captured_resource_devices": sorted(set(captured)),
                     "output_shapes": sorted(shapes)}
    return {
        "tables": {v: tables[v].numpy().tolist() for v in VARIANTS},
        "losses": losses,
        "variable_types": {v: type(tables[v]).__name__ for v in VARIANTS},
        "variable_devices": {v: [s.device for s in shards(tables[v])] for v in VARIANTS},
        "shard_shapes": {v: [s.shape.as_list() for s in shards(tables[v])] for v in VARIANTS},
        "bad_step": {"error": error, "unchanged": unchanged},
        "graphs": graphs,
        "workers": len(resolver.cluster_spec().as_dict()["worker"]),
    }


def main(argv):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    mode, out = argv[0], argv[1]
    code = 1
    try:
        if mode == "single":
            result = train_single()
        elif mode == "ps":
            result = train_ps([int(p) for p in argv[2:7]])
        else:
            raise SystemExit(f"unknown mode {mode}")
        with open(out + ".tmp", "w") as f:
            json.dump(result, f)
        os.replace(out + ".tmp", out)
        print("WROTE", out, flush=True)
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        ctypes.CDLL(None).fflush(None)  # the placer's printf lines, before _exit drops them
        os._exit(code)  # in-process servers cannot be shut down; do not wait for them


if __name__ == "__main__":
    main(sys.argv[1:])
