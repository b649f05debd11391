"""A training step timed four ways in one run: a plain tf.function and
jit_compile=True, on stock TensorFlow and under
tf_scatter_ops.patch_tensorflow() (the same Python function, traced again
after the patch). Before timing, the gradients of the stock and the patched
tf.function are compared on the same weights (bitwise, or the largest
difference). The four are then timed interleaved, round by round: each one's
median ms per step, and the ratios (above 1: the patched step is faster).
Used by benchmarks/clients.py and benchmarks/gnn.py."""

import json
import os

import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso
from benchmarks.harness import interleaved_ms

WAYS = ("stock", "patched", "stock xla", "patched xla")


def compare(want, got):
    """'bitwise', or the largest absolute difference of two gradient lists."""
    worst = 0.0
    for w, g in zip(want, got):
        w, g = np.asarray(tf.convert_to_tensor(w)), np.asarray(tf.convert_to_tensor(g))
        if not np.array_equal(w, g):
            worst = max(worst, float(np.max(np.abs(w.astype(np.float64) - g))))
    return "bitwise" if worst == 0 else f"max diff {worst:.2g}"


def _live(graph):
    """The ops the graph's outputs and control outputs depend on (what runs:
    TensorFlow prunes the rest, such as a gather whose rows a fused op reads
    instead)."""
    todo = [t.op for t in graph.outputs] + list(getattr(graph, "control_outputs", []))
    seen = set()
    while todo:
        op = todo.pop()
        if op in seen:
            continue
        seen.add(op)
        todo.extend(t.op for t in op.inputs)
        todo.extend(op.control_inputs)
    return seen


def graph_facts(function):
    """(the plugin's op types in a traced step, the largest tensor it makes
    in bytes, by the static shapes of the ops that run in its graph, and of
    its functions')."""
    graph = function.get_concrete_function().graph
    graphs = [graph] + [f.graph for f in getattr(graph, "_functions", {}).values()
                        if hasattr(f, "graph")]
    ours, largest = set(), 0
    for g in graphs:
        live = _live(g) if g is graph else None
        for op in g.get_operations():
            if live is not None and op not in live:
                continue
            if op.type.startswith("TfScatter>"):
                ours.add(op.type[len("TfScatter>"):])
            for t in op.outputs:
                if t.shape.is_fully_defined() and t.dtype.is_numpy_compatible:
                    largest = max(largest, t.shape.num_elements() * t.dtype.size)
    return sorted(ours), largest


def gradients_of(loss, variables):
    """A function of no arguments: the gradients of `loss` over `variables`."""
    def grads():
        with tf.GradientTape() as tape:
            value = loss()
        return tape.gradient(value, variables)
    return grads


def training_step(loss, variables, optimizer):
    """A function of no arguments: one step of `optimizer`, returning the loss."""
    def step():
        with tf.GradientTape() as tape:
            value = loss()
        optimizer.apply_gradients(zip(tape.gradient(value, variables), variables))
        return value
    return step


def time_four_ways(loss, variables, optimizer, rounds):
    """{"agreement", "ours", "largest", "ms"} for the training step of
    `loss` (a function of no arguments) over `variables` with `optimizer`,
    which returns the loss; its gradients are what is compared."""
    grads, step = gradients_of(loss, variables), training_step(loss, variables, optimizer)
    fns = {"stock": tf.function(step), "stock xla": tf.function(step, jit_compile=True)}
    want = tf.function(grads)()
    for f in fns.values():
        f.get_concrete_function()
    tso.patch_tensorflow()
    try:
        agreement = compare(want, tf.function(grads)())
        fns["patched"] = tf.function(step)
        fns["patched xla"] = tf.function(step, jit_compile=True)
        facts = {k: graph_facts(fns[k]) for k in ("stock", "patched")}
        ours, largest = facts["patched"][0], {k: f[1] for k, f in facts.items()}
        times = {}
        for k, f in fns.items():
            try:
                f()
            except Exception as e:  # noqa: BLE001  (a step XLA cannot compile is reported)
                times[k] = f"fails: {type(e).__name__}"
        timed = {k: (lambda f=f: f().numpy()) for k, f in fns.items() if k not in times}
        times.update(interleaved_ms(timed, rounds=rounds, calls=3))
    finally:
        tso.unpatch()
    return {"agreement": agreement, "ours": ours, "largest": largest, "ms": times}


def ratio(a, b):
    return f"{a / b:.2f}x" if isinstance(a, float) and isinstance(b, float) else "-"


def render(title, rows, info):
    """A markdown table of rows ({"program", and time_four_ways's keys})."""
    lines = [f"# {title}: {info['cpu']}, {info['cpus']} CPUs, ISA {info['isa']}, "
             f"TensorFlow {info['tf']}",
             "",
             "| step | stock ms | patched ms | stock XLA ms | patched XLA ms | stock / patched "
             "| stock XLA / patched | stock XLA / patched XLA | gradients | plugin ops in the step |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ms = r["ms"]
        cell = {k: (f"{v:.2f}" if isinstance(v, float) else v) for k, v in ms.items()}
        lines.append(f"| {r['program']} | {cell.get('stock')} | {cell.get('patched')} | "
                     f"{cell.get('stock xla')} | {cell.get('patched xla')} | "
                     f"{ratio(ms.get('stock'), ms.get('patched'))} | "
                     f"{ratio(ms.get('stock xla'), ms.get('patched'))} | "
                     f"{ratio(ms.get('stock xla'), ms.get('patched xla'))} | {r['agreement']} | "
                     f"{', '.join(r['ours']) or 'none'} |")
    return "\n".join(lines)


def write(out, name, table, info, rows):
    """Prints the table and writes it (out/name.md) and the rows (out/name.json)."""
    print(table)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"{name}.json"), "w") as f:
        json.dump({"machine": info, "rows": rows}, f, indent=1)
    with open(os.path.join(out, f"{name}.md"), "w") as f:
        f.write(table + "\n")
