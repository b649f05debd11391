"""tf2onnx on a function traced under tf_scatter_ops.patch_tensorflow(): a
graph network's step written with TensorFlow's names (a variable's rows
read with tf.gather, messages summed and maxed with tf.math's segment
reductions, a tensor scatter), converted by tf2onnx.convert.from_function
(which freezes the function: the patch has the freezer start from
TensorFlow's ops) and run by onnxruntime, against the function's outputs.
Run by tools/onnx_check.sh in build/onnx-venv, with the repository on
PYTHONPATH. Prints one JSON line {output: "equal" | "close <diff>"} and
fails when an output differs or the conversion fails."""

import json
import sys

import numpy as np
import onnxruntime
import tensorflow as tf
import tf2onnx

import tf_scatter_ops as tso

RNG = np.random.default_rng(5)
NODES = RNG.normal(size=(6, 3)).astype(np.float32)
SENDERS = np.array([0, 1, 2, 3, 4, 5, 0, 2, 4, 1], np.int32)
RECEIVERS = np.array([1, 2, 3, 4, 5, 0, 3, 3, 0, 5], np.int32)


def main():
    tso.patch_tensorflow()
    table = tf.Variable(RNG.normal(size=(6, 3)).astype(np.float32))
    spec = [tf.TensorSpec([None, 3], tf.float32, name="nodes"),
            tf.TensorSpec([None], tf.int32, name="senders"),
            tf.TensorSpec([None], tf.int32, name="receivers")]

    @tf.function(input_signature=spec)
    def step(nodes, senders, receivers):
        messages = tf.gather(nodes, senders) + tf.gather(table, receivers)
        summed = tf.math.unsorted_segment_sum(messages, receivers, 6)
        biggest = tf.math.unsorted_segment_max(messages, receivers, 6)
        marked = tf.tensor_scatter_nd_add(summed, receivers[:3, None], messages[:3])
        return {"summed": summed, "biggest": biggest, "marked": marked}

    graph = step.get_concrete_function().graph
    traced = {op.type for op in graph.get_operations()}
    traced |= {n.op for f in graph.as_graph_def().library.function for n in f.node_def}
    assert any(t.startswith("TfScatter>") for t in traced), f"not traced with our ops: {traced}"
    want = {k: v.numpy() for k, v in step(NODES, SENDERS, RECEIVERS).items()}
    proto, _ = tf2onnx.convert.from_function(step, input_signature=spec, opset=18)
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    feeds = {i.name: {"nodes": NODES, "senders": SENDERS, "receivers": RECEIVERS}[
        i.name.split(":")[0]] for i in session.get_inputs()}
    names = [o.name for o in session.get_outputs()]
    # the function's outputs in its order (its structure flattened: a dict's keys sorted)
    got = dict(zip(sorted(want), session.run(names, feeds)))
    results, bad = {}, []
    for key, value in want.items():
        other = got[key]
        if np.array_equal(value, other):
            results[key] = "equal"
        elif np.allclose(value, other, rtol=1e-5, atol=1e-6):
            results[key] = f"close {float(np.max(np.abs(value - other))):.2g}"
        else:
            results[key] = "DIFFERS"
            bad.append(key)
    print(json.dumps(results))
    sys.exit(f"tf2onnx under the patch: {bad} differ" if bad else 0)


if __name__ == "__main__":
    main()
