"""An example Keras 3 layer built on the plugin's ops.

`ScatterAccumulate(num_rows, units)` is a weighted bag of embeddings: for
integer `ids` [batch, k] and float `weights` [batch, k] it returns

    out[b] = bias + sum_j weights[b, j] * table[ids[b, j]]      # [batch, units]

The table rows are read with `gather_nd` and accumulated per example with
`tensor_scatter_nd_add`, so the gradient reaches `table` through our
`gather_nd` gradient (an `IndexedSlices` of the looked-up rows) and `bias`
through `tensor_scatter_nd_add`. Registered as "examples>ScatterAccumulate",
so `keras.models.load_model` finds it once this file is imported.
"""

import keras
import tensorflow as tf

import tf_scatter_ops as ops


@keras.saving.register_keras_serializable(package="examples")
class ScatterAccumulate(keras.layers.Layer):
    def __init__(self, num_rows, units, **kwargs):
        super().__init__(**kwargs)
        self.num_rows = int(num_rows)
        self.units = int(units)

    def build(self, input_shape):
        self.table = self.add_weight(
            name="table", shape=(self.num_rows, self.units), initializer="random_normal")
        self.bias = self.add_weight(name="bias", shape=(self.units,), initializer="zeros")

    def call(self, inputs):
        ids, weights = inputs
        rows = ops.gather_nd(self.table, ids[..., None])               # [b, k, units]
        contrib = rows * tf.cast(weights, rows.dtype)[..., None]
        shape = tf.shape(ids)
        example = tf.broadcast_to(tf.range(shape[0], dtype=ids.dtype)[:, None], shape)
        base = tf.broadcast_to(tf.cast(self.bias, rows.dtype), [shape[0], self.units])
        return ops.tensor_scatter_nd_add(base, example[..., None], contrib)  # [b, units]

    def compute_output_shape(self, input_shape):
        return (input_shape[0][0], self.units)

    def get_config(self):
        return {**super().get_config(), "num_rows": self.num_rows, "units": self.units}
