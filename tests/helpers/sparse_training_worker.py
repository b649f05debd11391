"""Scatters into, and sparse training through gathers from, MirroredVariables
under tf.distribute.MirroredStrategy over two logical CPUs. Used by
tests/test_sparse_training.py, which runs it in a child process (logical
devices must be configured before TensorFlow initialises its devices):

    python tests/helpers/sparse_training_worker.py OUT.json

Every check is recorded separately in OUT.json as {"value": ...} or, when it
raised, {"error": exception type, "message": ...}, so that one failing check
does not hide the others. `train_embedding(None, mode)` is also imported by the
test to get the single-device result in its own process.
"""

import json
import os
import sys
import traceback

import numpy as np

ROWS, DIM, GLOBAL_BATCH, STEPS, LR = 40, 4, 8, 3, 0.5
SHAPE = [5, 2]


def batches():
    rng = np.random.default_rng(5)
    for _ in range(STEPS):
        ids = rng.integers(0, ROWS, GLOBAL_BATCH).astype(np.int32)
        ids[1] = ids[0]  # a duplicate inside the first replica's shard
        y = rng.standard_normal((GLOBAL_BATCH, DIM)).astype(np.float32)
        yield ids, y


def initial_table():
    return (np.arange(ROWS * DIM, dtype=np.float32).reshape(ROWS, DIM) % 7 - 3) / 4


def train_embedding(strategy, mode):
    """An embedding table trained with SGD through tso.gather_nd's
    IndexedSlices gradient, STEPS steps of GLOBAL_BATCH rows split evenly
    between the replicas. mode "keras": keras.optimizers.SGD.apply_gradients;
    "scatter": the all-reduced gradient applied with tso.scatter_nd_sub in
    replica context (each replica updates its own copy, NONE aggregation).
    Returns the losses, each copy of the table, and the gradient types seen."""
    import contextlib

    import keras
    import tensorflow as tf

    import tf_scatter_ops as tso

    scope = strategy.scope() if strategy is not None else contextlib.nullcontext()
    with scope:
        table = tf.Variable(initial_table(), aggregation=tf.VariableAggregation.NONE)
        opt = keras.optimizers.SGD(LR) if mode == "keras" else None
    grad_types = []

    def step(ids, y):
        with tf.GradientTape() as tape:
            rows = tso.gather_nd(table, ids[:, None])
            loss = tf.reduce_sum((rows - y) ** 2) / GLOBAL_BATCH
        grad = tape.gradient(loss, table)
        grad_types.append(type(grad).__name__)
        if mode == "keras":
            opt.apply_gradients([(grad, table)])
        else:
            if strategy is not None:
                grad = tf.distribute.get_replica_context().all_reduce("sum", grad)
            tso.scatter_nd_sub(table, grad.indices[:, None], LR * grad.values)
        return loss

    @tf.function
    def run(ids, y):
        if strategy is None:
            return step(ids, y)
        n = GLOBAL_BATCH // strategy.num_replicas_in_sync

        def shard(ctx):
            lo = ctx.replica_id_in_sync_group * n
            return ids[lo:lo + n], y[lo:lo + n]

        per_replica = strategy.run(step, args=strategy.experimental_distribute_values_from_function(shard))
        return strategy.reduce("sum", per_replica, axis=None)

    losses = [float(run(ids, y)) for ids, y in batches()]
    copies = [table] if strategy is None else list(table.values)
    return {"losses": losses, "copies": [c.numpy().tolist() for c in copies],
            "grad_types": sorted(set(grad_types))}


def _copies(v):
    return [c.numpy().tolist() for c in v.values]


def checks(strategy):
    """name -> zero-argument function returning something JSON-able."""
    import keras
    import tensorflow as tf

    import tf_scatter_ops as tso
    from tensorflow.python.distribute import values_util

    NONE = tf.VariableAggregation.NONE
    FIRST = tf.VariableAggregation.ONLY_FIRST_REPLICA
    SUM = tf.VariableAggregation.SUM
    MEAN = tf.VariableAggregation.MEAN
    init = (np.arange(10, dtype=np.float32).reshape(SHAPE) - 4) / 2

    def variable(aggregation, value=init):
        with strategy.scope():
            return tf.Variable(value, aggregation=aggregation)

    indices = [[1], [3], [1]]
    updates = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    sparse = lambda: tf.IndexedSlices(tf.constant(updates), tf.constant([1, 3, 1]))  # noqa: E731

    def cross(op, tf_method):
        """Cross-replica context: ours and TF's own sparse method on twins."""
        def f():
            ours, theirs = variable(NONE), variable(NONE)
            returned = getattr(tso, op)(ours, indices, updates)
            getattr(theirs, tf_method)(sparse())
            return {"ours": _copies(ours), "tf": _copies(theirs),
                    "returned": [np.asarray(r).tolist() for r in strategy.experimental_local_results(returned)]}
        return f

    def cross_in_function():
        ours, theirs = variable(FIRST), variable(FIRST)

        @tf.function
        def f():
            tso.scatter_nd_sub(ours, tf.constant(indices, tf.int64), updates)
            tso.scatter_nd_max(ours, [[0]], [[100.0, -100.0]])
            theirs.scatter_sub(sparse())
            theirs.scatter_max(tf.IndexedSlices(tf.constant([[100.0, -100.0]]), tf.constant([0])))

        f()
        return {"ours": _copies(ours), "tf": _copies(theirs)}

    def cross_keras_variable():
        with strategy.scope():
            kv = keras.Variable(init)
        tso.scatter_nd_add(kv, indices, updates)
        return {"inner": type(kv.value).__name__, "ours": _copies(kv.value)}

    def cross_policies():
        v = variable(NONE)
        tso.scatter_nd_add(v, [[4], [7], [-1], [0]], [[1, 1], [2, 2], [3, 3], [4, 4]],
                           bad_indices_policy="IGNORE")
        after_ignore = _copies(v)
        try:
            tso.scatter_nd_update(v, [[2], [5]], [[9, 9], [9, 9]])
            error = None
        except tf.errors.InvalidArgumentError as e:
            error = e.message
        return {"after_ignore": after_ignore, "error": error, "after_error": _copies(v)}

    def replica_dependent(aggregation, op, tf_method, in_function):
        """Replica r writes the value r + 1 into row r (and row 4)."""
        def f():
            ours, theirs = variable(aggregation), variable(aggregation)

            def fn():
                rid = tf.distribute.get_replica_context().replica_id_in_sync_group
                rows = tf.stack([rid, 4])
                vals = tf.fill([2, 2], tf.cast(rid + 1, tf.float32))
                getattr(tso, op)(ours, rows[:, None], vals)
                getattr(theirs, tf_method)(tf.IndexedSlices(vals, rows))

            strategy.run(tf.function(fn) if in_function else fn)
            return {"ours": _copies(ours), "tf": _copies(theirs)}
        return f

    def not_implemented(aggregation):
        """update, min and max need NONE or ONLY_FIRST_REPLICA (add and sub
        aggregate, as TensorFlow's scatter_add/sub do: replica_aggregated)."""
        def f():
            out = {}
            for op in ("scatter_nd_update", "scatter_nd_min", "scatter_nd_max"):
                v = variable(aggregation)
                for context in ("cross", "replica"):
                    call = lambda: getattr(tso, op)(v, [[1]], [[1.0, 1.0]])  # noqa: E731
                    try:
                        call() if context == "cross" else strategy.run(call)
                        out[f"{op}/{context}"] = {"raised": None}
                    except Exception as e:  # noqa: BLE001 - recorded
                        out[f"{op}/{context}"] = {"raised": type(e).__name__, "message": str(e)}
                out[f"{op}/unchanged"] = _copies(v) == [init.tolist()] * 2
            try:
                variable(aggregation).scatter_update(sparse())
                out["tf_scatter_update"] = None
            except NotImplementedError as e:
                out["tf_scatter_update"] = str(e)
            out["expected"] = {op: values_util.scatter_error_msg.format(op_name=op, aggregation=aggregation)
                               for op in ("scatter_nd_update", "scatter_nd_min", "scatter_nd_max",
                                          "scatter_update")}
            return out
        return f

    def gather_per_replica():
        """Copies made different (NONE, replica context), then read back."""
        v = variable(NONE)

        def write():
            rid = tf.distribute.get_replica_context().replica_id_in_sync_group
            tso.scatter_nd_update(v, [[2]], tf.fill([1, 2], tf.cast(10 * (rid + 1), tf.float32)))

        strategy.run(write)
        rows = [[2], [0], [2]]
        eager = strategy.run(lambda: tso.gather_nd(v, rows))
        traced = strategy.run(tf.function(lambda: tso.gather_nd(v, tf.constant(rows, tf.int16))))
        reference = strategy.run(lambda: tf.gather(v, [2, 0, 2]))
        local = lambda r: [t.numpy().tolist() for t in strategy.experimental_local_results(r)]  # noqa: E731
        return {"copies": _copies(v), "eager": local(eager), "traced": local(traced),
                "tf": local(reference), "cross": tso.gather_nd(v, rows).numpy().tolist()}

    return {
        "cross_add": cross("scatter_nd_add", "scatter_add"),
        "cross_update": cross("scatter_nd_update", "scatter_update"),
        "cross_in_function": cross_in_function,
        "cross_keras_variable": cross_keras_variable,
        "cross_policies": cross_policies,
        "replica_none_add": replica_dependent(NONE, "scatter_nd_add", "scatter_add", False),
        "replica_none_update_function": replica_dependent(NONE, "scatter_nd_update", "scatter_update", True),
        "replica_first_add": replica_dependent(FIRST, "scatter_nd_add", "scatter_add", False),
        "replica_first_update_function": replica_dependent(FIRST, "scatter_nd_update", "scatter_update", True),
        "replica_sum_add": replica_dependent(SUM, "scatter_nd_add", "scatter_add", False),
        "replica_mean_sub_function": replica_dependent(MEAN, "scatter_nd_sub", "scatter_sub", True),
        "sum_not_implemented": not_implemented(SUM),
        "mean_not_implemented": not_implemented(MEAN),
        "gather_per_replica": gather_per_replica,
        "train_keras": lambda: train_embedding(strategy, "keras"),
        "train_scatter": lambda: train_embedding(strategy, "scatter"),
    }


def main(out):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import tf_scatter_ops  # noqa: F401

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    result = {"replicas": strategy.num_replicas_in_sync}
    for name, check in checks(strategy).items():
        try:
            result[name] = {"value": check()}
        except Exception as e:  # noqa: BLE001 - recorded for the test to report
            result[name] = {"error": type(e).__name__, "message": str(e)[-2000:],
                            "traceback": traceback.format_exc()[-3000:]}
    with open(out + ".tmp", "w") as f:
        json.dump(result, f)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main(*sys.argv[1:])
