"""The models the export tests deploy without the plugin: built with
tf_scatter_ops, saved as SavedModels (with the plugin's ops), rewritten by
`python -m tf_scatter_ops.export`, and run where the plugin is not installed
(stock TensorFlow, TFLite's interpreter, onnxruntime).

    python tests/helpers/export_models.py OUT    # writes OUT/<model>/{original,export}
                                         # and OUT/<model>/io.npz (inputs, outputs)

Each model: (a tf.Module or Keras model, its sample inputs, the targets it
goes to). The outputs in io.npz are the original SavedModel's, run with the
plugin.
"""

import os
import sys

import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops import export

ALL_TARGETS = ("tensorflow", "tflite", "onnx")
RNG = np.random.default_rng(7)
TABLE = RNG.normal(size=(50, 4)).astype(np.float32)
IDS = np.array([3, 0, 3, 1, 7, 2], np.int32)
X = RNG.normal(size=(6, 3)).astype(np.float32)
X_INF = X.copy()  # infinities in rows that lose a max (min), which converters' selects spoil
X_INF[5, 2], X_INF[1, 0] = -np.inf, np.inf


def _spec(value):
    return tf.TensorSpec(value.shape, tf.as_dtype(value.dtype))


class TensorOps(tf.Module):
    """Every tensor op, index depths 1 and 2, duplicates in the indices."""

    @tf.function(input_signature=[_spec(IDS), _spec(X)])
    def __call__(self, ids, x):
        t = tf.reshape(tf.range(24.0), [8, 3])
        deep = tf.stack([ids, ids % 3], 1)
        out = {"gather_nd": tso.gather_nd(t, ids[:, None]),
               "gather_nd_depth2": tso.gather_nd(t, deep),
               "scatter_nd": tso.scatter_nd(ids[:, None], x, [8, 3])}
        for op in ("update", "add", "sub", "min", "max"):
            f = getattr(tso, f"tensor_scatter_nd_{op}")
            out[f"tensor_scatter_nd_{op}"] = f(t, ids[:, None], x * 10)
            out[f"tensor_scatter_nd_{op}_depth2"] = f(t, deep, x[:, 0] * 10)
        return out


class Segments(tf.Module):
    """Every segment op; sorted ids with a gap for segment_* and sparse_*."""

    @tf.function(input_signature=[_spec(IDS), _spec(X)])
    def __call__(self, ids, x):
        out = {}
        for op in ("sum", "prod", "min", "max", "mean", "sqrt_n"):
            out[f"unsorted_segment_{op}"] = getattr(tso, f"unsorted_segment_{op}")(x, ids, 9)
        for op in ("sum", "prod", "min", "max", "mean"):
            out[f"segment_{op}"] = getattr(tso, f"segment_{op}")(x, tf.sort(ids))
        for op in ("sum", "mean", "sqrt_n"):
            out[f"sparse_segment_{op}"] = getattr(tso, f"sparse_segment_{op}")(
                TABLE, ids, tf.sort(ids) // 2)
        return out


class Embedding(tf.Module):
    """Rows read straight from a variable (the plugin's ResourceGatherNd) and
    pooled into bags."""

    def __init__(self):
        super().__init__()
        self.table = tf.Variable(TABLE)

    @tf.function(input_signature=[_spec(IDS)])
    def __call__(self, ids):
        rows = tso.nn.embedding_lookup(self.table, ids)
        return {"rows": rows, "deep": tso.gather_nd(self.table, tf.stack([ids, ids % 4], 1)),
                "bags": tso.sparse_segment_mean(self.table, ids, tf.range(6) // 2)}


class EmbeddingUpdate(tf.Module):
    """A serving step that also updates the table in place (stock TensorFlow
    only: TFLite and ONNX models hold no variables to update)."""

    def __init__(self):
        super().__init__()
        self.table = tf.Variable(TABLE)

    @tf.function(input_signature=[_spec(IDS), _spec(X)])
    def __call__(self, ids, x):
        tso.scatter_nd_add(self.table, ids[:, None], tf.tile(x[:, :1], [1, 4]))
        tso.scatter_nd_max(self.table, ids[:2, None], tf.ones([2, 4]))
        return {"rows": tso.gather_nd(self.table, ids[:, None])}


def keras_model():
    """A Keras model on tso.keras.Embedding, built and called once."""
    import keras

    inputs = keras.Input(shape=(6,), dtype="int32", batch_size=2, name="ids")  # (the signature's
    # input name; Keras's default one counts the inputs made in the process)
    rows = tso.keras.Embedding(50, 4, name="embedding")(inputs)
    pooled = keras.layers.GlobalAveragePooling1D()(rows)
    model = keras.Model(inputs, keras.layers.Dense(2, name="dense")(pooled))
    model.get_layer("embedding").set_weights([TABLE])
    return model


class GNN(tf.Module):
    """A message-passing layer: gather the senders' features, transform,
    aggregate at the receivers (sum, mean, max)."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable(RNG.normal(size=(3, 3)).astype(np.float32))

    @tf.function(input_signature=[_spec(X), tf.TensorSpec([10], tf.int32),
                                  tf.TensorSpec([10], tf.int32)])
    def __call__(self, nodes, senders, receivers):
        messages = tso.gather(nodes, senders) @ self.w
        return {"sum": tso.unsorted_segment_sum(messages, receivers, 6),
                "mean": tso.unsorted_segment_mean(messages, receivers, 6),
                "max": tso.unsorted_segment_max(messages, receivers, 6)}


class Attention(tf.Module):
    """Attention over each receiver's edges (segment_softmax), log-sum-exp
    and standard-deviation pooling: the group-wise ops, which TensorFlow does
    not have."""

    @tf.function(input_signature=[_spec(X), tf.TensorSpec([10], tf.int32),
                                  tf.TensorSpec([10], tf.int32)])
    def __call__(self, nodes, senders, receivers):
        messages = tso.gather(nodes, senders)
        return {"alpha": tso.segment_softmax(messages, receivers, 6),
                "log_alpha": tso.segment_log_softmax(messages, receivers, 6),
                "lse": tso.segment_logsumexp(messages, receivers, 7),
                "std": tso.segment_std(messages, receivers, 6, ddof=1)}


class AttentionGradient(tf.Module):
    """The group-wise ops' fused gradient ops (<op>Grad), as a training step
    saved in a SavedModel holds them."""

    @tf.function(input_signature=[_spec(X), tf.TensorSpec([10], tf.int32),
                                  tf.TensorSpec([10], tf.int32)])
    def __call__(self, nodes, senders, receivers):
        with tf.GradientTape() as tape:
            tape.watch(nodes)
            messages = tso.gather(nodes, senders)
            loss = (tf.reduce_sum(tso.segment_softmax(messages, receivers, 6) ** 2)
                    + tf.reduce_sum(tso.segment_log_softmax(messages, receivers, 6) ** 2)
                    + tf.reduce_sum(tso.segment_logsumexp(messages, receivers, 6))
                    + tf.reduce_sum(tso.segment_var(messages, receivers, 6)))
        return {"grad": tf.convert_to_tensor(tape.gradient(loss, nodes))}


class MessagePassing(tf.Module):
    """The fused message passing: weighted sum and mean over in-edges,
    per-edge dot products (an attention score)."""

    @tf.function(input_signature=[_spec(X), tf.TensorSpec([10], tf.int32),
                                  tf.TensorSpec([10], tf.int32)])
    def __call__(self, nodes, senders, receivers):
        score = tso.edge_combine(nodes, nodes, senders, receivers, op="dot")
        return {"score": score,
                "sum": tso.gather_reduce(nodes, senders, receivers, 6, weights=score),
                "mean": tso.gather_reduce(nodes, senders, receivers, 7, reduce="mean"),
                "add": tso.edge_combine(nodes, nodes, senders, receivers)}


class MessagePassingGradient(tf.Module):
    """The fused ops in a training step: their gradients are the same ops on
    the reversed edges; max pooling with its positions output."""

    @tf.function(input_signature=[_spec(X), tf.TensorSpec([10], tf.int32),
                                  tf.TensorSpec([10], tf.int32)])
    def __call__(self, nodes, senders, receivers):
        with tf.GradientTape() as tape:
            tape.watch(nodes)
            score = tso.edge_combine(nodes, nodes, senders, receivers, op="dot")
            pooled = tso.gather_reduce(nodes, senders, receivers, 6, weights=score)
            top = tso.gather_reduce(nodes, senders, receivers, 6, reduce="max")
            loss = tf.reduce_sum(pooled ** 2) + tf.reduce_sum(top)
        return {"grad": tape.gradient(loss, nodes), "top": top}


SENDERS = np.array([0, 1, 2, 3, 4, 5, 0, 2, 4, 1], np.int32)
RECEIVERS = np.array([1, 2, 3, 4, 5, 0, 3, 3, 0, 5], np.int32)

MODELS = {
    "tensor_ops": (TensorOps, {"ids": IDS, "x": X_INF}, ALL_TARGETS),
    "segments": (Segments, {"ids": IDS, "x": X_INF}, ALL_TARGETS),
    "embedding": (Embedding, {"ids": IDS}, ALL_TARGETS),
    "embedding_update": (EmbeddingUpdate, {"ids": IDS, "x": X}, ("tensorflow",)),
    "keras": (keras_model, {"ids": np.array([[3, 0, 3, 1, 7, 2], [9, 9, 1, 2, 3, 4]],
                                                     np.int32)}, ALL_TARGETS),
    "gnn": (GNN, {"nodes": X, "senders": SENDERS, "receivers": RECEIVERS}, ALL_TARGETS),
    "attention": (Attention, {"nodes": X, "senders": SENDERS, "receivers": RECEIVERS},
                  ALL_TARGETS),
    "attention_gradient": (AttentionGradient,
                           {"nodes": X, "senders": SENDERS, "receivers": RECEIVERS},
                           ("tensorflow",)),
    "message_passing": (MessagePassing, {"nodes": X, "senders": SENDERS, "receivers": RECEIVERS},
                        ALL_TARGETS),
    "message_passing_gradient": (MessagePassingGradient,
                                 {"nodes": X, "senders": SENDERS, "receivers": RECEIVERS},
                                 ("tensorflow",)),
}


def _save(model, folder):
    if hasattr(model, "export"):  # Keras
        model.export(folder, verbose=False)
    else:
        tf.saved_model.save(model, folder, signatures={"serving_default": model.__call__})


def _convert_to_tflite(model):
    """TFLite's converter on the model as a user hands it over: a Keras model
    (which the converter saves), or the concrete function of a tf.Module's
    __call__ without the module (which it freezes)."""
    if hasattr(model, "export"):
        converter = tf.lite.TFLiteConverter.from_keras_model(model)
    else:
        converter = tf.lite.TFLiteConverter.from_concrete_functions(
            [model.__call__.get_concrete_function()])
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    return converter.convert()


def save(name, folder):
    """Builds model `name`, saves it with the plugin's ops to folder/original
    (Keras: model.export), rewrites it to folder/export, and writes
    folder/io.npz: the inputs, and the original's outputs (loaded and run
    here, with the plugin). The same model, traced with the plugin's ops, is
    also written under patch_tensorflow() as a user of the patch writes it,
    with TensorFlow's writers and nothing else: folder/patched (the
    SavedModel) and, for TFLite, folder/patched.tflite (the converter's
    output). Returns {op type: replaced}."""
    build, inputs, targets = MODELS[name]
    os.makedirs(folder, exist_ok=True)
    model = build()
    original = os.path.join(folder, "original")
    _save(model, original)
    replaced = export.export(original, os.path.join(folder, "export"))
    with tso.patched():
        _save(model, os.path.join(folder, "patched"))
        if "tflite" in targets:
            with open(os.path.join(folder, "patched.tflite"), "wb") as f:
                f.write(_convert_to_tflite(model))
    signature = tf.saved_model.load(original).signatures["serving_default"]
    outputs = signature(**{k: tf.constant(v) for k, v in inputs.items()})
    with open(os.path.join(folder, "targets.txt"), "w") as f:
        f.write(" ".join(MODELS[name][2]))
    np.savez(os.path.join(folder, "io.npz"), **{f"in/{k}": v for k, v in inputs.items()},
             **{f"out/{k}": v.numpy() for k, v in outputs.items()})
    return replaced


def main(out):
    for name in MODELS:
        replaced = save(name, os.path.join(out, name))
        print(f"{name}: {sum(replaced.values())} TfScatter> ops replaced")


if __name__ == "__main__":
    main(sys.argv[1])
